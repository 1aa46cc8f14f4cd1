"""The database schema: SQLAlchemy 2.0 typed models (docs/storage.md has one line a table).

JSON columns use :class:`sqlalchemy.JSON`, which SQLite and PostgreSQL both store. A bot
version is immutable once uploaded: :mod:`arena.store.db` has no update path for it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from arena.compete.names import name_key

#: A tournament's status.
TOURNAMENT_STATUSES = ("pending", "running", "done")
#: A worker's status: "online" while it sends heartbeats, "stopped" after a clean shutdown
#: (a worker that died keeps "online" with an old ``last_seen``).
WORKER_STATUSES = ("online", "stopped")
#: A match's status; "void" means it will never be played (e.g. a withdrawn bot).
MATCH_STATUSES = ("pending", "running", "done", "void")
#: A branch's status (arena.service.branches).
BRANCH_STATUSES = ("pending", "running", "done", "failed")


def utcnow() -> datetime:
    """The current time, timezone-aware (UTC)."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    """Every table; ``Base.metadata`` is what the first migration creates."""

    # Named constraints, so later migrations (batch mode on SQLite) can refer to them.
    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(column_0_label)s",
            "uq": "uq_%(table_name)s_%(column_0_N_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )


def _name_key(context: Any) -> str:
    return name_key(str(context.get_current_parameters()["name"]))


def _created() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), default=utcnow)


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    #: What two user names are compared by (arena.compete.names.name_key: stripped, NFKC,
    #: case-folded): one user per key. Filled from ``name`` when not given.
    name_key: Mapped[str] = mapped_column(
        String(200), index=True, unique=True, default=_name_key, server_default=""
    )
    created: Mapped[datetime] = _created()
    #: The argon2id hash of the password; None: the user cannot log in (made by the CLI).
    password_hash: Mapped[str | None] = mapped_column(String(200))
    #: ``user``, ``teacher``, ``organiser`` or ``admin`` (arena.service.accounts.ROLES).
    role: Mapped[str] = mapped_column(String(20), default="user", server_default="user")
    #: Raised when the password changes (its sessions end then: :class:`UserSession`).
    session_epoch: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: A first-time password (a teacher's roster import or reset): changed at the next login.
    must_change_password: Mapped[bool] = mapped_column(default=False, server_default=false())
    #: A role the user asked for (``teacher``), until an admin grants or refuses it.
    requested_role: Mapped[str | None] = mapped_column(String(20))
    requested_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class UserSession(Base):
    """A logged-in web session: the browser's cookie holds a random token, this row its
    SHA-256. Logging out deletes the row; a password change deletes the user's others;
    sessions older than their lifetime are refused (arena.service.accounts)."""

    __tablename__ = "user_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    sha256: Mapped[str] = mapped_column(String(64), unique=True)
    created: Mapped[datetime] = _created()


class Bot(Base):
    __tablename__ = "bots"
    __table_args__ = (
        UniqueConstraint("owner_id", "name"),
        Index("uq_bots_owner_name_key", "owner_id", "name_key", unique=True),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    #: What an owner's bot names are compared by (arena.compete.names.name_key): one bot
    #: of an owner per key, so ``Greedy`` beside ``greedy`` is refused. Filled from ``name``.
    name_key: Mapped[str] = mapped_column(String(200), default=_name_key, server_default="")
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    #: Whether everyone may read the source (by default only its owner and admins).
    source_public: Mapped[bool] = mapped_column(default=False, server_default=false())
    created: Mapped[datetime] = _created()


class BotVersion(Base):
    __tablename__ = "bot_versions"
    __table_args__ = (UniqueConstraint("bot_id", "version"), UniqueConstraint("bot_id", "sha256"))

    id: Mapped[int] = mapped_column(primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    version: Mapped[int] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    report: Mapped[dict[str, Any]] = mapped_column(JSON)
    created: Mapped[datetime] = _created()
    #: The runtime its file runs under (arena.match.runtimes; migration 0018).
    runtime: Mapped[str] = mapped_column(String(20), default="python", server_default="python")


class RuleSet(Base):
    __tablename__ = "rule_sets"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    version: Mapped[str] = mapped_column(String(64), unique=True)
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    is_preset: Mapped[bool] = mapped_column(default=False)
    # Live ratings (arena.service.live): refits asked for (one a done match) and the asks
    # the stored ratings cover; the last refit's start and length, when the next one is due
    # (a REFIT task is scheduled for then), and the lease of the one in flight.
    refit_asked: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    refit_covered: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    refitted: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    refit_seconds: Mapped[float | None] = mapped_column(Float)
    refit_due: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    refit_lease: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Tournament(Base):
    __tablename__ = "tournaments"
    __table_args__ = (
        Index("ix_tournaments_status", "status"),
        Index("ix_tournaments_queued", "queued"),
        Index("uq_tournaments_upload", "upload_id", unique=True),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    format: Mapped[str] = mapped_column(String(40))
    rule_set_id: Mapped[int] = mapped_column(ForeignKey("rule_sets.id"))
    players: Mapped[int] = mapped_column(Integer)
    teams: Mapped[bool] = mapped_column(default=False)
    games_per_match: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(20), default="pending")
    #: How its matches are played: ``move_seconds``, ``memory_mb`` (see arena.service.matches).
    settings: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created: Mapped[datetime] = _created()
    started: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: The organiser who created it from the web (None: from the command line).
    owner_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    #: When its matches were first sent to the workers: its place in the queue (the
    #: workers claim the oldest-sent tournament's matches first; None: never sent).
    queued: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: A placement tournament's upload (arena.service.intake; migration 0019), else None.
    #: (``use_alter``: uploads -> competitions -> tournaments -> uploads is a cycle.)
    upload_id: Mapped[int | None] = mapped_column(ForeignKey("uploads.id", use_alter=True))


class TournamentEntrant(Base):
    __tablename__ = "tournament_entrants"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    label: Mapped[str] = mapped_column(String(100), primary_key=True)
    bot_version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"))


class Match(Base):
    __tablename__ = "matches"
    __table_args__ = (
        UniqueConstraint("tournament_id", "key"),
        Index("ix_matches_status_lease", "status", "lease_expires"),
        # Covering a tournament page's counts (by status, games, last finished).
        Index("ix_matches_tournament_status", "tournament_id", "status", "games", "finished"),
        # The game lists' order (done matches, the latest finished first), in all and by
        # tournament: without them a list sorts every done match (reading past each result).
        Index("ix_matches_status_finished", "status", "finished", "id"),
        Index("ix_matches_tournament_finished", "tournament_id", "status", "finished", "id"),
        # Retention (arena.service.retention): the done matches whose records are kept, the
        # oldest first, without walking the pruned ones (migration 0025).
        Index("ix_matches_unpruned", "status", "records_pruned", "finished", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"))
    key: Mapped[str] = mapped_column(String(200))
    #: Bot version ids, one per seat.
    seats: Mapped[list[Any]] = mapped_column(JSON)
    #: The entrant's label at each seat (two entrants may share a bot version).
    labels: Mapped[list[Any] | None] = mapped_column(JSON)
    games: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(BigInteger)
    deal_group: Mapped[int | None] = mapped_column(Integer)
    rotation: Mapped[int | None] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(20), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    lease_owner: Mapped[str | None] = mapped_column(String(200))
    lease_expires: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    #: When a task for it was last sent to the broker.
    queued: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created: Mapped[datetime] = _created()
    finished: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: When the deployment's retention deleted its game records (arena.service.retention;
    #: its result stays); None: they are kept (or it never had any).
    records_pruned: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class TallyGroup(Base):
    """A group of a tournament's done games as its page counts them (arena.store.tallies):
    the same entrant label at each seat, places, forfeiting seat and ending; kept up to date
    in the transaction storing each match's result."""

    __tablename__ = "tournament_tallies"
    __table_args__ = (
        Index(
            "uq_tournament_tallies_group",
            "tournament_id",
            "labels",
            "places",
            "fault_seat",
            "termination",
            unique=True,
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"))
    #: The entrant label at each seat, as JSON text (as the match stores them).
    labels: Mapped[str] = mapped_column(Text)
    #: Each seat's place, as JSON text ('': none stored).
    places: Mapped[str] = mapped_column(Text)
    #: The seat that forfeited the games (-1: none).
    fault_seat: Mapped[int] = mapped_column(Integer)
    termination: Mapped[str] = mapped_column(Text)
    count: Mapped[int] = mapped_column(BigInteger)
    #: Each seat's points summed over the group's games (seats past the last: 0).
    points0: Mapped[int] = mapped_column(BigInteger, default=0)
    points1: Mapped[int] = mapped_column(BigInteger, default=0)
    points2: Mapped[int] = mapped_column(BigInteger, default=0)
    points3: Mapped[int] = mapped_column(BigInteger, default=0)
    points4: Mapped[int] = mapped_column(BigInteger, default=0)
    points5: Mapped[int] = mapped_column(BigInteger, default=0)
    points6: Mapped[int] = mapped_column(BigInteger, default=0)
    points7: Mapped[int] = mapped_column(BigInteger, default=0)
    points8: Mapped[int] = mapped_column(BigInteger, default=0)


class TournamentFigures(Base):
    """A tournament's figures as its page shows them (standings with each entrant's rating
    fitted, crosstable, void matches, faults: arena.service.board_views), fitted from its
    stored tally once for every web process, with the tally's version they were fitted at
    (its done and void matches); ``claimed_until``: a process is fitting them again."""

    __tablename__ = "tournament_figures"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    #: The tally's version the figures were fitted at: its done matches and void matches
    #: (-1, -1: never fitted yet).
    done: Mapped[int] = mapped_column(Integer)
    void: Mapped[int] = mapped_column(Integer)
    #: The figures as JSON text (None: never fitted yet).
    figures: Mapped[str | None] = mapped_column(Text)
    #: Until when the process fitting them holds its claim (None: nobody is).
    claimed_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    computed: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class CompareReading(Base):
    """Where a compare's test stands, as the worker that stored its last done match read it
    (:func:`arena.service.compares.stop_if_decided`, after each match): the reading as JSON
    text (the test's figures, the games and batches it is over), with the count of done
    matches it was read over, so that a reader knows whether it is current; ``arena compare
    --remote`` shows it instead of reading the test itself (which loads scipy: a third of a
    second of its start)."""

    __tablename__ = "compare_readings"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    #: The compare's done matches the reading is over.
    done: Mapped[int] = mapped_column(Integer)
    #: The test's status then (``continue``, ``H0 accepted``, ``H1 accepted``, or
    #: ``limit``: its game limit reached).
    status: Mapped[str] = mapped_column(String(32))
    reading: Mapped[str] = mapped_column(Text)
    computed: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class CompareFollower(Base):
    """Until when a compare whose batches are sent a few at a time (``arena compare
    --remote``'s: :func:`arena.service.compares.follow_compare`) is followed: its follower
    renews it; the workers' sweep stops a compare whose follower is gone (its matches not
    sent would stay pending for ever)."""

    __tablename__ = "compare_followers"
    __table_args__ = (Index("ix_compare_followers_until", "until"),)

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    until: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class MatchSeat(Base):
    """Who holds each seat of a match, by bot and version, and how many of its games that
    seat forfeited: the index behind "a bot's games" and "its faults" (``matches.seats`` and
    ``matches.result`` are JSON, which no index reaches)."""

    __tablename__ = "match_seats"
    __table_args__ = (Index("ix_match_seats_bot", "bot_id", "match_id"),)

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    bot_version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"))
    #: Games of the match this seat forfeited (a bot's faults without reading results).
    faults: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class GameRecord(Base):
    __tablename__ = "game_records"
    __table_args__ = (
        UniqueConstraint("match_id", "game_index"),
        # the rows still holding JSON (stored before migration 0024): counted at every
        # start of ``arena serve`` and walked by the conversion, without reading the table
        Index(
            "ix_game_records_unconverted",
            "id",
            sqlite_where=text("data IS NULL"),
            postgresql_where=text("data IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"))
    game_index: Mapped[int] = mapped_column(Integer)
    #: The record as compact bytes (arena.engine.codec: the first byte names the
    #: encoding); every row written since migration 0024. Read through
    #: arena.store.records, never directly.
    data: Mapped[bytes | None] = mapped_column(LargeBinary)
    #: The record as JSON: rows stored before migration 0024 that the conversion
    #: (arena.store.records.convert_records) has not reached yet; null once converted.
    record: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))


class Rating(Base):
    __tablename__ = "ratings"
    #: A bot's page reads its versions' ratings in every rule set (migration 0032).
    __table_args__ = (Index("ix_ratings_version", "bot_version_id"),)

    rule_set_id: Mapped[int] = mapped_column(ForeignKey("rule_sets.id"), primary_key=True)
    bot_version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"), primary_key=True)
    rating: Mapped[float] = mapped_column(Float)
    low: Mapped[float] = mapped_column(Float)
    high: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer)
    rank: Mapped[int] = mapped_column(Integer)
    computed: Mapped[datetime] = _created()
    #: Its record in the counted games: won (alone, or its side), drawn (first place
    #: shared with another side), lost; and when the last of them finished.
    wins: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    draws: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    losses: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    last_game: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class PairRecord(Base):
    """A bot version's record against another in one rule set's counted games, as the last
    refit found it (each pair stored both ways): games both played, and won, drawn and lost
    by place (best seat against best seat; partners never count)."""

    __tablename__ = "pair_records"
    __table_args__ = (Index("ix_pair_records_version", "bot_version_id"),)

    rule_set_id: Mapped[int] = mapped_column(ForeignKey("rule_sets.id"), primary_key=True)
    bot_version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"), primary_key=True)
    opponent_version_id: Mapped[int] = mapped_column(
        ForeignKey("bot_versions.id"), primary_key=True
    )
    games: Mapped[int] = mapped_column(Integer)
    wins: Mapped[int] = mapped_column(Integer)
    draws: Mapped[int] = mapped_column(Integer)
    losses: Mapped[int] = mapped_column(Integer)


