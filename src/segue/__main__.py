"""``python -m segue`` is the ``segue`` command."""

from segue.cli import main

raise SystemExit(main())
