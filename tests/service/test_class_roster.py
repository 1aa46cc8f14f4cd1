"""A roster from the school's own systems (arena.service.class_roster, classes.preview_roster
and import_roster): each platform's export as it is (tests/data/rosters: Canvas's gradebook,
with its BOM and with semicolons and a Muted line, Moodle's participants and the same saved
again by Excel in Windows-1252, Google Classroom's grades, a plain list with and without a
header), the students made and their school ids kept, a re-import that updates and never
makes a second account (on both databases), namesakes flagged, the teacher's own column
mapping, the school's logins, and hostile files."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from arena.service import classes as cls
from arena.service.accounts import Account, create_account, password_hasher
from arena.service.class_roster import decode_roster, read_roster
from arena.service.classes import ClassError, NewClass
from arena.store.db import Store

HASHER = password_hasher(cheap=True)
PASSWORD = "correct horse"
ROSTERS = Path(__file__).parent.parent / "data" / "rosters"
#: The students of every sample file, as the real names they become.
NAMES = ["Ada Lovelace", "Katherine Johnson", "Dorothy Vaughan", "Mary Jackson", "José Núñez",
         "Zoë Ångström", "Émilie du Châtelet", "Siobhán O'Brien"]  # fmt: skip
#: Each sample file: its format, each column's role (as recognised), and the first
#: student's school id and section.
FILES = {
    "canvas.csv": ("Canvas gradebook", {"Student": "name", "SIS User ID": "id",
                   "SIS Login ID": "login", "Section": "section"}, "S26-0001", "Period 3"),
    "canvas_semicolons.csv": ("Canvas gradebook", {"Student": "name", "ID": "id",
                              "SIS Login ID": "login", "Section": "section"}, "41001", "Period 3"),
    "moodle.csv": ("Moodle", {"First name": "first", "Last name": "last", "ID number": "id",
                   "Email address": "email", "Groups": "section"}, "S26-0001", "Period 3"),
    "moodle_excel.csv": ("Moodle", {"First name": "first", "Last name": "last",
                         "Email address": "email", "Groups": "section"},
                         "ada.lovelace@students.example.edu", None),
    "classroom.csv": ("Google Classroom", {"Last Name": "last", "First Name": "first",
                      "Email Address": "email"}, "ada.lovelace@students.example.edu", None),
    "plain.csv": ("a list with a header", {"Name": "name", "Student number": "id",
                  "Class": "section"}, "0001", "9B"),
    "plain.tsv": ("a list", {"": "last"}, None, None),
}  # fmt: skip


@pytest.fixture
def teacher(store: Store) -> Account:
    tess = create_account(store, "tess", PASSWORD, role="teacher", hasher=HASHER)
    cls.create_class(store, tess, NewClass(name="9b"))
    return tess


def _text(name: str) -> str:
    return decode_roster((ROSTERS / name).read_bytes())


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_platforms_export_is_read_as_it_is(name: str) -> None:
    kind, roles, first_id, first_section = FILES[name]
    roster = read_roster(_text(name))
    assert roster.format == kind
    found = {c.header: c.role for c in roster.columns if c.role != "ignore"}
    assert {h: found.get(h) for h in roles} == roles
    count = 5 if name == "canvas_semicolons.csv" else 8
    assert [s.real_name for s in roster.students] == NAMES[:count]
    assert roster.students[0].school_id == first_id
    assert roster.students[0].section == first_section


def test_canvas_lines_that_are_no_student_are_skipped_with_why() -> None:
    assert read_roster(_text("canvas.csv")).skipped == [
        (2, "not a student (Points Possible)"), (11, "Canvas's test student")
    ]  # fmt: skip
    assert read_roster(_text("canvas_semicolons.csv")).skipped == [
        (2, "not a student (Muted)"), (3, "not a student (Points Possible)")
    ]  # fmt: skip
    assert [line for line, _ in read_roster(_text("classroom.csv")).skipped] == [2, 3, 4]


def test_a_name_and_a_surname_are_one_student_not_a_name_and_a_login() -> None:
    [student] = read_roster("Katherine,Johnson\n").students
    assert (student.real_name, student.school_login) == ("Katherine Johnson", None)
    [listed] = read_roster('"Johnson, Katherine",kj@example.org\n').students
    assert (listed.real_name, listed.school_id) == ("Katherine Johnson", "kj@example.org")


@pytest.mark.parametrize(
    ("data", "text"),
    [
        ("Name\nJosé Núñez\n".encode("utf-8-sig"), "Name\nJosé Núñez\n"),
        ("Name\nJosé Núñez\n".encode("cp1252"), "Name\nJosé Núñez\n"),
        ("Name\nJosé Núñez\n".encode("utf-16"), "Name\nJosé Núñez\n"),
        (b"Name\n\x81\xe9\n", "Name\n\x81\xe9\n"),  # not cp1252 (0x81): Latin-1
    ],
)
def test_a_roster_files_encoding_is_found(data: bytes, text: str) -> None:
    assert decode_roster(data).lstrip("\ufeff") == text


@pytest.mark.backends("sqlite", "postgresql")
@pytest.mark.parametrize("name", ["canvas.csv", "moodle.csv", "classroom.csv", "plain.csv"])
def test_a_platforms_export_imported_twice_makes_each_student_once(
    store: Store, teacher: Account, name: str
) -> None:
    made = cls.import_roster(store, teacher, "9b", _text(name), HASHER)
    assert [r.real_name for r in made.logins] == NAMES
    roster = {r.student: r for r in cls.roster_view(store, teacher, "9b").students}
    _, _, first_id, first_section = FILES[name]
    ada = roster[made.logins[0].login]
    assert (ada.real_name, ada.school_id, ada.section) == ("Ada Lovelace", first_id, first_section)
    again = cls.import_roster(store, teacher, "9b", _text(name), HASHER)
    assert again.logins == [] and again.updated == [] and again.flagged == []
    assert sorted(again.unchanged) == sorted(r.login for r in made.logins)
    assert len(cls.roster_view(store, teacher, "9b").students) == 8


@pytest.mark.backends("sqlite", "postgresql")
def test_a_reimport_updates_names_and_sections_and_adds_only_the_new_student(
    store: Store, teacher: Account
) -> None:
    first = cls.import_roster(store, teacher, "9b", _text("moodle.csv"), HASHER)
    ada = first.logins[0].login
    changed = _text("moodle.csv").replace("Ada,Lovelace,S26-0001", "Ada,King,S26-0001")
    changed = changed.replace("Period 5", "Period 6") + (
        "Alan,Turing,S26-0009,alan.turing@students.example.edu,Student,Period 6,Never\r\n"
    )
    preview = cls.preview_roster(store, teacher, "9b", changed)
    assert (preview.count("make"), preview.count("update"), preview.count("unchanged")) == (1, 5, 3)
    notes = {s.real_name: s.note for s in preview.students}
    assert notes["Ada King"] == "real name was 'Ada Lovelace'"
    assert notes["Mary Jackson"] == "section was 'Period 5'"
    done = cls.import_roster(store, teacher, "9b", changed, HASHER)
    assert [r.real_name for r in done.logins] == ["Alan Turing"] and ada in done.updated
    rows = {r.student: r for r in cls.roster_view(store, teacher, "9b").students}
    assert (rows[ada].real_name, rows[ada].school_id) == ("Ada King", "S26-0001")
    assert len(rows) == 9


@pytest.mark.backends("sqlite", "postgresql")
def test_a_name_in_the_class_without_a_school_id_is_flagged_then_skipped_linked_or_made(
    store: Store, teacher: Account
) -> None:
    # the old way: a list of names, no ids; then the school's file names the same students
    old = cls.import_roster(store, teacher, "9b", "Ada Lovelace\nMary Jackson\n", HASHER)
    preview = cls.preview_roster(store, teacher, "9b", _text("canvas.csv"))
    flagged = [s for s in preview.students if s.action == "flagged"]
    assert [s.real_name for s in flagged] == ["Ada Lovelace", "Mary Jackson"]
    assert flagged[0].login == old.logins[0].login
    assert flagged[0].note.endswith("has this name and no school id: not imported")
    linked = cls.import_roster(store, teacher, "9b", _text("canvas.csv"), HASHER, flagged="link")
    assert sorted(linked.updated) == sorted(r.login for r in old.logins)
    assert len(linked.logins) == 6
    rows = {r.student: r for r in cls.roster_view(store, teacher, "9b").students}
    assert rows[old.logins[0].login].school_id == "S26-0001" and len(rows) == 8
    # a namesake with another school id is a new student only when the teacher says so
    other = 'Student,SIS User ID\n"Lovelace, Ada",S99-0001\n'
    assert cls.preview_roster(store, teacher, "9b", other).students[0].action == "flagged"
    made = cls.import_roster(store, teacher, "9b", other, HASHER, flagged="new")
    assert [r.real_name for r in made.logins] == ["Ada Lovelace"]


def test_the_teachers_mapping_replaces_the_columns_found(store: Store, teacher: Account) -> None:
    text = "Ada Lovelace,ada.l\nAlan Turing,alan.t\n"
    assert [c.role for c in read_roster(text).columns] == ["name", "login"]
    preview = cls.preview_roster(store, teacher, "9b", text, mapping=["name", "id"])
    assert [s.school_id for s in preview.students] == ["ada.l", "alan.t"]
    for mapping, said in (
        (["name"], "the roster has 2 columns: choose what each holds, not 1."),
        (["name", "name"], "only one column can hold the real name."),
        (["id", "login"], "choose the column of the students' names"),
        (["name", "boss"], "a column holds one of name, first, last"),
        (["name", "first"], "either one column of real names or first and last names"),
    ):
        with pytest.raises(ClassError, match=said):
            cls.preview_roster(store, teacher, "9b", text, mapping=mapping)
    with pytest.raises(ClassError, match="logins are pseudonym or school, not 'mine'"):
        cls.preview_roster(store, teacher, "9b", text, logins="mine")


def test_the_schools_logins_are_used_only_when_the_teacher_chooses(
    store: Store, teacher: Account
) -> None:
    create_account(store, "kjohnson", PASSWORD, hasher=HASHER)
    made = cls.import_roster(store, teacher, "9b", _text("canvas.csv"), HASHER, logins="school")
    logins = {r.real_name: r.login for r in made.logins}
    assert logins["Ada Lovelace"] == "alovelace" and logins["Mary Jackson"] == "mjackson"
    assert logins["Katherine Johnson"] != "kjohnson"  # taken: a pseudonym
    cls.create_class(store, teacher, NewClass(name="9c"))
    preview = cls.preview_roster(store, teacher, "9c", _text("classroom.csv"), logins="school")
    assert preview.students[0].login == "ada.lovelace"  # the e-mail's local part
    assert (
        cls.preview_roster(store, teacher, "9c", _text("classroom.csv")).students[0].login is None
    )


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (
            b"PK\x03\x04\x14\x00\x06\x00" + bytes(range(256)) * 4,
            "not text (a spreadsheet's .xlsx?)",
        ),
        (b"", "the roster is empty"),
        (b"\xef\xbb\xbf", "the roster is empty"),
        (b"Student,ID,SIS User ID,SIS Login ID,Section\r\n", "has a header but no students"),
        (b"Student,ID,SIS User ID\r\n    Points Possible,,\r\n", "has a header but no students"),
        (b"x" * 10_000_000, "at most 2,000,000"),
        (b"a,b\n" + b'"' + b"x" * 200_000 + b'"\n', "not a CSV this reads"),
    ],
)
def test_a_hostile_roster_file_is_one_sentence(
    store: Store, teacher: Account, data: bytes, said: str
) -> None:
    with pytest.raises(ClassError, match=said.replace("(", r"\(").replace(")", r"\)")
                       .replace("?", r"\?")):  # fmt: skip
        cls.preview_roster(store, teacher, "9b", decode_roster(data))
    assert cls.roster_view(store, teacher, "9b").students == []


def test_a_roster_of_ten_thousand_lines_is_refused_at_once(store: Store, teacher: Account) -> None:
    text = "Name,Student ID\n" + "".join(f"Student {i},{i}\n" for i in range(10_000))
    start = time.perf_counter()
    with pytest.raises(ClassError, match="a roster has at most 500 students, not over 510"):
        cls.preview_roster(store, teacher, "9b", text)
    assert time.perf_counter() - start < 2


def test_formula_cells_stay_text_and_are_quoted_in_the_logins_csv(
    store: Store, teacher: Account
) -> None:
    from arena.service.exports import spreadsheet_csv

    text = "Name,Student ID\n\"=cmd|' /C calc'!A0\",=1+1\n@SUM(A1),+2\n"
    made = cls.import_roster(store, teacher, "9b", text, HASHER)
    assert [r.real_name for r in made.logins] == ["=cmd|' /C calc'!A0", "@SUM(A1)"]
    rows = {r.real_name: r.school_id for r in cls.roster_view(store, teacher, "9b").students}
    assert rows == {"=cmd|' /C calc'!A0": "=1+1", "@SUM(A1)": "+2"}
    exported = spreadsheet_csv([{"real_name": r.real_name} for r in made.logins], ("real_name",))
    assert exported.splitlines()[1:] == ["'=cmd|' /C calc'!A0", "'@SUM(A1)"]


@pytest.mark.backends("sqlite", "postgresql")
def test_a_student_changes_the_pseudonym_until_their_first_upload(
    store: Store, teacher: Account
) -> None:
    from arena.errors import ParseError
    from arena.service.accounts import authenticate
    from arena.service.permissions import OPERATOR

    made = cls.import_roster(store, teacher, "9b", "Ada Lovelace\nMary Jackson\n", HASHER)
    ada = authenticate(store, made.logins[0].login, made.logins[0].password, hasher=HASHER)
    assert ada is not None
    row = cls.find_class(store, "9b")
    assert cls.login_to_change(store, ada, row) == ada.name
    assert cls.login_to_change(store, teacher, row) is None
    with pytest.raises(ClassError, match="the login 'TESS' is taken"):
        cls.change_own_login(store, ada, "TESS")
    with pytest.raises(ClassError, match=f"the login '{made.logins[1].login}' is taken"):
        cls.change_own_login(store, ada, made.logins[1].login)
    with pytest.raises(ParseError, match="is not a valid name"):
        cls.change_own_login(store, ada, "ada lovelace")
    with pytest.raises(ClassError, match="a teacher's login is changed by an admin only"):
        cls.change_own_login(store, teacher, "tessa")
    with pytest.raises(ClassError, match="the operator has no login"):
        cls.change_own_login(store, OPERATOR, "op")
    renamed = cls.change_own_login(store, ada, "countess")
    assert renamed.name == "countess" and renamed.id == ada.id
    assert authenticate(store, "countess", made.logins[0].password, hasher=HASHER) is not None
    assert authenticate(store, ada.name, made.logins[0].password, hasher=HASHER) is None
    rows = {r.student: r.real_name for r in cls.roster_view(store, teacher, "9b").students}
    assert rows["countess"] == "Ada Lovelace"
    store.add_bot_version("countess", "first", "def play(o):\n    return o.legal_moves[0]\n", {})
    assert cls.login_to_change(store, renamed, row) is None
    with pytest.raises(ClassError, match="only until your first upload"):
        cls.change_own_login(store, renamed, "ada2")


@pytest.mark.backends("sqlite", "postgresql")
def test_a_school_id_is_one_students_even_when_two_imports_race(
    store: Store, teacher: Account
) -> None:
    """Two imports of the same file at once: the second one's insert finds the school id
    taken in the class (the unique index) and writes nothing, instead of a second account."""
    from arena.store import classes as stored

    row = cls.find_class(store, "9b")
    first = stored.NewUser("khaki-kestrel-42", "digest", "Ada Lovelace", "S26-0001")
    assert stored.insert_students(store, row.id, [first]) is not None
    second = stored.NewUser("broad-ringtail-17", "digest", "Ada Lovelace", "S26-0001")
    assert stored.insert_students(store, row.id, [second]) is None
    assert [m.name for m in stored.member_rows(store, row.id)] == ["khaki-kestrel-42"]
    with pytest.raises(ClassError, match="line 2: the roster is not text"):
        cls.preview_roster(store, teacher, "9b", "Name\nA\ud800\n")
