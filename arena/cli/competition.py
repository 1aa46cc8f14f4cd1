"""``arena competition create|list|status|enter|final-choice|close|deadline|disqualify|final|
kit``, and the organiser's tools ``copies|games|announce|log|edit|pause|resume|withdraw``
(docs/competitions.md).

The command line acts as the operator (:data:`arena.service.permissions.OPERATOR`), through
the same service actions as the web's pages and the API (arena.service.competitions).
``enter`` enters a user's bot: a bot file is checked here as ``arena bots add`` checks it
and stored under ``--owner``, or ``--version`` names a stored one. The ladder and the final
are played by the workers (``arena worker``): the scheduler's tick does it by itself.
"""

from __future__ import annotations

import contextlib
import csv
import json
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import click

from arena.cli.common import (
    UsageError,
    console,
    help_without_command,
    memory_option,
    move_time_option,
    open_out,
    plural,
    resolve_rules,
    runtime_option,
    unsandboxed_option,
    url_option,
)
from arena.cli.similarity import THRESHOLD
from arena.compete.names import check_name
from arena.errors import ArenaError
from arena.service.permissions import OPERATOR

# The service and the database (SQLAlchemy, Celery, scipy) are imported as a command runs,
# not by its --help (tests/cli/test_lazy.py).
if TYPE_CHECKING:
    from arena.store.db import Store

__all__ = ["competition_group", "parse_when", "store_checked_file"]

#: ``+30m``, ``+2h``, ``+7d``: a time from now.
_RELATIVE = re.compile(r"\+(?P<n>[0-9]{1,6})(?P<unit>[mhd])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days"}


def parse_when(text: str, time_zone: str = "UTC") -> datetime:
    """A time as typed: ISO 8601 (without an offset: in ``time_zone``) or ``+N[mhd]`` from
    now.

    Raises:
        UsageError: neither.
    """
    relative = _RELATIVE.fullmatch(text.strip())
    if relative:
        return datetime.now(UTC) + timedelta(**{_UNITS[relative["unit"]]: int(relative["n"])})
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"{text!r} is not a time: give ISO 8601 (2026-05-01T18:00, with an offset or "
            "in --time-zone) or +30m, +2h, +7d"
        ) from None
    if moment.tzinfo is None:  # an unknown time zone: the service names it
        with contextlib.suppress(ZoneInfoNotFoundError, ValueError, OSError):
            moment = moment.replace(tzinfo=ZoneInfo(time_zone))
    return moment


@click.group(
    "competition",
    invoke_without_command=True,
    short_help="Competitions: create, list, status, enter, close, final.",
)
@click.pass_context
def competition_group(ctx: click.Context) -> None:
    """Bot-writing competitions: entries until a deadline, a continuous ladder, a final."""
    help_without_command(ctx)


@competition_group.command("create", short_help="Create a competition with its ladder.")
@click.argument("name")
@click.option("--deadline", required=True, metavar="WHEN", help="ISO 8601, or +7d from now.")
@click.option("--opens", metavar="WHEN", default=None, help="When entries open (default: now).")
@click.option("--time-zone", default="UTC", show_default=True, help="The organiser's time zone.")
@click.option("--rules", "rules_name", default="draw", show_default=True, metavar="NAME_OR_FILE")
@click.option("--players", type=int, default=2, show_default=True)
@click.option("--teams", is_flag=True, help="2v2 (4 players).")
@move_time_option
@click.option("--memory", type=int, default=256, show_default=True, help="MB a bot may use.")
@click.option("--runtime", "runtimes", multiple=True, default=["python"], show_default=True)
@click.option("--daily", type=int, default=5, show_default=True, help="Entries a user a day.")
@click.option("--sources-public", is_flag=True, help="Sources readable after the deadline.")
@click.option("--games-per-deal", type=int, default=2, show_default=True)
@click.option("--final-top", type=int, default=8, show_default=True)
@click.option("--final-confidence", type=float, default=0.95, show_default=True)
@click.option("--final-max-games", type=int, default=14000, show_default=True)
@click.option("--final-versions", type=int, default=2, show_default=True,
              help="Versions an entrant may send to the final.")  # fmt: skip
