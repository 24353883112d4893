"""Run the command line as `python -m evalmock`."""

from evalmock.entry import main

raise SystemExit(main())
