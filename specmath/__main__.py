import sys

from specmath.cli import main

sys.exit(main())
