"""A class's roster import: 30 students with first-time passwords (arena.service.classes),
against 30 hashes at the site's argon2id parameters measured alongside, in one run; then
each platform's sample export (tests/data/rosters: Canvas, Moodle, Google Classroom, a
plain list): the format and mapping the preview recognises, the students made, and the time
of the preview, the import and a re-import (which makes none).

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
from arena.service.accounts import Account, create_account, password_hasher
from arena.service.passwords import GuardedHasher, HashGuard
from arena.store.db import Store, connect, upgrade


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
            roster = "name,student id\n" + "\n".join(
                f"Student{run}x{i} Surname{i},{run}-{i}" for i in range(args.students)
            )
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
        platforms(store, teacher, hasher)
        store.close()


def platforms(store: Store, teacher: Account, hasher: PasswordHasher) -> None:
    """Each sample export into a class of its own: preview, import, import again."""
    folder = Path(__file__).parent.parent / "tests" / "data" / "rosters"
    for path in sorted(folder.iterdir()):
        name = path.name.replace("_", "-").replace(".", "-")
        classes.create_class(store, teacher, classes.NewClass(name=name))
        text = classes.decode_roster(path.read_bytes())
        start = time.perf_counter()
        preview = classes.preview_roster(store, teacher, name, text)
        previewed = time.perf_counter() - start
        start = time.perf_counter()
        made = classes.import_roster(store, teacher, name, text, hasher)
        imported = time.perf_counter() - start
        start = time.perf_counter()
        again = classes.import_roster(store, teacher, name, text, hasher)
        repeated = time.perf_counter() - start
        mapping = ", ".join(f"{c.header or c.index + 1}={c.role}" for c in preview.columns
                            if c.role != "ignore")  # fmt: skip
        print(f"{path.name}: {preview.format}; {mapping}; {len(preview.skipped)} lines skipped")
        print(f"  preview {previewed * 1000:.0f} ms; import {imported:.2f} s, "
              f"{len(made.logins)} made; again {repeated:.2f} s, {len(again.logins)} made, "
              f"{len(again.unchanged)} unchanged")  # fmt: skip


if __name__ == "__main__":
    main()
