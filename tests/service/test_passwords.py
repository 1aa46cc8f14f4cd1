"""The bound on password hashing (arena/service/passwords.py): slots per process and per
machine, freed however the holder ends; the line in front of them: bounded places, a
bounded wait, keys served in turn, a flood's key holding at most its share of the places,
processes taking turns at the machine's slot."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from argon2.exceptions import VerifyMismatchError

from arena.service import passwords
from arena.service.accounts import password_hasher
from arena.service.passwords import GuardedHasher, HashGuard, ServerBusy, hashing_as, reserved


def test_a_process_holds_at_most_its_slots() -> None:
    guard = HashGuard(2)
    with guard.slot(), guard.slot():
        with pytest.raises(ServerBusy, match="busy") as refused, guard.slot():
            pass
        assert refused.value.retry_after >= 1
    with guard.slot():  # freed on leaving
        pass


def test_a_slot_is_freed_when_the_hash_raises() -> None:
    guard = HashGuard(1)
    with pytest.raises(ValueError), guard.slot():
        raise ValueError("the hash failed")
    with guard.slot():
        pass


def test_two_guards_on_one_folder_share_the_machines_slots(tmp_path: Path) -> None:
    one, other = HashGuard(1, folder=tmp_path), HashGuard(1, folder=tmp_path)
    with one.slot(), pytest.raises(ServerBusy), other.slot():
        pass
    with other.slot():
        pass
    assert HashGuard(2, per_machine=1, folder=tmp_path).per_machine == 1


#: Another process holds the machine's one slot until it is killed.
HOLDER = """
import sys, time
from pathlib import Path
from arena.service.passwords import HashGuard
with HashGuard(1, folder=Path(sys.argv[1])).slot():
    print("holding", flush=True)
    time.sleep(60)
