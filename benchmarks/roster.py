"""A class's roster import: 30 students with first-time passwords (arena.service.classes),
against 30 hashes at the site's argon2id parameters measured alongside, in one run.

Usage::

    ./run python benchmarks/roster.py [--students N] [--runs R]

A temporary SQLite database; the hasher is the web's (argon2-cffi's defaults behind the
hashing bound, one slot). Prints each run's import time, the same number of hashes at the
site's parameters, and their ratio (the ratio is what compares across machines and loads).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from argon2 import PasswordHasher

from arena.service import classes
from arena.service.accounts import create_account, password_hasher
from arena.service.passwords import GuardedHasher, HashGuard
from arena.store.db import connect, upgrade


def main() -> None:
    """Import rosters and print their times against the site's hashes."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'arena.db'}"
        upgrade(url)
        store = connect(url)
        hasher = GuardedHasher(PasswordHasher(), HashGuard(1))
        teacher = create_account(store, "teacher", "a long phrase of hers", role="teacher",
                                 hasher=password_hasher(cheap=True))  # fmt: skip
        classes.create_class(store, teacher, classes.NewClass(name="bench"))
        print(f"load average {os.getloadavg()[0]:.1f}; {args.students} students a roster")
        for run in range(args.runs):
            roster = "\n".join(f"Student{run}x{i} Surname{i}" for i in range(args.students))
            start = time.perf_counter()
            classes.import_roster(store, teacher, "bench", roster, hasher)
            imported = time.perf_counter() - start
            site = PasswordHasher()
            start = time.perf_counter()
            for i in range(args.students):
                site.hash(f"pw{i}-abcd-efgh")
            hashed = time.perf_counter() - start
            print(f"run {run + 1}: roster import {imported:.2f} s; {args.students} hashes at the "
                  f"site's parameters {hashed:.2f} s; ratio {imported / hashed:.2f}")  # fmt: skip
        store.close()


if __name__ == "__main__":
    main()
