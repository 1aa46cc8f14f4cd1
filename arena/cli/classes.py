"""``arena class create|list|roster|join-code|teacher|reset-password|grades|similarity``
(docs/classes.md).

The command line acts as the operator (:data:`arena.service.permissions.OPERATOR`, an admin
of every class), through the same service actions as the web's pages and the API
(arena.service.classes). A class created here has no teacher until ``--teacher`` (or
``arena class teacher``) names one. ``roster --import FILE`` prints the new logins with
their first-time passwords once, as CSV: print it or hand it out, it is not kept.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import Any

import click

from arena.cli.assignment import assignment_grades
from arena.cli.common import console, help_without_command, url_option
from arena.cli.similarity import similarity_command
from arena.cli.stored import open_store
from arena.service.permissions import OPERATOR

__all__ = ["class_group"]


@click.group(
    "class",
    invoke_without_command=True,
    short_help="Classes: create, list, roster, join code, teachers, password resets.",
)
@click.pass_context
def class_group(ctx: click.Context) -> None:
    """Classes: a teacher's students join with a code or come in by a roster (docs/classes.md)."""
    help_without_command(ctx)


def _when(moment: datetime | None) -> str:
    return "-" if moment is None else moment.strftime("%Y-%m-%d %H:%M UTC")


@class_group.command("create", short_help="Create a class with its join code.")
@click.argument("name")
@click.option(
    "--rules",
    "rule_sets",
    multiple=True,
    default=["block"],
    show_default=True,
    metavar="PRESET",
    help="A rule set it plays (repeat: the first is the default).",
)
@click.option(
    "--teacher",
    "teachers",
    multiple=True,
    metavar="USER",
    help="A teacher of it (repeat for several; the user needs the teacher role).",
)
@click.option("--description", default="")
@click.option("--uploads-per-hour", type=int, default=10, show_default=True)
@click.option("--checks-queued", type=int, default=30, show_default=True)
@click.option("--hide-reference", is_flag=True, help="Its leaderboard hides the reference bots.")
@click.option(
    "--join-hours",
    type=float,
    default=24.0,
    show_default=True,
    help="How long the join code lasts (0: joining by code is closed).",
)
@url_option
def class_create(name: str, rule_sets: tuple[str, ...], teachers: tuple[str, ...],
                 description: str, uploads_per_hour: int, checks_queued: int,
                 hide_reference: bool, join_hours: float, url: str | None) -> None:  # fmt: skip
    """Create class NAME (with a join code lasting --join-hours) and give it its teachers."""
    from arena.service import classes as service

    new = service.NewClass(
        name=name, description=description, rule_sets=rule_sets,
        uploads_per_hour=uploads_per_hour, checks_queued=checks_queued,
        show_reference=not hide_reference, join_hours=join_hours,
    )  # fmt: skip
    with open_store(url) as store:
        row = service.create_class(store, OPERATOR, new)
        for teacher in teachers:
            row = service.add_teacher(store, OPERATOR, row.name, teacher)
    click.echo(f"class {row.name!r} (id {row.id}): {', '.join(row.rule_sets)}; {_code(row)}")


def _code(row: Any) -> str:
    if row.join_code is None:
        return "joining by code is closed"
    return f"join code {row.join_code} (/join/{row.join_code}) until {_when(row.join_expires)}"


@class_group.command("list", short_help="List the classes.")
@click.option("--json", "as_json", is_flag=True, help="As JSON.")
@url_option
def class_list(as_json: bool, url: str | None) -> None:
    """Every class: its rule sets, teachers, students and join code."""
    from arena.service import classes as service

    with open_store(url) as store:
        every, _ = service.my_classes(store, OPERATOR)
        counts = {row.id: len(service.student_ids(store, row.id)) for row in every}
        names = {row.id: _teacher_names(store, row.teacher_ids) for row in every}
    listed = [
        {"name": row.name, "rule_sets": list(row.rule_sets), "teachers": names[row.id],
         "students": counts[row.id], "join_code": row.join_code,
         "join_expires": None if row.join_expires is None else row.join_expires.isoformat()}
        for row in every
    ]  # fmt: skip
    if as_json:
        click.echo(json.dumps(listed, indent=2))
        return
    if not listed:
        click.echo("no classes")
        return
    from rich.table import Table

    table = Table(title="Classes")
    for column in ("name", "rules", "teachers", "students", "join code"):
        table.add_column(column)
    for row, item in zip(every, listed, strict=True):
        table.add_row(row.name, ", ".join(row.rule_sets), ", ".join(names[row.id]) or "-",
                      str(item["students"]), _code(row))  # fmt: skip
    console().print(table)


