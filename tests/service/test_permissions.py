"""The permission module (arena/service/permissions.py) and the service actions that ask it:
each action refuses the wrong actor itself (anonymous, another user, the owner, an
organiser, an admin, the operator), whoever calls it; on both databases where the store is
involved."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from celery import Celery

from arena.engine.rules import PRESETS
from arena.errors import ArenaError, NotFound, PermissionDenied
from arena.service import broker
from arena.service.accounts import (
    Account,
    AccountError,
    add_account,
    change_own_password,
    create_account,
    new_token,
    password_hasher,
    revoke_own_token,
    sign_up,
    tokens_of,
)
from arena.service.bot_views import bot_view
from arena.service.bots import set_visibility
from arena.service.branches import BranchError, start_branch
from arena.service.compare_views import CompareRequest, start_compare
from arena.service.intake import take_upload
from arena.service.permissions import (
    ACTIONS,
    EXTRA_RULES,
    OPERATOR,
    PERMISSIONS,
    Actor,
    Target,
    actor_id,
    allowed,
    require,
)
from arena.service.tournaments import NewTournament, cancel_tournament, create_tournament
from arena.service.uploads import UploadError
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS

HASHER = password_hasher(cheap=True)
PASSWORD = "correct horse"
#: The actors every action is tried with (None: anonymous; "operator": the command line).
ACTORS = ("anonymous", "other", "owner", "organiser", "admin", "operator")
BOT = (REFERENCE_BOTS / "greedy.py").read_text()

Actors = dict[str, Actor]


# --- the table alone -------------------------------------------------------------------------


def test_the_operator_is_an_admin_that_owns_nothing() -> None:
    assert all(allowed(OPERATOR, action, Target(7)) for action in ACTIONS)
    assert actor_id(OPERATOR) is None and actor_id(None) is None
    assert actor_id(Account(5, "u", "user", 0)) == 5


def test_require_raises_the_projects_errors() -> None:
    user = Account(1, "u", "user", 0)
    with pytest.raises(PermissionDenied) as refused:
        require(None, "upload")
    assert refused.value.anonymous and refused.value.action == "upload"
    assert not refused.value.stated and isinstance(refused.value, PermissionError)
    with pytest.raises(PermissionDenied, match="only organisers") as refused:
        require(user, "create-tournament", message="only organisers do")
    assert not refused.value.anonymous and refused.value.stated
    with pytest.raises(NotFound, match="no bot x/y"):
        require(user, "read-source", Target(2), hide="no bot x/y")
    require(user, "read-source", Target(1))  # its own
    with pytest.raises(KeyError):
        allowed(user, "fly")


def test_a_new_rule_grants_an_action_without_touching_anything_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The next roles (a teacher over a class's bots) come in as rules."""
    teacher, pupil = Account(1, "t", "user", 0), 2
    pupils = {1: {pupil}}

    def teaches(actor: Account, target: Target | None) -> bool:
        return target is not None and target.owner_id in pupils.get(actor.id, set())

    assert not allowed(teacher, "read-faults", Target(pupil))
    monkeypatch.setitem(EXTRA_RULES, "read-faults", [teaches])
    assert allowed(teacher, "read-faults", Target(pupil))
    assert not allowed(teacher, "read-faults", Target(3))
    assert not allowed(None, "read-faults", Target(pupil))


def test_a_classs_teachers_read_their_students_bots_and_manage_the_class() -> None:
    """Target.teachers: the teachers of the classes a bot's owner is in (or of a class)."""
    teacher, other = Account(1, "t", "teacher", 0), Account(2, "u", "teacher", 0)
    student, organiser = Account(3, "s", "user", 0), Account(4, "o", "organiser", 0)
    bot = Target(3, teachers=frozenset({1}))
    for action in ("read-source", "read-faults"):
        assert allowed(teacher, action, bot) and allowed(student, action, bot)
        assert not allowed(other, action, bot) and not allowed(organiser, action, bot)
        assert not allowed(None, action, bot)
    # the rule grants reading only: never acting on the student's bot
    for action in ("change-visibility", "start-compare", "cancel-tournament", "read-branch"):
        assert not allowed(teacher, action, bot)
    a_class = Target(None, teachers=frozenset({1}))
    assert allowed(teacher, "manage-class", a_class)
    assert not allowed(other, "manage-class", a_class)
    assert not allowed(organiser, "manage-class", a_class)
    assert not allowed(student, "manage-class", Target(3))  # owning nothing of a class
    assert allowed(OPERATOR, "manage-class", a_class)
    assert [allowed(a, "create-class") for a in (None, student, teacher, organiser)] == [
        False, False, True, True
    ]  # fmt: skip
    assert allowed(student, "join-class") and not allowed(None, "join-class")
    assert allowed(student, "request-role") and not allowed(None, "request-role")


