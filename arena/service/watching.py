"""Watching games live: the matches being played that a tournament's or a competition's
page lists, and one match's game in play as a spectator sees it (the live feed's latest
view: :mod:`arena.service.livefeed`, decided by :mod:`arena.engine.spectate`).

Who may watch a match is who may see it: a submission's test only its student, the
class's teachers and the admins (:func:`arena.service.assignment_views.check_grading_visible`);
a tournament holding a bot hidden from the viewer (a private class's: :mod:`arena.service.privacy`)
not at all, as its page; a competition's ladder or final, whose page everyone sees, unless
the match itself holds such a bot (as its games' replays). Anyone else is answered as if
the match did not exist (:class:`arena.errors.NotFound`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.errors import NotFound
from arena.service.assignment_views import check_grading_visible
from arena.service.competition_views import find_competition
from arena.service.display import display_name
from arena.service.livefeed import LiveFeed, match_key, redis_errors
from arena.service.permissions import Actor
from arena.service.privacy import Hidden, hidden_from
from arena.store.boards import entrant_names, tournament_owner
from arena.store.bots import version_names
from arena.store.db import Store
from arena.store.tournaments import LiveMatch, live_match, running_matches

__all__ = [
    "LIVE_LISTED",
    "LiveGame",
    "WatchedMatch",
    "competition_live_games",
    "tournament_live_games",
    "watch_match",
]

#: Matches a page's "Live" list shows at most (the oldest playing first).
LIVE_LISTED = 12


@dataclass(frozen=True, slots=True)
class LiveGame:
    """A match being played, as a page's "Live" list shows it."""

    match_id: int
    tournament: str
    players: tuple[str, ...]
    games: int


@dataclass(frozen=True, slots=True)
class WatchedMatch:
    """A match as its live page shows it.

    Attributes:
        match: the stored match (its tournament, competition, seats, status).
        players: each seat's display name.
        view: the latest spectator view of its game in play
            (:func:`arena.engine.spectate.spectator_view`, with ``ended``), or None.
        entry: that view's id in the feed, or None.
        feed: ``"live"`` (read), ``"none"`` (the deployment has no feed), ``"away"`` (the
            feed's Redis did not answer), ``"over"`` (the match is not being played).
    """

    match: LiveMatch
    players: tuple[str, ...]
    view: dict[str, Any] | None
    entry: str | None
    feed: str

    @property
    def playing(self) -> bool:
        """Whether the match is being played (running)."""
        return self.match.status == "running"


def _players(store: Store, matches: Sequence[LiveMatch]) -> dict[int, tuple[str, ...]]:
    """Each match's seats' display names (its labels for versions no longer stored)."""
    names = version_names(store, sorted({v for m in matches for v in m.seats}))
    return {
        m.id: tuple(
            display_name(*names[v][1:]) if v in names else label
            for v, label in zip(m.seats, m.labels, strict=False)
        )
        for m in matches
    }


def _check_tournament(store: Store, viewer: Actor, name: str, hidden: Hidden) -> None:
    """Raise NotFound unless ``viewer`` may see the stored tournament ``name`` (as its
    page)."""
    check_grading_visible(store, viewer, name=name)
    if hidden.any(owner for owner, _, _ in entrant_names(store, name).values()):
        raise NotFound(f"no tournament {name!r}")


def _check_match(store: Store, viewer: Actor, match: LiveMatch, hidden: Hidden) -> None:
    """Raise NotFound unless ``viewer`` may watch ``match`` (see the module's docstring)."""
    if match.competition is None:
        try:
            _check_tournament(store, viewer, match.tournament, hidden)
        except NotFound:
            raise NotFound(f"no match {match.id}") from None
        return
    check_grading_visible(store, viewer, match_id=match.id)
    owners = version_names(store, match.seats)
    if hidden.any(found[1] for found in owners.values()):
        raise NotFound(f"no match {match.id}")


def _listed(store: Store, matches: list[LiveMatch]) -> list[LiveGame]:
    players = _players(store, matches)
    return [LiveGame(m.id, m.tournament, players[m.id], m.games) for m in matches]


def tournament_live_games(store: Store, viewer: Actor, name: str) -> list[LiveGame]:
    """The matches of the tournament ``name`` being played, at most :data:`LIVE_LISTED`.

    Raises:
        NotFound: no tournament ``name``, or one hidden from ``viewer``.
    """
    found = tournament_owner(store, name)
    if found is None:
        raise NotFound(f"no tournament {name!r}")
    _check_tournament(store, viewer, name, hidden_from(store, viewer))
    return _listed(store, running_matches(store, [found[0]], LIVE_LISTED))


def competition_live_games(store: Store, viewer: Actor, name: str) -> list[LiveGame]:
    """The matches of the competition ``name``'s ladder and final being played that
    ``viewer`` may watch, at most :data:`LIVE_LISTED`.

    Raises:
        NotFound: no competition ``name``.
    """
    row = find_competition(store, name)
    ids = [row.ladder_id] + ([row.final_id] if row.final_id is not None else [])
    hidden = hidden_from(store, viewer)
    shown = []
    for match in running_matches(store, ids, LIVE_LISTED):
        try:
            _check_match(store, viewer, match, hidden)
        except NotFound:
            continue
        shown.append(match)
    return _listed(store, shown)


def watch_match(store: Store, viewer: Actor, match_id: int, feed: LiveFeed | None) -> WatchedMatch:
    """Match ``match_id`` for its live page: while it is played, marked watched on ``feed``
    (so its worker publishes it) and its latest view read.

    Raises:
        NotFound: no match ``match_id``, or one ``viewer`` may not watch.
    """
    match = live_match(store, match_id)
    if match is None:
        raise NotFound(f"no match {match_id}")
    _check_match(store, viewer, match, hidden_from(store, viewer))
    players = _players(store, [match])[match.id]
    if match.status != "running":
        return WatchedMatch(match, players, None, None, "over")
    if feed is None:
        return WatchedMatch(match, players, None, None, "none")
    key = match_key(match.id)
    try:
        feed.watch(key)
        latest = feed.latest(key)
    except redis_errors():
        return WatchedMatch(match, players, None, None, "away")
    entry, view = (None, None) if latest is None else latest
    return WatchedMatch(match, players, view, entry, "live")
