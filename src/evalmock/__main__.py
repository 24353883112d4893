"""Run the command line as `python -m evalmock`."""

from evalmock.cli import main

raise SystemExit(main())
