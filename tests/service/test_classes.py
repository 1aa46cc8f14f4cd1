"""arena.service.classes on both databases: creating a class (one sentence a mistake),
joining by code (expired, rotated, closed), who sees a class (its teachers, its students,
strangers), the permission target of a student's bot, latest versions, the roster import
and password resets, quotas, and the authorization matrix of every class action
(anonymous, a user, a student of it, its teacher, another teacher, an admin, the
operator)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from arena.errors import ArenaError, NotFound, ParseError, PermissionDenied
from arena.service import classes as cls
from arena.service.accounts import (
    Account,
    NameTakenError,
    authenticate,
    change_own_password,
    create_account,
    password_hasher,
)
from arena.service.classes import ClassError, NewClass
from arena.service.permissions import OPERATOR, Actor, allowed
from arena.store.db import Store
from tests.paths import REFERENCE_BOTS

HASHER = password_hasher(cheap=True)
PASSWORD = "correct horse"
NOW = datetime.now(UTC).replace(microsecond=0)
Actors = dict[str, Actor]
#: Every actor a class action is tried with: "teacher" teaches the class "5b", "student"
#: joined it, "teacher2" teaches another class.
ACTORS = ("anonymous", "user", "student", "teacher", "teacher2", "admin", "operator")


@pytest.fixture
def actors(store: Store) -> Actors:
    made: Actors = {"anonymous": None, "operator": OPERATOR}
    for name, role in (("user", "user"), ("teacher", "teacher"), ("teacher2", "teacher"),
                       ("admin", "admin"), ("organiser", "organiser")):  # fmt: skip
        made[name] = create_account(store, name, PASSWORD, role=role, hasher=HASHER)
    row = cls.create_class(store, made["teacher"], NewClass(name="5b"), now=NOW)
    cls.create_class(store, made["teacher2"], NewClass(name="6a"), now=NOW)
    assert row.join_code is not None
    made["student"] = cls.join_class(
        store, HASHER, row.join_code, "ada", PASSWORD, "Ada Lovelace", now=NOW
    )
    return made


def _account(actors: Actors, name: str) -> Account:
    found = actors[name]
    assert isinstance(found, Account)
    return found


def _outcomes(actors: Actors, act: Callable[[Actor], object]) -> dict[str, str]:
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


# --- creating -------------------------------------------------------------------------------


def test_a_teacher_creates_a_class_with_a_join_code(store: Store, actors: Actors) -> None:
    row = cls.find_class(store, "5b")
    teacher = _account(actors, "teacher")
    assert row.teacher_ids == frozenset({teacher.id})
    assert row.rule_sets == ("block",) and row.settings == cls.DEFAULT_SETTINGS
    assert row.join_code is not None and len(row.join_code) == cls.CODE_LENGTH
    assert set(row.join_code) <= set(cls.CODE_ALPHABET) and not set("01OIL") & set(row.join_code)
    assert row.join_expires == NOW + timedelta(hours=24)


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"name": "5b"}, "a class called '5b' exists already: choose another name."),
        ({"name": "new"}, "'new' is a page of its own: choose another class name."),
        ({"name": "a b"}, "class name 'a b' is not a valid name"),
        ({"rule_sets": ("chess",)}, "choose one or more rule sets among"),
        ({"rule_sets": ()}, "choose one or more rule sets among"),
        ({"rule_sets": ("block", "block")}, "each once."),
        ({"uploads_per_hour": 0}, "uploads per hour must be 1 to 1000, not 0."),
        ({"checks_queued": 10**6}, "checks queued must be 1 to 10000"),
        ({"join_hours": -1.0}, "a join code lasts 0 (none) to 720 hours, not -1."),
        ({"description": "x" * 5001}, "the description is plain text"),
    ],
)
def test_each_mistake_in_a_new_class_is_one_sentence(
    store: Store, actors: Actors, changes: dict[str, Any], said: str
) -> None:
    new = NewClass(**{"name": "7c", **changes})
    with pytest.raises(ClassError) as refused:
        cls.create_class(store, actors["teacher"], new)
    assert said in str(refused.value)
    assert str(refused.value).endswith(".") and str(refused.value).count(": ") <= 2


def test_only_teachers_and_above_create_classes(store: Store, actors: Actors) -> None:
    said = _outcomes(actors, lambda a: cls.create_class(store, a, NewClass(name=_name(a))))
    assert said == {"anonymous": "denied", "user": "denied", "student": "denied",
                    "teacher": "ok", "teacher2": "ok", "admin": "ok", "operator": "ok"}  # fmt: skip
    assert cls.find_class(store, "c-operator").teacher_ids == frozenset()
    cls.create_class(store, actors["organiser"], NewClass(name="c-organiser"))
    with pytest.raises(PermissionDenied, match="only teachers create classes: ask an admin"):
        cls.create_class(store, actors["user"], NewClass(name="c"))


def _name(actor: Actor) -> str:
    return f"c-{'anonymous' if actor is None else actor.name}"


# --- joining --------------------------------------------------------------------------------


def test_a_student_joins_with_the_code_in_any_case_and_spacing(
    store: Store, actors: Actors
) -> None:
    row = cls.find_class(store, "5b")
    assert row.join_code is not None
    typed = " " + row.join_code[:4].lower() + "-" + row.join_code[4:] + " "
    bob = cls.join_class(store, HASHER, typed, "bob", PASSWORD, now=NOW)
    assert bob.role == "user" and not bob.must_change_password
    assert authenticate(store, "bob", PASSWORD, hasher=HASHER) == bob
    students = cls.student_ids(store, row.id)
    student = _account(actors, "student")
    assert students == sorted([student.id, bob.id])


def test_joining_refuses_wrong_expired_and_rotated_codes(store: Store, actors: Actors) -> None:
    row = cls.find_class(store, "5b")
    assert row.join_code is not None
    with pytest.raises(ClassError, match="no class has the join code 'XXXX': check it"):
        cls.join_class(store, HASHER, "XXXX", "bob", PASSWORD)
    with pytest.raises(ClassError, match=r"^this join code has expired: ask your teacher"):
        cls.join_class(store, HASHER, row.join_code, "bob", PASSWORD, now=NOW + timedelta(days=2))
    rotated = cls.rotate_join_code(store, actors["teacher"], "5b", hours=2, now=NOW)
    assert rotated.join_code != row.join_code and rotated.join_expires == NOW + timedelta(hours=2)
    with pytest.raises(ClassError, match="no class has the join code"):
        cls.join_class(store, HASHER, row.join_code, "bob", PASSWORD, now=NOW)
    assert rotated.join_code is not None
    cls.join_class(store, HASHER, rotated.join_code, "bob", PASSWORD, now=NOW)
    closed = cls.close_join_code(store, actors["teacher"], "5b")
    assert closed.join_code is None
    with pytest.raises(ClassError, match="no class has the join code"):
        cls.join_class(store, HASHER, rotated.join_code, "carol", PASSWORD, now=NOW)
    with pytest.raises(ClassError, match=r"0\.05 to 720 hours, not 0"):
        cls.rotate_join_code(store, actors["teacher"], "5b", hours=0)


def test_a_pseudonym_follows_the_user_name_rules(store: Store, actors: Actors) -> None:
    code = cls.find_class(store, "5b").join_code
    assert code is not None
    with pytest.raises(NameTakenError, match="the name 'ADA' is taken"):
        cls.join_class(store, HASHER, code, "ADA", PASSWORD, now=NOW)
    with pytest.raises(ParseError, match="user name"):
        cls.join_class(store, HASHER, code, "a b", PASSWORD, now=NOW)
    with pytest.raises(ArenaError, match="12 to 256 characters"):
        cls.join_class(store, HASHER, code, "bob", "short", now=NOW)
    with pytest.raises(ClassError, match="a real name has at most 200 characters"):
        cls.join_class(store, HASHER, code, "bob", PASSWORD, "x" * 201, now=NOW)


def test_a_logged_in_user_joins_several_classes(store: Store, actors: Actors) -> None:
    codes = [cls.find_class(store, name).join_code for name in ("5b", "6a")]
    user = actors["user"]
    for code in codes:
        assert code is not None
        cls.join_as(store, user, code, "Grace Hopper", now=NOW)
        cls.join_as(store, user, code, now=NOW)  # again: nothing changes
    taught, joined = cls.my_classes(store, user)
    assert taught == [] and [r.name for r in joined] == ["5b", "6a"]
    assert codes[0] is not None
    with pytest.raises(ClassError, match=r"^you teach 5b: a teacher does not join"):
        cls.join_as(store, actors["teacher"], codes[0], now=NOW)
    with pytest.raises(PermissionDenied, match="log in to join a class"):
        cls.join_as(store, None, codes[0], now=NOW)


# --- who sees a class, and a student's bots -------------------------------------------------


def test_who_sees_a_class(store: Store, actors: Actors) -> None:
    assert _outcomes(actors, lambda a: cls.class_for_teacher(store, a, "5b")) == {
        "anonymous": "denied", "user": "hidden", "student": "denied", "teacher": "ok",
        "teacher2": "hidden", "admin": "ok", "operator": "ok",
    }  # fmt: skip
    assert _outcomes(actors, lambda a: cls.class_for_member(store, a, "5b")) == {
        "anonymous": "denied", "user": "hidden", "student": "ok", "teacher": "ok",
        "teacher2": "hidden", "admin": "ok", "operator": "ok",
    }  # fmt: skip
    row = cls.find_class(store, "5b")
    assert {name: cls.is_teacher(store, actors[name], row.id) for name in ACTORS} == {
        "anonymous": False, "user": False, "student": False, "teacher": True,
        "teacher2": False, "admin": True, "operator": True,
    }  # fmt: skip
    with pytest.raises(NotFound, match="no class 'nope'"):
        cls.find_class(store, "nope")


def test_teachers_read_their_students_bots_and_nobody_else_does(
    store: Store, actors: Actors
) -> None:
    student = _account(actors, "student")
    target = cls.bot_target(store, student.id)
    for action in ("read-source", "read-faults"):
        assert {name: allowed(actors[name], action, target) for name in ACTORS} == {
            "anonymous": False, "user": False, "student": True, "teacher": True,
            "teacher2": False, "admin": True, "operator": True,
        }  # fmt: skip
    # another student of the same class reads nothing of this one's
    code = cls.find_class(store, "5b").join_code
    assert code is not None
    bob = cls.join_class(store, HASHER, code, "bob", PASSWORD, now=NOW)
    assert not allowed(bob, "read-source", target) and not allowed(bob, "read-faults", target)
    # a bot of someone in no class: its owner and admins only
    teacher = _account(actors, "teacher")
    assert not allowed(teacher, "read-source", cls.bot_target(store, teacher.id + 100))
    assert cls.bot_target(store, None).teachers == frozenset()


def test_latest_versions_are_each_students_newest_of_any_bot(store: Store, actors: Actors) -> None:
    random_source = (REFERENCE_BOTS / "random.py").read_text()
    greedy_source = (REFERENCE_BOTS / "greedy.py").read_text()
    row = cls.find_class(store, "5b")
    assert cls.latest_versions(store, row.id) == {}
    store.add_bot_version("ada", "one", random_source, {})
    newest, _ = store.add_bot_version("ada", "two", greedy_source, {})
    store.add_bot_version("user", "mine", random_source, {})  # not a student
    student = _account(actors, "student")
    assert cls.latest_versions(store, row.id) == {student.id: newest.id}


def test_add_teacher_needs_a_teacher_and_makes_a_second_one(store: Store, actors: Actors) -> None:
    with pytest.raises(ClassError, match=r"^user is not a teacher: an admin gives"):
        cls.add_teacher(store, actors["teacher"], "5b", "user")
    with pytest.raises(ClassError, match=r"^no user 'nobody' can log in"):
        cls.add_teacher(store, actors["teacher"], "5b", "nobody")
    with pytest.raises(NotFound):
        cls.add_teacher(store, actors["teacher2"], "5b", "teacher2")
    row = cls.add_teacher(store, actors["teacher"], "5b", "teacher2")
    teacher2 = _account(actors, "teacher2")
    assert teacher2.id in row.teacher_ids
    cls.rotate_join_code(store, teacher2, "5b")
    student = _account(actors, "student")
    assert allowed(teacher2, "read-source", cls.bot_target(store, student.id))


def test_must_change_password_is_cleared_by_a_change(store: Store, actors: Actors) -> None:
    student = _account(actors, "student")
    assert not student.must_change_password
    change_own_password(store, student, PASSWORD, "a new good password", hasher=HASHER)
