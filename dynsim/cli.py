"""The `dynsim` command line: `dynsim compare jsl`, `dynsim derive jsl`.

Exit codes: 0 the levels agree, 1 they disagree, 2 invalid input, 130 interrupted.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
import typing
import warnings

EXIT_AGREE, EXIT_DISAGREE, EXIT_INVALID, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    """Invalid command-line input: reported on one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump, exit 2
        raise UsageError(f"{self.prog}: {message}")


def _config_options(parser: argparse.ArgumentParser) -> None:
    from dynsim.jsl.config import DTYPES, FIELD_HELP, PARTITIONS, TEMPERATURES, JSLConfig

    choices = {"temperature": TEMPERATURES, "partition": PARTITIONS, "dtype": DTYPES}
    hints = typing.get_type_hints(JSLConfig)
    group = parser.add_argument_group("JSL configuration (one option per JSLConfig field)")
    for f in dataclasses.fields(JSLConfig):
        hint = str(hints[f.name])
        kind = int if "int" in hint else float if "float" in hint else str
        default = "derived" if f.default is None else f.default
        group.add_argument(f"--{f.name.replace('_', '-')}", dest=f.name, type=kind, choices=choices.get(f.name),
                           default=argparse.SUPPRESS, help=f"{FIELD_HELP[f.name]} (default: {default})")


