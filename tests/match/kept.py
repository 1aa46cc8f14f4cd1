"""A check the runtimes' tests share: arena.match.warm keeps a bot's process between
matches, whatever its runtime."""

from pathlib import Path

from arena.engine.rules import find_rules
from arena.match.lineup import make_players, release_kept_players
from arena.match.referee import Player, play_match
from arena.match.sandbox import Limits
from arena.match.warm import KeptPlayer, MatchSetup


def assert_kept_between_matches(
    bot: Path, runtime_key: str, slot: int, limits: Limits | None = None
) -> None:
    """Two matches of ``bot`` (against random, one game of ``draw`` each) on kept players:
    the second reuses the first's player, and the bot's process was started once."""
    setup = MatchSetup(find_rules("draw").version, 2, False, None, runtime_key)

    def kept() -> list[Player]:
        return make_players(
            [str(bot), "random"], keep_games=10, setup=setup, limits=limits, first_slot=slot
        )

    try:
        first = kept()
        assert all(
            o.verdict is None for o in play_match(find_rules("draw"), first, games=1, seed=3)
        )
        second = kept()
        assert second[0] is first[0] and isinstance(first[0], KeptPlayer)
        assert all(
            o.verdict is None for o in play_match(find_rules("draw"), second, games=1, seed=4)
        )
        assert first[0].starts == 1
    finally:
        release_kept_players()
