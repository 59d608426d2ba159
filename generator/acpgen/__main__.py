"""``python -m acpgen``: the ``acpgen`` command line."""

from acpgen.commands import main

raise SystemExit(main())
