"""arena.service.classes on both databases: creating a class (one sentence a mistake),
joining by code (expired, rotated, closed), who sees a class (its teachers, its students,
strangers), the permission target of a student's bot, latest versions, the roster import
and password resets, quotas, and the authorization matrix of every class action
(anonymous, a user, a student of it, its teacher, another teacher, an admin, the
operator)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

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
#: What a teacher's action answers each actor: strangers are not told the class exists.
TEACHERS_ONLY = {"anonymous": "denied", "user": "hidden", "student": "denied", "teacher": "ok",
                 "teacher2": "hidden", "admin": "ok", "operator": "ok"}  # fmt: skip
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


# --- the roster -----------------------------------------------------------------------------

ROSTER = """Real name,Login
Ada Lovelace
Alan Turing,
Grace Hopper,grace
Zoë Ångström
Ada Lindqvist
"""


def test_a_roster_makes_printable_logins_with_first_time_passwords(
    store: Store, actors: Actors
) -> None:
    imported = cls.import_roster(store, actors["teacher"], "5b", ROSTER, HASHER)
    # Ada Lovelace joined by code with that real name: flagged, not made twice
    assert imported.flagged == ["Ada Lovelace"] and imported.updated == []
    logins = imported.logins
    assert [r.real_name for r in logins] == [
        "Alan Turing", "Grace Hopper", "Zoë Ångström", "Ada Lindqvist"
    ]  # fmt: skip
    assert len({r.password for r in logins}) == 4
    for login in logins:  # a pseudonym: two words and two digits, no part of the real name
        assert re.fullmatch(r"[a-z]+(-[a-z]+)+-[1-9][0-9]", login.login), login.login
        assert not {w.casefold() for w in login.real_name.split()} & set(login.login.split("-"))
        assert len(login.password) == 14 and login.password.count("-") == 2
        account = authenticate(store, login.login, login.password, hasher=HASHER)
        assert account is not None and account.must_change_password
    roster = cls.roster_view(store, actors["teacher"], "5b")
    real = {r.student: (r.real_name, r.via) for r in roster.students}
    assert real[logins[3].login] == ("Ada Lindqvist", "roster")
    assert real["ada"] == ("Ada Lovelace", "code")
    # the first login's change clears the flag
    first = authenticate(store, logins[1].login, logins[1].password, hasher=HASHER)
    assert first is not None
    changed = change_own_password(store, first, logins[1].password, PASSWORD, hasher=HASHER)
    assert not changed.must_change_password
    again = authenticate(store, logins[1].login, PASSWORD, hasher=HASHER)
    assert again is not None and not again.must_change_password


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "the roster is empty: send the CSV your school's system exports."),
        ("real name\n", "the roster has a header but no students"),
        (" , \n\n", "the roster is empty"),
        ("Points Possible,10\n", "the roster names no student"),
        ("x\n" * 501, "a roster has at most 500 students, not 501."),
        ("x\n" * 10_000, "a roster has at most 500 students, not over 510."),
        ("name,id\nAnn,1\nBo,1\n", "lines 2 and 3 have the same school id '1'"),
        ("A" * 201 + "\n", "line 1: a real name has over 200 characters."),
    ],
)
def test_each_roster_mistake_is_one_sentence_and_stores_nothing(
    store: Store, actors: Actors, text: str, said: str
) -> None:
    before = cls.roster_view(store, actors["teacher"], "5b").students
    with pytest.raises(ClassError) as refused:
        cls.import_roster(store, actors["teacher"], "5b", text, HASHER)
    assert said in str(refused.value)
    with pytest.raises(ClassError):
        cls.preview_roster(store, actors["teacher"], "5b", text)
    assert cls.roster_view(store, actors["teacher"], "5b").students == before


def test_a_pseudonym_taken_is_drawn_again(
    store: Store, actors: Actors, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.service import class_roster

    create_account(store, "khaki-kestrel-42", PASSWORD, hasher=HASHER)
    drawn = iter(["khaki-kestrel-42", "KHAKI-kestrel-42", "broad-ringtail-17", "broad-ringtail-17",
                  "skilled-tanuki-90"])  # fmt: skip
    monkeypatch.setattr(class_roster, "pseudonym", lambda: next(drawn))
    made = cls.import_roster(store, actors["teacher"], "5b", "Ann Bee\nAnn Boleyn\n", HASHER)
    assert [r.login for r in made.logins] == ["broad-ringtail-17", "skilled-tanuki-90"]


def test_a_teacher_resets_a_students_password_and_nobody_elses(
    store: Store, actors: Actors
) -> None:
    password = cls.reset_password(store, actors["teacher"], "5b", "ADA", HASHER)
    assert authenticate(store, "ada", PASSWORD, hasher=HASHER) is None
    account = authenticate(store, "ada", password, hasher=HASHER)
    assert account is not None and account.must_change_password
    with pytest.raises(NotFound, match="no student 'user' in class 5b"):
        cls.reset_password(store, actors["teacher"], "5b", "user", HASHER)
    said = _outcomes(actors, lambda a: cls.reset_password(store, a, "5b", "ada", HASHER))
    assert said == TEACHERS_ONLY
    # an organiser who joined as a student: its teacher may not take its account over
    code = cls.find_class(store, "5b").join_code
    assert code is not None
    cls.join_as(store, actors["organiser"], code, now=NOW)
    with pytest.raises(ClassError, match="organiser is a organiser: only an admin may reset"):
        cls.reset_password(store, actors["teacher"], "5b", "organiser", HASHER)
    cls.reset_password(store, actors["admin"], "5b", "organiser", HASHER)


def test_first_time_hashes_are_cheap_but_argon2id() -> None:
    from argon2 import PasswordHasher

    from arena.service.class_roster import first_time_hasher

    cheap = first_time_hasher(PasswordHasher())
    assert (cheap.memory_cost, cheap.time_cost, cheap.parallelism) == (19 * 1024, 2, 1)
    digest = cheap.hash("abcd-efgh-jkmn")
    assert digest.startswith("$argon2id$") and PasswordHasher().verify(digest, "abcd-efgh-jkmn")
    assert PasswordHasher().check_needs_rehash(digest)  # rehashed at the first login
    assert first_time_hasher(HASHER) is HASHER


# --- the teacher's views ---------------------------------------------------------------------


def test_the_roster_view_shows_each_students_latest_version_and_upload(
    store: Store, actors: Actors
) -> None:
    from tests.uploads import store_upload

    source = (REFERENCE_BOTS / "greedy.py").read_text()
    version, _ = store.add_bot_version("ada", "greedy", source, {"games": 8, "faults": []})
    student = _account(actors, "student")
    store_upload(store, student.id, "next", "next.py", source + "\n#")
    roster = cls.roster_view(store, actors["teacher"], "5b")
    assert roster.rules == "block"
    (ada,) = roster.students
    assert ada.student == "ada" and ada.real_name == "Ada Lovelace"
    assert ada.version is not None and str(ada.version) == "ada/greedy v1"
    assert ada.version_id == version.id and ada.check_summary == "8 games, 0 faults"
    assert ada.rating is None and ada.faults == 0
    assert ada.upload_status == "pending" and ada.upload_id is not None
    assert _outcomes(actors, lambda a: cls.roster_view(store, a, "5b")) == {
        "anonymous": "denied", "user": "hidden", "student": "denied", "teacher": "ok",
        "teacher2": "hidden", "admin": "ok", "operator": "ok",
    }  # fmt: skip


def test_the_class_leaderboard_is_empty_before_any_rating(store: Store, actors: Actors) -> None:
    board = cls.class_leaderboard(store, actors["student"], "5b")
    assert board.rows == [] and board.rules == "block"
    with pytest.raises(NotFound, match="class 5b does not play 'draw'"):
        cls.class_leaderboard(store, actors["student"], "5b", rules="draw")
    with pytest.raises(NotFound):
        cls.class_leaderboard(store, actors["user"], "5b")


# --- role requests ---------------------------------------------------------------------------


def test_role_requests_wait_for_an_admin_or_are_open_or_closed(
    store: Store, actors: Actors, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.service import role_requests as roles
    from arena.service.accounts import find_account

    user = _account(actors, "user")
    assert roles.request_role(store, user, now=NOW) == "requested"
    assert roles.request_role(store, actors["teacher"]) == "held"
    listed = roles.role_requests(store, actors["admin"])
    assert [(r.name, r.role, r.requested, r.at) for r in listed] == [
        ("user", "user", "teacher", NOW)
    ]
    with pytest.raises(PermissionDenied, match="only admins decide"):
        roles.decide_role_request(store, actors["teacher"], "user", True)
    assert roles.decide_role_request(store, actors["admin"], "user", True) == "teacher"
    granted = find_account(store, user.id)
    assert granted is not None and granted.role == "teacher"
    with pytest.raises(NotFound, match="no role request of 'user'"):
        roles.decide_role_request(store, actors["admin"], "user", False)
    student = _account(actors, "student")
    roles.request_role(store, student)
    assert roles.decide_role_request(store, actors["admin"], "ada", False) == "user"
    monkeypatch.setenv(roles.TEACHER_REQUESTS_ENV, "open")
    assert roles.request_role(store, student) == "granted"
    monkeypatch.setenv(roles.TEACHER_REQUESTS_ENV, "closed")
    with pytest.raises(roles.RoleRequestError, match="takes no requests for the teacher role"):
        roles.request_role(store, user)
    with pytest.raises(PermissionDenied):
        roles.request_role(store, None)


# --- quotas and class tournaments (a broker no worker reads) -------------------------------


@pytest.fixture
def celery(url: str, tmp_path: Path) -> Iterator[Celery]:
    """A broker no worker reads (a directory of its own), the service's during the test."""
    from arena.service.broker import make_app, using

    with using(make_app(f"filesystem://{tmp_path / 'broker'}", None, url)) as app:
        yield app


