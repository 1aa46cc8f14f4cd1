"""A compare never measures a bot against itself unless asked to (issue 29, the zero-margin
verdict): two versions with one source are refused when the compare is made, every match
keeps what each seat ran (its bot file's SHA-256, read by the worker when the match began),
the verdict checks those against NEW's and OLD's sources, and a worker never runs a cached
bot file whose bytes are not the source it is named after. Matches are played here by the
worker's own code, unsandboxed (greedy and the docs' first-legal-move bot are trusted)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, select, update

from arena.compete.sprt import MarginSPRT
from arena.engine.rules import PRESETS
from arena.errors import VerdictError
from arena.service import compares
from arena.service.compare_views import compare_view
from arena.service.compares import (
    REFUSED,
    advance_compare,
    compare_state,
    create_compare,
    deal_groups,
    group_of,
    stop_if_decided,
)
from arena.service.results import load_results
from arena.store.db import Store, source_hash
from arena.store.models import CompareReading, Match, Tournament
from arena.store.queue import tournament_progress
from tests.paths import REFERENCE_BOTS, ZOO
from tests.service.conftest import play_compare

RULES = PRESETS["draw"]
GREEDY = (REFERENCE_BOTS / "greedy.py").read_text()
FIRST = (ZOO / "first.py").read_text()


@pytest.fixture
def bots(store: Store) -> Store:
    """ada/greedy, bob/first, and cara/copy: greedy's very source under another name."""
    store.add_bot_version("ada", "greedy", GREEDY, {})
    store.add_bot_version("bob", "first", FIRST, {})
    store.add_bot_version("cara", "copy", GREEDY, {})
    return store


def _compare(store: Store, new: str, old: str, **options: Any) -> tuple[int, str]:
    settings: dict[str, Any] = {
        "rules": RULES, "players": 2, "test": MarginSPRT(0.0, 25.0), "max_games": 64,
        "batch": 8, "seed": 1, **options,
    }  # fmt: skip
    return create_compare(store, new=new, old=old, **settings)


def _results(store: Store, tournament_id: int) -> list[tuple[int, list[str], dict[str, Any]]]:
    with store.read() as session:
        rows = session.execute(
            select(Match.id, Match.labels, Match.result)
            .where(Match.tournament_id == tournament_id, Match.status == "done")
            .order_by(Match.id)
        ).all()
    return [(int(i), list(labels), dict(result)) for i, labels, result in rows]


def _set_sources(store: Store, match_id: int, sources: list[str]) -> None:
    """Rewrite what a done match's seats ran (which never changes but here), and drop what
    its compare's stop checks kept of it: the reading over it (what the compare's page
    shows) and the results read."""
    with store.write() as session:
        result = dict(session.scalars(select(Match.result).where(Match.id == match_id)).one())
        session.execute(
            update(Match).where(Match.id == match_id).values(result={**result, "sources": sources})
        )
        tournament_id = session.scalar(select(Match.tournament_id).where(Match.id == match_id))
        session.execute(delete(CompareReading).where(CompareReading.tournament_id == tournament_id))
    compares._STOP_READS.clear()


def test_a_compare_of_one_source_under_two_names_is_refused(bots: Store) -> None:
    """The id check (NEW and OLD the same version) let one source under two names through:
    its games measured greedy against itself."""
    with pytest.raises(ValueError, match=r"have the same source \(sha256 [0-9a-f]{12}\)") as no:
        _compare(bots, "ada/greedy", "cara/copy")
    assert str(no.value) == (
        f"NEW ada/greedy and OLD cara/copy have the same source (sha256 "
        f"{source_hash(GREEDY)[:12]}): a bot measured against itself tests nothing (a "
        "deterministic one gives every deal group a margin of exactly 0); compare two "
        "different sources, or allow it explicitly (--allow-same-source; allow_same_source "
        "in the API)"
    )
    with bots.read() as session:
        assert session.scalar(select(Match.id)) is None  # nothing stored
    with pytest.raises(ValueError, match="are the same version"):  # as before
        _compare(bots, "ada/greedy", "ada/greedy", allow_same_source=True)


def test_one_source_on_both_sides_gives_every_deal_group_a_margin_of_exactly_0(
    bots: Store, tmp_path: Path
) -> None:
    """The CI failure's figures, made on purpose: greedy (deterministic) against its own
    source plays each deal twice as one game with the seats swapped, so every group's score
    is 1/2 and its margin and luck 0, and the test reads Elo +0.0 +/- 0. Asked for, it runs
    and its verdict stands."""
    tournament_id, name = _compare(bots, "ada/greedy", "cara/copy", allow_same_source=True)
    play_compare(bots, tournament_id, tmp_path / "cache")
    results = load_results(bots, tournament_id)
    with pytest.raises(VerdictError, match="NEW and OLD ran the same source"):
        deal_groups(results)  # read without the compare's leave
    groups = [group_of(g) for g in deal_groups(results, allow_same_source=True).values()]
    assert len(groups) >= 16
    assert {(g.score, g.margin, g.luck, g.forfeit) for g in groups} == {
        (0.5, 0.0, (0.0, 0.0, 0.0), False)
    }
    view = compare_view(bots, name)
    assert view.elo == view.low == view.high == 0.0
    assert view.verdict == "failed" and view.problem is None
    assert view.test is not None and view.test.allow_same_source
    assert view.test.new_source == view.test.old_source == source_hash(GREEDY)