def build_parser() -> argparse.ArgumentParser:
    from dynsim import __version__

    parser = _Parser(prog="dynsim", allow_abbrev=False,
                     description="Run the reduced and the full-matrix training dynamics of a one-layer "
                                 "transformer and compare them.")
    parser.add_argument("--version", action="version", version=f"dynsim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    cmp_ = sub.add_parser("compare", allow_abbrev=False, help="run both levels and compare them",
                          description="Run the reduced dynamics and full-matrix GD on one problem, compare them "
                                      "observable by observable, print a table and write report.json, "
                                      "trajectories.npz and compare.png. Exit 0 on agreement, 1 on "
                                      "disagreement, 2 on invalid input.")
    cmp_sub = cmp_.add_subparsers(dest="setting", required=True, parser_class=_Parser)
    jsl = cmp_sub.add_parser("jsl", allow_abbrev=False, help="Jelassi, Sander, Li (2022): positional-attention ViT",
                             description="Compare reduced (alpha, gamma, rho) population dynamics with full-matrix "
                                         "GD on the JSL model (T).")
    _config_options(jsl)
    run = jsl.add_argument_group("run")
    run.add_argument("--mode", choices=("exact", "sampled"), default="exact",
                     help="full level: exact population loss by enumeration, or a fresh batch of N samples "
                          "each step (default: exact)")
    run.add_argument("--replicates", type=int, default=None,
                     help="independent runs in --mode sampled, for the Monte Carlo band (default: 8)")
    run.add_argument("--confidence", type=float, default=0.999,
                     help="confidence of the Monte Carlo band, family-wise over recorded steps and observables "
                          "(default: 0.999)")
    run.add_argument("--out", default="dynsim-out", metavar="DIR",
                     help="directory for report.json, trajectories.npz, compare.png (default: ./dynsim-out)")
    run.add_argument("--json", action="store_true", help="print the report as JSON instead of the table")
    run.add_argument("--no-plot", action="store_true", help="do not draw compare.png")

    der = sub.add_parser("derive", allow_abbrev=False, help="print the symbolic reduced loss and its gradients")
    der_sub = der.add_subparsers(dest="setting", required=True, parser_class=_Parser)
    djsl = der_sub.add_parser("jsl", allow_abbrev=False,
                              description="Print the per-configuration reduced JSL loss built in sympy and its "
                                          "derivatives in alpha, gamma, rho (D, beta, tau, nu stay symbols).")
    djsl.add_argument("--C", type=int, default=3, help="patches per set (default: 3)")
    djsl.add_argument("--p", type=int, default=3, help="activation degree, odd >= 3 (default: 3)")
    djsl.add_argument("--latex", action="store_true", help="print LaTeX instead of plain text")
    return parser


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _compare_jsl(args) -> int:
    import dynsim
    import full.jsl
    import reduced.jsl
    from dynsim import plotting, progress
    from dynsim.trajectory import save_many

    fields = {f.name for f in dataclasses.fields(dynsim.JSLConfig)}
    cfg = dynsim.JSLConfig(**{k: v for k, v in vars(args).items() if k in fields})
    full.jsl.check(cfg, args.mode, args.replicates)  # fail before any work
    if not 0.0 < args.confidence < 1.0:
        raise ValueError(f"--confidence = {args.confidence} is invalid: must lie strictly between 0 and 1")
    os.makedirs(args.out, exist_ok=True)
    timings = {}
    t0 = time.perf_counter()
    _log(f"reduced: population dynamics, {cfg.steps} steps (D={cfg.D}, C={cfg.C}, {cfg.dtype}) ...")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with progress.bar(cfg.steps, "reduced"):
            red = reduced.jsl.simulate(cfg)
        timings["reduced_seconds"] = time.perf_counter() - t0
        _log(f"reduced: done in {timings['reduced_seconds']:.1f} s")
        t1 = time.perf_counter()
        _log(f"full: {args.mode} gradient descent on the {cfg.D}x{cfg.D} matrix A and v in R^{cfg.d} ...")
        with progress.bar(cfg.steps, "full"):
            ful = full.jsl.simulate(cfg, mode=args.mode, replicates=args.replicates)
        timings["full_seconds"] = time.perf_counter() - t1
        _log(f"full: done in {timings['full_seconds']:.1f} s")
    for w in caught:
        _log(f"warning: {w.message}")
    report = dynsim.compare(red, ful, confidence=args.confidence)
    out = {**report.to_dict(), "timings": timings, "reduced_meta": red.meta, "full_meta": ful.meta}
    path = os.path.join(args.out, "report.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(out, fh, indent=2, default=str)
    os.replace(tmp, path)
    save_many(os.path.join(args.out, "trajectories.npz"), {"reduced": red, "full": ful})
    if not args.no_plot:
        plotting.compare_plot({"reduced": red, "full": ful}, os.path.join(args.out, "compare.png"),
                              title=f"JSL D={cfg.D} C={cfg.C} q={cfg.q} p={cfg.p} temperature={cfg.temperature} "
                                    f"eta={cfg.eta} ({cfg.dtype}, {red.meta['device']})")
    if args.json:
        print(json.dumps(out, indent=2, default=str))
    else:
        print(report.table())
        print(f"wrote {args.out}/report.json, trajectories.npz" + ("" if args.no_plot else ", compare.png"))
    return EXIT_AGREE if report.passed else EXIT_DISAGREE


def _derive_jsl(args) -> int:
    from reduced.jsl.symbolic import render

    if args.C < 2:
        raise ValueError(f"--C = {args.C} is invalid: must be >= 2")
    if args.p < 3 or args.p % 2 == 0:
        raise ValueError(f"--p = {args.p} is invalid: must be an odd integer >= 3")
    print(render(args.C, args.p, latex=args.latex))
    return EXIT_AGREE


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command == "compare":
            return _compare_jsl(args)
        return _derive_jsl(args)
    except (UsageError, ValueError) as exc:
        print(f"dynsim: error: {exc}" if not str(exc).startswith("dynsim") else f"{exc}", file=sys.stderr)
        return EXIT_INVALID
    except KeyboardInterrupt:
        print("dynsim: interrupted; files already written are complete (writes are atomic)", file=sys.stderr)
        return EXIT_INTERRUPTED


def main_entry() -> None:
    """Console-script entry point: exit with `main`'s code."""
    sys.exit(main())


if __name__ == "__main__":
    main_entry()
