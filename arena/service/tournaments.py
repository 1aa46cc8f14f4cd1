"""Creating and cancelling stored tournaments, for whoever asks: an organiser on the web
page or the API, the operator at the command line (``arena tournament create``).

:func:`create_tournament` checks the actor's permission, and for accounts the bounds of
what the web offers (:data:`MAX_GAMES`, :data:`OFFERED_FORMATS`, the time a move), then
stores the tournament with its pending matches; :func:`start_tournament` also sends them to
the workers (:mod:`arena.service.dispatch`). :func:`cancel_tournament` voids the matches not
started (its creator, or an admin).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.compete.names import Reference, parse_reference
from arena.compete.tournaments import FORMATS
from arena.compete.tournaments import Match as ScheduledMatch
from arena.engine.rules import PRESETS, Rules
from arena.errors import ArenaError, NotFound, ParseError, PermissionDenied
from arena.service.board_views import REFERENCE_OWNER, tournament_owner
from arena.service.class_views import class_for_teacher, submitted
from arena.service.dispatch import dispatch_matches
from arena.service.matches import MatchSettings, create_stored_tournament
from arena.service.permissions import Actor, Operator, Target, actor_id, allowed, require
from arena.store import queue
from arena.store.db import Store

__all__ = [
    "MAX_GAMES",
    "OFFERED_FORMATS",
    "NewTournament",
    "cancel_tournament",
    "check_may_create",
    "create_tournament",
    "entrant_specs",
    "preset",
    "start_tournament",
]

logger = logging.getLogger(__name__)

#: Games a pair plays, at most, in a tournament an account creates.
MAX_GAMES = 1000
#: The formats offered to accounts (a gauntlet needs a pool: the command line's).
OFFERED_FORMATS = tuple(f for f in FORMATS if f != "gauntlet")


@dataclass(frozen=True, slots=True)
class NewTournament:
    """A tournament between stored bots, as asked for.

    Attributes:
        entrants: references as :func:`arena.service.matches.resolve_entrants` takes them
            (``[LABEL=][OWNER/]NAME[@VERSION]`` as typed, or parsed; :func:`entrant_specs`
            makes them from ``owner/name`` choices).
        pool: a gauntlet's opponents (the command line's).
        school_class: the class it is for: its teachers (not organisers) may create it
            between its students' bots and the reference bots (:func:`check_may_create`).
    """

    name: str
    rules: Rules
    format: str
    entrants: tuple[str | Reference, ...]
    seed: int
    players: int = 2
    teams: bool = False
    games_per_match: int = 20
    settings: MatchSettings = field(default_factory=MatchSettings)
    pool: tuple[str | Reference, ...] = ()
    #: A class whose teacher creates it (between its students' and the reference bots).
    school_class: str | None = None


def preset(name: str) -> Rules:
    """The preset rule set ``name``.

    Raises:
        ArenaError: no such preset (the message lists them).
    """
    rules = PRESETS.get(name)
    if rules is None:
        raise ArenaError(f"choose a rule set ({', '.join(PRESETS)}) or send a rule file")
    return rules


def entrant_specs(chosen: Sequence[str]) -> tuple[str | Reference, ...]:
    """``owner/name`` choices as references to their bots' latest versions: labelled by the
    bot's name, or by ``owner.name`` where two owners' bots share a name. A choice that
    does not parse is kept as it is: :func:`create_tournament` refuses it (after checking
    the actor's permission)."""
    parsed: list[str | Reference] = []
    for choice in chosen:
        try:
            parsed.append(parse_reference(choice))
        except ParseError:
            parsed.append(choice)
    names = [ref.name for ref in parsed if isinstance(ref, Reference)]
    return tuple(
        dataclasses.replace(ref, label=f"{ref.owner}.{ref.name}")
        if isinstance(ref, Reference) and ref.owner is not None and names.count(ref.name) > 1
        else ref
        for ref in parsed
    )


def _check_bounds(new: NewTournament) -> None:
    """What the web offers an account: its formats, two bots or more, at most
    :data:`MAX_GAMES` games a pair, 10 ms to 10 s a move.

    Raises:
        ArenaError: out of bounds (the message says which).
    """
    if new.format not in OFFERED_FORMATS:
        raise ArenaError(f"choose a format ({', '.join(OFFERED_FORMATS)})")
    if len(new.entrants) < 2:
        raise ArenaError("choose at least two bots")
    move_ms = round(new.settings.move_seconds * 1000)
    for what, value, low, high, unit in (
        ("games", new.games_per_match, 1, MAX_GAMES, ""),
        ("players", new.players, 2, max(new.rules.players), ""),
        ("the time a move", move_ms, 10, 10_000, " ms"),
    ):
        if not low <= value <= high:
            raise ArenaError(f"{what} must be {low} to {high}{unit}, not {value}{unit}")


def check_may_create(store: Store, actor: Actor, school_class: str | None) -> set[str] | None:
    """Return if ``actor`` may create a tournament: an organiser or an admin (None), or,
    for ``school_class``, a teacher of that class (the bot versions its tournament may
    play, as ``owner/bot@vN``: those submitted to the class's assignments; and the
    reference bots, any version).

    Raises:
        PermissionDenied: neither (or nobody logged in).
        NotFound: ``school_class`` is not a class ``actor`` belongs to.
    """
    if allowed(actor, "create-tournament") or actor is None or not school_class:
        require(actor, "create-tournament", message="only organisers and admins create tournaments")
        return None
    row = class_for_teacher(store, actor, school_class)
    return {version.reference for version in submitted(store, row.id)}


def _check_class_entrants(new: NewTournament, versions: set[str]) -> None:
    """A class's tournament plays the versions submitted to the class and the reference
    bots only (never a student's other bots, nor its competition entries).

    Raises:
        PermissionDenied: another bot is among its entrants (the message names it).
    """
    for spec in (*new.entrants, *new.pool):
        try:
            reference = spec if isinstance(spec, Reference) else parse_reference(spec)
        except ParseError:
            continue  # resolve_entrants says what is wrong with it
        shown = f"{reference.owner or '?'}/{reference.name}"
        if reference.version is not None:
            shown += f"@v{reference.version}"
        if reference.owner != REFERENCE_OWNER and shown not in versions:
            raise PermissionDenied(
                f"a tournament of class {new.school_class} plays the bots submitted to its "
                f"assignments and the reference bots only, not {shown}",
                action="create-tournament",
                stated=True,
            )


def create_tournament(
    store: Store, actor: Actor, new: NewTournament
) -> tuple[int, list[ScheduledMatch]]:
    """Store the tournament with its pending matches for ``actor`` (its owner; the
    operator's have none); return its id and its schedule. Nothing is sent to the workers.
    An account's tournament keeps within what the web offers; the operator's is not
    bounded.

    Raises:
        PermissionDenied: ``actor`` is not an organiser (nor an admin), nor a teacher of
            ``new.school_class`` choosing its students' and the reference bots.
        NotFound: ``new.school_class`` is not a class of the actor's.
        ArenaError, ValueError: a bad parameter (the message says which); nothing stored.
        LookupError: an entrant is not stored.
    """
    class_owners = check_may_create(store, actor, new.school_class)
    if class_owners is not None:
        _check_class_entrants(new, class_owners)
    if not isinstance(actor, Operator):
        _check_bounds(new)
    tournament_id, matches = create_stored_tournament(
        store,
        name=new.name,
        rules=new.rules,
        format=new.format,
        entrants=list(new.entrants),
        pool=list(new.pool),
        players=new.players,
        teams=new.teams,
        games_per_match=new.games_per_match,
        seed=new.seed,
        settings=new.settings,
        owner_id=actor_id(actor),
    )
    logger.info("tournament %s (id %s) created by %s", new.name, tournament_id, _who(actor))
    return tournament_id, matches


def start_tournament(store: Store, actor: Actor, new: NewTournament) -> tuple[int, bool]:
    """:func:`create_tournament`, then send its matches to the workers; return its id and
    whether the broker took them (if not, they wait, pending: ``arena tournament run
    NAME`` or the sweep sends them).

    Raises:
        As :func:`create_tournament`.
    """
    tournament_id, _ = create_tournament(store, actor, new)
    return tournament_id, dispatch_matches(store, tournament_id)


def cancel_tournament(store: Store, actor: Actor, name: str) -> int:
    """Cancel the tournament called ``name``: every match not finished is void (a running
    one stops at its worker's next heartbeat and stores nothing), finished results are
    kept; return how many matches will not be played. Its creator, or an admin.

    Raises:
        NotFound: no tournament is called ``name``.
        PermissionDenied: ``actor`` is neither its creator nor an admin.
    """
    found = tournament_owner(store, name)
    if found is None:
        raise NotFound(f"no tournament called {name!r}")
    tournament_id, owner_id = found
    require(
        actor,
        "cancel-tournament",
        Target(owner_id),
        message="only its creator or an admin may cancel this tournament",
    )
    voided = queue.cancel_tournament(store, tournament_id, by=_who(actor))
    logger.info("tournament %s cancelled by %s: %d matches void", name, _who(actor), voided)
    return voided


def _who(actor: Actor) -> str:
    return "anonymous" if actor is None else actor.name