def _bot(number: int) -> bytes:
    return (REFERENCE_BOTS / "random.py").read_bytes() + f"\n# {number}\n".encode()


def test_a_student_uploads_at_most_the_classes_quota_an_hour(
    store: Store, actors: Actors, celery: Celery
) -> None:
    from arena.service.intake import take_upload

    cls.create_class(store, actors["teacher"], NewClass(name="tight", uploads_per_hour=2))
    code = cls.find_class(store, "tight").join_code
    assert code is not None
    student = _account(actors, "student")
    cls.join_as(store, student, code)
    for number in range(2):
        take_upload(store, student, "b.py", _bot(number))
    with pytest.raises(ClassError) as refused:
        take_upload(store, student, "b.py", _bot(3))
    assert str(refused.value) == (
        "you have made 2 uploads in the last hour, the most class tight allows: try again in "
        "60 minutes."
    )
    cls.enforce_class_quotas(store, student.id, now=datetime.now(UTC) + timedelta(minutes=61))
    user = _account(actors, "user")  # in no class: no class quota
    for number in range(3):
        take_upload(store, user, "b.py", _bot(number))


def test_a_class_queues_at_most_its_checks_at_once(
    store: Store, actors: Actors, celery: Celery
) -> None:
    from arena.service.intake import take_upload

    cls.create_class(store, actors["teacher"], NewClass(name="busy", checks_queued=2))
    code = cls.find_class(store, "busy").join_code
    assert code is not None
    pupils = [cls.join_class(store, HASHER, code, f"p{n}", PASSWORD) for n in range(3)]
    take_upload(store, pupils[0], "b.py", _bot(0))
    take_upload(store, pupils[1], "b.py", _bot(1))
    with pytest.raises(ClassError, match=r"^the class's checks are queued full: try again in a"):
        take_upload(store, pupils[2], "b.py", _bot(2))


