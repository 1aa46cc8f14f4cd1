"""The one intake: every bot file a user uploads, whatever it is for, enters here.

:func:`take_upload` screens the file (arena.service.uploads), names the bot, holds the
class quotas, stores the upload with its purpose (a :class:`Purpose`: a placement on the
public leaderboard, an entry in a competition, a submission to an assignment) and sends its
check to the workers; its purpose's own rules are asked first (the competition's
:func:`~arena.service.competitions.entry_checks`, the assignment's
:func:`~arena.service.assignments.submission_checks`). After the check (or at once, for a
source the bot has already), :func:`settle_upload` does what the stored purpose says: a
placement tournament, the competition entry settled, or the submission's gauntlet.

A competition entry whose source the entrant entered already (the same bytes as one of
its versions there, or as its upload being checked) is refused in a sentence naming that
version: it is no new entry and costs no daily entry.

The same upload sent twice (a double click, a retried request) is one upload: sent again
with the same client key (an API ``Idempotency-Key``, a form's one-time token), or with the
same purpose, target, bot, runtime and source within :data:`REPEAT_WINDOW_SECONDS`, it
returns the first
(:attr:`Received.repeated`, :attr:`Received.notice`: "already received: ..."). Both keys
are unique in the database (arena.store.uploads.insert_upload), so two requests at the
same instant store one upload, never two.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import PurePath

from arena.compete.names import check_name
from arena.errors import ArenaError
from arena.match.newbot import declared_name
from arena.service.accounts import Account
from arena.service.assignments import (
    AssignmentError,
    SubmissionView,
    assignment_runtimes,
    submission_accepted,
    submission_checks,
    submission_of_upload,
)
from arena.service.classes import ClassError, enforce_class_quotas
from arena.service.competitions import (
    CompetitionError,
    EntryView,
    entry_accepted,
    entry_checks,
    entry_of_upload,
    over_limit,
    same_source,
)
from arena.service.dispatch import dispatch_matches, dispatch_upload
from arena.service.permissions import Actor, require
from arena.service.uploads import (
    UploadError,
    UploadView,
    check_bot_name,
    check_stored_runtime,
    create_placement,
    screen_source,
    upload_runtime,
    upload_view,
)
from arena.store.competitions import CompetitionRow, EnteredAlready
from arena.store.db import Store
from arena.store.uploads import NewUpload, insert_upload, repeated_upload, version_of_source

__all__ = [
    "MAX_CLIENT_KEY",
    "PURPOSES",
    "REPEAT_WINDOW_SECONDS",
    "Purpose",
    "Received",
    "settle_upload",
    "take_upload",
]

logger = logging.getLogger(__name__)

#: What an upload may be for.
PURPOSES = ("placement", "competition", "assignment")
#: Seconds within which the same upload (account, purpose, target, bot, runtime, source)
#: sent again is the first one: a double click, a retried request.
REPEAT_WINDOW_SECONDS = 60.0
#: The longest client key (an ``Idempotency-Key``, a form's token), in characters.
MAX_CLIENT_KEY = 100


@dataclass(frozen=True, slots=True)
class Purpose:
    """What an upload is for: a ``placement`` (the public leaderboard), an entry in the
    ``competition`` called ``competition``, or a submission to the ``assignment`` of class
    ``class_name``."""

    kind: str = "placement"
    competition: str = ""
    class_name: str = ""
    assignment: str = ""

    @classmethod
    def entry(cls, competition: str) -> Purpose:
        """An entry in competition ``competition``."""
        return cls("competition", competition=competition)

    @classmethod
    def submission(cls, class_name: str, assignment: str) -> Purpose:
        """A submission to ``assignment`` of class ``class_name``."""
        return cls("assignment", class_name=class_name, assignment=assignment)


#: An upload for the public leaderboard: its version plays a placement tournament.
PLACEMENT = Purpose()


@dataclass(frozen=True, slots=True)
class Received:
    """What the intake did with an upload: the upload, and the entry or submission it
    made (for those purposes). ``repeated``: it had been received already (the same client
    key, or the same upload within the window), and this is that first upload."""

    upload: UploadView
    repeated: bool = False
    entry: EntryView | None = None
    submission: SubmissionView | None = None

    @property
    def notice(self) -> str | None:
        """For a repeated upload, the sentence that says so; else None."""
        if not self.repeated:
            return None
        u = self.upload
        return (
            f"already received: {u.filename} as upload {u.id} of your bot {u.bot} "
            f"({u.status}); sent again, it is that upload, not a second one."
        )


@dataclass(frozen=True, slots=True)
class _Target:
    """What the purpose's checks found: whose upload, under which runtime, for what."""

    account: Account
    runtime: str | None
    competition: CompetitionRow | None = None
    assignment_id: int | None = None
    late: bool = False
    #: What the upload is for, the runtimes it takes, the error refusing another and what
    #: to do with it instead (None: a placement, any runtime).
    offered: tuple[str, tuple[str, ...], type[ArenaError], str] | None = None

    @property
    def competition_id(self) -> int | None:
        return None if self.competition is None else self.competition.id

    @property
    def targets(self) -> tuple[int | None, int | None]:
        """(the competition's id, the assignment's id): one of them, or neither."""
        return self.competition_id, self.assignment_id

    @property
    def entry_limit(self) -> int | None:
        """The competition's entries a user in any 24 hours (None: no competition)."""
        return None if self.competition is None else self.competition.daily_submissions

    def key(self, kind: str, bot: str, runtime: str, digest: str) -> str:
        """The repeat key: purpose and target, the bot, its runtime and the source (a name
        is at most 64 characters, a runtime 20: the key fits its 200)."""
        return f"{kind}:{self.competition_id or self.assignment_id or ''}:{bot}:{runtime}:{digest}"


