"""One sandbox slot registry per machine (arena.match.sandbox.claim_slot_block): runs that
start together never share a slot; the unprivileged path works beside root's runs; a
slot's cgroup goes with its bot; a sandbox that fails to start costs one match."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.compete.entrants import Entrant
from arena.compete.localrun import LOCAL_ATTEMPTS, MatchResult, run_local
from arena.compete.tournaments import schedule
from arena.engine.rules import find_rules
from arena.match import sandbox
from arena.match.sandbox import check_sandbox, process_slots
from tests.paths import REFERENCE_BOTS, REPO, ZOO

ARENA = Path(sys.executable).parent / "arena"
THREADS = str(ZOO / "threads40.py")


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(ARENA), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


@pytest.mark.slow
def test_runs_started_together_never_share_a_slot(tmp_path: Path) -> None:
    """Two sandboxed `arena play` runs of a bot that keeps 40 threads, and two local
    tournaments with it, all at once: every game is played out with no fault (sharing a
    slot, the runs' threads would pass the slot's process limit of 64: "can't start new
    thread" in every game of one of them), and every run exits 0."""
    assert not check_sandbox(), check_sandbox()
    outs = [tmp_path / f"run{i}.jsonl" for i in range(4)]
    play = ("play", "--rules", "draw", "--bots", f"{THREADS},greedy", "--games", "12")
    local = ("tournament", "run", "--local", "--rules", "draw", "--games", "4")
    bots = f"t={THREADS},g=greedy,c={REFERENCE_BOTS / 'counter.py'}"
    runs = [_start(*play, "--out", str(outs[i])) for i in range(2)]
    runs += [_start(*local, "--bots", bots, "--out", str(outs[i])) for i in range(2, 4)]
    outputs = [run.communicate(timeout=240)[0] for run in runs]
    for run, output in zip(runs, outputs, strict=True):
        assert run.returncode == 0, output
        assert "faults:" not in output and "void (" not in output, output
    for out in outs:
        records = [json.loads(line) for line in out.read_text().splitlines()]
        assert records and all(record.get("verdict") is None for record in records), out


def test_every_process_claims_its_own_block() -> None:
    """This process's block is its own: a forked child claims another."""
    mine = process_slots()
    assert mine == process_slots() and mine % sandbox.SLOT_BLOCK == 0
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports and exits
        os.write(write, str(process_slots()).encode())
        os._exit(0)
    os.close(write)
    theirs = int(os.read(read, 64))
    os.waitpid(child, 0)
    os.close(read)
    assert theirs != mine


def test_a_slots_cgroup_goes_with_its_bot() -> None:
    """After a sandboxed match, none of this process's slots keeps a cgroup."""
    rules = find_rules("draw")
    matches = schedule(
        "round-robin",
        [Entrant.bot_file(REFERENCE_BOTS / "random.py"), Entrant.builtin("greedy")],
        rules=rules,
        players=2,
        games_per_match=2,
        seed=1,
    )
    assert all(r.void is None for r in run_local(matches, rules, workers=1))
    first = process_slots()
    for slot in range(first, first + sandbox.SLOT_BLOCK):
        for kind in ("v1", "v2"):
            assert not sandbox._cgroup_path(f"slot-{slot}", kind).exists()


# Plays two sandboxed games with the arena's code under Debian's python3 (an ordinary user
# cannot run the venv's interpreter when it lives in root's home), printing the verdicts.
UNPRIVILEGED = """
import json, sys
from arena import find_rules
from arena.match.lineup import make_players
from arena.match.referee import TimeControl, play_match
from arena.match.sandbox import check_sandbox
assert not check_sandbox(), check_sandbox()
players = make_players([sys.argv[1], "greedy"], sandboxed=True)
games = list(play_match(find_rules("draw"), players, games=2, seed=3, time_control=TimeControl()))
print(json.dumps([None if g.verdict is None else g.verdict.message for g in games]))
"""


def test_an_ordinary_user_plays_sandboxed_beside_roots_runs(readable: Path) -> None:
    """Most bot authors are not root. As `nobody` (when the tests run as root, after root's
    own sandboxes have run in this process), a sandboxed match plays out: the registry is
    shared (sticky, world-writable), and root's cgroups are not taken for writable. The code
    it runs is copied where `nobody` can read it (a checkout may sit in a 0700 directory)."""
    from importlib.util import find_spec

    seccomp = find_spec("pyseccomp")
    assert seccomp is not None and seccomp.origin, "the sandbox needs pyseccomp"
    assert not check_sandbox()  # root's (or this user's) sandbox has run here
    shutil.copytree(REPO / "arena", readable / "code" / "arena",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    shutil.copy(seccomp.origin, readable / "code")
    (readable / "bots").mkdir()
    bot = Path(shutil.copy(REFERENCE_BOTS / "random.py", readable / "bots"))
    for path in readable.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    command = ["/usr/bin/python3", "-s", "-c", UNPRIVILEGED, str(bot)]
    if os.geteuid() == 0:
        runuser = shutil.which("runuser") or shutil.which("runuser", path="/usr/sbin:/sbin")
        assert runuser, "the test needs runuser (util-linux) to play as an ordinary user"
        command = [runuser, "-u", "nobody", "--", *command]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/tmp",
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(readable / "code")},
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.splitlines()[-1]) == [None, None]


def test_a_sandbox_that_fails_to_start_costs_one_match(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A harness failure is retried, then the match is void with its reason; the other
    matches of the tournament are played."""
    import arena.compete.localrun as localrun

    calls: dict[str, int] = {}
    real = localrun.play_one

    def flaky(match: object, rules: object, **options: object) -> MatchResult:
        result: MatchResult = real(match, rules, **options)  # type: ignore[arg-type]
        calls[result.match.id] = calls.get(result.match.id, 0) + 1
        if result.match.id == first_id:
            return MatchResult(result.match, (), "bwrap: cannot start", 0.0, os.getpid())
        return result

    rules = find_rules("draw")
    matches = schedule(
        "round-robin",
        [Entrant.parse(text) for text in ("random", "greedy", "g2=greedy")],
        rules=rules,
        players=2,
        games_per_match=2,
        seed=1,
    )
    first_id = matches[0].id
    monkeypatch.setattr(localrun, "play_one", flaky)
    monkeypatch.setattr(localrun, "RETRY_SECONDS", 0.0)
    results = list(run_local(matches, rules, workers=1, keep_going=True))
    void = [r for r in results if r.void is not None]
    assert [r.match.id for r in void] == [first_id]
    assert void[0].void == f"bwrap: cannot start (played {LOCAL_ATTEMPTS} times)"
    assert calls[first_id] == LOCAL_ATTEMPTS
    assert all(calls[m.id] == 1 for m in matches[1:])


def test_a_killed_processs_slot_cgroups_go_when_its_block_is_claimed_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process killed outright leaves its slots' cgroups behind, empty: the next process
    to claim the block removes them (a block deep in the registry, which no run uses)."""
    block = (sandbox.SLOT_BLOCKS - 1) * sandbox.SLOT_BLOCK
    made = [sandbox._cgroup_dir(f"slot-{block + 3}", None, kind) for kind in ("v1", "v2")]
    left = [path for path in made if path is not None]
    assert left, "this host offers no memory cgroup to the sandbox (see FACTS.md)"
    monkeypatch.setattr(sandbox, "claim_slot_block", lambda: block)
    monkeypatch.setattr(sandbox, "_process_block", {})
    assert sandbox.process_slots() == block
    assert not any(path.exists() for path in left)