def test_every_match_keeps_what_each_seat_ran(bots: Store, tmp_path: Path) -> None:
    tournament_id, _ = _compare(bots, "ada/greedy", "bob/first")
    play_compare(bots, tournament_id, tmp_path / "cache", matches=2)
    played = _results(bots, tournament_id)
    assert len(played) == 2
    hashes = {"new": source_hash(GREEDY), "old1": source_hash(FIRST)}
    for _, labels, result in played:
        assert result["sources"] == [hashes[label] for label in labels]
    assert {tuple(labels) for _, labels, _ in played} == {("new", "old1"), ("old1", "new")}
    results = load_results(bots, tournament_id)
    assert [r.sources for r in results] == [tuple(r["sources"]) for _, _, r in played]


def test_a_verdict_refuses_games_whose_two_sides_ran_one_source(
    bots: Store, tmp_path: Path
) -> None:
    """A match whose NEW seat ran OLD's source (the worker's record of what it ran) gives no
    verdict: the view says why, and the next step of the compare's loop (or a worker's stop
    check) voids what is left."""
    tournament_id, name = _compare(bots, "ada/greedy", "bob/first")
    play_compare(bots, tournament_id, tmp_path / "cache", matches=2)
    match_id, labels, _ = _results(bots, tournament_id)[1]
    _set_sources(bots, match_id, [source_hash(FIRST)] * len(labels))
    with pytest.raises(VerdictError, match=f"match b00000-.*: seat {labels.index('new')} "):
        compare_state(bots, tournament_id, MarginSPRT(0.0, 25.0), 2)
    view = compare_view(bots, name)
    assert view.verdict == REFUSED and view.elo is None and view.games == 0
    assert view.problem is not None and "not its entrant's" in view.problem
    with pytest.raises(VerdictError, match="not its entrant's"):  # arena compare --remote's
        advance_compare(bots, tournament_id)
    progress = tournament_progress(bots, tournament_id)
    assert progress["pending"] == 0 and progress["void"] == 6 and progress["done"] == 2
    assert stop_if_decided(bots, match_id) == REFUSED  # a worker's, after its match


def test_a_verdict_refuses_one_source_on_both_sides_when_not_asked_for(
    bots: Store, tmp_path: Path
) -> None:
    """Without the sources stored with the compare (one made before they were), the check
    still refuses two sides that ran one source; the seats' labels decide which is NEW."""
    tournament_id, name = _compare(bots, "ada/greedy", "bob/first")
    play_compare(bots, tournament_id, tmp_path / "cache", matches=2)
    with bots.write() as session:  # as a compare stored before the sources were kept
        tournament = session.get(Tournament, tournament_id)
        assert tournament is not None and tournament.settings is not None
        settings = dict(tournament.settings)
        sprt = dict(settings["sprt"])
        del sprt["new_source"], sprt["old_source"]
        tournament.settings = {**settings, "sprt": sprt}
    assert compare_state(bots, tournament_id, MarginSPRT(0.0, 25.0), 2).played == 16
    match_id, labels, _ = _results(bots, tournament_id)[0]
    _set_sources(bots, match_id, [source_hash(GREEDY)] * len(labels))
    with pytest.raises(VerdictError, match="NEW and OLD ran the same source") as refused:
        compare_state(bots, tournament_id, MarginSPRT(0.0, 25.0), 2)
    assert f"({source_hash(GREEDY)[:12]})" in str(refused.value)
    assert compare_view(bots, name).verdict == REFUSED


def test_a_cached_bot_file_is_run_only_if_its_bytes_are_its_name(
    bots: Store, tmp_path: Path
) -> None:
    """The workers' bot cache is a directory of the machine, shared by every worker and
    outliving them; a file there was trusted by its name. One whose bytes are another
    bot's (greedy's name, first's code) made the worker run first at both seats of a
    compare of greedy against first: a bot against itself, under the right labels."""
    cache = tmp_path / "cache"
    cache.mkdir()
    planted = cache / f"{source_hash(GREEDY)}.py"
    planted.write_text(FIRST)
    tournament_id, _ = _compare(bots, "ada/greedy", "bob/first")
    play_compare(bots, tournament_id, cache, matches=2)
    assert planted.read_text() == GREEDY
    hashes = {"new": source_hash(GREEDY), "old1": source_hash(FIRST)}
    for _, labels, result in _results(bots, tournament_id):
        assert result["sources"] == [hashes[label] for label in labels]
    assert compare_state(bots, tournament_id, MarginSPRT(0.0, 25.0), 2).played == 16
