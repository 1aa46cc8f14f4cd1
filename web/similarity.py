"""A class's similarity report on the web (docs/web.md, "Similar sources"):
``/classes/NAME/similarity``, for the class's teachers (the service checks: a stranger
gets 404, a student 403).

The pairs above the threshold (``?threshold=0.5``, 0 to 1) are listed, the highest score
first; one of them (``?pair=N``: the first by default) is shown side by side, each source
with its line numbers and its matching lines marked (rows with the class ``match``). One
pair at a time keeps the page small whatever the class (a source may be 256 KB).
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

#: Pairs listed at most (the highest scores); the API and the command line list all.
MAX_PAIRS_LISTED = 200


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


def _chosen(count: int) -> int:
    """The pair shown side by side (``?pair=N``, from 1; the first by default)."""
    text = request.args.get("pair", "").strip()
    if not text:
        return 1
    if not text.isdigit() or not 1 <= int(text) <= max(count, 1):
        abort(404, f"There is no pair {text[:20]!r} at this threshold.")
    return int(text)


@similarity.get("/classes/<name>/similarity")
@guarded("manage-class", early=False)
def similarity_page(name: str) -> str:
    """The pairs of the class's students whose latest versions look alike, the highest
    score first; one of them (``?pair=N``, the first by default) side by side."""
    try:
        report = similarity_report(get_store(), current_account(), name, threshold=_threshold())
    except ClassError as exc:  # more than a page compares
        abort(400, sentence(str(exc)))
    chosen = _chosen(len(report.pairs))
    pair = report.pairs[chosen - 1] if report.pairs else None
    sides = (
        None
        if pair is None
        else (
            lines_of(report.sources[pair.a.version_id], pair.a),
            lines_of(report.sources[pair.b.version_id], pair.b),
        )
    )
    return render_template(
        "similarity.html",
        report=report,
        listed=report.pairs[:MAX_PAIRS_LISTED],
        chosen=chosen,
        pair=pair,
        sides=sides,
    )