@click.option("--description", default="")
@click.option("--min-account-days", type=int, default=0, show_default=True,
              help="The youngest account that may enter, in days.")  # fmt: skip
@url_option
def competition_create(name: str, deadline: str, opens: str | None, time_zone: str,
                       rules_name: str, players: int, teams: bool, move_time: float,
                       memory: int, runtimes: tuple[str, ...], daily: int,
                       sources_public: bool, games_per_deal: int, final_top: int,
                       final_confidence: float, final_max_games: int, final_versions: int,
                       description: str, min_account_days: int,
                       url: str | None) -> None:  # fmt: skip
    """Create competition NAME: entries from --opens to --deadline, the ladder meanwhile,
    then the final among the ladder's --final-top."""
    from arena.service import competitions as service
    from arena.service.competitions import NewCompetition
    from arena.store.db import open_store

    rules = resolve_rules(rules_name)
    new = NewCompetition(
        name=name, deadline=parse_when(deadline, time_zone),
        opens=None if opens is None else parse_when(opens, time_zone), time_zone=time_zone,
        rules=rules.name, custom_rules=rules, players=players, teams=teams,
        move_seconds=move_time, memory_mb=memory, runtimes=runtimes,
        daily_submissions=daily, sources_public=sources_public,
        games_per_deal=games_per_deal, final_top=final_top,
        final_confidence=final_confidence, final_max_games=final_max_games,
        final_versions=final_versions, description=description,
        min_account_days=min_account_days,
    )  # fmt: skip
    store = open_store(url)
    try:
        competition_id = service.create_competition(store, OPERATOR, new)
        view = service.competition_view(store, OPERATOR, name)
    finally:
        store.close()
    s = view.summary
    click.echo(
        f"competition {s.name!r} (id {competition_id}): {s.rules}, {s.players} players, "
        f"entries {service.local_time(s.opens, s.time_zone)} to "
        f"{service.local_time(s.deadline, s.time_zone)}; ladder {view.ladder!r}"
    )


@competition_group.command("list", short_help="List the competitions.")
@click.option("--json", "as_json", is_flag=True, help="As JSON.")
@url_option
def competition_list(as_json: bool, url: str | None) -> None:
    """Every competition, the latest deadline first."""
    from rich.table import Table

    from arena.service import competitions as service
    from arena.store.db import open_store

    store = open_store(url)
    try:
        listed = service.competition_list(store)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps([_plain(vars_of(s)) for s in listed], indent=2))
        return
    if not listed:
        click.echo("no competitions")
        return
    table = Table(title="Competitions")
    for column in ("name", "status", "rules", "players", "entrants", "deadline"):
        table.add_column(column)
    for s in listed:
        table.add_row(s.name, s.status, s.rules, str(s.players), str(s.entrants),
                      service.local_time(s.deadline, s.time_zone))  # fmt: skip
    console().print(table)


def vars_of(value: Any) -> dict[str, Any]:
    """A dataclass's fields as a dict (slotted ones have no ``__dict__``)."""
    return {name: getattr(value, name) for name in value.__dataclass_fields__}


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}


