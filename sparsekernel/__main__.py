"""``python -m sparsekernel``: the command line, as the ``sparsekernel`` script (``cli.main``)."""

import sys

from .cli import main

sys.exit(main())
