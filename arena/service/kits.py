"""A competition's kit: everything an entrant needs to play and compare on their own machine
under exactly the competition's rules (docs/competitions.md "The kit").

:func:`competition_kit` gives its files: the rule set's file (TOML, what ``arena --rules``
reads), a starter bot for the competition's runtime (:func:`arena.match.newbot.starter_bot`)
and a README whose commands play, check and compare under those rules, with the
competition's seats, time a move and memory; :func:`kit_zip` packs them in one folder of a
zip. ``arena competition kit NAME`` and the competition page's download give the same files.
Anyone may have it: a competition's rules are public, as its page is.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

from arena.engine.rules import Rules, rules_from_record
from arena.match.newbot import starter_bot
from arena.match.runtimes import find_runtime
from arena.service.competition_views import find_competition
from arena.service.rule_sets import (
    RuleSetView,
    reference_of,
    rule_file,
    rule_file_name,
    rule_set_view,
)
from arena.store.competitions import CompetitionRow
from arena.store.db import Store

__all__ = ["STARTER", "Kit", "competition_kit", "competition_rules", "kit_zip"]

#: The starter bot's name in a kit (``mybot.py``, ``mybot.js``).
STARTER = "mybot"
#: The runtimes a kit's starter is written for first, in this order (else the first one).
_PREFERRED = ("python", "javascript")


@dataclass(frozen=True, slots=True)
class Kit:
    """A competition's kit: its files by name (text), in the folder ``folder``."""

    competition: str
    folder: str
    files: dict[str, str]


def _runtime(row: CompetitionRow) -> str:
    runtimes = [str(r) for r in row.settings.get("runtimes") or ("python",)]
    return next((r for r in runtimes if r in _PREFERRED), runtimes[0])


def _table_args(row: CompetitionRow) -> str:
    return "--players 4 --teams" if row.teams else f"--players {row.players}"


def _move_seconds(row: CompetitionRow) -> float:
    return float(row.settings.get("move_seconds", 1.0))


def _memory_mb(row: CompetitionRow) -> int:
    return int(row.settings.get("memory_mb", 256))


def _facts(row: CompetitionRow, rules: Rules) -> str:
    """What the competition plays, in a sentence."""
    table = "4 players, 2 against 2" if row.teams else f"{row.players} players"
    runtimes = ", ".join(row.settings.get("runtimes") or ("python",))
    return (
        f"{row.name} plays the rule set **{rules.name}** (version {rules.version}) with "
        f"{table}, {_move_seconds(row) * 1000:g} ms a move and {_memory_mb(row)} MB a bot, "
        f"in the {runtimes} runtime."
    )


def _commands(row: CompetitionRow, rules: Rules, bot: str) -> str:
    """The commands that check, play and compare here under exactly the rules."""
    rules_file = rule_file_name(rules, "toml")
    flag = " --runtime python-numpy" if _runtime(row) == "python-numpy" else ""
    opponents = "greedy" if row.teams else ",".join(["greedy"] * (row.players - 1))
    table = _table_args(row)
    limits = f"--move-time {_move_seconds(row):g} --memory {_memory_mb(row)}"
    return "\n".join((
        f"arena rules {rules_file}",
        f"arena check{flag} {bot} {limits}",
        f"arena play{flag} --rules {rules_file} {table} --bots {bot},{opponents} --games 20 "
        + limits,
        f"arena compare {bot} greedy --rules {rules_file} {table} --max-games 200 {limits}",
    ))  # fmt: skip


def _push(row: CompetitionRow, reference: str, bot: str) -> str:
    """The command that pushes a version and compares it on the server, under the rules."""
    flag = " --runtime python-numpy" if _runtime(row) == "python-numpy" else ""
    return (
        f"arena remote push{flag} {bot} --compare OWNER/{STARTER}@1 --rules {reference} "
        f"{_table_args(row)} --move-time {_move_seconds(row):g}"
    )


def _readme(row: CompetitionRow, rules: Rules, reference: str, bot: str, server: str) -> str:
    """The README: the competition's settings, and the commands, each tested as written
    (tests/service/test_kits.py)."""
    rules_file = rule_file_name(rules, "toml")
    runtime = _runtime(row)
    copy = f"{STARTER}-v1{find_runtime(runtime).suffix}"
    return f"""# {row.name}: the kit

{_facts(row, rules)}
Its page: {server}/competitions/{row.name}

- `{rules_file}`: the rule set, every parameter; `arena rules {rules_file}` explains each.
- `{bot}`: a starter bot ({runtime}) that plays legally (the heaviest tile). Make it yours.

## Play and compare here, under exactly these rules

With the arena's command line (`arena`):

```sh
{_commands(row, rules, bot)}
```

`arena compare NEW OLD` plays duplicate deals until its test decides whether NEW is
stronger (exit status 0), not (1), or cannot tell within --max-games (2): keep a copy of
a version you trust (`cp {bot} {copy}`) and compare your next one against it.

## Compare on the server

With an API token (the server's account page, scopes read, upload and run), push a new
version and compare it with one you stored before (OWNER/BOT@VERSION), under the same rules:

```sh
export ARENA_SERVER={server or "https://the-arena"} ARENA_TOKEN=your-token
{_push(row, reference, bot)}
```
"""


def competition_kit(store: Store, name: str, *, server: str = "") -> Kit:
    """The kit of the competition called ``name`` (``server``: the arena's URL, for the
    README's links and its remote command; empty: left for the entrant to fill in).

    Raises:
        NotFound: no competition is called ``name``.
    """
    row = find_competition(store, name)
    rules = rules_from_record(row.rules, row.rules_params)
    runtime = _runtime(row)
    bot = STARTER + find_runtime(runtime).suffix
    server = server.rstrip("/")
    files = {
        rule_file_name(rules, "toml"): rule_file(rules, "toml"),
        bot: starter_bot(bot, runtime),
        "README.md": _readme(row, rules, reference_of(store, rules), bot, server),
    }
    return Kit(competition=row.name, folder=f"{row.name}-kit", files=files)


def kit_zip(kit: Kit) -> bytes:
    """The kit as a zip: its files in one folder."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in kit.files.items():
            archive.writestr(f"{kit.folder}/{name}", text)
    return buffer.getvalue()


def competition_rules(store: Store, name: str) -> RuleSetView:
    """The rule set the competition called ``name`` plays, as its page shows it.

    Raises:
        NotFound: no competition is called ``name``.
    """
    row = find_competition(store, name)
    rules = rules_from_record(row.rules, row.rules_params)
    return rule_set_view(store, reference_of(store, rules))
