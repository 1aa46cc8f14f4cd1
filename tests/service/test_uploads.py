"""Uploads (arena/service/uploads.py) on both databases: screening, the check (in the
sandbox), and the placement tournament that gets an accepted version rated."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from arena.engine.rules import PRESETS
from arena.service.uploads import (
    PLACEMENT_GAMES,
    UploadError,
    check_in_sandbox,
    create_placement,
    placement_name,
    rejection_cause,
    screen_source,
    upload_view,
)
from arena.store.db import Store
from arena.store.models import Match, Tournament, Upload, User
from tests.paths import REFERENCE_BOTS
from tests.uploads import store_upload


def _owner(store: Store, name: str) -> int:
    store.add_user(name)
    with store.read() as session:
        user = session.scalars(select(User).where(User.name == name)).one()
        return user.id


def test_screening_reads_without_running(tmp_path: Path) -> None:
    mark = tmp_path / "ran"
    text = screen_source("bot.py", f"open({str(mark)!r}, 'w').close()\n".encode())
    assert "open(" in text  # compiled, never run
    assert not mark.exists()
    with pytest.raises(UploadError, match="syntax error on line 2"):
        screen_source("bot.py", b"x = 1\ndef (:\n")


def test_an_accepted_version_plays_a_placement_against_the_field(store: Store) -> None:
    for name in ("random", "greedy", "counter"):
        store.add_bot_version("reference", name, (REFERENCE_BOTS / f"{name}.py").read_text(), {})
    ada = _owner(store, "ada")
    source = (REFERENCE_BOTS / "fives.py").read_text()
    upload = store_upload(store, ada, "mine", "mine.py", source)
    assert create_placement(store, upload) is None  # not checked yet
    assert check_in_sandbox(store, upload) == "accepted"
    tournament_id = create_placement(store, upload)
    assert tournament_id is not None
    assert create_placement(store, upload) is None  # once only
    view = upload_view(store, upload)
    assert view is not None and view.placement == placement_name("ada", "mine", 1)
    with store.read() as session:
        tournament = session.get(Tournament, tournament_id)
        assert tournament is not None and tournament.format == "gauntlet"
        matches = list(session.scalars(select(Match).where(Match.tournament_id == tournament_id)))
    opponents = {label for m in matches for label in (m.labels or [])} - {"ada.mine"}
    assert opponents == {"reference.random", "reference.greedy", "reference.counter"}
    assert sum(m.games for m in matches) == 3 * PLACEMENT_GAMES


def test_placement_prefers_the_best_rated_opponents(store: Store) -> None:
    ids = {}
    for number in range(10):
        version, _ = store.add_bot_version("field", f"bot{number}", f"# bot {number}\n", {})
        ids[number] = version.id
    # bot9 and bot8 are rated under draw (the placements' rule set); the rest are not
    rule_set = store.ensure_rule_set(PRESETS["draw"])
    from arena.store.models import Rating

    with store.write() as session:
        for number, rating in ((9, 1400.0), (8, 1600.0)):
            session.add(
                Rating(rule_set_id=rule_set.id, bot_version_id=ids[number], rating=rating,
                       low=rating - 50, high=rating + 50, games=10, rank=1)
            )  # fmt: skip
    ada = _owner(store, "ada")
    upload = store_upload(store, ada, "mine", "mine.py", (REFERENCE_BOTS / "greedy.py").read_text())
    assert check_in_sandbox(store, upload) == "accepted"
    tournament_id = create_placement(store, upload)
    assert tournament_id is not None
    with store.read() as session:
        labels = {
            label
            for labels in session.scalars(
                select(Match.labels).where(Match.tournament_id == tournament_id)
            )
            for label in labels or []
        }
    assert {"field.bot8", "field.bot9"} <= labels and len(labels) == 1 + 8


def test_a_lone_bot_has_no_placement(store: Store) -> None:
    ada = _owner(store, "ada")
    upload = store_upload(store, ada, "mine", "mine.py", (REFERENCE_BOTS / "greedy.py").read_text())
    assert check_in_sandbox(store, upload) == "accepted"
    assert create_placement(store, upload) is None


def test_a_placement_seats_the_version_ids_it_has(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The accepted version and its opponents enter as stored entrants by version id: no
    reference is written out and looked up again by name."""
    opponents = {
        store.add_bot_version("reference", name, (REFERENCE_BOTS / f"{name}.py").read_text(), {})[
            0
        ].id: f"reference.{name}"
        for name in ("random", "greedy")
    }
    ada = _owner(store, "ada")
    upload = store_upload(store, ada, "mine", "mine.py", (REFERENCE_BOTS / "fives.py").read_text())
    assert check_in_sandbox(store, upload) == "accepted"

    def by_name(*args: object, **kwargs: object) -> None:
        raise AssertionError("a placement looks no bot up by name")

    monkeypatch.setattr("arena.service.matches.versions_named", by_name)
    tournament_id = create_placement(store, upload)
    assert tournament_id is not None
    with store.read() as session:
        mine = session.scalars(select(Upload.bot_version_id).where(Upload.id == upload)).one()
        seated = {
            (int(version), str(label))
            for match in session.scalars(select(Match).where(Match.tournament_id == tournament_id))
            for version, label in zip(match.seats, match.labels or [], strict=True)
        }
    assert seated == {(mine, "ada.mine"), *opponents.items()}


