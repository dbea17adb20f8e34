"""Run the minitorch command group from a checkout: ``python cli.py info``."""

from minitorch.cli import main

if __name__ == "__main__":
    main()
