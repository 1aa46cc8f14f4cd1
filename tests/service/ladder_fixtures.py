"""A competition stored directly (its ladder tournament, entrants and active entries), and
matches "played" by writing their results: what the clock's tests start from, without the
competitions' service (arena.service.competitions) or a worker."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select, update

from arena.compete.entrants import Entrant
from arena.engine.rules import find_rules
from arena.store.db import Store
from arena.store.models import (
    Bot,
    BotVersion,
    Competition,
    CompetitionEntry,
    Match,
    Tournament,
)
from arena.store.models import TournamentEntrant as EntrantRow
from arena.store.queue import complete_match, create_tournament

SOURCE = "def play(observation):\n    return observation['legal'][0]  # {}\n"


def add_version(store: Store, owner: str, bot: str = "bot", source: str | None = None) -> int:
    """A stored bot version of ``owner``'s (``source``, or a source of its own)."""
    text = SOURCE.format(owner) if source is None else source
    version, _ = store.add_bot_version(owner, bot, text, {"checked": "test"})
    return version.id


def make_competition(
    store: Store,
    name: str,
    entrants: Sequence[str],
    *,
    opens: datetime,
    deadline: datetime,
    players: int = 2,
    teams: bool = False,
    settings: Mapping[str, Any] | None = None,
    final_top: int = 8,
    final_confidence: float = 0.95,
    final_max_games: int = 2000,
    rules: str = "draw",
    sources: Mapping[str, str] | None = None,
) -> tuple[int, dict[str, int]]:
    """A competition open from ``opens`` to ``deadline`` whose ``entrants`` (owner names)
    each have an active entry accepted at ``opens`` (``sources``: each one's bot, by owner);
    return its id and their version ids."""
    sources = sources or {}
    versions = {owner: add_version(store, owner, source=sources.get(owner)) for owner in entrants}
    settings = {"move_seconds": 1.0, "memory_mb": 256, "games_per_deal": 2,
                "placement_games": 8, **(settings or {})}  # fmt: skip
    ladder = create_tournament(
        store,
        name=f"{name}-ladder",
        rules=find_rules(rules),
        format="ladder",
        players=4 if teams else players,
        teams=teams,
        games_per_match=int(settings["games_per_deal"]),
        seed=7,
        entrants=[Entrant.stored(owner, v) for owner, v in versions.items()],
        matches=[],
        settings={"move_seconds": settings["move_seconds"], "memory_mb": settings["memory_mb"]},
    )
    rule_set = store.ensure_rule_set(find_rules(rules))
    with store.write() as session:
        session.execute(update(Tournament).where(Tournament.id == ladder).values(status="running"))
        competition = Competition(
            name=name, rule_set_id=rule_set.id, players=players, teams=teams,
            settings=dict(settings), opens=opens, deadline=deadline, seed=11,
            final_top=final_top, final_confidence=final_confidence,
            final_max_games=final_max_games, status="open", ladder_id=ladder,
        )  # fmt: skip
        session.add(competition)
        session.flush()
        for version in versions.values():
            _entry(session, competition.id, version, opens)
        return competition.id, versions


def _entry(session: Any, competition_id: int, version: int, accepted: datetime) -> None:
    owner = session.scalar(
        select(Bot.owner_id)
        .join(BotVersion, BotVersion.bot_id == Bot.id)
        .where(BotVersion.id == version)
    )
    session.add(
        CompetitionEntry(
            competition_id=competition_id, user_id=owner, bot_version_id=version,
            status="active", accepted=accepted, created=accepted,
        )
    )  # fmt: skip


def enter(store: Store, competition_id: int, owner: str, accepted: datetime) -> int:
    """A new entrant: its version, a label on the ladder and an active entry (as
    arena.service.competitions' acceptance does)."""
    version = add_version(store, owner)
    with store.write() as session:
        ladder = session.scalar(
            select(Competition.ladder_id).where(Competition.id == competition_id)
        )
        session.add(EntrantRow(tournament_id=ladder, label=owner, bot_version_id=version))
        _entry(session, competition_id, version, accepted)
    return version


def set_entry(store: Store, competition_id: int, version: int, **values: Any) -> None:
    """Change a version's entry (its status, reason, accepted time)."""
    with store.write() as session:
        session.execute(
            update(CompetitionEntry)
            .where(
                CompetitionEntry.competition_id == competition_id,
                CompetitionEntry.bot_version_id == version,
            )
            .values(**values)
        )


def matches_of(store: Store, tournament_id: int, *statuses: str) -> list[Match]:
    """The tournament's matches (of these statuses, if any given), by id."""
    with store.read() as session:
        query = select(Match).where(Match.tournament_id == tournament_id).order_by(Match.id)
        if statuses:
            query = query.where(Match.status.in_(statuses))
        return list(session.scalars(query))


def result(places: Sequence[Sequence[int]]) -> dict[str, Any]:
    """A done match's result column with these games' places."""
    games = [
        {"index": i, "seed": i, "places": list(p), "points": [0] * len(p), "winners": [],
         "termination": "domino", "verdict": None}
        for i, p in enumerate(places)
    ]  # fmt: skip
    return {"games": games, "seconds": 0.1, "worker": "test"}


def play(
    store: Store,
    match_ids: Sequence[int],
    strength: Mapping[int, float],
    rng: random.Random,
    now: datetime | None = None,
) -> None:
    """Complete the matches: each game's places drawn from the seats' Elo ``strength``
    (the stronger more often first), as if a worker played them."""
    with store.read() as session:
        rows = list(session.scalars(select(Match).where(Match.id.in_(list(match_ids)))))
    for match in rows:
        games = []
        for _ in range(match.games):
            keys = [strength[v] + rng.gauss(0.0, 400.0 / math.log(10) * 1.8) for v in match.seats]
            order = sorted(range(len(keys)), key=lambda s: -keys[s])
            places = [0] * len(keys)
            for place, seat in enumerate(order):
                places[seat] = place
            games.append(places)
        complete_match(store, match.id, "test", records=[], result=result(games), now=now)