def test_an_upload_of_a_runtime_not_installed_is_rejected_in_a_sentence(
    store: Store, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A fresh machine whose numpy download failed: a python-numpy upload is rejected at
    once, saying what the operator must install, never retried forever as "pending"; the
    source is kept with the upload."""
    monkeypatch.setenv("ARENA_NUMPY_DIR", str(tmp_path / "nowhere"))
    ada = _owner(store, "ada")
    source = (REFERENCE_BOTS / "numpy_greedy.py").read_text()
    upload = store_upload(store, ada, "np", "np.py", source, "python-numpy")
    assert check_in_sandbox(store, upload) == "rejected"
    view = upload_view(store, upload)
    assert view is not None and view.version is None and view.message is not None
    assert view.message.startswith(
        "Not checked: this server cannot run python-numpy bots yet (its operator must install "
        f"the runtime: the numpy environment {tmp_path / 'nowhere'} is missing: "
    )
    with store.read() as session:
        stored = session.get(Upload, upload)
        assert stored is not None and stored.source == source


def test_a_cpp_upload_is_compiled_by_its_check_its_errors_shown_as_printed(store: Store) -> None:
    """The check compiles a C++ upload in the sandbox: a source that does not compile is
    rejected with the compiler's own lines (the author's file name, line numbers), kept in
    its report for the page and the API; bots/greedy.cpp is accepted as a cpp version."""
    ada = _owner(store, "ada")
    broken = (
        '#include "arena.hpp"\n\n'
        "arena::Move play(const arena::Observation& o) {\n"
        "    return o.legal_moves[0] + oops;\n}\n"
    )
    upload = store_upload(store, ada, "mine", "mine.cpp", broken, "cpp")
    assert check_in_sandbox(store, upload) == "rejected"
    view = upload_view(store, upload)
    assert view is not None and view.message is not None and view.report is not None
    assert view.message.startswith("Rejected: it does not compile:\nmine.cpp: In function")
    assert "mine.cpp:4:" in view.message and "oops" in view.message
    assert view.report["compile_error"] in view.message and view.report["runtime"] == "cpp"
    assert rejection_cause(view.message) == "compile error"
    source = (REFERENCE_BOTS / "greedy.cpp").read_text()
    upload = store_upload(store, ada, "mine", "greedy.cpp", source, "cpp")
    assert check_in_sandbox(store, upload) == "accepted"
    view = upload_view(store, upload)
    assert view is not None and view.report is not None and view.report["name"] == "greedy-cpp"


def test_a_java_upload_is_compiled_by_its_check_javacs_errors_shown_as_printed(
    store: Store,
) -> None:
    """The check compiles a Java upload with javac in the sandbox: one that does not compile
    is rejected with javac's lines (the author's file name, line numbers); bots/Greedy.java
    is accepted as a java version, named by its NAME."""
    ada = _owner(store, "ada")
    broken = (
        "import arena.*;\n\n"
        "public class Mine implements Player {\n"
        "    public Move play(Observation o) { return o.legalMoves.get(oops); }\n"
        "}\n"
    )
    upload = store_upload(store, ada, "mine", "Mine.java", broken, "java")
    assert check_in_sandbox(store, upload) == "rejected"
    view = upload_view(store, upload)
    assert view is not None and view.message is not None and view.report is not None
    assert view.message.startswith(
        "Rejected: it does not compile:\nMine.java:4: error: cannot find symbol"
    )
    assert view.report["runtime"] == "java" and rejection_cause(view.message) == "compile error"
    source = (REFERENCE_BOTS / "Greedy.java").read_text()
    upload = store_upload(store, ada, "mine", "Greedy.java", source, "java")
    assert check_in_sandbox(store, upload) == "accepted"
    view = upload_view(store, upload)
    assert view is not None and view.report is not None and view.report["name"] == "greedy-java"
