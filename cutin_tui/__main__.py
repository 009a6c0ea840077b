import sys

from cutin_tui.cli import main

sys.exit(main())
