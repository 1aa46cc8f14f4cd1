"""How a deployment's workers and sweeps are set: :class:`Config` (leases, heartbeats,
sweeps, time limits, the bot cache, warm bots) and :class:`RetentionPolicy` (which game
records are kept), each from ``ARENA_*`` variables.

Apart from the modules that use them (:mod:`arena.service.matches`,
:mod:`arena.service.retention`) and light on purpose: the broker's configuration reads
:class:`Config`, and ``arena compare --remote`` loads the broker to send its start before
it loads the store (:mod:`arena.service.compare_start`).
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from arena.match.compiler import cache_limit_mb

__all__ = ["KEEP_DAYS_ENV", "KEEP_GAMES_ENV", "Config", "RetentionPolicy"]

#: The environment variables of :meth:`RetentionPolicy.from_env`.
KEEP_DAYS_ENV = "ARENA_KEEP_RECORDS_DAYS"
KEEP_GAMES_ENV = "ARENA_KEEP_RECORDS_GAMES"


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """Which game records a deployment keeps (None: no such limit).

    Attributes:
        keep_days: keep the records of matches finished in the last this many days.
        keep_games: keep the records of each tournament's newest this many games.
        batch_records: records deleted in one transaction, about (a match's records go
            together: a bigger match is a batch of its own).
        sweep_records: records one sweep deletes at most (the next sweep goes on).
    """

    keep_days: float | None = None
    keep_games: int | None = None
    batch_records: int = 1000
    sweep_records: int = 20000

    @property
    def active(self) -> bool:
        """Whether any limit is set (else every record is kept)."""
        return self.keep_days is not None or self.keep_games is not None

    def describe(self) -> str:
        """The policy in words: ``records are kept for 30 days``, ``... forever``."""
        limits = []
        if self.keep_days is not None:
            limits.append(f"for {self.keep_days:g} days")
        if self.keep_games is not None:
            limits.append(f"for the newest {self.keep_games} games of each tournament")
        return "game records are kept " + (" and ".join(limits) or "forever")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RetentionPolicy:
        """The policy of ``ARENA_KEEP_RECORDS_DAYS`` and ``ARENA_KEEP_RECORDS_GAMES``
        (unset or empty: no such limit).

        Raises:
            ValueError: a variable is not a number above 0 (a whole one for the games);
                the message names it.
        """
        env = os.environ if environ is None else environ
        days = (env.get(KEEP_DAYS_ENV) or "").strip()
        games = (env.get(KEEP_GAMES_ENV) or "").strip()
        return cls(
            keep_days=_days(days) if days else None, keep_games=_games(games) if games else None
        )


def _days(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(
            f"{KEEP_DAYS_ENV} must be a number of days above 0 (leave it unset to keep "
            f"every game record), not {raw!r}"
        )
    return value


def _games(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(
            f"{KEEP_GAMES_ENV} must be a whole number of games, 1 or more (leave it unset "
            f"to keep every game record), not {raw!r}"
        )
    return value


@dataclass(frozen=True)
class Config:
    """How workers hold matches; every field can be set from the environment.

    Attributes:
        lease_seconds: a claimed match is the worker's for this long after each heartbeat
            (``ARENA_LEASE_SECONDS``); a dead worker's matches are played again after it.
        heartbeat_seconds: how often a playing worker renews its lease (a third of the
            lease unless ``ARENA_HEARTBEAT_SECONDS`` says otherwise).
        sweep_seconds: how often the periodic sweep runs (``ARENA_SWEEP_SECONDS``).
        max_attempts: a match whose harness failed this many times is void
            (``ARENA_MAX_ATTEMPTS``).
        match_time_limit: the hard limit on one match's task, in seconds
            (``ARENA_MATCH_TIME_LIMIT``; the soft limit is 30 s less).
        resend_grace_seconds: a pending match's task is sent again by a sweep only if it was
            last sent longer ago than this (``ARENA_RESEND_GRACE_SECONDS``).
        no_worker_seconds: ``arena tournament run NAME`` gives up (exit 1) when no worker
            has been alive this long (``ARENA_NO_WORKER_SECONDS``).
        bot_cache: where a worker writes the bot sources it runs, one file per source hash
            (``ARENA_BOT_CACHE``; default ``arena-bot-cache`` in the temporary directory).
        warm_bots: keep a match's bots running for the next match with the same key
            (:mod:`arena.match.warm`; ``ARENA_WARM_BOTS=0`` starts every match cold).
        retention: the game records the sweep keeps (:mod:`arena.service.retention`:
            ``ARENA_KEEP_RECORDS_DAYS``, ``ARENA_KEEP_RECORDS_GAMES``; all by default).
    """

    lease_seconds: float = 60.0
    heartbeat_seconds: float = 20.0
    sweep_seconds: float = 15.0
    max_attempts: int = 3
    match_time_limit: float = 1800.0
    resend_grace_seconds: float = 10.0
    no_worker_seconds: float = 120.0
    bot_cache: Path = Path(tempfile.gettempdir()) / "arena-bot-cache"
    warm_bots: bool = True
    retention: RetentionPolicy = field(default_factory=RetentionPolicy)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Config:
        """The configuration from ``ARENA_*`` variables (defaults for those unset).

        Raises:
            ValueError: a variable is not a positive finite number (a whole one for
                ``ARENA_MAX_ATTEMPTS``), or the heartbeat is not shorter than the lease,
                or a retention limit is not one (:meth:`RetentionPolicy.from_env`); the
                message names the variable.
        """
        env = os.environ if environ is None else environ

        def number(name: str, default: float, unit: str = "a number of seconds") -> float:
            raw = env.get(name)
            if raw is None or raw == "":
                return default
            try:
                value = float(raw)
            except ValueError:
                raise ValueError(f"{name} must be {unit}, not {raw!r}") from None
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be {unit} above 0, not {raw!r}")
            return value

        lease = number("ARENA_LEASE_SECONDS", cls.lease_seconds)
        beat = number("ARENA_HEARTBEAT_SECONDS", lease / 3)
        if beat >= lease:
            raise ValueError(
                f"ARENA_HEARTBEAT_SECONDS ({beat:g}) must be shorter than "
                f"ARENA_LEASE_SECONDS ({lease:g}), or leases run out during matches"
            )
        cache_limit_mb(env)  # (read where it bounds; checked here: a wrong one stops a start)
        attempts = number("ARENA_MAX_ATTEMPTS", cls.max_attempts, "a whole number")
        if attempts != int(attempts):
            raw = env.get("ARENA_MAX_ATTEMPTS")
            raise ValueError(f"ARENA_MAX_ATTEMPTS must be a whole number, not {raw!r}")
        return cls(
            lease_seconds=lease,
            heartbeat_seconds=beat,
            sweep_seconds=number("ARENA_SWEEP_SECONDS", cls.sweep_seconds),
            max_attempts=int(attempts),
            match_time_limit=number("ARENA_MATCH_TIME_LIMIT", cls.match_time_limit),
            resend_grace_seconds=number("ARENA_RESEND_GRACE_SECONDS", cls.resend_grace_seconds),
            no_worker_seconds=number("ARENA_NO_WORKER_SECONDS", cls.no_worker_seconds),
            bot_cache=Path(env.get("ARENA_BOT_CACHE") or cls.bot_cache),
            warm_bots=env.get("ARENA_WARM_BOTS", "1") != "0",
            retention=RetentionPolicy.from_env(env),
        )
