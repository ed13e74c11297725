"""``python -m scheduler.dashboard``: see :mod:`scheduler.dashboard.app`."""

import sys

from scheduler.dashboard.app import main

sys.exit(main())
