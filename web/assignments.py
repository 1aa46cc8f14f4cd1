"""Graded assignments on the web (issue 22, docs/web.md): the teacher's creation form, an
assignment's page and its grade export.

- ``/classes/NAME/assignments/new``: a class's teacher sets the rule set (one of the
  class's), the deadline (read in the zone chosen beside it, the teacher's browser's by
  default), the references (reference bots and the teacher's own, pinned to their latest
  version), the grade thresholds (a line a grade, best first: ``A: counter``) and the test.
- ``/classes/NAME/assignments/A``: for the class's teachers the grade table (each student's
  kept submission, its verdict, Elo difference with its interval and games against each
  reference, the grade, late marks) and every submission; for a student the submit form
  (a file, or a version of their own) and their own submissions with their verdicts, each
  linked to its games (the compare's page). The submissions' part refreshes itself (htmx,
  ``.../live``) while one is checked or graded.
- ``/classes/NAME/assignments/A/grades.csv``: the grade table for a spreadsheet
  (arena.service.exports.grade_csv); ``?format=canvas`` Canvas's gradebook import,
  ``?format=moodle&by=idnumber|email`` Moodle's (arena.service.gradebooks).

Every read and write is the service's (arena.service.assignments), which checks who may:
a stranger to the class gets 404, a student the teacher's pages 403, and a student sees
only their own submissions (never another's, nor a real name).
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.match.runtimes import RUNTIMES
from arena.service.accounts import Account
from arena.service.assignments import (
    AssignmentError,
    AssignmentView,
    NewAssignment,
    assignment_grades,
    assignment_view,
    create_assignment,
    submit_version,
)
from arena.service.branches import bot_choices
from arena.service.classes import class_for_teacher
from arena.service.gradebooks import FORMATS, GradebookError, GradebookFile, gradebook_file
from arena.service.intake import Purpose, take_upload
from arena.service.uploads import form_runtime
from web.auth import current_account, guarded, public
from web.competitions import ZONES, countdown, parse_local, zoned
from web.downloads import disposition
from web.extensions import get_store
from web.forms import form_float, form_int, read_file, sentence, upload_key

__all__ = [
    "GRADE_FILES",
    "LIVE_SECONDS",
    "assignments",
    "download",
    "grade_file",
    "parse_points",
    "parse_thresholds",
    "thresholds_text",
]

logger = logging.getLogger(__name__)

assignments = Blueprint("assignments", __name__)

#: How often the submissions' part refreshes while one is checked or graded (seconds).
LIVE_SECONDS = 3
#: A threshold's line: ``A: counter, greedy`` (the grade, then the labels it must beat).
_LINE = re.compile(r"\s*(?P<grade>[^:]{1,16}?)\s*:\s*(?P<beats>.*?)\s*")
#: The submission statuses that the page follows live.
_MOVING = ("pending", "grading")

#: The creation form's defaults (the service's, as a person types them).
FORM_DEFAULTS: dict[str, Any] = {
    "name": "",
    "description": "",
    "rules": "",
    "time_zone": "",
    "opens": "",
    "deadline": "",
    "references": ["reference/random", "reference/greedy", "reference/counter"],
    "other_references": "",
    "thresholds": "A: counter\nB: greedy\nC: random\nF:",
    "points": "100",
    "runtimes": list(RUNTIMES),
    "elo1": "20",
    "alpha": "0.05",
    "beta": "0.05",
    "max_games": "400",
    "move_ms": "1000",
}


def thresholds_text(grades: tuple[tuple[str, tuple[str, ...]], ...]) -> str:
    """Grade thresholds as the form writes them: a line a grade, ``A: counter``."""
    return "\n".join(f"{grade}: {', '.join(beats)}".rstrip() for grade, beats in grades)


def parse_thresholds(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The form's thresholds (a line a grade, best first: ``GRADE: LABEL, LABEL``; the
    last grade may beat none), for the service to check against the references.

    Raises:
        AssignmentError: a line without its colon (the message quotes it).
    """
    grades = []
    for line in text.splitlines():
        if not line.strip():
            continue
        found = _LINE.fullmatch(line)
        if found is None:
            raise AssignmentError(
                f"write each grade on a line of its own as GRADE: REFERENCES (e.g. "
                f"'B: greedy'), not {line.strip()[:60]!r}"
            )
        beats = tuple(b.strip() for b in found["beats"].split(",") if b.strip())
        grades.append((found["grade"], beats))
    if not grades:
        raise AssignmentError("give the grades, best first: a line each, like 'A: counter'")
    return tuple(grades)