def take_upload(
    store: Store,
    actor: Actor,
    filename: str,
    data: bytes,
    *,
    purpose: Purpose = PLACEMENT,
    name: str = "",
    runtime: str | None = None,
    key: str | None = None,
    now: datetime | None = None,
) -> Received:
    """Take a bot file ``actor`` uploads for ``purpose`` (the upload page and the API, a
    competition's entry, an assignment's submission): its purpose's rules first, then
    ``data`` screened (read up to one byte past the size limit) as a bot of ``runtime``
    (default: the one the file's suffix names; a competition or an assignment takes those
    it offers), the class
    quotas, and the upload stored as the actor's bot ``name`` (default: the ``NAME`` the
    file declares, else the file's stem) with its entry or submission; its check is sent to
    the workers (if the broker is down, the sweep sends it), or, for a source the bot has
    already, it is settled at once (:func:`settle_upload`). ``key``: the client's
    idempotency key. The same upload sent again returns the first (``repeated``).

    Raises:
        PermissionDenied, NotFound: ``actor`` may not (anonymous; not the class's); no
            such competition, class or assignment.
        UploadError, CompetitionError, AssignmentError, ClassError, ParseError, NameTaken:
            the file, the name (one of the actor's bots differs from it only in case), the
            key, the purpose's rules or a quota refuse it (nothing stored).
    """
    moment = now or datetime.now(UTC)
    filename = PurePath(filename.replace("\\", "/")).name
    client_key = _client_key(key)
    target = _target(store, actor, purpose, filename, runtime, moment)
    chosen = upload_runtime(filename, target.runtime)
    source = screen_source(filename, data, chosen)
    digest = hashlib.sha256(source.encode()).hexdigest()
    bot = check_name(name.strip() or declared_name(source) or PurePath(filename).stem, "bot name")
    repeat_key = target.key(purpose.kind, bot, chosen, digest)
    window_start = moment - timedelta(seconds=REPEAT_WINDOW_SECONDS)
    owner = target.account.id
    check_bot_name(store, owner, bot)
    try:
        enforce_class_quotas(store, owner, now=moment)  # a class's (arena.service.classes)
    except ClassError:  # a repeat is not a second upload: no quota holds it
        first = repeated_upload(
            store, owner, client_key=client_key, repeat_key=repeat_key, window_start=window_start
        )
        if first is None:
            raise
        return _received(store, actor, target, _view(store, first), (purpose.kind, bot, digest))
    if target.offered is not None:  # a competition's or an assignment's runtimes
        what, offered, error, verb = target.offered
        stored = version_of_source(store, owner, bot, digest)
        check_stored_runtime(what, offered, bot, stored, error, verb)
    taken = insert_upload(
        store,
        NewUpload(
            owner, bot, filename, source, digest, chosen, purpose=purpose.kind,
            competition_id=target.competition_id, assignment_id=target.assignment_id,
            client_key=client_key, repeat_key=repeat_key, window_start=window_start,
            entry_limit=target.entry_limit, late=target.late, now=moment,
        ),
    )  # fmt: skip
    if isinstance(taken, EnteredAlready):  # an identical source: no entry, no daily cost
        assert target.competition is not None
        raise CompetitionError(same_source(target.competition, taken, filename))
    if taken is None:  # the competition's daily limit, counted in the upload's transaction
        assert target.competition is not None
        raise CompetitionError(over_limit(store, target.competition, owner, moment))
    view = _view(store, taken.upload_id)
    if taken.created:
        _send(store, view)
        logger.info("upload %d (%s) by %s", view.id, repeat_key, target.account.name)
    sent = None if taken.created else (purpose.kind, bot, digest)
    return _received(store, actor, target, view, sent)


