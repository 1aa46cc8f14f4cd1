"""A class's similarity report on the web (docs/web.md, "Similar sources"):
``/classes/NAME/similarity``, for the class's teachers (the service checks: a stranger
gets 404, a student 403).

Each pair above the threshold (``?threshold=0.5``, 0 to 1) is shown side by side, each
source with its line numbers and its matching lines marked (``<mark>``-like rows with the
class ``match``), the highest score first and open; the others fold (``<details>``: no
script).
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import Blueprint, abort, render_template, request

from arena.service.classes import ClassError
from arena.service.similarity import THRESHOLD, ReportSide, similarity_report
from web.auth import current_account, guarded
from web.extensions import get_store
from web.forms import sentence

__all__ = ["similarity"]

similarity = Blueprint("similarity", __name__)

#: Pairs shown at most (the highest scores): more is a wall of code; the API lists all.
MAX_PAIRS_SHOWN = 60


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a source as the page shows it."""

    number: int
    text: str
    match: bool


def lines_of(source: str, side: ReportSide) -> list[Line]:
    """``source``'s lines, numbered from 1, each marked if ``side`` says it matches."""
    marked = {n for first, last in side.lines for n in range(first, last + 1)}
    return [
        Line(number, text, number in marked)
        for number, text in enumerate(source.split("\n"), start=1)
    ]


def _threshold() -> float:
    text = request.args.get("threshold", "").strip()
    if not text:
        return THRESHOLD
    try:
        value = float(text)
    except ValueError:
        abort(400, f"The threshold is a number from 0 to 1, not {text[:40]!r}.")
    if not 0 <= value <= 1:
        abort(400, f"The threshold is a number from 0 to 1, not {value:g}.")
    return value


@similarity.get("/classes/<name>/similarity")
@guarded("manage-class", early=False)
def similarity_page(name: str) -> str:
    """The pairs of the class's students whose latest versions look alike, side by side."""
    try:
        report = similarity_report(get_store(), current_account(), name, threshold=_threshold())
    except ClassError as exc:  # more than a page compares
        abort(400, sentence(str(exc)))
    shown = report.pairs[:MAX_PAIRS_SHOWN]
    sides = [
        (
            lines_of(report.sources[p.a.version_id], p.a),
            lines_of(report.sources[p.b.version_id], p.b),
        )
        for p in shown
    ]
    return render_template(
        "similarity.html", report=report, shown=list(zip(shown, sides, strict=True))
    )