def _export(rows: list[dict[str, Any]], columns: list[str], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    writer = csv.DictWriter(sys.stdout, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)


@competition_group.command("status", short_help="A competition's status and ladder.")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="The ladder as JSON.")
@click.option("--csv", "as_csv", is_flag=True, help="The ladder as CSV.")
@url_option
def competition_status(name: str, as_json: bool, as_csv: bool, url: str | None) -> None:
    """Competition NAME: its dates and status, then its ladder (or export it)."""
    from rich.table import Table

    from arena.service import competitions as service
    from arena.store.db import open_store

    store = open_store(url)
    try:
        if as_json or as_csv:
            rows = service.ladder_rows(store, OPERATOR, name)
            _export(rows, list(service.LadderRow.__dataclass_fields__), as_json)
            return
        view = service.competition_view(store, OPERATOR, name)
    finally:
        store.close()
    s = view.summary
    tz = s.time_zone
    click.echo(
        f"{s.name}: {s.status}, {s.rules}, {s.players} players, {s.entrants} entrants; "
        f"entries {service.local_time(s.opens, tz)} to {service.local_time(s.deadline, tz)}"
    )
    table = Table(title=f"Ladder of {s.name}")
    for column in ("rank", "entrant", "rating", "interval", "games", "last game", "status"):
        table.add_column(column, justify="right" if column in ("rating", "games") else "left")
    for r in view.standings:
        rank = service.rank_label(r)
        rating = "" if r.rating is None else f"{r.rating:.0f}" + ("?" if r.provisional else "")
        interval = "" if r.low is None or r.high is None else f"{r.low:.0f} to {r.high:.0f}"
        last = "" if r.last_game is None else service.local_time(r.last_game, tz)
        status = r.status + (f": {r.reason}" if r.reason else "")
        table.add_row(rank, r.name, rating, interval, str(r.games), last, status)
    console().print(table)


@competition_group.command("enter", short_help="Enter a user's bot in a competition.")
@click.argument("name")
@click.argument("bot", metavar="[FILE]", required=False)
@click.option("--owner", required=True, help="The entrant's user name.")
@click.option("--version", "reference", metavar="OWNER/BOT@vN", help="A stored version.")
@click.option("--bot-name", default=None, help="The stored bot's name (default: FILE's stem).")
@url_option
@unsandboxed_option
@memory_option
@runtime_option
def competition_enter(name: str, bot: str | None, owner: str, reference: str | None,
                      bot_name: str | None, url: str | None, unsandboxed: bool,
                      memory: int, runtime: str | None) -> int:  # fmt: skip
    """Enter OWNER's bot in competition NAME: FILE (checked here as `arena bots add`
    checks it, under --runtime, and stored as OWNER's bot) or --version, a stored version of
    OWNER's. It becomes OWNER's active entry (placing, while OWNER's active one is placed:
    it displaces that one once placed itself). A source OWNER entered already is refused
    (before its check when FILE is that very version of OWNER's bot)."""
    from arena.service import competitions as service
    from arena.store.db import open_store

    if (bot is None) == (reference is None):
        raise UsageError("give a bot FILE or --version OWNER/BOT@vN (one of them)")
    if bot is not None:
        store = open_store(url)
        try:  # a closed or unknown competition, a file entered already: no check
            service.check_open_for_entries(store, name)
            source = _source_if_readable(bot)
            if source is not None:
                stem = bot_name or Path(bot).stem
                service.check_not_entered(store, name, owner, stem, source)
        finally:
            store.close()
        stored = store_checked_file(bot, owner, bot_name, url, unsandboxed, memory, runtime)
        if stored is None:
            return 1
        reference = stored
    assert reference is not None
    store = open_store(url)
    try:
        entry = service.enter_with_version(store, OPERATOR, name, _version_id(store, reference),
                                           owner=owner)  # fmt: skip
    finally:
        store.close()
    shown = entry.name or reference
    click.echo(f"{name}: {shown} entered for {owner}: {entry.status}"
               + (f" ({entry.reason})" if entry.reason else ""))  # fmt: skip
    return 0


def _source_if_readable(bot: str) -> str | None:
    """FILE's text, or None when it cannot be read (:func:`store_checked_file` says why)."""
    try:
        return Path(bot).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _version_id(store: Store, reference: str) -> int:
    from arena.service.matches import resolve_entrants

    try:
        [entrant] = resolve_entrants(store, [reference])
    except (LookupError, ValueError) as exc:
        raise UsageError(str(exc.args[0] if exc.args else exc)) from None
    assert entrant.version is not None
    return entrant.version


