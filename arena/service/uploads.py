"""Bot uploads over the web: read and screened where they arrive, checked on a worker.

The web process only reads the file (:func:`screen_source`: its runtime
(:func:`upload_runtime`: ``python``, ``python-numpy``, ``javascript``), size, UTF-8, Python
syntax for Python, all without running a line of it) and the intake (arena.service.intake,
whatever the upload is for) stores it as a pending :class:`Upload`; a worker then runs the
same sandboxed check as ``arena bots add`` (:func:`check_in_sandbox`) and stores the source as
the bot's next version if it passes. An
identical source is "already version N" at once. Uploaded code never runs in the web
server's process. An accepted version then plays a placement tournament against the
field (:func:`create_placement`; the tournament names its upload), so that it is rated
and appears on the leaderboard.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePath
from typing import Any

from arena.compete.entrants import Entrant
from arena.compete.names import fit_name, taken_message
from arena.engine.events import Termination
from arena.errors import ArenaError, NameTaken
from arena.match.lineup import CheckReport, check_bot
from arena.match.referee import TimeControl
from arena.match.runtimes import (
    DEFAULT_RUNTIME,
    RUNTIMES,
    find_runtime,
    runtime_for_upload,
    runtime_missing,
)
from arena.service.matches import Config, MatchSettings, create_stored_tournament, keep_alive
from arena.service.shapes import HIDDEN
from arena.store.assignments import assignment_by_id
from arena.store.db import Store, as_utc
from arena.store.matches import tournament_id_named
from arena.store.uploads import (
    accepted_version,
    bot_named_like,
    claim_upload,
    due_uploads,
    finish_upload,
    latest_versions,
    mark_sent,
    placement_of_upload,
    ratings_under,
    release_upload,
    renew_upload,
    upload_with_version,
)

__all__ = [
    "MAX_SOURCE_BYTES",
    "PLACEMENT_GAMES",
    "PLACEMENT_OPPONENTS",
    "PLACEMENT_RULES_ENV",
    "UploadError",
    "UploadView",
    "check_bot_name",
    "check_in_sandbox",
    "check_report_json",
    "check_runtimes",
    "check_stored_runtime",
    "check_time",
    "claim_upload",
    "create_placement",
    "form_runtime",
    "mark_sent",
    "offered_runtime",
    "placement_name",
    "rejection",
    "rejection_cause",
    "release_upload",
    "renew_upload",
    "runtime_of",
    "screen_source",
    "unsent_uploads",
    "upload_runtime",
    "upload_view",
]

logger = logging.getLogger(__name__)

#: The largest bot file accepted (bytes): a strategy, not a library.
MAX_SOURCE_BYTES = 256 * 1024
#: Characters of a faulting bot's stderr kept with its rejected upload (owner-only).
STDERR_KEPT = 2000


class UploadError(ArenaError):
    """An upload is refused before any check (the message says why, in a sentence)."""


def check_bot_name(store: Store, owner_id: int, bot: str) -> None:
    """Refuse ``bot`` as the name of a bot of the user ``owner_id`` when one of theirs is
    called the same but for case (``Greedy`` beside ``greedy``): where the upload arrives,
    before it is stored.

    Raises:
        NameTaken: saying which bot exists and what to do.
    """
    taken = bot_named_like(store, owner_id, bot)
    if taken is not None:
        raise NameTaken(
            taken_message("your bot", taken, bot)
            + f": send it as {taken!r} (a new version) or choose another name."
        )


def upload_runtime(filename: str, runtime: str | None = None) -> str:
    """The runtime an upload named ``filename`` runs under: ``runtime`` if given (its files'
    suffix must match), else the one its suffix names (``.py``: python, ``.js``: javascript).

    Raises:
        UploadError: an unknown runtime, or a file that is none of its (the sentence says).
    """
    try:
        return runtime_for_upload(filename, runtime or None).name
    except ArenaError as exc:
        raise UploadError(str(exc)) from None


def runtime_of(filename: str) -> str:
    """The runtime a bot file runs under by its suffix (``python`` for a ``.py`` file; else
    its suffix, which names no runtime)."""
    suffix = PurePath(filename).suffix
    for runtime in RUNTIMES.values():
        if suffix == runtime.suffix:
            return runtime.name
    return suffix.lstrip(".") or "no runtime"


def check_runtimes(runtimes: Sequence[str], error: type[ArenaError]) -> tuple[str, ...]:
    """The runtimes a competition or an assignment offers, checked: one or more of
    :data:`~arena.match.runtimes.RUNTIMES`, each once.

    Raises:
        error: none, an unknown one or one twice (the sentence lists them).
    """
    unknown = [r for r in runtimes if r not in RUNTIMES]
    if not runtimes or unknown or len(set(runtimes)) != len(runtimes):
        raise error(
            f"offer one or more of the runtimes {', '.join(RUNTIMES)}"
            + (f", not {', '.join(repr(r)[:40] for r in unknown)}." if unknown else ", each once.")
        )
    return tuple(runtimes)


def offered_runtime(
    what: str,
    offered: Sequence[str],
    filename: str,
    runtime: str | None,
    error: type[ArenaError],
    *,
    only: bool = False,
) -> str:
    """The runtime an upload named ``filename`` for ``what`` (a competition, an assignment)
    runs under: ``runtime`` (:func:`upload_runtime`), if ``what`` offers it; by default the
    one its suffix names, or with ``only`` the only one ``what`` offers for files of that
    suffix (a ``.py`` file where python-numpy alone is offered).

    Raises:
        error: ``what`` does not offer it (the sentence names those it offers).
        UploadError: no runtime takes the file.
    """
    endings = ", ".join(
        f"{r} ({RUNTIMES[r].suffix if r in RUNTIMES else '?'} files)" for r in offered
    )
    if runtime is None and runtime_of(filename) not in offered:
        suffix = PurePath(filename).suffix
        taking = [r for r in offered if r in RUNTIMES and RUNTIMES[r].suffix == suffix]
        if not only or len(taking) != 1:
            raise error(f"{what} takes bots in {endings}: {filename} is not one.")
        runtime = taking[0]
    chosen = upload_runtime(filename, runtime)
    if chosen not in offered:
        raise error(
            f"{what} takes bots in {endings}: not {chosen} bots; choose one of "
            f"{', '.join(offered)}."
        )
    return chosen


def check_stored_runtime(
    what: str,
    offered: Sequence[str],
    bot: str,
    stored_version: tuple[int, int, str] | None,
    error: type[ArenaError],
    verb: str = "submit",
) -> None:
    """Refuse an upload for ``what`` (a competition, an assignment) that is already a stored
    version (``stored_version``: its id, number and runtime) of a runtime ``what`` does not
    offer (the same source stored before under another runtime keeps it); the sentence
    says to ``verb`` it as another bot.

    Raises:
        error: naming the version, its runtime and those offered.
    """
    if stored_version is not None and stored_version[2] not in offered:
        _, number, runtime = stored_version
        raise error(
            f"{what} takes bots in {', '.join(offered)}: this source is already version "
            f"{number} of your bot {bot}, a {runtime} bot (a version's runtime "
            f"never changes); {verb} it as another bot."
        )


def form_runtime(filename: str, runtime: str) -> str | None:
    """The runtime an upload form's select asks for, for a file named ``filename``: None (by
    the file's suffix) when the select is empty, or names a Python runtime for a file that
    is not ``.py`` (the select lists the Python runtimes first: a JavaScript or C++ file is
    what its suffix says whatever the select says); else the select's choice, checked later
    (:func:`upload_runtime`)."""
    if not runtime or (not filename.endswith(".py") and runtime.startswith("python")):
        return None
    return runtime


def screen_source(filename: str, data: bytes, runtime: str | None = None) -> str:
    """The upload's text if it can be a bot of ``runtime`` (default: the one its name says,
    :func:`upload_runtime`): at most :data:`MAX_SOURCE_BYTES`, UTF-8, no NUL byte, and for
    Python valid Python (compiled, never run; a JavaScript file is first parsed by its check
    on a worker).

    Raises:
        UploadError: naming what is wrong (and the line, for a syntax error).
    """
    chosen = find_runtime(upload_runtime(filename, runtime))
    if not data.strip():
        raise UploadError(f"{filename} is empty.")
    if len(data) > MAX_SOURCE_BYTES:
        raise UploadError(
            f"{filename} is over {MAX_SOURCE_BYTES:,} bytes ({MAX_SOURCE_BYTES // 1024} KiB): "
            "a bot may have at most that much."
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UploadError(
            f"{filename} is not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x})."
        ) from None
    if "\x00" in text:
        raise UploadError(f"{filename} holds a NUL byte: it is not a text file.")
    if chosen.suffix != ".py":
        return text
    try:
        compile(text, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f" on line {exc.lineno}" if exc.lineno else ""
        raise UploadError(f"{filename} has a syntax error{where}: {exc.msg}.") from None
    except ValueError as exc:
        raise UploadError(f"{filename} cannot be compiled: {exc}.") from None
    except (RecursionError, MemoryError):
        # CPython's compiler gives up on deep nesting (60,000 terms of one sum: a
        # RecursionError; 200,000 unary minus signs: a MemoryError from the parser's stack),
        # well within the size limit: the source is refused, the server is fine.
        raise UploadError(
            f"{filename} is too deeply nested or too long an expression to compile: "
            "split it into smaller statements."
        ) from None
    return text


@dataclass(frozen=True, slots=True)
class UploadView:
    """An upload as its page shows it."""

    id: int
    owner_id: int = field(metadata=HIDDEN)
    owner: str
    bot: str
    filename: str = field(metadata=HIDDEN)
    sha256: str = field(metadata=HIDDEN)
    status: str
    message: str | None
    report: dict[str, Any] | None = field(metadata=HIDDEN)
    version: int | None
    created: datetime = field(metadata=HIDDEN)
    finished: datetime | None = field(metadata=HIDDEN)
    #: The name of the accepted version's placement tournament, once it exists.
    placement: str | None = None
    #: The runtime it runs under (arena.match.runtimes).
    runtime: str = DEFAULT_RUNTIME
    #: What it is for (``placement``, ``competition``, ``assignment``) and which one.
    purpose: str = "placement"
    competition_id: int | None = None
    assignment_id: int | None = None

    @property
    def pending(self) -> bool:
        """Whether it still waits for its check."""
        return self.status == "pending"


def unsent_uploads(
    store: Store, *, older_than: float = 0.0, now: datetime | None = None
) -> list[int]:
    """Pending uploads whose check is due again: never sent to a worker, or last sent more
    than ``older_than`` seconds ago and not being checked (a lost task), or whose check's
    lease ran out (its worker died). One whose check holds a live lease is never listed:
    a check still running is never sent a second time."""
    now = datetime.now(UTC) if now is None else now
    cutoff = now - timedelta(seconds=older_than)
    return due_uploads(store, cutoff=cutoff, now=now)


def check_report_json(report: CheckReport, sandboxed: bool) -> dict[str, Any]:
    """The parts of a check report worth keeping with a bot version, as JSON (each fault
    with its rule set, verdict, message and the tail of the bot's stderr)."""
    fields = dataclasses.asdict(dataclasses.replace(report, faults=[]))
    fields["faults"] = [
        {
            "rules": name,
            "termination": o.verdict.termination.value,
            "message": o.verdict.message,
            "stderr": o.verdict.stderr[-STDERR_KEPT:],
        }
        for name, o in report.faults
        if o.verdict is not None
    ]
    fields["sandboxed"] = sandboxed
    return fields


def check_time(store: Store, purpose: str, assignment_id: int | None) -> tuple[TimeControl, str]:
    """The time control an upload is checked under, and whose limit it is: an assignment's
    submission under the assignment's own time a move (its gauntlet's), any other upload
    under the site's default."""
    if purpose == "assignment" and assignment_id is not None:
        row = assignment_by_id(store, assignment_id)
        if row is not None and "move_seconds" in row.settings:
            move = float(row.settings["move_seconds"])
            return MatchSettings(move_seconds=move).time_control(), "the assignment's limit"
    return TimeControl(), "the check's limit"


def rejection(report: CheckReport, whose: str) -> str:
    """Why a check failed, in a phrase: what the compiler printed for a source that does not
    compile, else the first fault, with the limit a timeout broke and whose it is
    ("timeout under block: no reply within the time control (1 s of CPU time a move, ...),
    the assignment's limit")."""
    if report.compile_error:
        return f"it does not compile:\n{report.compile_error}"
    first = report.faults[0][1].verdict if report.faults else None
    if first is None:
        return "it played no game"
    message = first.message
    if first.termination is Termination.TIMEOUT and message.startswith("no reply within"):
        message = f"{message}, {whose}"
    return f"{first.termination.value} under {report.faults[0][0]}: {message}"


def check_in_sandbox(
    store: Store, upload_id: int, *, sandboxed: bool = True, config: Config | None = None
) -> str:
    """Check a pending upload in the sandbox (as ``arena bots add``) and store it as the
    bot's next version if it passes; return its status afterwards (``accepted``,
    ``rejected``, ``already``; a finished or unknown upload is left as it is; ``checking``
    when another worker's check of it holds its lease). The check holds a lease, renewed
    every ``config.heartbeat_seconds`` while it runs.

    Raises:
        SandboxUnavailable, InfrastructureError: the check could not run; the upload stays
            pending (the task is retried).
    """
    config = config or Config()
    row = upload_with_version(store, upload_id)
    if row is None:
        return "missing"
    upload, owner, _ = row
    if upload.status != "pending":
        return upload.status
    source, bot_name, filename = upload.source, upload.bot_name, upload.filename
    if not claim_upload(store, upload_id, lease_seconds=config.lease_seconds):
        return "checking"
    missing = runtime_missing(find_runtime(upload.runtime))
    if missing is not None:  # an operator's matter, said at once rather than retried forever
        logger.error("upload %d: runtime %s missing here: %s", upload_id, upload.runtime, missing)
        message = (
            f"Not checked: this server cannot run {upload.runtime} bots yet (its operator "
            f"must install the runtime: {missing}). Upload it again once it is installed."
        )
        finish_upload(store, upload_id, "rejected", {}, message, None)
        return "rejected"

    def renew() -> bool:
        return renew_upload(store, upload_id, lease_seconds=config.lease_seconds)

    try:
        with (
            keep_alive(renew, config.heartbeat_seconds, f"check-{upload_id}"),
            tempfile.TemporaryDirectory(prefix="arena-upload-") as directory,
        ):
            suffix = find_runtime(upload.runtime).suffix
            name = Path(filename).name if filename.endswith(suffix) else f"bot{suffix}"
            path = Path(directory) / name
            path.write_text(source, encoding="utf-8")
            path.chmod(0o644)
            Path(directory).chmod(0o755)  # the sandbox's unprivileged uid reads it
            time_control, whose = check_time(store, upload.purpose, upload.assignment_id)
            reports = list(
                check_bot(
                    str(path),
                    sandboxed=sandboxed,
                    time_control=time_control,
                    runtime=upload.runtime,
                )
            )
    except BaseException:
        release_upload(store, upload_id)
        raise
    report = reports[-1][1]
    report_json = check_report_json(report, sandboxed)
    report_json["bot"] = filename
    report_json["runtime"] = upload.runtime
    if not report.ok:
        reason = rejection(report, whose)
        finish_upload(store, upload_id, "rejected", report_json, f"Rejected: {reason}", None)
        return "rejected"
    try:
        version, created = store.add_bot_version(
            owner, bot_name, source, report_json, runtime=upload.runtime
        )
    except NameTaken as exc:  # a bot of that name in another case came in meanwhile
        finish_upload(store, upload_id, "rejected", report_json, f"Rejected: {exc}.", None)
        return "rejected"
    status = "accepted" if created else "already"
    note = f"Stored as version {version.version}." if created else None
    finish_upload(store, upload_id, status, report_json, note, version.id)
    return status


#: A rejected check's message, as :func:`check_in_sandbox` writes it.
_REJECTED = re.compile(r"Rejected: (?P<termination>[a-z_]+) under [^:]*: (?P<message>.*)", re.S)


def rejection_cause(message: str | None) -> str:
    """What a rejected upload's message (as :func:`check_in_sandbox` writes it) says went
    wrong, in a few words: ``crash at import``, ``timeout``, ``illegal move``, ``played no
    game``, ``not checked`` (its runtime is missing here); ``check failed`` otherwise.

    >>> rejection_cause("Rejected: crash under block: /bot/a.py: failed at import: boom")
    'crash at import'
    """
    found = _REJECTED.match(message or "")
    if found is not None:
        termination = found["termination"].replace("_", " ")
        at_import = termination == "crash" and "failed at import" in found["message"]
        return f"{termination} at import" if at_import else termination
    if (message or "").startswith("Rejected: it played no game"):
        return "played no game"
    if (message or "").startswith("Rejected: it does not compile"):
        return "compile error"
    if (message or "").startswith("Not checked"):
        return "not checked"
    return "check failed"


def upload_view(store: Store, upload_id: int) -> UploadView | None:
    """The upload for its page, or None."""
    row = upload_with_version(store, upload_id)
    if row is None:
        return None
    upload, owner, version = row
    found = placement_of_upload(store, upload_id) if upload.status == "accepted" else None
    return UploadView(
        id=upload.id,
        owner_id=upload.owner_id,
        owner=owner,
        bot=upload.bot_name,
        filename=upload.filename,
        sha256=upload.sha256,
        status=upload.status,
        message=upload.message,
        report=upload.report,
        version=version,
        created=as_utc(upload.created),
        finished=None if upload.finished is None else as_utc(upload.finished),
        placement=None if found is None else found[1],
        runtime=upload.runtime,
        purpose=upload.purpose,
        competition_id=upload.competition_id,
        assignment_id=upload.assignment_id,
    )


# --- placement: a new version plays the field, so that it is rated ---------------------------

#: The rule set placement tournaments are played under (``ARENA_PLACEMENT_RULES``).
PLACEMENT_RULES_ENV = "ARENA_PLACEMENT_RULES"
#: Opponents of a new version's placement, and games it plays against each.
PLACEMENT_OPPONENTS = 8
PLACEMENT_GAMES = 20


def placement_name(owner: str, bot: str, version: int) -> str:
    """The name of a version's placement tournament (what it is called; it is found by its
    upload, ``tournaments.upload_id``)."""
    return fit_name(f"placement-{owner}-{bot}-v{version}")


def create_placement(store: Store, upload_id: int) -> int | None:
    """For an accepted upload: a gauntlet of the new version against up to
    :data:`PLACEMENT_OPPONENTS` other bots (the best rated under the placement rule set
    first, then the newest), :data:`PLACEMENT_GAMES` games each, so the version is rated when
    it finishes; return the tournament's id (send its matches), or None (not accepted, no
    opponent, or already created: the tournament names its upload, once). Its name is
    :func:`placement_name`'s, or, if another tournament has that name, the name followed
    by the upload's id.
    """
    from arena.engine.rules import find_rules

    rules = find_rules(os.environ.get(PLACEMENT_RULES_ENV, "draw"))
    accepted = accepted_version(store, upload_id)
    if accepted is None:
        return None
    if placement_of_upload(store, upload_id) is not None:
        return None
    owner, bot, version = accepted.owner, accepted.bot, accepted.version
    name = placement_name(owner, bot, version)
    seed = int.from_bytes(hashlib.sha256(name.encode()).digest()[:7], "big")
    if tournament_id_named(store, name) is not None:  # another tournament has the name
        name = fit_name(f"{name}-upload-{upload_id}")
    rated = ratings_under(store, rules.version)
    latest = latest_versions(store, except_bot=accepted.bot_id)
    ranked = sorted(latest, key=lambda r: (r[3] not in rated, -rated.get(r[3], 0.0), -r[3]))[
        :PLACEMENT_OPPONENTS
    ]
    if not ranked:
        return None
    candidate = Entrant.stored(_label(owner, bot), accepted.version_id)
    pool = [Entrant.stored(_label(o, b), version_id) for o, b, _, version_id in ranked]
    try:
        tournament_id, _ = create_stored_tournament(
            store, name=name, rules=rules, format="gauntlet", entrants=[candidate], pool=pool,
            games_per_match=PLACEMENT_GAMES, seed=seed, upload_id=upload_id,
        )  # fmt: skip
    except ValueError:
        if placement_of_upload(store, upload_id) is not None:  # another worker's, just made
            return None
        raise
    return tournament_id


def _label(owner: str, bot: str) -> str:
    return fit_name(f"{owner}.{bot}")
