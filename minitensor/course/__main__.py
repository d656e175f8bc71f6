"""``python -m minitensor.course ...`` (see cli.py)."""

import sys

from .cli import main

sys.exit(main())