def _view(store: Store, upload_id: int) -> UploadView:
    view = upload_view(store, upload_id)
    assert view is not None  # (uploads are never deleted)
    return view


def _client_key(key: str | None) -> str | None:
    """The client's key, checked: 1 to :data:`MAX_CLIENT_KEY` printable ASCII characters.

    Raises:
        UploadError: it is not.
    """
    if key is None:
        return None
    if not 0 < len(key) <= MAX_CLIENT_KEY or not (key.isascii() and key.isprintable()):
        raise UploadError(
            f"an idempotency key is 1 to {MAX_CLIENT_KEY} printable ASCII characters "
            f"(a UUID, say): not {key[: MAX_CLIENT_KEY + 1]!r}."
        )
    return key


def _target(
    store: Store,
    actor: Actor,
    purpose: Purpose,
    filename: str,
    runtime: str | None,
    now: datetime,
) -> _Target:
    """The purpose's rules, asked before the file is read.

    Raises:
        UploadError: an unknown purpose, or an upload by no account.
        As :func:`take_upload`.
    """
    if purpose.kind == "competition":
        account, row, chosen = entry_checks(
            store, actor, purpose.competition, filename, runtime, now=now
        )
        runtimes = tuple(str(r) for r in row.settings.get("runtimes") or ["python"])
        offered = (row.name, runtimes, CompetitionError, "enter")
        return _Target(account, chosen, competition=row, offered=offered)
    if purpose.kind == "assignment":
        student, assignment, late, chosen = submission_checks(
            store, actor, purpose.class_name, purpose.assignment, filename, runtime, now=now
        )
        what = f"assignment {assignment.name}"
        refused = (what, assignment_runtimes(assignment), AssignmentError, "submit")
        return _Target(student, chosen, assignment_id=assignment.id, late=late, offered=refused)
    if purpose.kind != "placement":
        raise UploadError(f"an upload is for one of {', '.join(PURPOSES)}: not {purpose.kind!r}.")
    require(actor, "upload", message="log in to upload a bot")
    if not isinstance(actor, Account):
        raise UploadError(
            "An upload needs an account: the operator stores bots with `arena bots add`."
        )
    return _Target(actor, runtime)


def _send(store: Store, view: UploadView) -> None:
    """Send a new upload's check, or settle one that is a stored version already."""
    if view.pending:  # checked on a worker, which settles it (arena.service.work)
        dispatch_upload(store, view.id)
    else:  # "already": the bot has this source as a stored version
        settle_upload(store, view.id)


def _received(
    store: Store,
    actor: Actor,
    target: _Target,
    view: UploadView,
    repeat: tuple[str, str, str] | None = None,
) -> Received:
    """The upload, with the entry or submission it made; ``repeat``: it was sent again, as
    (purpose, bot, source's digest).

    Raises:
        UploadError: a repeated client key whose first upload was another (its purpose,
            target, bot or source differ).
    """
    first = (view.purpose, view.competition_id, view.assignment_id, view.bot, view.sha256)
    sent = None if repeat is None else (repeat[0], *target.targets, *repeat[1:])
    if sent is not None and first != sent:
        raise UploadError(
            f"this idempotency key (or form) was sent with another upload (upload {view.id}, "
            f"{view.filename}): send each new upload with a new key (reload the form)."
        )
    entry = submission = None
    if target.competition is not None:
        entry = entry_of_upload(store, target.competition, target.account.id, view.id)
    elif target.assignment_id is not None:
        submission = submission_of_upload(store, actor, view.id)
    return Received(view, repeat is not None, entry, submission)


def settle_upload(store: Store, upload_id: int) -> str:
    """Do what a checked upload's stored purpose says (the workers' acceptance, and the
    intake's for a source stored already): a competition's entry settled
    (:func:`~arena.service.competitions.entry_accepted`), an assignment's submission
    graded or rejected (:func:`~arena.service.gauntlets.submission_accepted`), or, for an
    accepted placement upload, its placement tournament created and its matches sent.
    Idempotent. Return the upload's status (``missing``: no such upload)."""
    view = upload_view(store, upload_id)
    if view is None:
        return "missing"
    if view.pending:
        return view.status
    if view.purpose == "competition":
        entry_accepted(store, upload_id)
    elif view.purpose == "assignment":
        submission_accepted(store, upload_id)
    elif view.status == "accepted":
        tournament_id = create_placement(store, upload_id)
        if tournament_id is not None:  # the new version plays the field, to be rated
            dispatch_matches(store, tournament_id)
    return view.status