def test_every_action_names_a_known_role() -> None:
    from arena.service.permissions import ROLE_RANKS

    assert {role for role, _ in PERMISSIONS.values()} <= set(ROLE_RANKS)


# --- the actions, on both databases ----------------------------------------------------------


def _accounts(store: Store, directory: Path) -> dict[str, Account]:
    """Accounts ``owner`` (a user with the bot owner/mybot), ``other`` (a user),
    ``organiser`` and ``admin``; the bot reference/random: made once a run, every test's
    database a copy of it (the ``seed`` marker below, tests/conftest.py)."""
    store.add_bot_version("owner", "mybot", BOT, {})
    store.add_bot_version("reference", "random", (REFERENCE_BOTS / "random.py").read_text(), {})
    made: dict[str, Account] = {}
    for name, role in (("owner", "user"), ("other", "user"), ("organiser", "organiser")):
        made[name] = create_account(store, name, PASSWORD, role=role, hasher=HASHER)
    made["admin"] = create_account(store, "admin", PASSWORD, role="admin", hasher=HASHER)
    return made


pytestmark = pytest.mark.seed(build=_accounts)


@pytest.fixture
def actors(seeded: dict[str, Account]) -> Actors:
    """The accounts of :func:`_accounts` by name, nobody (``anonymous``) and the
    ``operator``."""
    return {"anonymous": None, "operator": OPERATOR, **seeded}


@pytest.fixture
def celery(url: str, tmp_path: Path) -> Iterator[Celery]:
    """A broker no worker reads (a directory of its own), the service's during the test."""
    from arena.service.broker import make_app, using

    with using(make_app(f"filesystem://{tmp_path / 'broker'}", None, url)) as app:
        yield app


def _outcomes(actors: Actors, act: Callable[[Actor], object]) -> dict[str, str]:
    """What ``act`` did for each actor: ``ok``, ``denied`` (PermissionDenied), ``hidden``
    (NotFound) or the name of another project error."""
    said = {}
    for name in ACTORS:
        try:
            act(actors[name])
        except PermissionDenied:
            said[name] = "denied"
        except NotFound:
            said[name] = "hidden"
        except ArenaError as exc:
            said[name] = type(exc).__name__
        else:
            said[name] = "ok"
    return said


def _tournament(name: str) -> NewTournament:
    return NewTournament(
        name=name,
        rules=PRESETS["block"],
        format="round-robin",
        entrants=("owner/mybot", "reference/random"),
        seed=1,
        games_per_match=2,
    )


def test_only_organisers_admins_and_the_operator_create_tournaments(
    store: Store, actors: Actors
) -> None:
    made = iter(range(100))
    said = _outcomes(
        actors,
        lambda actor: create_tournament(store, actor, _tournament(f"t{next(made)}")),
    )
    assert said == {
        "anonymous": "denied", "other": "denied", "owner": "denied",
        "organiser": "ok", "admin": "ok", "operator": "ok",
    }  # fmt: skip


def test_the_operator_is_not_bounded_by_what_the_web_offers(store: Store, actors: Actors) -> None:
    wanted = _tournament("big")
    many = NewTournament(
        name="big", rules=wanted.rules, format="gauntlet", entrants=("owner/mybot",),
        pool=("reference/random",), seed=1, games_per_match=2000,
    )  # fmt: skip
    with pytest.raises(ArenaError, match="choose a format"):
        create_tournament(store, actors["admin"], many)
    _, matches = create_tournament(store, OPERATOR, many)
    assert sum(match.games for match in matches) == 2000  # over the web's 1000 a pair


def test_only_the_creator_and_admins_cancel_a_tournament(store: Store, actors: Actors) -> None:
    create_tournament(store, actors["organiser"], _tournament("mine"))
    create_tournament(store, OPERATOR, _tournament("operators"))
    said = {
        name: _outcomes(actors, functools.partial(cancel_tournament, store, name=name))
        for name in ("mine", "operators")
    }
    assert said["mine"] == {
        "anonymous": "denied", "other": "denied", "owner": "denied",
        "organiser": "ok", "admin": "ok", "operator": "ok",
    }  # fmt: skip
    assert said["operators"] == {**said["mine"], "organiser": "denied"}
    with pytest.raises(NotFound, match="no tournament called 'nope'"):
        cancel_tournament(store, OPERATOR, "nope")


def test_only_the_owner_and_admins_compare_a_bot_against_others(
    store: Store, actors: Actors, celery: Celery
) -> None:
    wanted = CompareRequest(new="owner/mybot", old="reference/random", rules="draw", max_games=4)
    said = _outcomes(actors, lambda actor: start_compare(store, actor, wanted))
    assert said == {
        "anonymous": "denied", "other": "denied", "owner": "ok",
        "organiser": "denied", "admin": "ok", "operator": "ok",
    }  # fmt: skip
    with pytest.raises(PermissionDenied, match="only the owner of owner/mybot"):
        start_compare(store, actors["other"], wanted)


