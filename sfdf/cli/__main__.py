"""``python -m sfdf.cli``: the ``sfdf`` command line."""

import sys

from sfdf.cli import main

sys.exit(main())