def store_checked_file(bot: str, owner: str, bot_name: str | None, url: str | None,
                       unsandboxed: bool, memory: int,
                       runtime: str | None = None) -> str | None:  # fmt: skip
    """Check FILE under ``runtime`` (default: its suffix's) and store it as OWNER's bot; its
    reference (None: it failed its check)."""
    from arena.cli.bots import show_check
    from arena.match.lineup import check_bot
    from arena.match.referee import TimeControl
    from arena.match.runtimes import runtime_for_upload
    from arena.match.sandbox import Limits
    from arena.service.bots import add_checked_bot
    from arena.service.uploads import check_report_json
    from arena.store.db import open_store

    path = Path(bot)
    if not path.is_file():
        raise click.BadParameter(f"no bot file {bot!r}", param_hint="'FILE'")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"cannot read {bot!r}: {exc}", param_hint="'FILE'") from None
    owner = check_name(owner, "owner name")
    name = check_name(bot_name or path.stem, "bot name")
    try:
        chosen = runtime_for_upload(bot, runtime).name
    except ArenaError as exc:
        raise click.BadParameter(str(exc), param_hint="'FILE'") from None
    open_store(url).close()  # a missing database fails before the check
    report = show_check(
        check_bot(
            bot, sandboxed=not unsandboxed, time_control=TimeControl(), limits=Limits(memory),
            runtime=chosen,
        ),
        sandboxed=not unsandboxed,
    )  # fmt: skip
    if not report.ok:
        click.echo(f"{bot} failed `arena check`: nothing entered")
        return None
    store = open_store(url)
    try:
        number, _, _ = add_checked_bot(
            store, OPERATOR, owner, name, source, check_report_json(report, not unsandboxed),
            runtime=chosen,
        )  # fmt: skip
    finally:
        store.close()
    return f"{owner}/{name}@{number}"


@competition_group.command("final-choice", short_help="An entrant's versions for the final.")
@click.argument("name")
@click.argument("versions", nargs=-1, metavar="[OWNER/BOT@vN]...")
@click.option("--owner", required=True, help="The entrant's user name.")
@click.option("--default", "to_default", is_flag=True,
              help="Send the default versions (the best-rated and the latest placed).")  # fmt: skip
@url_option
def competition_final_choice(name: str, versions: tuple[str, ...], owner: str,
                             to_default: bool, url: str | None) -> None:  # fmt: skip
    """Show which of OWNER's versions go to competition NAME's final, or choose them:
    VERSIONS (stored versions of OWNER's entered there), or --default."""
    from arena.service import entries
    from arena.store.db import open_store

    if versions and to_default:
        raise UsageError("give VERSIONS or --default, not both")
    store = open_store(url)
    try:
        if versions or to_default:
            ids = [_version_id(store, reference) for reference in versions]
            choice = entries.choose_final(store, OPERATOR, name, ids, owner=owner)
        else:
            choice = entries.final_choice(store, OPERATOR, name, owner=owner)
    finally:
        store.close()
    said = "chosen" if choice.chosen else "the default"
    click.echo(f"{name}: {owner}'s versions for the final ({said}, at most {choice.limit}):")
    for v in choice.versions:
        rating = "-" if v.rating is None else f"{v.rating:.0f}"
        placed = "placed" if v.placed else "not placed"
        goes = "goes" if v.goes else "-"
        click.echo(f"  {goes:5} {v.name} ({v.status}, {placed}, rating {rating}, {v.games} games)")


@competition_group.command("close", short_help="Close a competition's entries now.")
@click.argument("name")
@url_option
def competition_close(name: str, url: str | None) -> None:
    """Close competition NAME now: its ladder stops and its final starts by itself."""
    from arena.service import competitions as service
    from arena.store.db import open_store

    store = open_store(url)
    try:
        service.close_now(store, OPERATOR, name)
    finally:
        store.close()
    click.echo(f"{name}: closed; the final starts at the scheduler's next tick")