def test_a_compare_whose_broker_is_down_is_stored_and_left_to_the_sweep(
    store: Store, actors: Actors, celery: Celery, monkeypatch: pytest.MonkeyPatch
) -> None:
    def down(*_: object) -> None:
        raise OSError("connection refused")

    monkeypatch.setattr(broker, "send_matches", down)
    wanted = CompareRequest(new="owner/mybot", old="reference/random", rules="draw", max_games=4)
    started = start_compare(store, actors["owner"], wanted)
    assert not started.sent and started.name.startswith("compare-")


def test_anyone_logged_in_uploads_and_only_as_themselves(
    store: Store, actors: Actors, celery: Celery
) -> None:
    said = _outcomes(
        actors,
        lambda actor: take_upload(store, actor, "b.py", BOT.encode() + b"\n#", name="b"),
    )
    assert said == {
        "anonymous": "denied", "other": "ok", "owner": "ok",
        "organiser": "ok", "admin": "ok", "operator": "UploadError",
    }  # fmt: skip
    with pytest.raises(UploadError, match=r"b\.txt is not a \.py, \.js, .* or \.java file"):
        take_upload(store, actors["owner"], "b.txt", b"x", name="b")


def test_only_the_owner_and_admins_change_a_bots_visibility(store: Store, actors: Actors) -> None:
    said = _outcomes(
        actors,
        lambda actor: set_visibility(store, actor, "owner", "mybot", True),
    )
    # hidden, not refused: a private source is not acknowledged
    assert said == {
        "anonymous": "hidden", "other": "hidden", "owner": "ok",
        "organiser": "hidden", "admin": "ok", "operator": "ok",
    }  # fmt: skip
    view = bot_view(store, "owner", "mybot")
    assert view is not None and view.source_public


def test_only_admins_and_the_operator_store_bots_under_any_owner(
    store: Store, actors: Actors
) -> None:
    from arena.service.bots import add_checked_bot

    source = "def play(observation):\n    return observation.legal_moves[0]\n"
    said = _outcomes(
        actors, lambda actor: add_checked_bot(store, actor, "someone", "added", source, {})
    )
    assert said == {
        "anonymous": "denied", "other": "denied", "owner": "denied",
        "organiser": "denied", "admin": "ok", "operator": "ok",
    }  # fmt: skip
    assert bot_view(store, "someone", "added") is not None


def test_branches_are_for_accounts(store: Store, actors: Actors, celery: Celery) -> None:
    """Refused before the game is looked up: anonymous, and the operator (no account)."""
    said = _outcomes(
        actors,
        lambda actor: start_branch(store, actor, 999, 1, 1, 0, [1, 2], 1),
    )
    assert said == {
        "anonymous": "denied", "other": "BranchError", "owner": "BranchError",
        "organiser": "BranchError", "admin": "BranchError", "operator": "BranchError",
    }  # fmt: skip
    with pytest.raises(BranchError, match="no stored game"):
        start_branch(store, actors["owner"], 999, 1, 1, 0, [1, 2], 1)


def test_account_actions_act_on_ones_own_account_only(store: Store, actors: Actors) -> None:
    made = iter(range(100))
    said = _outcomes(
        actors,
        lambda actor: add_account(store, actor, f"new{next(made)}", PASSWORD, role="organiser",
                                  hasher=HASHER),
    )  # fmt: skip
    assert said == {
        "anonymous": "denied", "other": "denied", "owner": "denied",
        "organiser": "denied", "admin": "ok", "operator": "ok",
    }  # fmt: skip
    assert sign_up(store, None, "visitor", PASSWORD, hasher=HASHER).role == "user"
    for actor in (None, OPERATOR):
        with pytest.raises(PermissionDenied):
            change_own_password(store, actor, PASSWORD, "amber kettle", hasher=HASHER)
        with pytest.raises(PermissionDenied):
            new_token(store, actor, "t", ["read"])
    owner, other = actors["owner"], actors["other"]
    assert isinstance(owner, Account) and isinstance(other, Account)
    assert change_own_password(store, owner, PASSWORD, "amber kettle", hasher=HASHER).id == owner.id
    with pytest.raises(AccountError, match="not right"):
        change_own_password(store, other, "wrong one!", "amber kettle", hasher=HASHER)
    new_token(store, owner, "laptop", ["read"])
    token_id = tokens_of(store, owner.id)[0].id
    with pytest.raises(NotFound):
        revoke_own_token(store, other, token_id)  # not another's
    revoke_own_token(store, owner, token_id)
    with pytest.raises(NotFound):
        revoke_own_token(store, owner, token_id)  # revoked already
