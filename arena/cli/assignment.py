"""``arena assignment create|status|grades|submit`` (docs/assignments.md).

The command line acts as the operator (:data:`arena.service.permissions.OPERATOR`), through
the same service actions as the web's pages and the API (arena.service.assignments).
``submit`` submits a student's bot: a bot file is checked here as ``arena bots add``
checks it and stored under ``--owner``, or ``--version`` names a stored one; its gauntlet
is sent to the workers (``arena worker``), which grade it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import click

from arena.cli.common import (
    UsageError,
    broker_option,
    console,
    help_without_command,
    memory_option,
    runtime_option,
    unsandboxed_option,
    url_option,
)
from arena.cli.competition import parse_when, store_checked_file
from arena.match.runtimes import RUNTIMES
from arena.service.permissions import OPERATOR

# The service and the database (SQLAlchemy, Celery, scipy) are imported as a command runs,
# not by its --help (tests/cli/test_lazy.py).
if TYPE_CHECKING:
    from arena.service.assignments import SubmissionView
    from arena.store.db import Store

__all__ = [
    "CREATE_DEFAULTS",
    "GRADEBOOKS",
    "MOODLE_KEYS",
    "CreateDefaults",
    "assignment_group",
    "parse_grade",
    "parse_points",
]  # fmt: skip


#: ``assignment create``'s defaults, as its --help shows them: those of
#: arena.service.assignments.NewAssignment, repeated here so that the help imports no
#: service (tests/cli/test_lazy.py checks that they agree).
class CreateDefaults(NamedTuple):
    elo0: float = 0.0
    elo1: float = 20.0
    alpha: float = 0.05
    beta: float = 0.05
    max_games: int = 400
    batch: int = 8
    move_ms: int = 1000
    memory_mb: int = 256


CREATE_DEFAULTS = CreateDefaults()
#: arena.service.gradebooks.FORMATS and MOODLE_KEYS, repeated likewise.
GRADEBOOKS = ("table", "canvas", "moodle")
MOODLE_KEYS = ("idnumber", "email")


@contextmanager
def _opened(url: str | None) -> Iterator[Store]:
    from arena.store.db import open_store

    store = open_store(url)
    try:
        yield store
    finally:
        store.close()


def parse_grade(text: str) -> tuple[str, tuple[str, ...]]:
    """``A=counter`` (beats counter), ``B=greedy+random`` (beats both), ``F=`` (nothing).

    Raises:
        UsageError: no ``=``.
    """
    grade, sep, beats = text.partition("=")
    if not sep:
        raise UsageError(f"{text!r} is not GRADE=REF[+REF...] (e.g. A=counter, F=)")
    return grade.strip(), tuple(b.strip() for b in beats.split("+") if b.strip())


def parse_points(text: str) -> tuple[str, float]:
    """``A=10``: grade A is worth 10 points.

    Raises:
        UsageError: not GRADE=NUMBER.
    """
    grade, sep, value = text.partition("=")
    try:
        if not sep:
            raise ValueError(text)
        return grade.strip(), float(value)
    except ValueError:
        raise UsageError(f"{text!r} is not GRADE=POINTS (e.g. A=10, F=0)") from None


@click.group(
    "assignment",
    invoke_without_command=True,
    short_help="Graded assignments of a class: create, status, grades, submit.",
)
@click.pass_context
def assignment_group(ctx: click.Context) -> None:
    """A class's graded assignments: each submission plays the reference bots under a
    sequential test, and its verdicts give its grade."""
    help_without_command(ctx)


@assignment_group.command("create", short_help="Create an assignment of a class.")
@click.argument("class_name", metavar="CLASS")
@click.argument("name")
@click.option("--deadline", required=True, metavar="WHEN", help="ISO 8601, or +7d from now.")
@click.option("--opens", metavar="WHEN", default=None, help="When it opens (default: now).")
@click.option("--time-zone", default="UTC", show_default=True, help="The teacher's time zone.")
@click.option("--rules", "rules_name", default="block", show_default=True, metavar="PRESET")
@click.option(
    "--reference",
    "references",
    multiple=True,
    metavar="[LABEL=]OWNER/BOT[@vN]",
    help="A reference bot (repeat; default reference/random, greedy and counter).",
)
@click.option(
    "--grade",
    "grades",
    multiple=True,
    metavar="GRADE=REF[+REF]",
    help="Best first (repeat): A=counter ... F= (default A=counter B=greedy C=random F=).",
)
@click.option("--elo0", type=float, default=CREATE_DEFAULTS.elo0, show_default=True)
@click.option("--elo1", type=float, default=CREATE_DEFAULTS.elo1, show_default=True)
@click.option("--alpha", type=float, default=CREATE_DEFAULTS.alpha, show_default=True)
@click.option("--beta", type=float, default=CREATE_DEFAULTS.beta, show_default=True)
@click.option("--max-games", type=int, default=CREATE_DEFAULTS.max_games, show_default=True)
@click.option("--batch", type=int, default=CREATE_DEFAULTS.batch, show_default=True)
@click.option("--move-ms", type=int, default=CREATE_DEFAULTS.move_ms, show_default=True)
@click.option("--memory", type=int, default=CREATE_DEFAULTS.memory_mb, show_default=True)
@click.option("--description", default="")
@click.option(
    "--runtime",
    "runtimes",
    multiple=True,
    type=click.Choice(list(RUNTIMES)),
    help="A runtime submissions may run under (repeat; default: all of them).",
)
@click.option(
    "--points",
    "points",
    multiple=True,
    metavar="GRADE=POINTS",
    help="A grade's points for a gradebook (repeat, every grade: A=10 ... F=0).",
)
@click.option(
    "--max-points",
    type=float,
    default=None,
    help="Instead: the best grade's points, spread down to 0 for the last (default 100).",
)
@url_option
def assignment_create(class_name: str, name: str, deadline: str, opens: str | None,
                      time_zone: str, rules_name: str, references: tuple[str, ...],
                      grades: tuple[str, ...], elo0: float, elo1: float, alpha: float,
                      beta: float, max_games: int, batch: int, move_ms: int, memory: int,
                      description: str, runtimes: tuple[str, ...], points: tuple[str, ...],
                      max_points: float | None, url: str | None) -> None:  # fmt: skip
    """Create assignment NAME of class CLASS: submissions until --deadline, each graded by
    its gauntlet against the --reference bots, mapped to a grade by --grade."""
    from arena.service import assignments as service
    from arena.service.assignments import NewAssignment
    from arena.service.competition_views import local_time

    defaults = NewAssignment(class_name="", name="", deadline=datetime.min)
    new = NewAssignment(
        class_name=class_name, name=name, deadline=parse_when(deadline, time_zone),
        opens=None if opens is None else parse_when(opens, time_zone), time_zone=time_zone,
        rules=rules_name, references=references or defaults.references,
        grades=tuple(parse_grade(g) for g in grades) or defaults.grades, elo0=elo0,
        elo1=elo1, alpha=alpha, beta=beta, max_games=max_games, batch=batch, move_ms=move_ms,
        memory_mb=memory, description=description, runtimes=runtimes or defaults.runtimes,
        points=tuple(parse_points(p) for p in points), max_points=max_points,
    )  # fmt: skip
    with _opened(url) as store:
        row = service.create_assignment(store, OPERATOR, new)
    refs = ", ".join(f"{r['label']} ({r['bot']})" for r in row.references)
    grading = "; ".join(f"{g['grade']}: {'+'.join(g['beats']) or '-'}" for g in row.grades)
    scale = ", ".join(f"{g} {p:g}" for g, p in row.settings["points"].items())
    click.echo(
        f"assignment {class_name}/{row.name}: {row.rules}, until "
        f"{local_time(row.deadline, row.time_zone)}; references {refs}; grades {grading}; "
        f"points {scale}; runtimes {', '.join(row.settings['runtimes'])}"
    )


def _verdicts(view: SubmissionView) -> str:
    return ", ".join(f"{r.reference} {r.verdict}" for r in view.references)


@assignment_group.command("status", short_help="An assignment and its submissions.")
@click.argument("class_name", metavar="CLASS")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="The submissions as JSON.")
@url_option
def assignment_status(class_name: str, name: str, as_json: bool, url: str | None) -> None:
    """Assignment NAME of CLASS: its settings, then every submission with its verdicts."""
    from rich.table import Table

    from arena.service import assignments as service
    from arena.service.competition_views import local_time

    with _opened(url) as store:
        view = service.assignment_view(store, OPERATOR, class_name, name)
    if as_json:
        click.echo(json.dumps([_plain(s) for s in view.submissions], indent=2, default=str))
        return
    s = view.settings
    click.echo(
        f"{view.class_name}/{view.name}: {view.rules}, "
        f"{local_time(view.opens, view.time_zone)} to {local_time(view.deadline, view.time_zone)}"
        f" ({'open' if view.is_open else 'closed'}); test elo0 {s['elo0']:g}, elo1 "
        f"{s['elo1']:g}, alpha {s['alpha']:g}, beta {s['beta']:g}, at most {s['max_games']} "
        "games a reference"
    )
    table = Table(title=f"Submissions to {view.name}")
    for column in ("id", "student", "version", "status", "verdicts", "grade", "submitted"):
        table.add_column(column)
    for sub in view.submissions:
        status = sub.status + (" (late)" if sub.late else "") + (" *" if sub.kept else "")
        table.add_row(str(sub.id), sub.student, sub.version or "", status, _verdicts(sub),
                      sub.grade or "", local_time(sub.created, view.time_zone))  # fmt: skip
    console().print(table)


def _plain(value: Any) -> Any:
    """A dataclass (nested) as JSON-ready values."""
    if hasattr(value, "__dataclass_fields__"):
        return {k: _plain(getattr(value, k)) for k in value.__dataclass_fields__}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value


@assignment_group.command("grades", short_help="An assignment's grade table.")
@click.argument("class_name", metavar="CLASS")
@click.argument("name")
@click.option("--csv", "as_csv", is_flag=True, help="As CSV (a spreadsheet's columns).")
@click.option("--json", "as_json", is_flag=True, help="As JSON.")
@click.option(
    "--format",
    "kind",
    type=click.Choice(GRADEBOOKS),
    default=None,
    help="The CSV a gradebook imports: table (as --csv), canvas or moodle.",
)
@click.option(
    "--by",
    type=click.Choice(MOODLE_KEYS),
    default="idnumber",
    show_default=True,
    help="What Moodle's file matches students by.",
)
@click.option("--bom", is_flag=True, help="Begin the CSV with a byte-order mark (for Excel).")
@url_option
def assignment_grades(
    class_name: str, name: str, as_csv: bool, as_json: bool, kind: str | None, by: str,
    bom: bool, url: str | None,
) -> None:  # fmt: skip
    """Every student of CLASS with the kept submission to NAME (the last before the
    deadline), its state, verdict against each reference, grade and points; as CSV for a
    spreadsheet, Canvas or Moodle (students left out of Moodle's file are named on
    stderr)."""
    from rich.table import Table

    from arena.service import assignments as service
    from arena.service.exports import grade_rows
    from arena.service.gradebooks import BOM, gradebook_file

    with _opened(url) as store:
        view = service.assignment_view(store, OPERATOR, class_name, name)
        rows = service.assignment_grades(store, OPERATOR, class_name, name)
    labels = view.labels
    if as_json:
        click.echo(json.dumps(grade_rows(rows, labels), indent=2))
        return
    if as_csv or kind is not None:
        found = gradebook_file(
            rows, class_name=view.class_name, assignment=view.name, references=labels,
            max_points=view.max_points, kind=kind or "table", by=by,
        )  # fmt: skip
        click.echo(found.text if bom else found.text.removeprefix(BOM), nl=False)
        for line in found.left_out:
            click.echo(f"left out of Moodle's file: {line}", err=True)
        return
    table = Table(title=f"Grades of {view.class_name}/{view.name}")
    for column in ("student", "real name", "state", "grade", "points", "version", *labels):
        table.add_column(column)
    for row in rows:
        results = {r.reference: r for r in row.references}
        cells = [_cell(results.get(label)) for label in labels]
        grade = (row.grade or "") + (" (late)" if row.late else "")
        points = "" if row.points is None else f"{row.points:g}"
        table.add_row(row.student, row.real_name or "", row.state, grade, points,
                      row.version or "", *cells)  # fmt: skip
    console().print(table)


def _cell(result: Any) -> str:
    if result is None:
        return ""
    elo = "" if result.elo is None else f" {'>=' if result.bounded else ''}{result.elo:+.0f}"
    return f"{result.verdict}{elo} ({result.games})"


@assignment_group.command("submit", short_help="Submit a student's bot to an assignment.")
@click.argument("class_name", metavar="CLASS")
@click.argument("name")
@click.argument("bot", metavar="[FILE]", required=False)
@click.option("--owner", required=True, help="The student's user name.")
@click.option("--version", "reference", metavar="BOT[@vN]", help="A stored version of OWNER's.")
@click.option("--bot-name", default=None, help="The stored bot's name (default: FILE's stem).")
@url_option
@broker_option
@unsandboxed_option
@memory_option
@runtime_option
def assignment_submit(class_name: str, name: str, bot: str | None, owner: str,
                      reference: str | None, bot_name: str | None, url: str | None,
                      broker: str | None, unsandboxed: bool, memory: int,
                      runtime: str | None) -> int:  # fmt: skip
    """Submit OWNER's bot to assignment NAME of CLASS: FILE (checked here as `arena bots
    add` checks it, under --runtime, one the assignment takes, and stored as OWNER's bot)
    or --version; its gauntlet goes to the workers, which grade it (see `arena assignment
    status`)."""
    from arena.service import assignments as service
    from arena.service.broker import configure

    if (bot is None) == (reference is None):
        raise UsageError("give a bot FILE or --version BOT@vN (one of them)")
    if bot is not None:
        with _opened(url) as store:  # a runtime the assignment refuses: no check
            filename = Path(bot).name
            runtime = service.submission_runtime(
                store, OPERATOR, class_name, name, filename, runtime
            )
        stored = store_checked_file(bot, owner, bot_name, url, unsandboxed, memory, runtime)
        if stored is None:
            return 1
        reference = stored
    assert reference is not None
    configure(broker, None, url)
    with _opened(url) as store:
        view = service.submit_version(store, OPERATOR, class_name, name, reference,
                                      owner=owner)  # fmt: skip
    late = " (late)" if view.late else ""
    click.echo(f"{class_name}/{name}: submission {view.id} of {view.version} for {owner}: "
               f"{view.status}{late}")  # fmt: skip
    return 0
