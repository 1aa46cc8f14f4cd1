"""``arena ratings --rules R``: every stored bot version's rating under a rule set (the fit
is arena.service.results.refit_ratings; docs/ratings.md "Stored ratings")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from arena.cli.common import console, plural, resolve_rules, url_option
from arena.engine.rules import Rules

# The database and the fit (SQLAlchemy, scipy) are imported as the command runs, not by its
# --help (tests/cli/test_lazy.py).
if TYPE_CHECKING:
    from rich.table import Table

    from arena.service.results import StoredRating
    from arena.store.db import Store


@click.command("ratings", short_help="Ratings of the stored bot versions under a rule set.")
@click.option("--rules", "rules_name", required=True, metavar="NAME_OR_FILE", help="Rule set.")
@url_option
@click.option(
    "--refit/--no-refit",
    default=True,
    show_default=True,
    help="Re-fit over every stored game first (seconds for a million games), or show the "
    "ratings the last re-fit stored.",
)
def ratings_command(rules_name: str, url: str | None, refit: bool) -> None:
    """Rate every bot version over all done matches of all tournaments played under the rule
    set (Elo scale, mean 1500, 95% intervals; docs/ratings.md). A re-fit replaces the stored
    ratings and adds a point to each version's rating history. Exit status 0, also when no
    games are rated yet (that is said on one line); 64 for an unknown rule set, 69 for a
    database that cannot be used."""
    from arena.store.db import open_store

    rules = resolve_rules(rules_name)
    store = open_store(url)
    try:
        if refit:
            _show_refit(store, rules)
        else:
            _show_stored(store, rules)
    finally:
        store.close()


def _show_refit(store: Store, rules: Rules) -> None:
    from arena.service.results import refit_ratings

    try:
        fit = refit_ratings(store, rules)
    except LookupError:
        _nothing(rules)
        return
    if not fit.ratings:
        _nothing(rules, fit.games)
        return
    console().print(_table(fit.ratings, f"Ratings under {rules.name}"))
    click.echo(
        f"{plural(fit.games, 'game')}, {plural(len(fit.ratings), 'bot')}, "
        f"fitted in {fit.seconds:.2f} s"
    )


def _show_stored(store: Store, rules: Rules) -> None:
    from arena.service.results import rating_table

    try:
        ratings = rating_table(store, rules)
    except LookupError:
        ratings = []
    if not ratings:
        click.echo(
            f"no ratings stored under {rules.name} yet: "
            f"run `arena ratings --rules {rules.name}` to fit them"
        )
        return
    console().print(_table(ratings, f"Ratings under {rules.name}"))
    fitted = f"{ratings[0].computed:%Y-%m-%d %H:%M:%S}"
    click.echo(f"{plural(len(ratings), 'bot')}, as fitted at {fitted} UTC (--no-refit)")


def _nothing(rules: Rules, games: int = 0) -> None:
    played = f" ({plural(games, 'game')}, all by one bot version)" if games else ""
    click.echo(f"no rated games under {rules.name} yet{played}")


def _rank(rating: StoredRating) -> str:
    """The rank, with the ranks consistent with the data when they are known and differ."""
    best, worst = rating.rank_best, rating.rank_worst
    if best is None or worst is None or best == worst:
        return str(rating.rank)
    return f"{rating.rank} ({best}-{worst})"


def _table(ratings: Sequence[StoredRating], title: str) -> Table:
    from rich.table import Table

    ranges = any(_rank(rating) != str(rating.rank) for rating in ratings)
    caption = "rank (best-worst): the ranks the data cannot rule out (95%)" if ranges else None
    table = Table(title=title, caption=caption)
    for column in ("rank", "bot", "rating", "95% interval", "games"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for rating in ratings:
        table.add_row(
            _rank(rating),
            rating.bot,
            f"{rating.rating:.0f}",
            f"{rating.low:.0f} to {rating.high:.0f}",
            str(rating.games),
        )
    return table
