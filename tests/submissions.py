"""A bot's latest version stored as a submission to a class's assignment, without a
gauntlet: what a class's teachers may read, compare and play in its tournaments (issue 30),
for the tests of those."""

from __future__ import annotations

from sqlalchemy import select

from arena.store.db import Store


def submitted(store: Store, class_name: str, owner: str, bot: str) -> None:
    """Store ``owner/bot``'s latest version as a submission to the class's assignment
    ``hw`` (made the first time): what a class tournament may play (issue 30)."""
    from datetime import UTC, datetime, timedelta

    from arena.engine.rules import PRESETS
    from arena.service.classes import find_class
    from arena.store import assignments as stored
    from arena.store.models import Bot, BotVersion, User

    row = find_class(store, class_name)
    found = stored.assignment_named(store, row.id, "hw")
    now = datetime.now(UTC)
    assignment_id = found.id if found is not None else stored.insert_assignment(
        store, class_id=row.id, name="hw", rules=PRESETS["block"], values={
            "settings": {}, "references": [], "grades": [{"grade": "F", "beats": []}],
            "opens": now, "deadline": now + timedelta(days=1), "seed": 1,
        },
    )  # fmt: skip
    with store.read() as session:
        user_id, version_id = session.execute(
            select(User.id, BotVersion.id)
            .join(Bot, Bot.owner_id == User.id)
            .join(BotVersion, BotVersion.bot_id == Bot.id)
            .where(User.name == owner, Bot.name == bot)
            .order_by(BotVersion.version.desc())
        ).first() or (None, None)
    assert user_id is not None and version_id is not None
    stored.insert_submission(
        store, assignment_id, user_id, upload_id=None, version_id=version_id, late=False
    )
