"""The java runtime (arena/match/runtimes.py, the kit arena/match/kits/java): compiled in the
real sandbox once per source with javac, javac's errors shown as it printed them, the
reference bots/Greedy.java playing exactly as bots/greedy.py on every table, the starter
playing, and hostile Java bots (a thread bomb, a heap hog, a process ignoring SIGTERM with a
shutdown hook that never returns) contained with their verdicts."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from arena.engine.events import Termination
from arena.engine.records import game_record
from arena.engine.rules import find_rules
from arena.match.compiler import CompileError, build
from arena.match.cputime import walk_tree
from arena.match.lineup import check_bot, make_players
from arena.match.newbot import java_class_name, starter_bot, write_starter_bot
from arena.match.process import ProcessPlayer
from arena.match.referee import GameOutcome, StrategyPlayer, play_match
from arena.match.runtimes import RUNTIMES, runtime_for_upload, runtime_missing, runtime_version
from arena.match.sandbox import Limits, Sandbox
from tests.match.kept import assert_kept_between_matches
from tests.paths import REFERENCE_BOTS, ZOO, own_slot, write_readable

JAVA = RUNTIMES["java"]
#: A source with two errors, on lines 5 and 6.
BROKEN = (
    "import arena.*;\n\n"
    "public class Broken implements Player {\n"
    "    public Move play(Observation observation) {\n"
    '        int count = "several";\n'
    "        return observation.legalMove.get(0);\n"
    "    }\n"
    "}\n"
)


@pytest.fixture(autouse=True, scope="module")
def java_installed() -> None:
    problem = runtime_missing(JAVA)
    if problem:
        pytest.fail(f"java unavailable: {problem}", pytrace=False)


@pytest.fixture(scope="module")
def greedy_java() -> Path:
    """bots/Greedy.java, compiled once in the sandbox (every later build takes the cache's)."""
    path = REFERENCE_BOTS / "Greedy.java"
    build(path, JAVA, Sandbox(Limits(), own_slot(400)))
    return path


def _play(bot: Path, games: int = 1, memory_mb: int = 512) -> list[GameOutcome]:
    players = make_players([str(bot), "random"], limits=Limits(memory_mb=memory_mb))
    return sorted(
        play_match(find_rules("draw"), players, games=games, seed=3), key=lambda o: o.index
    )


def test_java_is_declared_with_its_toolchain() -> None:
    assert runtime_for_upload("Mine.java", None) is JAVA
    assert runtime_version("java").startswith("Java 17.")


@pytest.mark.parametrize(
    ("rules", "seats", "teams"), [("draw", 2, False), ("block", 3, False), ("muggins", 4, True)]
)
def test_greedy_java_plays_exactly_as_greedy_py(
    greedy_java: Path, rules: str, seats: int, teams: bool
) -> None:
    others = ["random"] * (seats - 1)

    def records(bot: Path) -> list[str]:
        players = make_players([str(bot), *others])
        games = play_match(find_rules(rules), players, games=2, seed=11, teams=teams)
        names = ["greedy", *others]
        return [
            json.dumps(game_record(o.game, names)) for o in sorted(games, key=lambda o: o.index)
        ]

    assert records(greedy_java) == records(REFERENCE_BOTS / "greedy.py")


def test_a_java_bot_is_kept_warm_between_matches(greedy_java: Path) -> None:
    """arena.match.warm keeps a JVM (its compiled code with it) as it keeps a Python bot's
    process: the second match starts no JVM."""
    assert_kept_between_matches(greedy_java, "java", own_slot(410))


def test_javacs_errors_reach_the_author_as_javac_printed_them(readable: Path) -> None:
    broken = write_readable(readable, "Broken.java", BROKEN)
    *_, (stage, report) = check_bot(str(broken), games=1)
    assert stage == "compile" and not report.ok
    error = report.compile_error
    assert "Broken.java:5: error: incompatible types: String cannot be converted to int" in error
    assert "Broken.java:6: error: cannot find symbol" in error and "2 errors" in error
    assert "/src/" not in error and "/tmp/" not in error
    lonely = write_readable(readable, "Lonely.java", "public class Lonely {}\n")
    *_, (_, report) = check_bot(str(lonely), games=1)
    assert "Lonely.java: no public class implements arena.Player" in report.compile_error


def test_the_starter_compiles_and_plays_every_preset(readable: Path) -> None:
    """(named "move": its class MoveBot, not Move, which would hide the kit's Move)"""
    starter = readable / "move.java"
    write_starter_bot(starter, "java")
    starter.chmod(0o644)
    assert "public class MoveBot implements Player" in starter.read_text()
    *_, (_, report) = check_bot(str(starter), games=1)
    assert report.ok, report.faults
    assert report.name == "move"


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("MyBot", "MyBot"),
        ("mybot", "Mybot"),
        ("my-bot", "MyBot"),
        ("my_bot", "MyBot"),
        ("int", "Int"),
        ("Player", "PlayerBot"),
        ("map", "MapBot"),
        ("string", "StringBot"),
    ],
)
def test_the_starters_class_is_a_java_class_made_from_its_name(name: str, cls: str) -> None:
    """Any bot name makes a starter: its class a Java class of that name's parts, capitalised,
    never a keyword nor a type the file uses (a class Move hid the kit's: 7 javac errors)."""
    assert java_class_name(name) == cls
    text = starter_bot(name, "java")
    assert f"public class {cls} implements Player {{" in text
    assert f'public static final String NAME = "{name}";' in text