def test_a_teacher_starts_a_class_tournament_with_or_without_the_references(
    store: Store, actors: Actors, celery: Celery, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.store.tournaments import entrant_labels

    with pytest.raises(ClassError, match="a tournament needs two bots at least: 0 of class 5b"):
        cls.start_class_tournament(store, actors["teacher"], "5b", reference=False)
    code = cls.find_class(store, "5b").join_code
    assert code is not None
    cls.join_class(store, HASHER, code, "bob", PASSWORD)
    for owner, bot in (("ada", "random"), ("ada", "greedy"), ("bob", "random")):
        store.add_bot_version(owner, bot, (REFERENCE_BOTS / f"{bot}.py").read_text(), {})
    for bot in ("random", "greedy"):
        store.add_bot_version("reference", bot, (REFERENCE_BOTS / f"{bot}.py").read_text(), {})
    plain = cls.start_class_tournament(
        store, actors["teacher"], "5b", reference=False, games=2, now=NOW
    )
    assert sorted(entrant_labels(store, plain)) == ["ada", "bob"]
    full = cls.start_class_tournament(
        store, actors["teacher"], "5b", reference=True, now=NOW + timedelta(seconds=1)
    )
    assert sorted(entrant_labels(store, full)) == [
        "ada", "bob", "reference.greedy", "reference.random"
    ]  # fmt: skip
    with pytest.raises(ClassError, match="class 5b plays block, not 'draw'"):
        cls.start_class_tournament(store, actors["teacher"], "5b", reference=True,
                                   rules="draw")  # fmt: skip
    with pytest.raises(ClassError, match="games must be 1 to 1000, not 0"):
        cls.start_class_tournament(store, actors["teacher"], "5b", reference=True,
                                   games=0)  # fmt: skip
    with monkeypatch.context() as patched:  # 4 bots: 6 pairs
        patched.setattr(cls, "MAX_CLASS_TOURNAMENT_GAMES", 100)
        with pytest.raises(ClassError, match="would play 120 games, more than 100: choose 16"):
            cls.start_class_tournament(store, actors["teacher"], "5b", reference=True,
                                       games=20, now=NOW + timedelta(seconds=2))  # fmt: skip
    minutes = iter(range(1, 100))
    said = _outcomes(
        actors,
        lambda a: cls.start_class_tournament(store, a, "5b", reference=False, games=1,
                                             now=NOW + timedelta(minutes=next(minutes))),
    )  # fmt: skip
    assert said == TEACHERS_ONLY
