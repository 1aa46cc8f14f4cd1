"""Reads of stored bots that the web pages show: the list of bots, one bot with its
versions, ratings and rating history, a version's source, the names behind a leaderboard;
and the one write its page makes (its source public or private).

Queries live in the store (docs/architecture.md): callers get plain values, frozen
dataclasses and detached rows, never a session.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, bindparam, func, select

from arena.store.db import Store, as_utc
from arena.store.models import Bot, BotVersion, RatingHistory, RuleSet, User
from arena.store.models import Rating as RatingRow

__all__ = [
    "BotRecord",
    "BotRow",
    "bot_record",
    "bot_rows",
    "set_source_public",
    "version_id",
    "version_names",
    "version_owners",
    "version_source",
    "version_sources",
]


@dataclass(frozen=True, slots=True)
class BotRow:
    """A bot in the list."""

    owner: str
    name: str
    versions: int
    latest: datetime


# The statement of :func:`bot_rows` (built once: the bot list and the API's read it, and
# building it cost more than the read).
_BOT_ROWS = (
    select(User.name, Bot.name, func.count(BotVersion.id), func.max(BotVersion.created))
    .join(Bot, Bot.owner_id == User.id)
    .join(BotVersion, BotVersion.bot_id == Bot.id)
    .group_by(User.name, Bot.name)
    .order_by(func.max(BotVersion.created).desc(), User.name, Bot.name)
)


def bot_rows(store: Store) -> list[BotRow]:
    """Every stored bot, the most recently updated first."""
    with store.read_columns() as connection:
        rows = connection.execute(_BOT_ROWS).all()
    return [BotRow(owner, name, count, as_utc(latest)) for owner, name, count, latest in rows]


def version_owners(
    store: Store, version_ids: Sequence[int]
) -> dict[int, tuple[str, int, str, int]]:
    """Each bot version id → (owner's name, bot id, bot's name, version number)."""
    with store.read() as session:
        return {
            version_id: (owner, bot_id, bot, number)
            for version_id, owner, bot_id, bot, number in session.execute(
                select(BotVersion.id, User.name, Bot.id, Bot.name, BotVersion.version)
                .join(Bot, Bot.id == BotVersion.bot_id)
                .join(User, User.id == Bot.owner_id)
                .where(BotVersion.id.in_(list(version_ids)))
            )
        }


@dataclass(frozen=True, slots=True)
class BotRecord:
    """A bot as stored, for its page.

    Attributes:
        bot: the bot (detached: read its columns only).
        versions: (id, number, sha256, created, report, runtime) of each version, newest
            first.
        ratings: (version id, rules, rating, low, high, games, rank), by rule set's name.
        history: (rules, time, version id, rating, low, high) of the versions' rating
            history, by rule set's name then time.
    """

    bot: Bot
    owner: str
    versions: list[tuple[int, int, str, datetime, dict[str, Any] | None, str]]
    ratings: list[tuple[int, str, float, float, float, int, int]]
    history: list[tuple[str, datetime, int, float, float, float]]


# The statements of :func:`bot_record`, built once (building them cost more CPU than the
# database's answers, each by an index).
_VERSION_IDS = bindparam("versions", type_=Integer, expanding=True)
_BOT_BY_NAME = (
    select(Bot, User.name)
    .join(User, User.id == Bot.owner_id)
    .where(User.name == bindparam("owner"), Bot.name == bindparam("name"))
)
_BOT_VERSIONS = (
    select(BotVersion.id, BotVersion.version, BotVersion.sha256, BotVersion.created,
           BotVersion.report, BotVersion.runtime)
    .where(BotVersion.bot_id == bindparam("bot"))
    .order_by(BotVersion.version.desc())
)  # fmt: skip
_VERSION_RATINGS = (
    select(
        RatingRow.bot_version_id,
        RuleSet.name,
        RatingRow.rating,
        RatingRow.low,
        RatingRow.high,
        RatingRow.games,
        RatingRow.rank,
    )
    .join(RuleSet, RuleSet.id == RatingRow.rule_set_id)
    .where(RatingRow.bot_version_id.in_(_VERSION_IDS))
    .order_by(RuleSet.name)
)
_VERSION_HISTORY = (
    select(
        RuleSet.name,
        RatingHistory.time,
        RatingHistory.bot_version_id,
        RatingHistory.rating,
        RatingHistory.low,
        RatingHistory.high,
    )
    .join(RuleSet, RuleSet.id == RatingHistory.rule_set_id)
    .where(RatingHistory.bot_version_id.in_(_VERSION_IDS))
    .order_by(RuleSet.name, RatingHistory.time)
)


def bot_record(store: Store, owner: str, name: str) -> BotRecord | None:
    """The bot ``owner/name`` with its versions, ratings and rating history, or None."""
    with store.read() as session:
        row = session.execute(_BOT_BY_NAME, {"owner": owner, "name": name}).first()
        if row is None:
            return None
        bot, owner_name = row
        versions = session.execute(_BOT_VERSIONS, {"bot": bot.id}).all()
        ids = {"versions": [v.id for v in versions]}
        ratings = session.execute(_VERSION_RATINGS, ids).all()
        history = session.execute(_VERSION_HISTORY, ids).all()
    return BotRecord(
        bot=bot,
        owner=owner_name,
        versions=[
            (vid, number, sha, created, report, runtime)
            for vid, number, sha, created, report, runtime in versions
        ],
        ratings=[
            (vid, rules, rating, low, high, games, rank)
            for vid, rules, rating, low, high, games, rank in ratings
        ],
        history=[
            (rules, time, vid, rating, low, high) for rules, time, vid, rating, low, high in history
        ],
    )


def version_source(store: Store, owner: str, name: str, version: int) -> str | None:
    """The source of ``owner/name`` version ``version``, or None."""
    with store.read() as session:
        return session.scalar(
            select(BotVersion.source)
            .join(Bot, Bot.id == BotVersion.bot_id)
            .join(User, User.id == Bot.owner_id)
            .where(User.name == owner, Bot.name == name, BotVersion.version == version)
        )


_VERSION_ID = (
    select(BotVersion.id)
    .join(Bot, Bot.id == BotVersion.bot_id)
    .join(User, User.id == Bot.owner_id)
    .where(
        User.name == bindparam("owner"),
        Bot.name == bindparam("name"),
        BotVersion.version == bindparam("version"),
    )
)


def version_id(store: Store, owner: str, name: str, version: int) -> int | None:
    """The id of ``owner/name`` version ``version``, or None."""
    with store.read_columns() as connection:
        found = connection.scalar(_VERSION_ID, {"owner": owner, "name": name, "version": version})
    return None if found is None else int(found)


def version_sources(
    store: Store, version_ids: Sequence[int]
) -> dict[int, tuple[str, str, int, str, str]]:
    """Each bot version id → (owner's name, bot's name, version number, sha256, source)."""
    with store.read() as session:
        return {
            version_id: (owner, bot, number, sha, source)
            for version_id, owner, bot, number, sha, source in session.execute(
                select(BotVersion.id, User.name, Bot.name, BotVersion.version,
                       BotVersion.sha256, BotVersion.source)
                .join(Bot, Bot.id == BotVersion.bot_id)
                .join(User, User.id == Bot.owner_id)
                .where(BotVersion.id.in_(list(version_ids)))
            )
        }  # fmt: skip


def set_source_public(store: Store, bot_id: int, public: bool) -> None:
    """Make a bot's sources readable by everyone, or by its owner and the admins only (no
    such bot: nothing changes)."""
    with store.write() as session:
        bot = session.get(Bot, bot_id)
        if bot is not None:
            bot.source_public = public


def version_names(store: Store, version_ids: Sequence[int]) -> dict[int, tuple[int, str, str, int]]:
    """Version id -> (its owner's user id, owner's name, bot's name, version number), for
    the stored ones among ``version_ids``."""
    with store.read() as session:
        found = session.execute(
            select(BotVersion.id, User.id, User.name, Bot.name, BotVersion.version)
            .join(Bot, Bot.id == BotVersion.bot_id)
            .join(User, User.id == Bot.owner_id)
            .where(BotVersion.id.in_(list(version_ids)))
        ).all()
    return {int(v): (int(u), str(owner), str(bot), int(n)) for v, u, owner, bot, n in found}