def test_an_exception_is_the_games_crash_naming_the_line_of_the_authors_file(
    readable: Path,
) -> None:
    """(the file named otherwise than its class: javac still compiles it, and the line is
    the file's)"""
    crashy = write_readable(
        readable,
        "crashy.java",
        "import arena.*;\n\n"
        "public class Crashy implements Player {\n"
        "    public Move play(Observation observation) {\n"
        '        String nothing = observation.legalMoves.size() > 0 ? null : "x";\n'
        "        return Move.parse(nothing.trim());\n"
        "    }\n"
        "}\n",
    )
    [outcome] = _play(crashy)
    assert outcome.verdict is not None and outcome.verdict.termination is Termination.CRASH
    assert outcome.verdict.message.startswith("NullPointerException: ")
    assert outcome.verdict.message.endswith("(line 6)")


def test_a_thread_bomb_is_stopped_by_the_process_limit(readable: Path) -> None:
    [outcome] = _play(ZOO / "ThreadBomb.java")
    assert outcome.verdict is not None and outcome.verdict.termination is Termination.CRASH
    assert "unable to create native thread" in outcome.verdict.message


def test_a_heap_hog_is_stopped_by_the_heap_cap() -> None:
    [outcome] = _play(ZOO / "HeapHog.java", memory_mb=256)
    assert outcome.verdict is not None and outcome.verdict.termination is Termination.CRASH
    assert "OutOfMemoryError" in outcome.verdict.message


def test_a_bot_ignoring_sigterm_with_a_hook_that_never_returns_is_gone_after_its_match() -> None:
    """Stubborn.java plays legally, ignores SIGTERM and hangs in its shutdown hook when the
    kit exits at "quit": the sandbox's kill still ends every process of it with the match."""
    player = ProcessPlayer(ZOO / "Stubborn.java", Sandbox(Limits(), own_slot(401)), "java")
    seen: set[int] = set()

    class Watch(StrategyPlayer):
        """The opponent, which notes the bot's processes at each game's end."""

        def end(self, game: str, result: Mapping[str, Any]) -> None:
            if player.pid is not None:
                seen.update(pid for pid, _ in walk_tree(player.pid))

    outcomes = list(play_match(find_rules("draw"), [player, Watch("random")], games=2, seed=3))
    assert [o.verdict for o in outcomes] == [None, None]
    assert len(seen) >= 2  # bwrap and the JVM
    assert not [pid for pid in seen if _alive(pid)]


def test_a_compile_bomb_ends_in_a_sentence(readable: Path) -> None:
    """A source nested too deeply for javac's stack: javac gives up, and the author reads why."""
    deep = "(" * 20000 + "1" + ")" * 20000
    source = write_readable(readable, "Deep.java", BROKEN.replace('"several"', deep))
    with pytest.raises(CompileError) as raised:
        build(source, JAVA, Sandbox(Limits(), own_slot(402)))
    assert str(raised.value).startswith(
        "Deep.java: javac ran out of stack: the source is nested too deeply (java.lang."
        "StackOverflowError)\n"
    )


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, or a pid gone, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
