"""Test configuration.

scikit-learn's estimator checks include one that runs with array-API dispatch
on NumPy inputs; scipy reads SCIPY_ARRAY_API when it is first imported, so it
is set here, before anything imports scipy.
"""

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")

# Hypothesis: the same examples on every run (CI must not depend on luck);
# HYPOTHESIS_PROFILE=explore draws new ones.
from hypothesis import settings  # noqa: E402

settings.register_profile("repeatable", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
