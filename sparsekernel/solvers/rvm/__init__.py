"""The relevance vector machine (section 7.2): regression, classification, Poisson counts.

Modules, one concept each:

``likelihood``    the likelihood interface and its Gaussian, Bernoulli and Softmax cases
``poisson``       the Poisson likelihood (log link), its fitted model and ``rvm_poisson``: one file
``laplace``       the Laplace approximation at the IRLS mode (7.109)-(7.114), any likelihood
``sequential``    Algorithm 7.2 with (7.102)-(7.107), written once for every likelihood
``reestimation``  MacKay's updates (7.87)-(7.89), (7.116) and EM (gap 7.6)
``posterior``     the posterior (7.82)-(7.83), the evidence (7.85), S, Q, s, q and (7.101)
``design``        design matrices, stored or computed a block of columns at a time
``regression``    ``rvm_regression``; ``classification``: ``rvm_classification``
``laplace_fit``   the one fitting path of the non-conjugate likelihoods (scaling, dispatch, units)
``checks``        validation and units shared by the entry points
``certificate``   ``evidence_report``, ``laplace_report``: the gains one move would still make (a maximum of the
                  evidence (7.85)? for the Laplace fits, a fixed point on the effective problem at the mode);
                  ``evidence_report_at``: the same at hyperparameters from any source
``results``       the fitted models and their predictive distributions
"""

from .certificate import EvidenceReport, evidence_report, evidence_report_at, laplace_report
from .checks import METHODS
from .classification import rvm_classification
from .likelihood import Bernoulli, Gaussian, Likelihood, Softmax
from .poisson import Poisson, RVMPoisson, rvm_poisson
from .posterior import Hyperprior
from .regression import rvm_regression
from .results import (
    AllPrunedWarning,
    RVMClassification,
    RVMRegression,
    moderated_log_probabilities,
    moderated_logits,
    moderated_probabilities,
    predictive_distribution,
)

__all__ = [
    "EvidenceReport",
    "evidence_report",
    "evidence_report_at",
    "laplace_report",
    "RVMRegression",
    "RVMClassification",
    "RVMPoisson",
    "AllPrunedWarning",
    "Hyperprior",
    "rvm_regression",
    "rvm_classification",
    "rvm_poisson",
    "Likelihood",
    "Gaussian",
    "Bernoulli",
    "Softmax",
    "Poisson",
    "predictive_distribution",
    "moderated_probabilities",
    "moderated_log_probabilities",
    "moderated_logits",
    "METHODS",
]
