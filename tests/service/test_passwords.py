"""The bound on password hashing (arena/service/passwords.py): slots per process and per
machine, refused at once when taken, freed however the holder ends."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from argon2.exceptions import VerifyMismatchError

from arena.service.accounts import password_hasher
from arena.service.passwords import GuardedHasher, HashGuard, ServerBusy


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