"""


def test_another_process_holds_a_slot_until_it_dies(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        with pytest.raises(ServerBusy), HashGuard(1, folder=tmp_path).slot():
            pass
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()
    with HashGuard(1, folder=tmp_path).slot():  # the dead process's slot is free
        pass


def test_the_guarded_hasher_hashes_and_verifies_as_its_inner_one() -> None:
    inner = password_hasher(cheap=True)
    hasher = GuardedHasher(inner, HashGuard(1))
    digest = hasher.hash("correct horse")
    assert inner.verify(digest, "correct horse") and hasher.verify(digest, "correct horse")
    with pytest.raises(VerifyMismatchError):
        hasher.verify(digest, "wrong")
    assert not hasher.check_needs_rehash(digest)
    assert hasher.check_needs_rehash(
        PasswordHasher(time_cost=1, memory_cost=64, parallelism=1).hash("x")
    )
    with hasher.guard.slot():
        began = time.monotonic()
        with pytest.raises(ServerBusy):
            hasher.verify(digest, "correct horse")
        with pytest.raises(ServerBusy):
            hasher.hash("correct horse")
        assert time.monotonic() - began < 0.5  # refused at once, not queued


# --- the line -----------------------------------------------------------------------------


class Line:
    """Requests of ``guard`` started in threads, each taking a slot under its key and
    recording when it got it (or that it was refused)."""

    def __init__(self, guard: HashGuard, served: list[str] | None = None) -> None:
        self.guard = guard
        self.served: list[str] = [] if served is None else served
        self.refused: list[tuple[str, int]] = []
        self.threads: list[threading.Thread] = []

    def start(self, name: str, key: str, hold: float = 0.0) -> None:
        def run() -> None:
            try:
                with self.guard.slot(key):
                    self.served.append(name)
                    time.sleep(hold)
            except ServerBusy as busy:
                self.refused.append((name, busy.retry_after))

        thread = threading.Thread(target=run)
        thread.start()
        self.threads.append(thread)

    def start_in_line(self, name: str, key: str, hold: float = 0.0) -> None:
        """Start ``name`` and return once it waits in line."""
        before = self.guard.waiting
        self.start(name, key, hold)
        until(lambda: self.guard.waiting == before + 1 or bool(self.refused))

    def join(self) -> None:
        for thread in self.threads:
            thread.join(10)
            assert not thread.is_alive()


def until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.002)


def test_a_hash_without_a_free_slot_waits_its_turn_instead_of_being_refused() -> None:
    guard = HashGuard(1, queue=4)
    line = Line(guard)
    with guard.slot():
        for name in ("a", "b", "c"):
            line.start_in_line(name, "class")
        assert line.served == [] and guard.waiting == 3
    line.join()
    assert line.served == ["a", "b", "c"] and not line.refused  # in order, none refused


def test_keys_are_served_in_turn() -> None:
    guard = HashGuard(1, queue=8)
    line = Line(guard)
    with guard.slot():
        for number in range(4):
            line.start_in_line(f"flood{number}", "address:10.0.0.9")
        line.start_in_line("ada", "class-code:K7MX4PQ9")
        line.start_in_line("bob", "class-code:K7MX4PQ9")
    line.join()
    assert line.served == ["flood0", "ada", "flood1", "bob", "flood2", "flood3"]


def test_the_places_are_bounded_and_a_refusal_says_when_to_come_back() -> None:
    guard = HashGuard(1, queue=2)
    line = Line(guard)
    with guard.slot():
        line.start_in_line("a", "k")
        line.start_in_line("b", "k")
        began = time.monotonic()
        with pytest.raises(ServerBusy, match="busy checking other passwords") as refused:
            guard.check("k")
        with pytest.raises(ServerBusy), guard.slot("k"):
            pass
        assert time.monotonic() - began < 0.5  # at once, not after a wait
        assert refused.value.retry_after >= 2  # about the line ahead of it, in hashes
    line.join()
    assert line.served == ["a", "b"]


def test_a_newcomer_with_a_smaller_share_takes_the_longest_lines_newest_place() -> None:
    # A flood from one address filled the line; a class's join still gets a place, and the
    # flood keeps at most its share of the places.
    guard = HashGuard(1, queue=4)
    line = Line(guard)
    with guard.slot():
        for number in range(4):
            line.start_in_line(f"flood{number}", "address:10.0.0.9")
        guard.check("class-code:K7MX4PQ9")  # a place for the class: no refusal
        line.start_in_line("ada", "class-code:K7MX4PQ9")
        until(lambda: len(line.refused) == 1)
        assert line.refused[0][0] == "flood3"  # the flood's newest
        line.start_in_line("bob", "class-code:K7MX4PQ9")
        until(lambda: len(line.refused) == 2)
        assert line.refused[1][0] == "flood2"
        # two places each now: neither key takes one more from the other
        with pytest.raises(ServerBusy):
            guard.check("class-code:K7MX4PQ9")
        with pytest.raises(ServerBusy):
            guard.check("address:10.0.0.9")
    line.join()
    assert line.served == ["flood0", "ada", "flood1", "bob"]


def test_the_wait_is_bounded() -> None:
    guard = HashGuard(1, queue=4, wait=0.2)
    with guard.slot():
        began = time.monotonic()
        with pytest.raises(ServerBusy), guard.slot("k"):
            pass
        assert 0.15 < time.monotonic() - began < 2.0
        assert guard.waiting == 0  # its place is given back
    with guard.slot("k"):
        pass


def test_the_key_comes_from_the_context() -> None:
    guard = HashGuard(1, queue=2)
    line = Line(guard)
    with guard.slot():
        line.start_in_line("flood0", "address:10.0.0.9")
        line.start_in_line("flood1", "address:10.0.0.9")
        with hashing_as("address:10.0.0.9"), pytest.raises(ServerBusy):
            guard.check()  # the flood's own key: no place
        with hashing_as("class-code:K7MX4PQ9"):
            guard.check()  # another key: it would take the flood's newest place
    line.join()


def test_a_thread_holding_a_slot_hashes_again_without_waiting() -> None:
    # A password change verifies then hashes inside a transaction: its slot is taken
    # before (reserved), and both hashes go on in it.
    hasher = GuardedHasher(password_hasher(cheap=True), HashGuard(1, queue=0))
    with reserved(hasher):
        digest = hasher.hash("correct horse")
        assert hasher.verify(digest, "correct horse")
        line = Line(hasher.guard)
        line.start("other", "k")  # another thread has no slot: refused (no places)
        line.join()
        assert line.refused and not line.served
    with reserved(password_hasher(cheap=True)):  # an unbounded hasher: nothing to hold
        pass


def test_processes_take_turns_at_the_machines_slot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two guards on one folder are two processes: the one that gives the machine's slot
    # back lets the other's waiter have it before its own next one.
    monkeypatch.setattr(passwords, "HANDOFF_SECONDS", 0.3)
    one, other = HashGuard(1, queue=4, folder=tmp_path), HashGuard(1, queue=4, folder=tmp_path)
    served: list[str] = []
    first, second = Line(one, served), Line(other, served)
    first.start("one-a", "k", hold=0.3)
    until(lambda: served == ["one-a"])
    first.start_in_line("one-b", "k")
    second.start("other-a", "k")  # polls for the machine's slot
    first.join()
    second.join()
    assert served == ["one-a", "other-a", "one-b"]
    assert not first.refused and not second.refused


def test_a_key_that_gets_in_takes_more_turns_than_one_that_guesses() -> None:
    # A class logging in gets in; a flood of made-up names does not: the class takes
    # three hashes a turn, the flood one.
    guard = HashGuard(1, queue=12)
    for _ in range(3):
        guard.record(True, "address:192.0.2.10")
        guard.record(False, "address:10.0.0.9")
    line = Line(guard)
    with guard.slot():
        for number in range(4):
            line.start_in_line(f"flood{number}", "address:10.0.0.9")
        for number in range(5):
            line.start_in_line(f"pupil{number}", "address:192.0.2.10")
    line.join()
    assert line.served == [
        "flood0", "pupil0", "pupil1", "pupil2", "flood1", "pupil3", "pupil4", "flood2",
        "flood3",
    ]  # fmt: skip


def test_a_key_that_gets_in_holds_more_places_than_one_that_guesses() -> None:
    # The places are shared as the turns are: beside a flood that filled the line, a class
    # that gets in takes three of four places, the flood keeps one.
    guard = HashGuard(1, queue=4)
    for _ in range(3):
        guard.record(True, "class-code:K7MX4PQ9")
        guard.record(False, "address:10.0.0.9")
    line = Line(guard)
    with guard.slot():
        for number in range(4):
            line.start_in_line(f"flood{number}", "address:10.0.0.9")
        for number in range(3):
            line.start_in_line(f"pupil{number}", "class-code:K7MX4PQ9")
            until(lambda number=number: len(line.refused) == number + 1)  # type: ignore[misc]
        assert [name for name, _ in line.refused] == ["flood3", "flood2", "flood1"]
        with pytest.raises(ServerBusy):
            guard.check("class-code:K7MX4PQ9")  # three to one: its share
        with pytest.raises(ServerBusy):
            guard.check("address:10.0.0.9")
    line.join()
    assert line.served == ["flood0", "pupil0", "pupil1", "pupil2"]
