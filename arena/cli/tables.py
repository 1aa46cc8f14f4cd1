"""Tables shared by local and stored tournaments: standings with ratings, the crosstable."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

if TYPE_CHECKING:  # (the fit's modules, numpy and scipy, are imported by who fits)
    from arena.compete.localrun import Standings
    from arena.compete.ratings import Rating


def standings_table(standings: Standings, ratings: dict[str, Rating]) -> Table:
    table = Table(title="Standings")
    for column in ("rank", "entrant", "games", "wins", "win %", "points", "forfeits"):
        table.add_column(column, justify="left" if column == "entrant" else "right")
    table.add_column("rating (95% interval)", justify="right")
    for rank, stats in enumerate(standings.ranking(), start=1):
        rating = ratings.get(stats.name)
        table.add_row(
            str(rank),
            stats.name,
            str(stats.games),
            str(stats.wins),
            f"{100 * stats.win_rate:.1f}",
            str(stats.points),
            str(stats.forfeits),
            ""
            if rating is None
            else f"{rating.rating:.0f} ({rating.low:.0f} to {rating.high:.0f})",
        )
    return table


def crosstable(standings: Standings) -> Table:
    entrants = [stats.entrant for stats in standings.ranking()]
    table = Table(title="Crosstable: row's score against column (wins + half draws)")
    table.add_column("")
    for entrant in entrants:
        table.add_column(entrant, justify="right")
    for a in entrants:
        cells = [
            f"{standings.score(a, b):g}" if a != b and standings.met[a].get(b) else ""
            for b in entrants
        ]
        table.add_row(a, *cells)
    return table
