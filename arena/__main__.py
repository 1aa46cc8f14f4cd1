"""``python -m arena``: the command line, as the ``arena`` console script (its exit status
too: 1 for a check that failed)."""

from arena.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
