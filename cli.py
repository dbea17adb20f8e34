"""Run the minitorch command group from a checkout: ``python cli.py info``.

The same entry point as the installed ``minitorch`` command
(``minitorch_launcher.py``): the course commands run even when the engine
does not import.
"""

import sys

from minitorch_launcher import main

if __name__ == "__main__":
    sys.exit(main())
