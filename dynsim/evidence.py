"""The evidence figure of `check-theorems` (theorems.png): one small panel per claim showing what
the one verdict rule read, so that a referee sees why each verdict is what it is. A claim judged on
a trend over a ladder (its details hold a `dynsim.trends.Trend` as a dict) shows the ladder's
points, the fitted line and the lines of its slope interval's ends; any other claim shows its
statistic and interval against the threshold, the statement's side shaded."""

from __future__ import annotations

import math
import textwrap

import numpy as np
from matplotlib.ticker import NullFormatter

from dynsim.claims import FAILS, HOLDS, NOT_APPLICABLE, Claim, claims_of, fmt
from dynsim.plotting import plt, save, titled

# The colour of each verdict: its panel's title and its statistic
COLOURS = {HOLDS: "tab:green", FAILS: "tab:red", NOT_APPLICABLE: "0.45"}
UNDECIDED = "tab:orange"  # not evaluated (inconclusive or not measured)
TREND_KEYS = frozenset({"x", "y", "logx", "logy", "slope", "intercept", "slope_low", "slope_high"})
COLUMNS = 3
# characters a line of a panel's reading (7-point text on a 4.2-inch panel: about 0.55 x 7 points a
# character, `dynsim.figtext.CHAR_WIDTH`, so about 80 fit; 75 leaves a margin)
READING_WIDTH = 75


def draw(items, path, title: str = "", metas=()) -> None:
    """theorems.png: a panel per claim (`panel`), at most COLUMNS to a row, written atomically to
    `path`."""
    cs = claims_of(items)
    cols = min(COLUMNS, max(1, len(cs)))
    rows = max(1, math.ceil(len(cs) / cols))
    fig, axes = plt.subplots(
        rows, cols, figsize=(max(4.2 * cols, 6.0), 3.0 * rows), constrained_layout=True,
        squeeze=False,
    )  # fmt: skip
    cells = list(axes.ravel())
    for ax, c in zip(cells, cs):
        panel(ax, c)
    for ax in cells[len(cs) :]:
        ax.set_axis_off()
    titled(fig, title, metas)
    save(fig, path)


def panel(ax, c: Claim) -> None:
    """One claim: its name and verdict as the title, then its trend or its interval."""
    colour = COLOURS.get(c.verdict, UNDECIDED)
    ax.set_title(f"{c.claim}: {c.verdict}", fontsize=9, color=colour, fontweight="bold")
    trend = trend_of(c)
    if trend is not None:
        _trend(ax, trend, c, colour)
    else:
        _interval(ax, c, colour)
    if c.reading:  # what was measured, under the axis' own label
        label = ax.get_xlabel()
        ax.set_xlabel(f"{label}\n{textwrap.fill('reading: ' + c.reading, READING_WIDTH)}")
    if c.at:
        ax.text(0.02, 0.97, c.at, transform=ax.transAxes, fontsize=6.5, va="top", color="0.25")
    if not c.holds and c.why():
        ax.text(
            0.02, 0.02, textwrap.fill(c.why(), 60), transform=ax.transAxes, fontsize=5.5,
            va="bottom", color="0.25", bbox=dict(fc="white", ec="none", alpha=0.8),
        )  # fmt: skip


def trend_of(c: Claim):
    """The trend a claim was judged on (a details value with a Trend's fields), or None."""
    for v in c.details.values():
        if isinstance(v, dict) and TREND_KEYS <= set(v):
            return v
    return None


def _interval(ax, c: Claim, colour: str) -> None:
    """The statistic and its interval on a horizontal axis, the threshold a vertical line, the
    statement's side shaded green and the other red."""
    stat = c.statistic
    shown = [x for x in (stat.value, stat.low, stat.high, c.threshold) if math.isfinite(x)]
    if not shown:
        ax.text(0.5, 0.5, "not measured", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    lo, hi = min(shown), max(shown)
    pad = 0.25 * (hi - lo) or 0.5 * (abs(hi) or 1.0)
    ax.set_xlim(lo - pad, hi + pad)
    _sides(ax, c.relation, c.threshold)
    if math.isfinite(stat.value):
        low = stat.low if math.isfinite(stat.low) else lo - pad
        high = stat.high if math.isfinite(stat.high) else hi + pad
        ax.errorbar(
            [stat.value], [0.5], xerr=[[stat.value - low], [high - stat.value]], fmt="o",
            color=colour, capsize=4, label="exact" if stat.exact else stat.how,
        )  # fmt: skip
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    ax.set_xlabel(f"measured {stat.describe()}   {c.relation} {fmt(c.threshold)}", fontsize=7)
    ax.tick_params(labelsize=7)


def _sides(ax, relation: str, threshold: float) -> None:
    """The threshold as a line; the side where the statement holds green, the other red."""
    if not math.isfinite(threshold):
        return
    left, right = ax.get_xlim()
    ax.axvline(threshold, color="k", lw=1)
    below = relation in ("<", "<=")
    if relation == "==":
        return
    ax.axvspan(left, threshold, color="tab:green" if below else "tab:red", alpha=0.08, lw=0)
    ax.axvspan(threshold, right, color="tab:red" if below else "tab:green", alpha=0.08, lw=0)
    ax.set_xlim(left, right)


def _trend(ax, trend: dict, c: Claim, colour: str) -> None:
    """The ladder's points on the trend's scales, the fitted line and the lines of the slope
    interval's ends through the points' centre."""
    x, y = np.asarray(trend["x"], float), np.asarray(trend["y"], float)
    u = np.log(x) if trend["logx"] else x
    grid = np.linspace(u.min(), u.max(), 50)
    centre = (float(np.mean(u)), trend["intercept"] + trend["slope"] * float(np.mean(u)))
    for slope, style, label in (
        (trend["slope"], "-", f"slope {fmt(trend['slope'])}"),
        (trend["slope_low"], ":", None),
        (trend["slope_high"], ":", f"interval [{fmt(trend['slope_low'])}, "
         f"{fmt(trend['slope_high'])}]"),
    ):  # fmt: skip
        if not math.isfinite(slope):
            continue
        v = centre[1] + slope * (grid - centre[0])
        xs = np.exp(grid) if trend["logx"] else grid
        ax.plot(xs, np.exp(v) if trend["logy"] else v, style, color=colour, lw=1, label=label)
    ax.plot(x, y, "o", color="k", ms=4)
    ax.set_xscale("log" if trend["logx"] else "linear")
    ax.set_yscale("log" if trend["logy"] else "linear")
    ax.set_xticks(x, [fmt(v) for v in x])  # the ladder's sizes, no minor labels
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(f"ladder ({'log ' if trend['logx'] else ''}size)", fontsize=7)
    ax.set_ylabel("judged quantity" + (" (log)" if trend["logy"] else ""), fontsize=7)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=6, title=f"slope {c.relation} {fmt(c.threshold)}", title_fontsize=6)
