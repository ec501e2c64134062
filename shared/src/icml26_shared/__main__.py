"""``python -m icml26_shared`` is the ``icml26`` command."""

import sys

from .cli import main

sys.exit(main())
