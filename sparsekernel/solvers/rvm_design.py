"""Old path of ``sparsekernel.solvers.rvm.design``, kept as a re-export for its importers."""

from .rvm.design import (
    DenseDesign,
    Design,
    KernelDesign,
    Scaled,
    WithBias,
    as_design,
    estimator_design,
    estimator_kernel,
    gram_matrix,
)

__all__ = [
    "Design",
    "DenseDesign",
    "KernelDesign",
    "WithBias",
    "Scaled",
    "as_design",
    "gram_matrix",
    "estimator_kernel",
    "estimator_design",
]