@competition_group.command("deadline", short_help="Move a competition's deadline later.")
@click.argument("name")
@click.argument("when", metavar="WHEN")
@url_option
def competition_deadline(name: str, when: str, url: str | None) -> None:
    """Move competition NAME's deadline to WHEN (ISO 8601, in its time zone, or +2d)."""
    from arena.service import competitions as service
    from arena.store.db import open_store

    store = open_store(url)
    try:
        zone = service.competition_view(store, OPERATOR, name).summary.time_zone
        service.extend_deadline(store, OPERATOR, name, parse_when(when, zone))
        deadline = service.competition_view(store, OPERATOR, name).summary.deadline
    finally:
        store.close()
    click.echo(f"{name}: the deadline is {service.local_time(deadline, zone)}")


@competition_group.command("disqualify", short_help="Disqualify a version, with a reason.")
@click.argument("name")
@click.argument("reference", metavar="OWNER/BOT@vN")
@click.option("--reason", required=True, help="Shown on its row.")
@url_option
def competition_disqualify(name: str, reference: str, reason: str, url: str | None) -> None:
    """Disqualify a version entered in competition NAME: it stops playing."""
    from arena.service import competitions as service
    from arena.store.db import open_store

    store = open_store(url)
    try:
        service.disqualify(store, OPERATOR, name, _version_id(store, reference), reason)
    finally:
        store.close()
    click.echo(f"{name}: {reference} disqualified ({reason})")


@competition_group.command("final", short_help="A competition's final table, or rerun it.")
@click.argument("name")
@click.option("--rerun", is_flag=True, help="Play the final again (with --reason).")
@click.option("--reason", default=None, help="Why it is rerun: shown with the table it replaces.")
@click.option("--json", "as_json", is_flag=True, help="The table as JSON.")
@click.option("--csv", "as_csv", is_flag=True, help="The table as CSV.")
@url_option
def competition_final(name: str, rerun: bool, reason: str | None, as_json: bool, as_csv: bool,
                      url: str | None) -> None:  # fmt: skip
    """Competition NAME's final table in force (or export it); --rerun --reason TEXT plays
    it again (the table stays, marked replaced, until the new one is published)."""
    from rich.table import Table

    from arena.service import competitions as service
    from arena.store.db import open_store

    if reason is not None and not rerun:
        raise UsageError("--reason goes with --rerun")
    store = open_store(url)
    try:
        if rerun:
            service.rerun_final(store, OPERATOR, name, reason or "")
            click.echo(
                f"{name}: the final will be played again; its table stays, marked replaced, "
                "until the new one is published"
            )
            return
        rows = service.final_rows(store, OPERATOR, name)
        status = service.competition_view(store, OPERATOR, name).summary.status
    finally:
        store.close()
    if as_json or as_csv:
        _export(rows, list(service.FinalRow.__dataclass_fields__), as_json)
        return
    if not rows:
        click.echo(f"{name}: no final table yet ({status})")
        return
    title = f"Final of {name}" + (f" (final {rows[0]['final']})" if rows[0]["final"] > 1 else "")
    if rows[0]["replaced"]:
        title += f": replaced by a rerun that plays ({rows[0]['replaced']})"
    table = Table(title=title)
    for column in ("place", "finalist", "rating", "interval", "games"):
        table.add_column(column)
    for r in rows:
        interval = "" if r["low"] is None else f"{r['low']:.0f} to {r['high']:.0f}"
        rating = "" if r["rating"] is None else f"{r['rating']:.0f}"
        table.add_row(str(r["place"]), r["name"], rating, interval, str(r["games"]))
    console().print(table)


