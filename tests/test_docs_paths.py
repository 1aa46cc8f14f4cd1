"""Every file the docs cite exists: the README, docs/ and the folders' READMEs name real
paths, so a move or a rename cannot leave a reader at a file that is gone."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from tests.paths import DOCS, REPO

PAGES = [
    REPO / "README.md",
    REPO / "bots" / "README.md",
    REPO / "benchmarks" / "README.md",
    *sorted(DOCS.glob("*.md")),
]
#: A repository path in running text: a top folder, then a file with an extension.
CITED = re.compile(
    r"(?<![\w/.-])((?:arena|tests|docs|bots|benchmarks|workers|web)/[\w./-]*\w\.(?:py|md|json|toml|yml|js))"
)
#: Markdown links to files of the repository, relative to the page.
LINK = re.compile(r"\]\((?!https?:|mailto:|#)([^)#\s]+)")
#: Paths that stand for a file of the reader's own (``bots/mine.py``), not one of ours.
PLACEHOLDERS = re.compile(r"/(NAME|mine|mybot[\w]*)\.\w+$")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_cited_paths_exist(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    missing = [
        path
        for path in sorted(set(CITED.findall(text)))
        if not PLACEHOLDERS.search(path) and not (REPO / path).exists()
    ]
    missing += [
        link for link in sorted(set(LINK.findall(text))) if not (page.parent / link).exists()
    ]
    assert not missing, f"{page.relative_to(REPO)} cites files that do not exist: {missing}"


#: A dotted name of the library in backticks: ``arena.compete.localrun.play_one``.
DOTTED = re.compile(r"`(arena(?:\.\w+)+)")
#: Dotted names that are not Python: the Celery tasks' names and the SQLite file.
NOT_PYTHON = {
    "arena.play_match",
    "arena.sweep",
    "arena.refit_ratings",
    "arena.check_upload",
    "arena.run_branch",
    "arena.start_compare",
    "arena.db",
}


def resolves(dotted: str) -> bool:
    """``dotted`` names a module of the arena, or an attribute of one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(target, name):
                return False
            target = getattr(target, name)
        return True
    return False


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_cited_names_exist(page: Path) -> None:
    names = sorted(set(DOTTED.findall(page.read_text(encoding="utf-8"))))
    missing = [name for name in names if name not in NOT_PYTHON and not resolves(name)]
    assert not missing, f"{page.relative_to(REPO)} cites names that do not exist: {missing}"
