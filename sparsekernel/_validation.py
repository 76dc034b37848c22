"""Old path of ``sparsekernel.validation`` (kept so that existing imports work)."""

from .validation import (
    DOMAINS, check_binary_targets, check_matrix, check_param, check_real_targets, check_same_length,
    check_sample_weight, fail,
)

__all__ = ["DOMAINS", "check_param", "check_matrix", "check_binary_targets", "check_real_targets",
           "check_sample_weight", "check_same_length", "fail"]
