"""The words of figures: config names as the papers write them, summary names without their level
prefix, titles wrapped to the figure's width, and the provenance footer (dtype, device, versions),
which titles leave out. Pure text but for `footer`, which places its line on a figure."""

from __future__ import annotations

import dataclasses
import textwrap
from typing import Iterable, Optional

# Greek letters spelled out in config names (eta, kappa_c, sigma_A): drawn as the letter
GREEK = (
    "alpha",
    "beta",
    "gamma",
    "Gamma",
    "delta",
    "Delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "kappa",
    "lambda",
    "Lambda",
    "mu",
    "nu",
    "xi",
    "Xi",
    "rho",
    "sigma",
    "tau",
    "phi",
    "chi",
    "psi",
    "omega",
)
LEVELS = ("reduced", "full")
# config fields that say how a run is carried out, not which problem it is: left out of titles
BOOKKEEPING = ("steps", "record_every", "seed", "dtype", "batch")
# The footer's font size in points; the strip of the figure it takes: 1.2 font sizes a line (the
# line spacing) and a 3-point margin
FOOTER_POINTS = 6
# An average character of DejaVu Sans is about 0.55 of the font size wide (digits 0.64, lower-case
# letters 0.5-0.6): the wrap width of a title, in characters, from the figure's width
CHAR_WIDTH = 0.55


def symbol(name: str) -> str:
    """A config field's name as the papers write it: a spelled-out Greek letter, with the part after
    "_" as its index, in mathtext (eta -> $\\eta$, kappa_c -> $\\kappa_{c}$, sigma_A ->
    $\\sigma_{A}$), a one-letter name in italics (q -> $q$), any other name with spaces for its
    underscores (mask_ratio -> mask ratio)."""
    head, _, index = name.partition("_")
    if head in GREEK or (len(head) == 1 and head.isalpha()):
        base = "\\" + head if head in GREEK else head
        return f"${base}_{{{index}}}$" if index else f"${base}$"
    return name.replace("_", " ")


def assignment(name: str, value) -> str:
    """ "name=value" in the papers' symbols (`symbol`): $\\eta$=0.05, but mask ratio 0.75 for a name
    in words; numbers in their shortest form."""
    shown = f"{value:g}" if isinstance(value, float) else str(value)
    label = symbol(name)
    return f"{label}={shown}" if label.startswith("$") else f"{label} {shown}"


def config_title(name: str, description: str, config) -> str:
    """A figure's title from a setting (its name, the citation before the ":" of its description)
    and a dataclass config: the problem's fields in the papers' symbols, bookkeeping left out."""
    cite = description.partition(":")[0].strip()
    values = [
        assignment(f.name, getattr(config, f.name))
        for f in dataclasses.fields(config)
        if f.name not in BOOKKEEPING and getattr(config, f.name) is not None
    ]
    head = f"{name.upper()} ({cite})" if cite else name.upper()
    return f"{head}: reduced vs full, " + ", ".join(values)


def summary_name(name: str) -> tuple[str, Optional[str]]:
    """(name without its level prefix, the level or None): "reduced_T1_attention" ->
    ("T1_attention", "reduced")."""
    for level in LEVELS:
        if name.startswith(level + "_"):
            return name[len(level) + 1 :], level
    return name, None


def provenance(meta: dict) -> str:
    """What produced a run, for a footer: dtype, device and the versions of dynsim and JAX (from a
    Trajectory's meta, `dynsim.environment.meta`)."""
    versions = meta.get("versions") or {}
    parts = [meta.get("dtype"), meta.get("device")]
    parts += [f"{k} {versions[k]}" for k in ("dynsim", "jax") if k in versions]
    return ", ".join(str(p) for p in parts if p)


def without_provenance(title: str, metas: Iterable[dict]) -> str:
    """`title` without a "(dtype, device)" group of any of `metas`: the footer carries it."""
    for meta in metas:
        title = title.replace(f" ({meta.get('dtype')}, {meta.get('device')})", "")
    return title


def wrapped(text: str, width_inches: float, fontsize: float) -> str:
    """`text` broken at spaces into lines that fit `width_inches` at `fontsize` points (at least 30
    characters a line)."""
    chars = max(30, int(width_inches * 72 / (CHAR_WIDTH * fontsize)))
    return "\n".join(textwrap.fill(line, chars) for line in text.split("\n"))


def footer(fig, text: str):
    """A small grey line at the bottom left of `fig` (the provenance), in a strip its layout engine
    (constrained layout) keeps free of the axes; the Text (None for no text)."""
    if not text:
        return None
    text = wrapped(text, fig.get_figwidth(), FOOTER_POINTS)
    strip = (1.2 * FOOTER_POINTS * (text.count("\n") + 1) + 3) / (fig.get_figheight() * 72)
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.set(rect=(0, strip, 1, 1 - strip))
    return fig.text(
        0.005,
        0.005,
        text,
        fontsize=FOOTER_POINTS,
        color="0.45",
        ha="left",
        va="bottom",
    )
