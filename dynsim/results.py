"""A setting's judged claims and measurements (`Results`, a list) and how they read as text: the
short view `check-theorems` prints (one row per claim: its verdict, its statistic with the interval,
the threshold and one short reason; the measurements' values; why each claim that does not hold
does not; the count last), and the whole account that --verbose adds and theorems.json keeps
(statement, reading, regime and premises, the threshold's derivation, the negative control, the
details)."""

from __future__ import annotations

import html
from typing import Any, Iterable, Optional

from dynsim import statistic as stats
from dynsim.claims import (
    FAILS,
    HOLDS,
    NOT_APPLICABLE,
    VERDICTS,
    Claim,
    Item,
    Measurement,
    claims_of,
    exit_code,
    fmt,
    to_dict,
)
from dynsim.statistic import Statistic

__all__ = ["Results", "table", "account"]

# The short reason column's width; the whole reason is on its own line below the table
REASON = 44


def table(items: Iterable[Item], verbose: bool = False, where: str = "--verbose") -> str:
    """The short view; `verbose` adds every claim's account; `where` says where else it is."""
    items = list(items)
    cs, ms = claims_of(items), [m for m in items if isinstance(m, Measurement)]
    rows = [
        (c.claim, c.verdict.upper() if c.verdict == FAILS else c.verdict, statistic(c))
        + (f"{c.relation} {fmt(c.threshold)}", reason(c))
        for c in cs
    ]
    head = ("claim", "verdict", "statistic", "threshold", "at / why")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    out = [_row(head, widths)]
    out += ["-" * (sum(widths) + 4 * 2 + len(head[4]))] + [_row(r, widths) for r in rows]
    if any(not c.statistic.exact for c in cs):
        out += [
            "statistic: the measured value and its interval; a claim holds when the interval",
            "  lies wholly on the threshold's side, fails only when it lies wholly on the other",
        ]
    if ms:
        name = max(len(m.name) for m in ms)
        out += ["", "measurements (reported, not judged):"]
        out += [f"  {m.name:<{name}}  {m.short_value()}" for m in ms]
    if any(not c.holds for c in cs):
        out += ["", "why:"] + [f"  {c.claim}: {c.why()}" for c in cs if not c.holds]
    if verbose:
        for c in cs:
            out += ["", *account(c)]
        out += [""] + [f"{m.name}: {fmt(m.value)}  ({m.description})" for m in ms]
    out += ["", count(cs)]
    if not verbose and cs:
        out.append(
            f"each claim's statement, reading, regime and premises, derivation and details: {where}"
        )
    return "\n".join(out)


def statistic(c: Claim) -> str:
    """The measured value with its interval, or "exact"."""
    return f"{fmt(c.measured)} {_span(c.statistic)}"


def reason(c: Claim) -> str:
    """Where a holding claim was measured (`Claim.at`), else the start of why it does not hold."""
    text = c.at if c.holds else c.why().removeprefix("not evaluated: ")
    return text if len(text) <= REASON else text[: REASON - 3] + "..."


def count(cs: list[Claim]) -> str:
    """How many claims hold, the others by verdict, and the exit status that says so."""
    held = sum(c.holds for c in cs)
    rest = [
        f"{v}: {', '.join(c.claim for c in cs if c.verdict == v)}"
        for v in VERDICTS
        if v != HOLDS and any(c.verdict == v for c in cs)
    ]
    return (
        f"{held} of {len(cs)} claims hold"
        + "".join(f"; {r}" for r in rest)
        + (f" (exit {exit_code(cs)})")
    )


def account(c: Claim) -> list[str]:
    """Everything a claim records, one field a line."""
    lines = [
        f'{c.claim} [{c.verdict}]: "{c.statement}"',
        f"  reading ({c.reading_class}): {c.reading}",
        f"  regime: {c.regime}",
        f"  measured: {c.statistic.describe()}",
        f"  threshold: {c.relation} {fmt(c.threshold)}, {c.derivation}",
        f"  negative control: {c.negative_control}",
    ]
    lines += [f"  - {a}" for a in c.assumptions]
    if c.details:
        lines.append("  details: " + ", ".join(f"{k} = {fmt(v)}" for k, v in c.details.items()))
    if c.verdict == NOT_APPLICABLE:
        lines.append(f"  {c.why()}")
    return lines


def _row(cells, widths) -> str:
    return "  ".join(f"{x:<{w}}" for x, w in zip(cells, widths + [0])).rstrip()


def _span(stat: Statistic) -> str:
    """The interval cell: "exact", or "[low, high]"."""
    return stats.EXACT if stat.exact else f"[{fmt(stat.low)}, {fmt(stat.high)}]"


class Results(list):
    """What a setting's `check_theorems` returns: its claims and measurements, in order (a list),
    with a one-line repr (how many claims hold, which do not), an HTML table for Jupyter, and the
    module's `table`, `to_dict` and `exit_code` as methods."""

    @property
    def claims(self) -> list[Claim]:
        return claims_of(self)

    @property
    def measurements(self) -> list[Measurement]:
        return [m for m in self if isinstance(m, Measurement)]

    def table(self, verbose: bool = False) -> str:
        return table(self, verbose)

    def to_dict(self, config: Optional[dict] = None) -> dict[str, Any]:
        return to_dict(self, config)

    @property
    def exit_code(self) -> int:
        return exit_code(self)

    def __repr__(self) -> str:
        cs = self.claims
        held = sum(c.holds for c in cs)
        rest = "; ".join(
            f"{v}: {', '.join(c.claim for c in cs if c.verdict == v)}"
            for v in VERDICTS[1:]
            if any(c.verdict == v for c in cs)
        )
        return (
            f"Results({held} of {len(cs)} claims hold{'; ' + rest if rest else ''}; "
            f"{len(self.measurements)} measurements)"
        )

    def _repr_html_(self) -> str:
        """Claims (verdict, measured with its interval, threshold, why) then measurements, names
        escaped: the text table's columns."""

        def row(cells) -> str:
            return "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>"

        head = ("claim", "reading", "measured", "interval", "", "threshold", "verdict", "at", "why")
        out = ["<table>", "<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
        out += [
            row(
                (c.claim, c.reading_class, fmt(c.measured), _span(c.statistic), c.relation)
                + (fmt(c.threshold),)
                + (c.verdict, c.at, c.why())
            )
            for c in self.claims
        ]
        out.append("</table>")
        if self.measurements:
            out += ["<p>measurements (reported, not judged)</p>", "<table>"]
            out += [row((m.name, m.short_value())) for m in self.measurements]
            out.append("</table>")
        return "\n".join(out)
