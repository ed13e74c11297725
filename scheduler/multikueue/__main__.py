"""``python -m scheduler.multikueue``: see :mod:`scheduler.multikueue.app`."""

import sys

from scheduler.multikueue.app import main

sys.exit(main())