@competition_group.command("kit", short_help="Write a competition's kit: rules, starter, README.")
@click.argument("name")
@click.option(
    "--out",
    metavar="PATH",
    default=None,
    help="A new folder to write the files in, or a .zip (default: ./NAME-kit).",
)
@click.option("--server", default="", help="The arena's URL, for the README's links and push.")
@url_option
def competition_kit(name: str, out: str | None, server: str, url: str | None) -> None:
    """Write competition NAME's kit: its rule set's file, a starter bot for its runtime and
    a README with the commands to play and compare here under exactly its rules (the
    competition page's download, as a folder or a zip)."""
    from arena.service import kits
    from arena.store.db import open_store

    store = open_store(url)
    try:
        kit = kits.competition_kit(store, name, server=server)
    finally:
        store.close()
    target = Path(out if out is not None else kit.folder)
    if target.exists():
        raise UsageError(
            f"{str(target)!r} exists already: choose a new --out (nothing is overwritten)"
        )
    try:
        if target.suffix.lower() == ".zip":
            target.write_bytes(kits.kit_zip(kit))
        else:
            target.mkdir(parents=True)
            for file, text in kit.files.items():
                (target / file).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {str(target)!r}: {exc.strerror}") from None
    click.echo(f"{name}: its kit is in {target} ({', '.join(kit.files)}); read its README.md")


# --- the organiser's tools (arena.service.competition_tools) --------------------------------


@competition_group.command("copies", short_help="Copies and near-copies across entrants.")
@click.argument("name")
@click.option("--threshold", type=float, default=THRESHOLD, show_default=True,
              help="The lowest score shown (0 to 1); byte-for-byte copies always.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="As JSON.")
@url_option
def competition_copies(name: str, threshold: float, as_json: bool, url: str | None) -> None:
    """The pairs of competition NAME's entrants whose entered versions are alike, with
    their scores (every version: the operator's comparison is not bounded)."""
    from rich.table import Table

    from arena.service import competition_copies as copies
    from arena.service.shapes import plain
    from arena.store.db import open_store

    with contextlib.closing(open_store(url)) as store:
        report = copies.copy_report(store, OPERATOR, name, threshold=threshold)
    if as_json:
        click.echo(json.dumps(plain(report), indent=2))
        return
    click.echo(
        f"{name}: {report.versions} sources of {report.entrants} entrants compared "
        f"({report.scope}) in {report.seconds:.2f} s"
    )
    table = Table(title=f"Copies across the entrants of {name}")
    for column in ("score", "entrant", "version", "entrant", "version", "lines"):
        table.add_column(column)
    for p in report.pairs:
        score = "identical" if p.identical else f"{p.score:.2f}"
        lines = ", ".join(f"{a}-{b}" for a, b in p.a.lines)
        table.add_row(score, p.a.entrant, p.a.version, p.b.entrant, p.b.version, lines)
    console().print(table)


@competition_group.command("games", short_help="Write a competition's games as JSON lines.")
@click.argument("name")
@click.option("--out", metavar="FILE", help="Write to FILE (default: standard output).")
@url_option
def competition_games(name: str, out: str | None, url: str | None) -> None:
    """Write every game record of competition NAME (its ladder's, then its final's), one
    JSON document a line: the records `arena replay verify` re-simulates."""
    from arena.service import competition_tools as tools
    from arena.store.db import open_store

    count = 0
    with contextlib.closing(open_store(url)) as store, open_out(out) as handle:
        target = handle if handle is not None else sys.stdout
        for line in tools.competition_games(store, OPERATOR, name):
            target.write(line)
            count += 1
        note = tools.competition_games_note(store, name)
    if out is not None:
        click.echo(f"{plural(count, 'game record')} of {name} written to {out}")
    if note is not None:
        click.echo(f"{name}: {note}", err=True)


@competition_group.command("announce", short_help="Post an announcement on a competition.")
@click.argument("name")
@click.argument("text")
@url_option
def competition_announce(name: str, text: str, url: str | None) -> None:
    """Post TEXT on competition NAME's page (everyone who sees it reads it)."""
    from arena.service import competition_tools as tools
    from arena.store.db import open_store

    with contextlib.closing(open_store(url)) as store:
        tools.post_announcement(store, OPERATOR, name, text)
    click.echo(f"{name}: announced")


@competition_group.command("log", short_help="A competition's action log.")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="As JSON.")
@url_option
def competition_log(name: str, as_json: bool, url: str | None) -> None:
    """Competition NAME's action log, the latest first: who changed what, when."""
    from arena.service import competition_tools as tools
    from arena.service.shapes import plain
    from arena.store.db import open_store

    with contextlib.closing(open_store(url)) as store:
        lines = tools.action_log(store, OPERATOR, name)
    if as_json:
        click.echo(json.dumps([plain(line) for line in lines], indent=2))
        return
    for line in lines:
        changes = "; ".join(f"{c.what}: {c.old} -> {c.new}" for c in line.changes)
        click.echo(f"{line.time:%Y-%m-%d %H:%M:%S} UTC  {line.actor}  {line.action}  {changes}")


