"""sparsekernel: the sparse kernel machines of Bishop's PRML, chapter 7."""

__version__ = "0.1.0"
