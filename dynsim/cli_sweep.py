"""`dynsim sweep jsl|mim`: every config option of `compare` as one value or a comma-separated list; the grid of
their product (times --seeds) runs through `dynsim.sweeps.sweep`, stored and resumable in --out."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import typing

from .cli import EXIT_AGREE, EXIT_DISAGREE, EXIT_INTERRUPTED, _Parser

SINGLE = {"z", "partitions"}  # their own syntax has commas: one value per sweep


def _list_of(kind, name: str):
    def parse(text: str) -> list:
        items = [x.strip() for x in text.split(",")]
        if not items or any(x == "" for x in items):
            raise argparse.ArgumentTypeError(f"{text!r} is not a value or a comma-separated list of values")
        try:
            return [kind(x) for x in items]
        except (ValueError, argparse.ArgumentTypeError):
            raise argparse.ArgumentTypeError(f"{text!r}: every item must be {kind.__name__}") from None

    parse.__name__ = f"list of {kind.__name__}"
    return parse


def _axis_options(parser: argparse.ArgumentParser, setting: str) -> None:
    from .cli import _json_option, _z_option

    if setting == "mim":
        from dynsim.mim.config import FIELD_HELP, MIMConfig as cls
    else:
        from dynsim.jsl.config import FIELD_HELP, JSLConfig as cls
    hints = typing.get_type_hints(cls)
    group = parser.add_argument_group(f"{setting.upper()} configuration: each {cls.__name__} field takes one value or "
                                      "a comma-separated list (a list is a swept axis)")
    for f in dataclasses.fields(cls):
        hint = str(hints[f.name])
        kind = int if "int" in hint else float if "float" in hint else str
        if f.name in SINGLE:
            kind = {"z": _z_option, "partitions": _json_option}[f.name]
            typ, extra = (lambda k: (lambda t: [k(t)]))(kind), " (one value, not a list)"
        else:
            typ, extra = _list_of(kind, f.name), ""
        default = "derived" if f.default is None else f.default
        group.add_argument(f"--{f.name.replace('_', '-')}", dest=f.name, type=typ, default=argparse.SUPPRESS,
                           help=f"{FIELD_HELP[f.name]}{extra} (default: {default})")
    parser.set_defaults(config_class=cls)


def sweep_parser(sub) -> None:
    sw = sub.add_parser("sweep", allow_abbrev=False, help="run a grid of configurations: table, phase diagrams, resumable",
                        description="Run every point of a grid at one level and summarize each: event times, final "
                                    "loss and error, and with --level both the checker's verdict and largest error. "
                                    "Finished points are stored in --out (keyed by a versioned hash of their "
                                    "configuration) and skipped when the command runs again, so an interrupted sweep "
                                    "resumes where it stopped. Writes table.csv, sweep.json, heatmap-*.png and "
                                    "points/. Exit 0 when done (and, with --level both, every point agrees), 1 when a "
                                    "point disagrees, 2 on invalid input, 130 when interrupted.")
    sw_sub = sw.add_subparsers(dest="setting", required=True, parser_class=_Parser)
    for setting, text in (("jsl", "JSL grid, e.g. --D 16,36 --C 4 --p 3,5 --q 0.2,0.3,0.4 --seeds 4"),
                          ("mim", "MIM grid, e.g. --P 16,64 --kappa-c 0.6,0.9 --kappa-s 0.4 --mask-ratio 0.5,0.75")):
        p = sw_sub.add_parser(setting, allow_abbrev=False, help=text, description=sw.description)
        _axis_options(p, setting)
        run = p.add_argument_group("sweep")
        run.add_argument("--seeds", type=int, default=1, help="seeds per grid point: seed, seed+1, ... (default: 1)")
        run.add_argument("--level", choices=("reduced", "full", "both"), default="reduced",
                         help="reduced dynamics, full-matrix GD, or both and the checker (default: reduced)")
        run.add_argument("--out", default="dynsim-sweep", metavar="DIR",
                         help="results store and outputs (default: ./dynsim-sweep)")
        run.add_argument("--resume", action="store_true",
                         help="skip the points already stored in --out (the default; the flag only says so)")
        run.add_argument("--force", action="store_true", help="recompute points already stored (default: resume)")
        run.add_argument("--chunk-size", type=int, default=16,
                         help="points per unit of work, written when it finishes: the most an interruption loses "
                              "(default: 16)")
        run.add_argument("--batch-size", type=int, default=8,
                         help="points per vmapped batch inside a chunk; bounds memory (default: 8)")
        run.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                         help="run the chunks on this existing Dask scheduler")
        run.add_argument("--workers", type=int, default=None,
                         help="run the chunks on a local Dask cluster of this many worker processes")
        run.add_argument("--heatmap", type=_list_of(str, "heatmap"), default=None, metavar="NAME,...",
                         help="summaries to draw as heatmaps over two swept axes (default: "
                              + ("T1_attention, final_error, patch_association" if setting == "jsl" else
                                 "two_phase_local, own_area_attention_min, final_loss") + " of the level run)")
        run.add_argument("--heatmap-axes", type=_list_of(str, "heatmap-axes"), default=None, metavar="X,Y",
                         help="the two swept axes of the heatmaps (default: the first two with several values)")
        full = p.add_argument_group("levels")
        full.add_argument("--mode", choices=("exact", "sampled") + (("realistic",) if setting == "jsl" else ()),
                          default="exact", help="full level: as in `dynsim compare` (default: exact)")
        full.add_argument("--replicates", type=int, default=None, help="full level in --mode sampled (default: 8)")
        full.add_argument("--confidence", type=float, default=0.999, help="checker's Monte Carlo band (default: 0.999)")
        if setting == "jsl":
            full.add_argument("--max-configurations", type=int, default=None,
                              help="reduced level: largest configuration sum enumerated; above it the sum is truncated "
                                   "or sampled (default: 3,000,000)")
            full.add_argument("--tail-target", type=float, default=None,
                              help="reduced level: largest probability a truncation may drop (default: 1e-12)")
            full.add_argument("--mc-samples", type=int, default=None,
                              help="reduced level: sampled configurations when neither fits (default: 100000)")
        else:
            full.add_argument("--approximation", choices=("none", "pp_frozen", "mean_field", "pp_frozen+mean_field"),
                              default=None, help="reduced level (default: none for K = 1, pp_frozen for K > 1)")
            full.add_argument("--approximation-tolerance", type=float, default=None,
                              help="checker's tolerance with an approximation (default: 0.05)")


def run(args) -> int:
    from dynsim import sweeps

    cls = args.config_class
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)}
    axes = {k: v for k, v in given.items() if len(v) > 1 and k != "seed"}
    base = {k: v[0] for k, v in given.items() if len(v) == 1}
    if "seed" in given and len(given["seed"]) > 1:
        raise ValueError(f"--seed = {given['seed']} is invalid: give one base seed and --seeds N for N seeds")
    names = sweeps.SETTINGS[args.setting].reduced_options + sweeps.SETTINGS[args.setting].full_options
    options = {k: getattr(args, k) for k in names if getattr(args, k, None) is not None}
    if options.get("approximation") == "none":
        options["approximation"] = None
    if options.get("replicates") is not None and args.mode != "sampled":
        raise ValueError(f"--replicates = {args.replicates} is invalid with --mode {args.mode}: it is for --mode sampled")
    if args.resume and args.force:
        raise ValueError("--resume and --force are exclusive: resume skips stored points, force recomputes them")
    if not 0.0 < args.confidence < 1.0:
        raise ValueError(f"--confidence = {args.confidence} is invalid: must lie strictly between 0 and 1")
    try:
        result = sweeps.sweep(args.setting, axes, base=base, seeds=args.seeds, level=args.level, options=options,
                              out=args.out, force=args.force, chunk_size=args.chunk_size, batch_size=args.batch_size,
                              scheduler=args.scheduler, workers=args.workers, heatmaps=args.heatmap,
                              heatmap_axes=args.heatmap_axes,
                              log=lambda line: print(f"dynsim sweep {args.setting}: {line}; store {args.out}",
                                                     file=sys.stderr))
    except KeyboardInterrupt:
        print(f"dynsim: interrupted; every finished chunk is stored in {args.out}/points: run the same command again "
              "to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(summary_text(result, list(axes)))
    disagree = [r for r in result.rows if r.get("verdict") == "DISAGREE"]
    return EXIT_DISAGREE if disagree else EXIT_AGREE


def summary_text(result, axes: list[str]) -> str:
    """A compact table of the sweep (the full one is table.csv)."""
    level_cols = [c for c in result.columns if c.endswith(("final_loss", "final_error", "T1_attention",
                                                           "two_phase_local", "own_area_attention_min"))]
    cols = axes + ["seed"] + level_cols + [c for c in ("sum_method", "verdict", "max_error") if c in result.columns]

    def cell(v):
        return "-" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)

    widths = [max(len(c), *(len(cell(r.get(c))) for r in result.rows)) for c in cols]
    lines = ["  ".join(c.rjust(w) for c, w in zip(cols, widths))]
    lines += ["  ".join(cell(r.get(c)).rjust(w) for c, w in zip(cols, widths)) for r in result.rows]
    diverged = [r for r in result.rows if any(r.get(c) is not None for c in r if c.endswith("nonfinite_from_step"))]
    if diverged:
        lines.append(f"{len(diverged)} points diverged (a *_nonfinite_from_step column in table.csv says from which "
                     "step): lower eta there")
    lines.append(f"{len(result.rows)} points: {len(result.computed)} computed now, {len(result.reused)} reused from the "
                 f"store; wrote " + ", ".join(sorted(result.files.values())))
    return "\n".join(lines)