@competition_group.command("edit", short_help="Change a competition's settings.")
@click.argument("name")
@click.option("--deadline", metavar="WHEN", help="ISO 8601 (in its time zone), or +2d.")
@click.option("--description")
@click.option("--daily", type=int, help="Entries a user a day.")
@click.option("--min-account-days", type=int, help="The youngest account that may enter.")
@click.option("--final-top", type=int)
@click.option("--final-confidence", type=float)
@click.option("--final-max-games", type=int)
@url_option
def competition_edit(name: str, deadline: str | None, description: str | None,
                     daily: int | None, min_account_days: int | None, final_top: int | None,
                     final_confidence: float | None, final_max_games: int | None,
                     url: str | None) -> None:  # fmt: skip
    """Change competition NAME's settings that may change after creation (each change goes
    to its action log)."""
    from arena.service import competition_tools as tools
    from arena.service import competitions as service
    from arena.store.db import open_store

    with contextlib.closing(open_store(url)) as store:
        zone = service.competition_view(store, OPERATOR, name).summary.time_zone
        change = tools.SettingsChange(
            deadline=None if deadline is None else parse_when(deadline, zone),
            description=description, daily_submissions=daily,
            min_account_days=min_account_days, final_top=final_top,
            final_confidence=final_confidence, final_max_games=final_max_games,
        )  # fmt: skip
        changes = tools.edit_settings(store, OPERATOR, name, change)
    for c in changes:
        click.echo(f"{name}: {c.what}: {c.old} -> {c.new}")
    if not changes:
        click.echo(f"{name}: nothing changed")


@competition_group.command("pause", short_help="Pause a competition's ladder.")
@click.argument("name")
@url_option
def competition_pause(name: str, url: str | None) -> None:
    """Pause competition NAME's ladder: no ladder match is added until it resumes."""
    from arena.service import competition_tools as tools
    from arena.store.db import open_store

    with contextlib.closing(open_store(url)) as store:
        voided = tools.pause_ladder(store, OPERATOR, name)
    click.echo(f"{name}: the ladder is paused ({plural(voided, 'pending match')} void)")


@competition_group.command("resume", short_help="Resume a competition's paused ladder.")
@click.argument("name")
@url_option
def competition_resume(name: str, url: str | None) -> None:
    """Let competition NAME's paused ladder play again."""
    from arena.service import competition_tools as tools
    from arena.store.db import open_store

    with contextlib.closing(open_store(url)) as store:
        tools.resume_ladder(store, OPERATOR, name)
    click.echo(f"{name}: the ladder plays again")


@competition_group.command("withdraw", short_help="Withdraw a user from a competition.")
@click.argument("name")
@click.option("--owner", required=True, help="The entrant's user name.")
@url_option
def competition_withdraw(name: str, owner: str, url: str | None) -> None:
    """Withdraw user --owner from competition NAME: their versions leave the ladder and the
    final, and it takes no new entry of theirs."""
    from arena.service import competition_tools as tools
    from arena.store.db import open_store

    with contextlib.closing(open_store(url)) as store:
        versions = tools.withdraw(store, OPERATOR, name, owner=owner)
    click.echo(f"{name}: {owner} withdrew ({plural(len(versions), 'version')})")
