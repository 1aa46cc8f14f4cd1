"""``arena users``: the dashboard's accounts from the command line (the first admin).

The command line acts as the operator (:data:`arena.service.permissions.OPERATOR`, an
admin): it adds accounts and gives roles through the same service actions as any admin
would. ``arena users add`` is also how a bot owner stored without a password (``arena bots
add --owner NAME``, ``reference`` on ``arena serve --demo``) is claimed: sign-up never
takes an existing name."""

from __future__ import annotations

import click

from arena.cli.common import help_without_command, url_option
from arena.cli.stored import open_store
from arena.service.permissions import ROLES  # (standard library only: the roles' names)


@click.group("users", invoke_without_command=True, short_help="Accounts: add, give a role, list.")
@click.pass_context
def users_group(ctx: click.Context) -> None:
    """The accounts that log in to the dashboard (docs/web.md)."""
    help_without_command(ctx)


@users_group.command("add", short_help="Create an account (an admin, say).")
@click.argument("name")
@click.option(
    "--role",
    type=click.Choice(list(ROLES)),
    default="user",
    show_default=True,
    help="What the account may do.",
)
@click.option(
    "--password",
    prompt=True,
    hide_input=True,
    confirmation_prompt=True,
    envvar="ARENA_PASSWORD",
    help="The password (asked for when not given; or $ARENA_PASSWORD).",
)
@url_option
def users_add_command(name: str, role: str, password: str, url: str | None) -> None:
    """Create the account NAME with ROLE; or, if NAME is a bot owner stored without a
    password (by `arena bots add --owner NAME`, or `reference` on a demo), give it this
    password and ROLE: it can log in from then on. The first admin is made this way."""
    from arena.service.accounts import NameTakenError, add_account, password_hasher
    from arena.service.permissions import OPERATOR

    with open_store(url) as store:
        try:
            added = add_account(
                store, OPERATOR, name, password, role=role, hasher=password_hasher()
            )
        except NameTakenError as exc:
            raise NameTakenError(f"{exc}: `arena users role NAME ROLE` changes a role") from None
    account = added.account
    if added.claimed:
        click.echo(
            f"{account.name}: password set on the existing user (it had none: a bot "
            f"owner); it can log in now ({account.role})"
        )
    else:
        click.echo(f"{account.name}: account created ({account.role})")


@users_group.command("role", short_help="Give an account a role.")
@click.argument("name")
@click.argument("role", type=click.Choice(list(ROLES)))
@url_option
def users_role_command(name: str, role: str, url: str | None) -> None:
    """Give the user NAME the ROLE (user, organiser or admin); its open sessions have the
    new role from their next request."""
    from arena.service.accounts import give_role
    from arena.service.permissions import OPERATOR

    with open_store(url) as store:
        account = give_role(store, OPERATOR, name, role)
    click.echo(f"{account.name}: role {account.role}")


@users_group.command("list", short_help="List the accounts.")
@url_option
def users_list_command(url: str | None) -> None:
    """Every user: name, role, and whether it can log in (has a password)."""
    from arena.store.accounts import user_rows

    with open_store(url) as store:
        rows = user_rows(store)
    if not rows:
        click.echo("no users")
    for name, role, can_log_in in rows:
        click.echo(f"{name}  {role}  {'can log in' if can_log_in else 'no password'}")
