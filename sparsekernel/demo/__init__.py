"""``sparsekernel demo``: the SVM and RVM demonstrations in the browser, served locally.

The pages call a small JSON API; every solve goes through the library (the
SMO by default). The server (``server.py``) is the standard library's asyncio
with two bounded pools, deadlines and limits: the API is three POST routes and
a few static files, which needs no web framework, and the demo then installs
nothing beyond sparsekernel itself.
"""

from .api import ApiError, handle_rvm, handle_svm
from .server import make_server, serve

__all__ = ["ApiError", "handle_svm", "handle_rvm", "make_server", "serve"]