def parse_points(text: str) -> tuple[tuple[tuple[str, float], ...], float | None]:
    """The form's points scale: a number (the best grade's points, spread down to 0 for the
    last) or each grade's, ``A=10 B=8 C=6 F=0`` (spaces, commas or lines between), as
    (each grade's points, the maximum); the service checks them against the grades.

    >>> parse_points("10"), parse_points("A=10, F=0.5")
    (((), 10.0), ((('A', 10.0), ('F', 0.5)), None))

    Raises:
        AssignmentError: neither (the message quotes what it cannot read).
    """
    words = [w for w in re.split(r"[\s,;]+", text) if w]
    if not words:
        return (), None
    try:
        if len(words) == 1 and "=" not in words[0]:
            return (), float(words[0])
        pairs = [w.split("=", 1) for w in words]
        return tuple((g.strip(), float(v)) for g, v in pairs), None
    except ValueError:
        raise AssignmentError(
            f"write the points as the best grade's (e.g. 10) or each grade's (A=10 B=8 C=6 "
            f"F=0), not {text.strip()[:60]!r}"
        ) from None


# --- the creation form ------------------------------------------------------------------------


def _reference_choices(account: Account | None) -> list[tuple[str, str, str]]:
    """The references offered: (value, shown, kind) of each reference bot's and each of
    the teacher's own bots' latest version."""
    if account is None:
        return []
    seen: set[tuple[str, str]] = set()
    chosen = []
    for choice in bot_choices(get_store(), account):
        if choice.kind not in ("reference", "yours") or (choice.owner, choice.name) in seen:
            continue
        seen.add((choice.owner, choice.name))
        chosen.append(
            (
                f"{choice.owner}/{choice.name}",
                f"{choice.owner}/{choice.name} v{choice.version}",
                choice.kind,
            )
        )
    return chosen


def _form_context(name: str, values: dict[str, Any]) -> dict[str, Any]:
    row = class_for_teacher(get_store(), current_account(), name)
    if not values.get("rules"):
        values["rules"] = row.rule_sets[0] if row.rule_sets else "block"
    return {
        "c": row,
        "rule_sets": row.rule_sets or ("block",),
        "zones": ZONES,
        "choices": _reference_choices(current_account()),
        "runtimes": list(RUNTIMES.values()),
        "values": values,
    }


def _new_assignment(name: str, values: dict[str, Any]) -> NewAssignment:
    """The form's assignment (the service checks every setting).

    Raises:
        ArenaError: a number, a date or a threshold line cannot be read (it says which).
    """
    zone = str(values["time_zone"]) or "UTC"
    if not str(values["deadline"]).strip():
        raise AssignmentError("choose a deadline")
    opens = str(values["opens"]).strip()
    others = [s for s in re.split(r"[\s,]+", str(values["other_references"])) if s]
    points, max_points = parse_points(str(values["points"]))
    return NewAssignment(
        class_name=name,
        name=str(values["name"]),
        description=str(values["description"]).strip(),
        rules=str(values["rules"]),
        references=(*values["references"], *others),
        grades=parse_thresholds(str(values["thresholds"])),
        opens=parse_local(opens, zone, "opening time") if opens else None,
        deadline=parse_local(str(values["deadline"]), zone, "deadline"),
        time_zone=zone,
        elo1=form_float("elo1", 20.0),
        alpha=form_float("alpha", 0.05),
        beta=form_float("beta", 0.05),
        max_games=form_int("max_games", 400),
        move_ms=form_int("move_ms", 1000),
        runtimes=tuple(values["runtimes"]),
        points=points,
        max_points=max_points,
    )


@assignments.route("/classes/<name>/assignments/new", methods=["GET", "POST"])
@guarded("manage-class", early=False)
def new_assignment(name: str) -> BaseResponse | tuple[str, int] | str:
    """A class's teacher sets an assignment: the submissions are graded against its
    references by the sequential test, thresholds mapping the verdicts to grades."""
    if request.method == "GET":
        return render_template("assignment_new.html", **_form_context(name, dict(FORM_DEFAULTS)))
    values: dict[str, Any] = {key: request.form.get(key, "") for key in FORM_DEFAULTS}
    values["references"] = request.form.getlist("references")
    values["runtimes"] = request.form.getlist("runtimes")
    try:
        new = _new_assignment(name, values)
        row = create_assignment(get_store(), current_account(), new)
    except (PermissionDenied, NotFound):
        raise
    except (ArenaError, ValueError, LookupError) as exc:
        flash(sentence(str(exc.args[0] if exc.args else exc)))
        return render_template("assignment_new.html", **_form_context(name, values)), 400
    flash(f"Assignment {row.name} created: students can submit from its page.")
    return redirect(url_for("assignments.assignment_page", name=name, assignment=row.name))


# --- an assignment's page -----------------------------------------------------------------------


def _moving(view: AssignmentView) -> bool:
    """Whether a submission the page shows is still checked or graded."""
    return any(s.status in _MOVING for s in view.submissions)


def _page_context(name: str, assignment: str, *, whole: bool = True) -> dict[str, Any]:
    """What the page shows (``whole``: with the submit form's versions; the live part,
    polled, needs none)."""
    store, account = get_store(), current_account()
    view = assignment_view(store, account, name, assignment)
    context: dict[str, Any] = {
        "a": view,
        "labels": view.labels,
        "live": _moving(view),
        "live_seconds": LIVE_SECONDS,
        "now": datetime.now(UTC),
        "deadline": zoned(view.deadline, view.time_zone),
        "opens": zoned(view.opens, view.time_zone),
        "countdown": countdown(view.deadline),
        "thresholds": view.grades,
        "at": lambda moment: zoned(moment, view.time_zone),  # a time in the assignment's zone
    }
    if view.teacher:
        context["rows"] = assignment_grades(store, account, name, assignment)
    elif whole and account is not None:
        context["versions"] = [c for c in bot_choices(store, account) if c.kind == "yours"]
        context["suffixes"] = sorted({RUNTIMES[r].suffix for r in view.runtimes if r in RUNTIMES})
    return context


