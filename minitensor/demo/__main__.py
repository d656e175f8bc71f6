"""``python -m minitensor.demo``: see ``run.py``."""

import sys

from .run import main

sys.exit(main())
