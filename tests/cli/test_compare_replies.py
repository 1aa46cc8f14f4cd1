"""``arena compare --remote`` following its compare by the workers' replies
(arena.cli.compare._follow_replies): what it shows is what the store's loop shows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from arena.cli import compare
from arena.engine.rules import PRESETS
from arena.service import compare_start
from arena.service.compare_start import CompareRequest, Reply


def _request() -> CompareRequest:
    return CompareRequest.make(
        new="a/x", old="b/y", rules="draw", rules_version=PRESETS["draw"].version, players=2,
        teams=False, statistic="margin", elo0=0.0, elo1=10.0, alpha=0.05, beta=0.05,
        max_games=64, batch=4, seed=1, move_seconds=1.0, memory_mb=512,
        allow_same_source=False,
    )  # fmt: skip


def _reading(played: int, status: str = "continue") -> Reply:
    figures = dict(
        statistic="margin", groups=played // 2, status=status, llr=1.5, lower=-2.9, upper=2.9,
        fast_llr=3.1, fast_upper=3.0, elo=120.0, low=40.0, high=float("inf"), los=0.99,
    )  # fmt: skip
    return Reply("reading", played // 8, status, played, figures)


def _follow(monkeypatch: pytest.MonkeyPatch, replies: list[Reply]) -> tuple[int | None, int, bool]:
    """:func:`arena.cli.compare._follow_replies` of these replies."""

    def replied(*_: object, **__: object) -> Iterator[Reply]:
        yield from replies

    monkeypatch.setattr(compare_start, "follow_replies", replied)
    return compare._follow_replies(_request(), "HEADER", url=None, broker=None)


def test_each_reading_then_the_verdict(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The header once a worker stored the compare, a line a reading over more games, and
    the verdict's line (its last reading's line first, even when it came alone)."""
    (code, shown, said) = _follow(
        monkeypatch, [Reply("stored"), _reading(8), _reading(8), _reading(16, "H1 accepted")]
    )
    out = capsys.readouterr().out.splitlines()
    assert (code, shown, said) == (compare.PASSED, 16, True)
    assert out[0] == "HEADER" and len(out) == 4
    assert out[1].startswith("games      8 | Elo  +120.0 (+40.0 to +inf) | LOS  99.0%")
    assert out[2].startswith("games     16 |") and "fast pass  +3.10 [+3.00]" in out[2]
    assert out[3] == "NEW passed (H1 accepted by the fast pass, 16 games)"
    (code, _, _) = _follow(monkeypatch, [Reply("stored"), _reading(32, "H0 accepted")])
    out = capsys.readouterr().out.splitlines()
    assert code == compare.FAILED and out[1].startswith("games     32 |")
    assert out[2] == "NEW failed (H0 accepted, 32 games)"


def test_no_verdict_leaves_the_compare_to_the_store(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The following ended without a verdict (a refusal, a refused test's end, the time up):
    no exit status, and what was shown, for the store's loop to go on from."""
    (code, shown, said) = _follow(monkeypatch, [Reply("refused")])
    assert (code, shown, said) == (None, -1, False) and capsys.readouterr().out == ""
    refused = Reply("reading", 3, compare_start.REFUSED)
    (code, shown, said) = _follow(monkeypatch, [Reply("stored"), _reading(8), refused])
    assert (code, shown, said) == (None, 8, True)
    assert capsys.readouterr().out.splitlines()[0] == "HEADER"


def test_the_store_takes_over_where_the_replies_left_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """No verdict in the replies: the store's loop goes on from the games shown, without
    the header again once said; the replies left are dropped however the command ends
    (interrupted too), and a command whose start the broker did not take reads none."""
    calls: list[tuple[str, Any]] = []

    def stored(*args: Any) -> int:
        calls.append(("stored", args[2:4]))
        return compare.PASSED

    def interrupted(*_: object, **__: object) -> tuple[int | None, int, bool]:
        raise KeyboardInterrupt

    def remote(sent: bool) -> int:
        return compare.compare_remote(
            _request(), rules=PRESETS["draw"], described="D", url=None, broker=None, sent=sent
        )

    monkeypatch.setattr(compare, "_follow_replies", lambda *_, **__: (None, 8, True))
    monkeypatch.setattr(compare, "_follow_stored", stored)
    monkeypatch.setattr(compare_start, "drop_replies", lambda *_: calls.append(("dropped", 0)))
    assert remote(sent=True) == compare.PASSED
    assert calls == [("stored", (None, 8)), ("dropped", 0)]
    calls.clear()
    monkeypatch.setattr(compare, "_follow_replies", interrupted)
    with pytest.raises(KeyboardInterrupt):
        remote(sent=True)
    assert calls == [("dropped", 0)]
    calls.clear()
    assert remote(sent=False) == compare.PASSED
    assert len(calls) == 1 and calls[0][1][0].startswith("draw, 2 players: NEW a/x")
