"""Test configuration.

scikit-learn's estimator checks include one that runs with array-API dispatch
on NumPy inputs; scipy reads SCIPY_ARRAY_API when it is first imported, so it
is set here, before anything imports scipy.
"""

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")