@assignments.get("/classes/<name>/assignments/<assignment>")
@public  # the class's members only: the service checks
def assignment_page(name: str, assignment: str) -> str:
    """An assignment: for its class's teachers the grade table and every submission; for
    a student the submit form and their own submissions with their verdicts."""
    context = _page_context(name, assignment)
    template = "assignment_teacher.html" if context["a"].teacher else "assignment_student.html"
    return render_template(template, **context)


@assignments.get("/classes/<name>/assignments/<assignment>/live")
@public  # the class's members only: the service checks
def assignment_live(name: str, assignment: str) -> str:
    """The submissions' part of an assignment's page (polled while one is graded)."""
    context = _page_context(name, assignment, whole=False)
    template = "_assignment_grades.html" if context["a"].teacher else "_assignment_mine.html"
    return render_template(template, **context)


@assignments.post("/classes/<name>/assignments/<assignment>/submit")
@guarded("upload")
def submit(name: str, assignment: str) -> BaseResponse | tuple[str, int]:
    """A student submits a bot: a ``.py`` file (checked in the sandbox on a worker first)
    or a version of their own; its gauntlet against the references starts once it is
    accepted."""
    store, account = get_store(), current_account()
    chosen = request.form.get("version", "").strip()
    file = request.files.get("source")
    notice: str | None = None
    try:
        if chosen:
            submit_version(store, account, name, assignment, chosen)
        elif file is not None and file.filename:
            filename, data = read_file(file)
            bot = request.form.get("bot_name", "").strip()
            received = take_upload(
                store, account, filename, data,
                purpose=Purpose.submission(name, assignment), name=bot, key=upload_key(),
                runtime=form_runtime(filename, request.form.get("runtime", "")),
            )  # fmt: skip
            notice = received.notice
        else:
            raise AssignmentError("choose a bot file to upload, or one of your versions")
    except PermissionDenied:
        raise
    except (ArenaError, ValueError, LookupError) as exc:  # NotFound too: "you have no bot
        return _again(name, assignment, exc)  # X"; a hidden class is 404 again there
    flash(
        sentence(notice)
        if notice is not None
        else "Submitted: it is checked, then played against each reference. This page follows it."
    )
    return redirect(url_for("assignments.assignment_page", name=name, assignment=assignment), 303)


def _again(name: str, assignment: str, exc: Exception) -> tuple[str, int]:
    """The assignment's page again with the service's sentence (a refused submission)."""
    flash(sentence(str(exc.args[0] if exc.args else exc)))
    context = _page_context(name, assignment)
    template = "assignment_teacher.html" if context["a"].teacher else "assignment_student.html"
    return render_template(template, **context), 400


@assignments.get("/classes/<name>/assignments/<assignment>/grades.csv")
@guarded("manage-class", early=False)
def grades_csv(name: str, assignment: str) -> Response:
    """The grades as CSV, for the class's teachers: the whole table, or with
    ``?format=canvas`` / ``?format=moodle&by=idnumber|email`` the file that gradebook
    imports (arena.service.gradebooks); UTF-8 with a byte-order mark."""
    try:
        found = grade_file(name, assignment, current_account())
    except GradebookError as exc:
        return Response(sentence(str(exc)), 400, mimetype="text/plain")
    return download(found)


def grade_file(name: str, assignment: str, account: Account | None) -> GradebookFile:
    """The grade file the request's ``format`` and ``by`` ask for (the page's and the
    API's).

    Raises:
        NotFound, PermissionDenied: as :func:`arena.service.assignments.assignment_grades`.
        GradebookError: a format (or Moodle's ``by``) there is none of.
    """
    store = get_store()
    rows = assignment_grades(store, account, name, assignment)
    view = assignment_view(store, account, name, assignment)
    return gradebook_file(
        rows, class_name=view.class_name, assignment=view.name, references=view.labels,
        max_points=view.max_points, kind=request.args.get("format", "table"),
        by=request.args.get("by", "idnumber"),
    )  # fmt: skip


def download(found: GradebookFile) -> Response:
    """A grade file as a download, UTF-8 with its byte-order mark (``X-Left-Out``: how
    many students Moodle's file leaves out)."""
    response = Response(found.text.encode("utf-8"), mimetype="text/csv")
    response.headers["Content-Disposition"] = disposition(found.filename)
    if found.left_out:
        response.headers["X-Left-Out"] = str(len(found.left_out))
    return response


#: The grade files the page offers (the format, what it is for).
GRADE_FILES = tuple(zip(FORMATS, ("a spreadsheet", "Canvas", "Moodle"), strict=True))