def _teacher_names(store: Any, ids: frozenset[int]) -> list[str]:
    from arena.service.accounts import find_account

    found = [find_account(store, user_id) for user_id in sorted(ids)]
    return sorted(account.name for account in found if account is not None)


@class_group.command("roster", short_help="A class's students, or import a roster file.")
@click.argument("name")
@click.option(
    "--import",
    "import_file",
    type=click.File("rb"),
    default=None,
    metavar="FILE",
    help="The CSV a school's system exports (Canvas, Moodle, Google Classroom, a list; "
    "'-': stdin): prints the new logins.",
)
@click.option("--preview", is_flag=True, help="With --import: show what it would do, make nothing.")
@click.option(
    "--columns",
    default=None,
    metavar="ROLES",
    help="With --import: what each column holds, comma-separated "
    "(name,first,last,id,login,email,section,ignore); default: as recognised.",
)
@click.option(
    "--school-logins", is_flag=True, help="With --import: the school's logins, not pseudonyms."
)
@click.option(
    "--flagged",
    type=click.Choice(["skip", "link", "new"]),
    default="skip",
    show_default=True,
    help="With --import: a namesake without the school id in the class.",
)
@click.option("--json", "as_json", is_flag=True, help="The roster (or the preview) as JSON.")
@url_option
def class_roster(
    name: str,
    import_file: Any,
    preview: bool,
    columns: str | None,
    school_logins: bool,
    flagged: str,
    as_json: bool,
    url: str | None,
) -> None:
    """Class NAME's students with their latest versions; with --import, the students of
    FILE: --preview shows what the import does (the format and columns recognised, each
    student made, updated, unchanged or flagged); without it, the accounts are made and the
    logins printed with their first-time passwords (CSV: real_name, login, password), shown
    this once."""
    from arena.service import classes as service

    with open_store(url) as store:
        if import_file is not None:
            text = service.decode_roster(import_file.read())
            choices: dict[str, Any] = {
                "mapping": None if columns is None else [c.strip() for c in columns.split(",")],
                "logins": "school" if school_logins else "pseudonym",
                "flagged": flagged,
            }
            _import(store, name, text, choices, preview=preview, as_json=as_json)
            return
        view = service.roster_view(store, OPERATOR, name)
    if as_json:
        click.echo(json.dumps([_roster_json(r) for r in view.students], indent=2))
        return
    from rich.table import Table

    table = Table(title=f"Class {view.name} ({view.rules})")
    for column in ("student", "real name", "school id", "latest version", "uploaded", "check",
                   "rating", "faults", "latest upload"):  # fmt: skip
        table.add_column(column)
    for r in view.students:
        rating = "-" if r.rating is None else f"{r.rating:.0f} [{r.low:.0f}, {r.high:.0f}]"
        table.add_row(r.student, r.real_name or "-", r.school_id or "-", str(r.version or "-"),
                      _when(r.uploaded), r.check_summary, rating, str(r.faults),
                      r.upload_status or "-")  # fmt: skip
    console().print(table)


