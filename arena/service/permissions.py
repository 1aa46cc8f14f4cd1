"""Who may do what to which object: the one permission table the web pages, the API and
the command line ask.

An **actor** is an :class:`Account` (logged in on the web, or the owner of an API token;
:mod:`arena.service.accounts` makes and finds them), ``None`` (anonymous), or
:data:`OPERATOR`: whoever runs the ``arena`` command on the deployment's machine. The
operator holds the database already, so it is an admin by definition, and it owns nothing
(what it creates has no owner account).

An **action** is a name in :data:`PERMISSIONS`: the weakest role that may do it to anyone's
object, and whether an object's owner may always do it to its own. A **target** is the
object acted on, as far as permissions care (:class:`Target`: today its owner). The roles
rank ``anonymous < user < teacher < organiser < admin`` (:data:`ROLE_RANKS`).

Rules beyond roles and ownership (a teacher over the bots of the students of a class:
:func:`teaches`, with :attr:`Target.teachers`) are added as :data:`EXTRA_RULES`: functions of
the actor and the target, each granting an action where it holds. Views never change for a
new rule: every service function checks its action itself with :func:`require`, and views
ask :func:`allowed` only to decide what a page shows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from arena.errors import NotFound, PermissionDenied

__all__ = [
    "ACTIONS",
    "EXTRA_RULES",
    "OPERATOR",
    "PERMISSIONS",
    "ROLES",
    "ROLE_RANKS",
    "Account",
    "Actor",
    "Operator",
    "Rule",
    "Target",
    "actor_id",
    "allowed",
    "require",
    "teaches",
]


@dataclass(frozen=True, slots=True)
class Operator:
    """Whoever runs the ``arena`` command on the deployment's machine: an admin with no
    account (what it creates has no owner)."""

    name: str = "operator"
    role: str = "admin"


#: The command line's actor.
OPERATOR = Operator()

#: Who acts: an account, the operator, or None (anonymous).
Actor: TypeAlias = "Account | Operator | None"


@dataclass(frozen=True, slots=True)
class Target:
    """The object an action is done to, as permissions see it.

    Attributes:
        owner_id: the account that owns it (None: nobody, or the operator).
        teachers: the accounts that teach it: for a bot (its source, faults and uploads'
            reports), the teachers of every class its owner is a student of
            (arena.service.classes.bot_target fills it); for a class, its teachers.
    """

    owner_id: int | None = None
    teachers: frozenset[int] = frozenset()


#: The accounts' roles, weakest first.
ROLES = ("user", "teacher", "organiser", "admin")
#: The roles' ranks: an actor may do what its role's rank or any lower rank may do.
ROLE_RANKS: dict[str, int] = {"anonymous": 0, **{role: i + 1 for i, role in enumerate(ROLES)}}


@dataclass(frozen=True, slots=True)
class Account:
    """A user who may log in (:mod:`arena.service.accounts` makes and finds them).
    ``must_change_password``: its password is a first-time one (a teacher's roster import
    or reset, arena.service.classes): the web sends it to the password page and the API
    refuses it until it is changed (``arena.service.accounts.change_own_password`` clears
    it)."""

    id: int
    name: str
    role: str
    session_epoch: int
    must_change_password: bool = False

    def has_role(self, role: str) -> bool:
        """Whether this account's role is ``role`` or a stronger one."""
        return ROLES.index(self.role) >= ROLES.index(role)