class RatingHistory(Base):
    __tablename__ = "rating_history"
    __table_args__ = (Index("ix_rating_history_key", "rule_set_id", "bot_version_id", "time"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    rule_set_id: Mapped[int] = mapped_column(ForeignKey("rule_sets.id"))
    bot_version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"))
    rating: Mapped[float] = mapped_column(Float)
    low: Mapped[float] = mapped_column(Float)
    high: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer)
    rank: Mapped[int] = mapped_column(Integer)
    computed: Mapped[datetime] = _created()
    time: Mapped[datetime] = _created()


class Worker(Base):
    """A Celery worker (its main process), by its node name; ``last_seen`` is its heartbeat."""

    __tablename__ = "workers"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    host: Mapped[str] = mapped_column(String(200))
    pid: Mapped[int] = mapped_column(Integer)
    concurrency: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(20))
    started: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Upload(Base):
    """A bot source sent over the web: ``pending`` until a worker has checked it in the
    sandbox, then ``accepted`` (stored as ``bot_version_id``) or ``rejected`` (``message``
    says why); ``already`` when the bot had that very source (``bot_version_id``)."""

    __tablename__ = "uploads"
    __table_args__ = (
        Index("ix_uploads_status", "status"),
        Index("uq_uploads_owner_client_key", "owner_id", "client_key", unique=True),
        Index("uq_uploads_owner_repeat_key", "owner_id", "repeat_key", unique=True),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    bot_name: Mapped[str] = mapped_column(String(100))
    filename: Mapped[str] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(20), default="pending")
    report: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    message: Mapped[str | None] = mapped_column(Text)
    bot_version_id: Mapped[int | None] = mapped_column(ForeignKey("bot_versions.id"))
    #: The runtime asked for (arena.match.runtimes; migration 0018).
    runtime: Mapped[str] = mapped_column(String(20), default="python", server_default="python")
    created: Mapped[datetime] = _created()
    sent: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: While a worker checks it: renewed by the worker's heartbeat; a check whose lease ran
    #: out (its worker died) is sent again, one whose lease holds never is.
    lease_expires: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: What it is for (arena.service.intake; migration 0019): ``placement`` (the public
    #: leaderboard's placement tournament), ``competition`` or ``assignment`` (the one below).
    purpose: Mapped[str] = mapped_column(
        String(20), default="placement", server_default="placement"
    )
    competition_id: Mapped[int | None] = mapped_column(ForeignKey("competitions.id"))
    assignment_id: Mapped[int | None] = mapped_column(ForeignKey("assignments.id"))
    #: The client's idempotency key (an API ``Idempotency-Key``, a form's one-time token):
    #: unique for the owner, so the same key sent again is this upload.
    client_key: Mapped[str | None] = mapped_column(String(100))
    #: Purpose, target and source's hash while the repeat window lasts (then cleared):
    #: unique for the owner, so the same upload sent twice within it is this upload.
    repeat_key: Mapped[str | None] = mapped_column(String(200))


class ApiToken(Base):
    """A bearer token of the JSON API: only its SHA-256 is kept (the token is shown once)."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    name: Mapped[str] = mapped_column(String(100))
    #: The token's first characters, to recognise it in a list (``da_Xy12...``).
    prefix: Mapped[str] = mapped_column(String(16))
    sha256: Mapped[str] = mapped_column(String(64), unique=True)
    #: Any of ``read``, ``upload``, ``run``.
    scopes: Mapped[list[Any]] = mapped_column(JSON)
    created: Mapped[datetime] = _created()
    last_used: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    revoked: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Branch(Base):
    """A "what if" asked from the web: game ``game_index`` of match ``match_id`` taken up
    at round ``round_number`` after ``turn`` of its plays by the bot versions ``seats`` (one
    id per seat), ``times`` times, their bots seeded from ``seed``. ``pending`` until a
    worker takes it, ``running``, then ``done`` (``records``: one branch record per
    repetition, in order) or ``failed`` (``message`` says why)."""

    __tablename__ = "branches"
    __table_args__ = (
        Index("ix_branches_status", "status"),
        Index("ix_branches_requester", "requested_by", "status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"))
    game_index: Mapped[int] = mapped_column(Integer)
    round_number: Mapped[int] = mapped_column(Integer)
    #: Plays of the round kept (arena.engine.branch).
    turn: Mapped[int] = mapped_column(Integer)
    #: Bot version ids, one per seat.
    seats: Mapped[list[Any]] = mapped_column(JSON)
    times: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(BigInteger)
    requested_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    status: Mapped[str] = mapped_column(String(20), default="pending")
    message: Mapped[str | None] = mapped_column(Text)
    records: Mapped[list[Any] | None] = mapped_column(JSON)
    created: Mapped[datetime] = _created()
    #: When its task was last sent to the broker (the sweep sends a lost one again).
    sent: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    started: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: While running: renewed by the worker's heartbeat (see ``Upload.lease_expires``).
    lease_expires: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


#: A competition's status: ``open`` until its deadline (entries are taken from ``opens``
#: on, and its ladder plays), ``final`` while its final plays, ``done`` once the final
#: table is published.
COMPETITION_STATUSES = ("open", "final", "done")
#: A competition entry's status: ``pending`` while its upload is checked, ``active`` (the
#: user's latest placed version, or its first: it plays), ``placing`` (a later version
#: playing its placement games: it displaces the active one once placed),
#: ``superseded`` (a later one of the user's is active), ``disqualified`` (by the
#: organiser; ``reason`` says why), ``rejected`` (its upload failed the check; ``reason``),
#: ``late`` (accepted after the deadline: never plays), ``withdrawn`` (its entrant left the
#: competition: it plays no more, in the ladder or the final).
ENTRY_STATUSES = (
    "pending", "active", "placing", "superseded", "disqualified", "rejected", "late",
    "withdrawn",
)  # fmt: skip


class Competition(Base):
    """A bot-writing competition (arena.service.competitions): entries between ``opens``
    and ``deadline`` (UTC; shown in the organiser's ``time_zone``), a continuous ladder
    (tournament ``ladder_id``, matches added as it goes) and, after the deadline, a final
    among the ladder's top ``final_top`` (tournament ``final_id``)."""

    __tablename__ = "competitions"
    __table_args__ = (Index("ix_competitions_status", "status"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    #: What competition names are compared by (arena.compete.names.name_key): one
    #: competition per key (``D9CUP`` beside ``d9cup`` is refused). Filled from ``name``.
    name_key: Mapped[str] = mapped_column(
        String(200), index=True, unique=True, default=_name_key, server_default=""
    )
    description: Mapped[str | None] = mapped_column(Text)
    #: The organiser who created it (None: from the command line).
    owner_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    rule_set_id: Mapped[int] = mapped_column(ForeignKey("rule_sets.id"))
    players: Mapped[int] = mapped_column(Integer)
    teams: Mapped[bool] = mapped_column(default=False)
    #: How its matches are played (``move_seconds``, ``memory_mb``, ``runtime`` ...) and
    #: its ladder's and final's parameters (arena.service.competitions).
    settings: Mapped[dict[str, Any]] = mapped_column(JSON)
    opens: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    deadline: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: The organiser's IANA time zone name, e.g. ``Europe/Paris``: how dates are shown.
    time_zone: Mapped[str] = mapped_column(String(64), default="UTC")
    #: Entries a user may submit in any 24 hours.
    daily_submissions: Mapped[int] = mapped_column(Integer, default=5)
    #: Whether the entries' sources become readable by everyone after the deadline.
    sources_public: Mapped[bool] = mapped_column(default=False, server_default=false())
    #: The final: the ladder's top ``final_top``, adjacent ranks separated at
    #: ``final_confidence``, at most ``final_max_games`` games (then ties are declared).
    final_top: Mapped[int] = mapped_column(Integer, default=8)
    final_confidence: Mapped[float] = mapped_column(Float, default=0.95)
    final_max_games: Mapped[int] = mapped_column(Integer, default=14000)
    seed: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(20), default="open")
    ladder_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"))
    final_id: Mapped[int | None] = mapped_column(ForeignKey("tournaments.id"))
    #: The ladder's latest fit (arena.service.competitions): one object an entrant.
    standings: Mapped[list[Any] | None] = mapped_column(JSON)
    standings_computed: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: The published final table (frozen): one object a finalist, best first.
    final_table: Mapped[list[Any] | None] = mapped_column(JSON)
    #: The finals a rerun replaced, oldest first: one object each (``number``,
    #: ``tournament``, ``table``: its published table or None, ``published``, ``replaced``,
    #: ``reason``, ``by``); kept and shown (migration 0022).
    earlier_finals: Mapped[list[Any] | None] = mapped_column(JSON)
    created: Mapped[datetime] = _created()
    closed: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: Since when its organiser paused the ladder (None: it plays): no ladder match is added
    #: while it is paused (arena.service.competition_tools).
    ladder_paused: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: The youngest account that may enter, in days (0: any).
    min_account_days: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class CompetitionAnnouncement(Base):
    """An organiser's announcement on a competition's page (everyone who sees the
    competition reads it)."""

    __tablename__ = "competition_announcements"
    __table_args__ = (Index("ix_competition_announcements_key", "competition_id", "created"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id"))
    #: Its author's account (None: the operator, from the command line); ``author``: the name.
    author_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    author: Mapped[str] = mapped_column(String(100))
    body: Mapped[str] = mapped_column(Text)
    created: Mapped[datetime] = _created()


class CompetitionAction(Base):
    """A line of a competition's action log, shown to its organiser: who did what when,
    each change as ``{"what", "from", "to"}`` (text as the log shows it)."""

    __tablename__ = "competition_actions"
    __table_args__ = (Index("ix_competition_actions_key", "competition_id", "created"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id"))
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    actor: Mapped[str] = mapped_column(String(100))
    action: Mapped[str] = mapped_column(String(40))
    changes: Mapped[list[Any]] = mapped_column(JSON)
    created: Mapped[datetime] = _created()


class CompetitionEntry(Base):
    """A user's entry in a competition: one bot version (or the upload being checked to
    become one). Only each user's latest accepted entry is ``active``; earlier ones keep
    their games and history (:data:`ENTRY_STATUSES`)."""

    __tablename__ = "competition_entries"
    __table_args__ = (
        Index("ix_competition_entries_status", "competition_id", "status"),
        Index("ix_competition_entries_user", "competition_id", "user_id", "created"),
        Index("ix_competition_entries_upload", "upload_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    upload_id: Mapped[int | None] = mapped_column(ForeignKey("uploads.id"))
    bot_version_id: Mapped[int | None] = mapped_column(ForeignKey("bot_versions.id"))
    status: Mapped[str] = mapped_column(String(20), default="pending")
    #: Why it was disqualified or rejected (shown on its row).
    reason: Mapped[str | None] = mapped_column(Text)
    created: Mapped[datetime] = _created()
    #: When its upload was accepted, and when the ladder first rated it (its notices).
    accepted: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    first_rated: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: When it had played its placement games (the competition's ``placement_games``).
    placed: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class FinalChoice(Base):
    """A version an entrant chose for a competition's final (arena.service.entries): at
    most the competition's ``final_versions`` of a user; none chosen, the default ones go."""

    __tablename__ = "competition_final_choices"
    __table_args__ = (
        UniqueConstraint("competition_id", "bot_version_id"),
        Index("ix_final_choices_user", "competition_id", "user_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    bot_version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"))
    created: Mapped[datetime] = _created()


class CompetitionRating(Base):
    """A point of an entrant's rating history on a competition's ladder (written by a
    ladder refit when the entrant's game count changed since its last point)."""

    __tablename__ = "competition_ratings"
    __table_args__ = (
        Index("ix_competition_ratings_key", "competition_id", "bot_version_id", "time"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id"))
    bot_version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"))
    rating: Mapped[float] = mapped_column(Float)
    low: Mapped[float] = mapped_column(Float)
    high: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer)
    rank: Mapped[int] = mapped_column(Integer)
    time: Mapped[datetime] = _created()


class SchoolClass(Base):
    """A class (arena.service.classes): its teachers (:class:`ClassTeacher`), its students
    (:class:`ClassMember`), the rule sets it plays and its join code. ``join_code`` is the
    current code (None: joining by code is closed); it stops working at ``join_expires``."""

    __tablename__ = "classes"

    id: Mapped[int] = mapped_column(primary_key=True)
    #: Its URL name (``/classes/NAME``), like a competition's.
    name: Mapped[str] = mapped_column(String(200), unique=True)
    #: What class names are compared by (arena.compete.names.name_key): one class per key.
    name_key: Mapped[str] = mapped_column(
        String(200), index=True, unique=True, default=_name_key, server_default=""
    )
    description: Mapped[str | None] = mapped_column(Text)
    #: The teacher who created it (None: from the command line).
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    #: The preset rule set names it plays, the first its default.
    rule_sets: Mapped[list[Any]] = mapped_column(JSON)
    join_code: Mapped[str | None] = mapped_column(String(32), unique=True)
    join_expires: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: Quotas and display (arena.service.classes): uploads a student an hour, checks queued
    #: for the class at once, whether its leaderboard shows the reference bots.
    settings: Mapped[dict[str, Any]] = mapped_column(JSON)
    created: Mapped[datetime] = _created()


class ClassTeacher(Base):
    """A teacher of a class (a class may have several)."""

    __tablename__ = "class_teachers"
    __table_args__ = (
        UniqueConstraint("class_id", "user_id"),
        Index("ix_class_teachers_user", "user_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    class_id: Mapped[int] = mapped_column(ForeignKey("classes.id"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    added: Mapped[datetime] = _created()


class ClassMember(Base):
    """A student of a class (a student may be in several). ``real_name`` is seen by the
    class's teachers only; ``via`` is ``code`` (a new account joined with the join code),
    ``roster`` (imported by a teacher) or ``account`` (an existing account joined with the
    code: its teachers never reset its password). ``school_id`` is the id the school's
    system gives the student (an SIS id, a student number, an e-mail; unique in the class:
    a roster imported again updates the member it names), ``section`` the school's group;
    both are seen by the class's teachers only."""

    __tablename__ = "class_members"
    __table_args__ = (
        UniqueConstraint("class_id", "user_id"),
        Index("ix_class_members_user", "user_id"),
        Index("uq_class_members_school_id", "class_id", "school_id", unique=True),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    class_id: Mapped[int] = mapped_column(ForeignKey("classes.id"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    real_name: Mapped[str | None] = mapped_column(String(200))
    via: Mapped[str] = mapped_column(String(10), default="code")
    joined: Mapped[datetime] = _created()
    school_id: Mapped[str | None] = mapped_column(String(200))
    section: Mapped[str | None] = mapped_column(String(200))


#: An assignment submission's status: ``pending`` while its upload is checked, ``rejected``
#: (the check failed; ``reason``), ``grading`` while its gauntlet plays, ``graded``.
SUBMISSION_STATUSES = ("pending", "rejected", "grading", "graded")


class Assignment(Base):
    """A graded assignment of a class (arena.service.assignments): each submission (a
    student's bot version) plays a gauntlet against the ``references`` under a sequential
    test, and its verdicts map to a grade by ``grades``."""

    __tablename__ = "assignments"
    __table_args__ = (UniqueConstraint("class_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    class_id: Mapped[int] = mapped_column(ForeignKey("classes.id"))
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(Text)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    rule_set_id: Mapped[int] = mapped_column(ForeignKey("rule_sets.id"))
    players: Mapped[int] = mapped_column(Integer, default=2)
    teams: Mapped[bool] = mapped_column(default=False)
    #: How its games are played (``move_seconds``, ...) and the test's parameters
    #: (``statistic``, ``elo0``, ``elo1``, ``alpha``, ``beta``, ``max_games``, ``batch``).
    settings: Mapped[dict[str, Any]] = mapped_column(JSON)
    #: The references, in order: one ``{"label": ..., "bot_version_id": ...}`` each.
    references: Mapped[list[Any]] = mapped_column(JSON)
    #: Best first: ``{"grade": "A", "beats": ["counter"]}``; the last one's ``beats`` is
    #: empty (the grade of a submission that beats none it must).
    grades: Mapped[list[Any]] = mapped_column(JSON)
    opens: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    deadline: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    time_zone: Mapped[str] = mapped_column(String(64), default="UTC")
    seed: Mapped[int] = mapped_column(BigInteger)
    created: Mapped[datetime] = _created()


class Submission(Base):
    """A student's submission to an assignment: an upload being checked, then a bot version
    graded by its gauntlet (:class:`SubmissionTest`, one a reference). ``late``: sent after
    the deadline (graded, never kept)."""

    __tablename__ = "assignment_submissions"
    __table_args__ = (
        Index("ix_assignment_submissions_user", "assignment_id", "user_id", "created"),
        Index("ix_assignment_submissions_upload", "upload_id"),
        Index("ix_assignment_submissions_status", "status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    assignment_id: Mapped[int] = mapped_column(ForeignKey("assignments.id"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    upload_id: Mapped[int | None] = mapped_column(ForeignKey("uploads.id"))
    bot_version_id: Mapped[int | None] = mapped_column(ForeignKey("bot_versions.id"))
    status: Mapped[str] = mapped_column(String(20), default="pending")
    late: Mapped[bool] = mapped_column(default=False, server_default=false())
    reason: Mapped[str | None] = mapped_column(Text)
    grade: Mapped[str | None] = mapped_column(String(20))
    created: Mapped[datetime] = _created()
    accepted: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    graded: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class SubmissionTest(Base):
    """One test of a submission's gauntlet: the submission against one reference, a
    compare tournament (arena.service.compares) stopped as soon as its test decides;
    ``verdict`` is kept when it has (``pass``, ``fail``, ``undecided`` at the cap)."""

    __tablename__ = "submission_tests"
    __table_args__ = (UniqueConstraint("submission_id", "reference"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("assignment_submissions.id"))
    reference: Mapped[str] = mapped_column(String(100))
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), unique=True)
    verdict: Mapped[str | None] = mapped_column(String(20))
    #: The test's reading when it ended: score, Elo difference with its interval, games.
    summary: Mapped[dict[str, Any] | None] = mapped_column(JSON)


#: A table's status (arena.service.tables): ``waiting`` for an invited person to sit down,
#: ``pending`` until a worker takes it, ``running`` while it plays, then ``done`` (``record``
#: holds its game), ``closed`` (nobody came, or no worker took it, in time) or ``failed``
#: (the harness failed; ``message`` says why).
TABLE_STATUSES = ("waiting", "pending", "running", "done", "closed", "failed")


class GameTable(Base):
    """A game a person plays in the browser against bots (and perhaps with a second
    person, invited by ``invite``): refereed on a worker like any match, its people's moves
    coming through the table's channel. Kept apart from matches, so no rating counts it."""

    __tablename__ = "game_tables"
    __table_args__ = (
        Index("ix_game_tables_status", "status"),
        Index("ix_game_tables_owner", "owner_id", "status"),
        Index("ix_game_tables_address", "address", "status"),
        Index("uq_game_tables_owner_client_key", "owner_id", "client_key", unique=True),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    #: The address the table was opened from (the per-address bound).
    address: Mapped[str] = mapped_column(String(64))
    rule_set_id: Mapped[int] = mapped_column(ForeignKey("rule_sets.id"))
    players: Mapped[int] = mapped_column(Integer)
    teams: Mapped[bool] = mapped_column(default=False)
    seed: Mapped[int] = mapped_column(BigInteger)
    #: A person's time for one move; one who takes longer forfeits.
    move_seconds: Mapped[float] = mapped_column(Float)
    #: The table's key in its channel (arena.service.table_channel): random, so tables of
    #: two databases sharing one Redis never meet.
    channel: Mapped[str] = mapped_column(String(64))
    #: The invitation's code (None: nobody is invited).
    invite: Mapped[str | None] = mapped_column(String(64), unique=True)
    status: Mapped[str] = mapped_column(String(20), default="waiting")
    message: Mapped[str | None] = mapped_column(Text)
    record: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    #: The winning seats once done.
    winners: Mapped[list[Any] | None] = mapped_column(JSON)
    created: Mapped[datetime] = _created()
    sent: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    started: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    lease_expires: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: The client's key (the form's one-time token, the API's ``Idempotency-Key``): the
    #: same key sent again by its owner answers with this table (None: none was sent).
    client_key: Mapped[str | None] = mapped_column(String(100))


class TableSeat(Base):
    """One seat of a table: a person (``user_id``; None while an invited seat is empty) or
    a bot version (``bot_version_id``), and the name the record gives it."""

    __tablename__ = "table_seats"
    __table_args__ = (Index("ix_table_seats_version", "bot_version_id"),)

    table_id: Mapped[int] = mapped_column(ForeignKey("game_tables.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    human: Mapped[bool] = mapped_column(default=False)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    bot_version_id: Mapped[int | None] = mapped_column(ForeignKey("bot_versions.id"))
    name: Mapped[str | None] = mapped_column(String(200))