def _import(
    store: Any, name: str, text: str, choices: dict[str, Any], *, preview: bool, as_json: bool
) -> None:
    """``arena class roster --import``: the preview, or the import's logins as CSV."""
    import dataclasses

    from arena.service import classes as service
    from arena.service.accounts import password_hasher
    from arena.service.exports import spreadsheet_csv

    if preview:
        shown = service.preview_roster(store, OPERATOR, name, text, **choices)
        if as_json:
            click.echo(json.dumps(dataclasses.asdict(shown), indent=2))
            return
        mapping = ", ".join(f"{c.header or c.index + 1}: {c.role}" for c in shown.columns)
        click.echo(f"{shown.format}; columns {mapping}")
        from rich.table import Table

        table = Table(title=f"Roster for {shown.name}")
        for column in ("line", "real name", "school id", "section", "becomes", "login", "note"):
            table.add_column(column)
        for s in shown.students:
            table.add_row(str(s.line), s.real_name, s.school_id or "-", s.section or "-",
                          s.action, s.login or "(pseudonym)", s.note)  # fmt: skip
        console().print(table)
        click.echo(", ".join(f"{shown.count(a)} {a}" for a in ("make", "update", "unchanged",
                                                               "flagged")))  # fmt: skip
        return
    done = service.import_roster(store, OPERATOR, name, text, password_hasher(), **choices)
    columns = ("real_name", "login", "password")
    rows = [{c: getattr(r, c) for c in columns} for r in done.logins]
    sys.stdout.write(spreadsheet_csv(rows, columns))  # formulas quoted
    if done.updated or done.flagged:
        click.echo(
            f"{len(done.updated)} updated, {len(done.unchanged)} unchanged, "
            f"{len(done.flagged)} flagged (not imported)",
            err=True,
        )


def _roster_json(row: Any) -> dict[str, Any]:
    fields = {name: getattr(row, name) for name in row.__dataclass_fields__}
    fields["version"] = None if row.version is None else str(row.version)
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in fields.items()}


@class_group.command("join-code", short_help="Show, rotate or close a class's join code.")
@click.argument("name")
@click.option("--rotate", is_flag=True, help="Draw a new code (the old one stops working).")
@click.option(
    "--hours", type=float, default=24.0, show_default=True, help="How long a new code lasts."
)
@click.option("--close", is_flag=True, help="Close joining by code.")
@url_option
def class_join_code(name: str, rotate: bool, hours: float, close: bool, url: str | None) -> None:
    """Class NAME's join code: as it is, or --rotate (for --hours), or --close."""
    from arena.cli.common import UsageError
    from arena.service import classes as service

    if rotate and close:
        raise UsageError("choose --rotate or --close, not both")
    with open_store(url) as store:
        if rotate:
            row = service.rotate_join_code(store, OPERATOR, name, hours=hours)
        elif close:
            row = service.close_join_code(store, OPERATOR, name)
        else:
            row = service.class_for_teacher(store, OPERATOR, name)
    click.echo(f"{row.name}: {_code(row)}")


@class_group.command("teacher", short_help="Make a user a teacher of a class.")
@click.argument("name")
@click.argument("user")
@url_option
def class_teacher(name: str, user: str, url: str | None) -> None:
    """Make USER (who has the teacher role: `arena users role USER teacher`) a teacher of
    class NAME too."""
    from arena.service import classes as service

    with open_store(url) as store:
        row = service.add_teacher(store, OPERATOR, name, user)
        names = _teacher_names(store, row.teacher_ids)
    click.echo(f"{row.name}: teachers {', '.join(names)}")


@class_group.command("reset-password", short_help="Give a student a first-time password.")
@click.argument("name")
@click.argument("student")
@url_option
def class_reset_password(name: str, student: str, url: str | None) -> None:
    """Give STUDENT of class NAME a new first-time password (printed once), to be changed
    at the next login; its sessions end."""
    from arena.service import classes as service
    from arena.service.accounts import password_hasher

    with open_store(url) as store:
        password = service.reset_password(store, OPERATOR, name, student, password_hasher())
    click.echo(f"{student.strip()}: first-time password {password} (to change at the next login)")


# `arena class similarity` is its own module's (the similarity report, arena.service.similarity),
# `arena class grades CLASS ASSIGNMENT` is `arena assignment grades`.
class_group.add_command(similarity_command)
class_group.add_command(assignment_grades, "grades")