#: action -> (the weakest role that may do it to anyone's object, whether an object's
#: owner may always do it to its own).
PERMISSIONS: dict[str, tuple[str, bool]] = {
    # reading
    "read-public": ("anonymous", False),  # every page and API read that shows no secret
    "read-source": ("admin", True),  # a private source (public ones are read-public)
    "read-faults": ("admin", True),  # a fault's message and stderr, an upload's report
    "read-branch": ("admin", True),
    # accounts: one's own (the service acts on the actor's account only)
    "sign-up": ("anonymous", False),
    "log-in": ("anonymous", False),
    "log-out": ("anonymous", False),
    "change-password": ("user", False),
    "manage-tokens": ("user", False),
    "manage-users": ("admin", False),  # accounts with a role, from the command line
    # bots
    "upload": ("user", True),
    "add-bot": ("admin", False),  # a checked bot file stored under any owner (arena bots add)
    "change-visibility": ("admin", True),  # make a bot's source public or private
    # work for the workers
    "create-tournament": ("organiser", False),
    "cancel-tournament": ("admin", True),
    "start-compare": ("admin", True),  # of one's own bot (NEW) against any other
    "start-branch": ("user", True),
    # a branch seats one's own bots, reference bots and public ones; these roles any bot
    "seat-any-bot": ("admin", False),
    # tables (arena.service.tables): a person plays bots in the browser; its page and
    # moves are the seated people's (the service checks the seat), every table the admins'
    "play-table": ("user", False),
    "read-tables": ("admin", False),
    # competitions (arena.service.competitions): the target is the competition, its owner
    # the organiser who created it
    "create-competition": ("organiser", False),
    "manage-competition": ("admin", True),  # deadline, disqualify, close, rerun the final
    "enter-competition": ("user", False),
    # classes (arena.service.classes): the target of manage-class is the class, its
    # teachers in Target.teachers; a class's teachers also read their students' sources
    # and faults (EXTRA_RULES below)
    "create-class": ("teacher", False),
    "manage-class": ("admin", False),  # its roster, join code, teachers, tournaments
    "join-class": ("user", False),  # with its join code (a visitor signs up: sign-up)
    "request-role": ("user", False),  # ask an admin for the teacher role
}

#: Every action.
ACTIONS = frozenset(PERMISSIONS)

#: A rule beyond roles and ownership: whether it lets the actor do the action to the target.
Rule: TypeAlias = "Callable[[Account, Target | None], bool]"


def teaches(actor: Account, target: Target | None) -> bool:
    """Whether ``actor`` teaches ``target``: a class of its, or a bot of a student of one
    of its classes."""
    return target is not None and actor.id in target.teachers


#: action -> more rules, any of which grants it (the next roles add theirs here).
EXTRA_RULES: dict[str, list[Rule]] = {
    "read-source": [teaches],
    "read-faults": [teaches],
    "manage-class": [teaches],
}


def actor_id(actor: Actor) -> int | None:
    """The account id of ``actor`` (None: anonymous, or the operator)."""
    return None if actor is None or isinstance(actor, Operator) else actor.id


def allowed(actor: Actor, action: str, target: Target | None = None) -> bool:
    """Whether ``actor`` may do ``action`` to ``target`` (None: to no object in
    particular).

    Raises:
        KeyError: ``action`` is not in :data:`PERMISSIONS`.
    """
    role, owners_may = PERMISSIONS[action]
    rank = 0 if actor is None else ROLE_RANKS[actor.role]
    if rank >= ROLE_RANKS[role]:
        return True
    if actor is None or isinstance(actor, Operator):
        return False
    if owners_may and target is not None and target.owner_id == actor.id:
        return True
    return any(rule(actor, target) for rule in EXTRA_RULES.get(action, ()))


def require(
    actor: Actor,
    action: str,
    target: Target | None = None,
    *,
    message: str | None = None,
    hide: str | None = None,
) -> None:
    """Return if :func:`allowed`, else raise.

    Args:
        message: what the refusal says (else a generic sentence naming the action).
        hide: raise :class:`NotFound` with this message instead: a private object is not
            acknowledged to those who may not see it.

    Raises:
        PermissionDenied: refused (``anonymous`` set for a visitor not logged in).
        NotFound: refused, with ``hide``.
    """
    if allowed(actor, action, target):
        return
    if hide is not None:
        raise NotFound(hide)
    raise PermissionDenied(
        message or f"you may not {action.replace('-', ' ')}",
        action=action,
        anonymous=actor is None,
        stated=message is not None,
    )
