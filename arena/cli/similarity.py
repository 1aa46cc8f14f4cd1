"""``arena class similarity NAME``: a class's similarity report (docs/web.md, "Similar sources").

The command line acts as the operator, through the same service function as the class's
page and the API (:func:`arena.service.similarity.similarity_report`): the pairs of the
class's students whose latest versions have more than ``--threshold`` of their text in
common (the reference bots and the starter bot left out), with each side's matching lines.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from arena.cli.common import console, url_option

# The report's service (SQLAlchemy, copydetect) is imported as the command runs, not by its
# --help (tests/cli/test_lazy.py).
if TYPE_CHECKING:
    from arena.service.similarity import ReportSide, SimilarityReport

__all__ = ["THRESHOLD", "report_json", "similarity_command"]

#: ``--threshold``'s default: arena.service.similarity.THRESHOLD, repeated so that the
#: command's --help imports no service (tests/cli/test_lazy.py checks that they agree).
THRESHOLD = 0.5


def _lines(side: ReportSide) -> str:
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in side.lines)


def report_json(report: SimilarityReport) -> dict[str, object]:
    """The report as JSON (the API's shape, without the sources)."""
    return {
        "class_name": report.class_name,
        "threshold": report.threshold,
        "students": report.students,
        "compared": report.compared,
        "seconds": round(report.seconds, 3),
        "pairs": [
            {
                "score": round(p.score, 4),
                "tokens": p.tokens,
                "a": _side(p.a),
                "b": _side(p.b),
            }
            for p in report.pairs
        ],
    }


def _side(side: ReportSide) -> dict[str, object]:
    return {
        "student": side.student,
        "version": side.version,
        "similarity": round(side.similarity, 4),
        "lines": [list(r) for r in side.lines],
    }


@click.command("similarity", short_help="Similar sources between a class's students.")
@click.argument("name")
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    default=THRESHOLD,
    show_default=True,
    help="Report pairs whose larger similarity is above this share.",
)
@click.option("--json", "as_json", is_flag=True, help="As JSON.")
@url_option
def similarity_command(name: str, threshold: float, as_json: bool, url: str | None) -> None:
    """The pairs of class NAME's students whose latest versions look alike: winnowed
    fingerprints (copydetect, as MOSS), the reference bots and the starter bot left out;
    each side's share found in the other and its matching lines."""
    from rich.table import Table

    from arena.service.permissions import OPERATOR
    from arena.service.similarity import similarity_report
    from arena.store.db import open_store

    store = open_store(url)
    try:
        report = similarity_report(store, OPERATOR, name, threshold=threshold)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps(report_json(report), indent=2))
        return
    pairs = len(report.pairs)
    click.echo(
        f"{report.class_name}: {report.compared} of {report.students} students have a "
        f"version; {report.compared * (report.compared - 1) // 2} pairs compared in "
        f"{report.seconds:.2f} s; {pairs} pair{'' if pairs == 1 else 's'} above "
        f"{report.threshold:.0%}"
    )
    if not report.pairs:
        return
    table = Table(title=f"Similar sources in {report.class_name}")
    for column in ("score", "student", "share", "lines", "student ", "share ", "lines "):
        table.add_column(
            column, justify="right" if "share" in column or column == "score" else "left"
        )
    for p in report.pairs:
        table.add_row(
            f"{p.score:.0%}",
            p.a.version,
            f"{p.a.similarity:.0%}",
            _lines(p.a),
            p.b.version,
            f"{p.b.similarity:.0%}",
            _lines(p.b),
        )
    console().print(table)
