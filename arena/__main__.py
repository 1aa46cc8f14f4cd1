"""``python -m arena``: the command line, as the ``arena`` console script."""

from arena.cli.main import main

if __name__ == "__main__":
    main()
