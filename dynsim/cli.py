"""The `dynsim` command line: `compare jsl|mim`, `derive jsl|mim`, `figure jsl-fig4|jsl-fig2|mim-phases|mim-attention`,
`transfer jsl`, `check-theorems jsl|mim`, `sweep jsl|mim` (the MIM commands live in `cli_mim`, sweeps in `cli_sweep`).

Exit codes: 0 the levels agree (or every claim holds, or the figure was written), 1 they disagree (or a claim
fails), 2 invalid input, 130 interrupted.
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


def _config_options(parser: argparse.ArgumentParser, defaults: typing.Optional[dict] = None, setting: str = "jsl") -> None:
    """One option per config field (JSLConfig or MIMConfig); `defaults` overrides the config's defaults for this
    command (shown in --help)."""
    if setting == "mim":
        from dynsim.mim.config import DTYPES, FIELD_HELP, PARTITIONS, MIMConfig as cls

        choices = {"partition": PARTITIONS, "dtype": DTYPES}
        kinds = {"z": _z_option, "partitions": _json_option}
    else:
        from dynsim.jsl.config import DTYPES, FIELD_HELP, PARTITIONS, TEMPERATURES, JSLConfig as cls

        choices = {"temperature": TEMPERATURES, "partition": PARTITIONS, "dtype": DTYPES}
        kinds = {}
    defaults = defaults or {}
    hints = typing.get_type_hints(cls)
    group = parser.add_argument_group(f"{setting.upper()} configuration (one option per {cls.__name__} field)")
    for f in dataclasses.fields(cls):
        hint = str(hints[f.name])
        kind = kinds.get(f.name, int if "int" in hint else float if "float" in hint else str)
        default = defaults.get(f.name, "derived" if f.default is None else f.default)
        group.add_argument(f"--{f.name.replace('_', '-')}", dest=f.name, type=kind, choices=choices.get(f.name),
                           default=argparse.SUPPRESS, help=f"{FIELD_HELP[f.name]} (default: {default})")
    parser.set_defaults(config_defaults=defaults, config_class=cls)


def _z_option(text: str):
    """--z: const | uniform:L:U | V1:P1,V2:P2,..."""
    try:
        if text == "const":
            return text
        if text.startswith("uniform:"):
            _, lo, hi = text.split(":")
            return ("uniform", float(lo), float(hi))
        return [tuple(float(x) for x in item.split(":")) for item in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not const, uniform:L:U or V1:P1,V2:P2,...") from None


def _json_option(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not valid JSON ({exc.msg})") from None


def _config(args):
    """The config of the command line (JSLConfig or MIMConfig): the command's defaults, then the options given."""
    cls = args.config_class
    fields = {f.name for f in dataclasses.fields(cls)}
    given = {k: v for k, v in vars(args).items() if k in fields}
    return cls(**{**args.config_defaults, **given})


def _int_list(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of integers") from None
    if not values:
        raise argparse.ArgumentTypeError("the list is empty")
    return values


# Recipes (docs/jsl.md): Figure 4 and transfer follow jsl-derivations §6 (D=16, C=4, q=0.5, unit temperature).
FIG4_DEFAULTS = dict(D=16, C=4, q=0.5, nu=1e-3, temperature="unit", eta=0.02, N=20000, n_test=20000, omega=0.01,
                     steps=10000, record_every=100)
# Figure 2: the measured setting (d=8; eta=0.05 diverged, 0.005 is stable), docs/jsl.md §10.
FIG2_DEFAULTS = dict(D=16, C=4, d=8, nu=1e-3, temperature="unit", eta=0.005, N=2048, n_test=2048, omega=0.01,
                     steps=20000, record_every=100)
# Transfer: the Figure 4 recipe pretrained longer on fewer samples. At N=20000 and 10,000 steps the pretrained A
# has patch association but small entries (gap 0.056 vs 0.063 at N~=8); at N=4000 and 50,000 steps the orbit means
# approach the idealized gamma ~ 1, rho ~ -0.35 (jsl-derivations §6), which is what the transfer needs.
TRANSFER_DEFAULTS = dict(FIG4_DEFAULTS, N=4000, steps=50000, record_every=500)
CHECK_DEFAULTS = dict(temperature="unit", steps=60000, record_every=100, N=4000, n_test=8192)


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
    run.add_argument("--mode", choices=("exact", "sampled", "realistic"), default="exact",
                     help="full level: exact population loss by enumeration; a fresh batch of N samples each step; "
                          "or realistic (E): N fixed samples, random start (omega), held-out test set (default: exact)")
    run.add_argument("--replicates", type=int, default=None,
                     help="independent runs in --mode sampled, for the Monte Carlo band (default: 8)")
    run.add_argument("--seeds", type=int, default=None,
                     help="independent seeds in --mode realistic, one vmapped program (default: 8)")
    run.add_argument("--ladder", type=_int_list, default=None, metavar="N1,N2,...",
                     help="--mode realistic: training-set sizes for the approach table (Theorem 4.2) "
                          "(default: N/16, N/4, N)")
    run.add_argument("--confidence", type=float, default=0.999,
                     help="confidence of the Monte Carlo band, family-wise over recorded steps and observables "
                          "(default: 0.999)")
    run.add_argument("--out", default="dynsim-out", metavar="DIR",
                     help="directory for report.json, trajectories.npz, compare.png (default: ./dynsim-out)")
    run.add_argument("--json", action="store_true", help="print the report as JSON instead of the table")
    run.add_argument("--no-plot", action="store_true", help="do not draw compare.png")
    _method_options(run)

    from dynsim import cli_mim

    cli_mim.compare_parser(cmp_sub)
    fig_sub = _figure_parsers(sub)
    cli_mim.figure_parsers(fig_sub)
    _transfer_parser(sub)
    ck_sub = _check_parser(sub)
    cli_mim.check_parser(ck_sub)
    from dynsim import cli_sweep

    cli_sweep.sweep_parser(sub)

    der = sub.add_parser("derive", allow_abbrev=False, help="print the symbolic reduced loss and its gradients")
    der_sub = der.add_subparsers(dest="setting", required=True, parser_class=_Parser)
    djsl = der_sub.add_parser("jsl", allow_abbrev=False,
                              description="Print the per-configuration reduced JSL loss built in sympy and its "
                                          "derivatives in alpha, gamma, rho (D, beta, tau, nu stay symbols).")
    djsl.add_argument("--C", type=int, default=3, help="patches per set (default: 3)")
    djsl.add_argument("--p", type=int, default=3, help="activation degree, odd >= 3 (default: 3)")
    djsl.add_argument("--latex", action="store_true", help="print LaTeX instead of plain text")
    cli_mim.derive_parser(der_sub)
    return parser


def _method_options(group) -> None:
    """--method and --t-max of `compare jsl|mim` (docs/flow.md)."""
    group.add_argument("--method", choices=("gd", "flow"), default="gd",
                       help="reduced level: gd (the recurrence, exact against full GD) or flow (the gradient-flow ODE, "
                            "eta -> 0 limit, compared with full GD as an approximation: they differ by O(eta)) "
                            "(default: gd)")
    group.add_argument("--t-max", type=float, default=None, metavar="T",
                       help="--method flow: end time of the flow in units of eta * steps (default: eta * steps)")


def _reduced_flow_or_gd(args, cfg, simulate, **kw):
    """The reduced level of `compare`: GD, or with --method flow the flow saved at GD's recorded times (beyond
    eta * steps, log-spaced up to --t-max). Checks --t-max before any work."""
    if args.method == "gd":
        if args.t_max is not None:
            raise ValueError(f"--t-max = {args.t_max} is invalid with --method gd: it is the flow's end time "
                             "(use --method flow)")
        return lambda: simulate(cfg, **kw)
    from reduced.jsl import flow

    t_max = cfg.eta * cfg.steps if args.t_max is None else args.t_max
    if not t_max > 0:
        raise ValueError(f"--t-max = {t_max} is invalid: must be > 0 (default eta * steps; steps = {cfg.steps})")
    times = flow.gd_times(cfg.eta, cfg.steps, cfg.record_every, t_max)
    flow.options(cfg.eta, t_max, times=times, default_t_max=t_max)  # validate before any work
    return lambda: simulate(cfg, method="flow", t_max=t_max, times=times, **kw)


def _out_options(group, default: str = "dynsim-out") -> None:
    group.add_argument("--out", default=default, metavar="DIR", help=f"output directory (default: ./{default})")


def _figure_parsers(sub) -> None:
    fig = sub.add_parser("figure", allow_abbrev=False, help="reproduce a figure of a paper (PNG + data as npz)")
    fig_sub = fig.add_subparsers(dest="figure", required=True, parser_class=_Parser)
    f4 = fig_sub.add_parser("jsl-fig4", allow_abbrev=False, help="JSL Figure 4: a realistic run learns patch association",
                            description="JSL Figure 4 from a realistic run (E): (1) the same-set mask, (2) the learned A, "
                                        "(3) test error against steps with the GLM and Bayes reference lines, "
                                        "(4) cos(w*, v) against steps. Writes jsl-fig4.png and jsl-fig4.npz. Defaults: "
                                        "the recipe of jsl-derivations §6 (D=16, C=4, q=0.5, unit temperature, N=20000).")
    _config_options(f4, FIG4_DEFAULTS)
    g = f4.add_argument_group("run")
    g.add_argument("--seeds", type=int, default=1, help="seeds (the panels show seed 0's A; curves are seed means) "
                                                         "(default: 1)")
    _out_options(g)
    f2 = fig_sub.add_parser("jsl-fig2", allow_abbrev=False,
                            help="JSL Figure 2: low test error without patch association on CNN-labelled Gaussian data",
                            description="JSL Figure 2: iid standard Gaussian patches labelled by a one-hidden-layer CNN "
                                        "with cubic activation over the sets S_l; the positional-attention model is "
                                        "trained from a random start. Writes jsl-fig2.png and jsl-fig2.npz.")
    _config_options(f2, FIG2_DEFAULTS)
    g = f2.add_argument_group("run")
    g.add_argument("--seeds", type=int, default=4, help="seeds, >= 2 (default: 4)")
    _out_options(g)
    return fig_sub


def _transfer_parser(sub) -> None:
    tr = sub.add_parser("transfer", allow_abbrev=False, help="pretrain, then fine-tune v on a new feature (Section 5)")
    tr_sub = tr.add_subparsers(dest="setting", required=True, parser_class=_Parser)
    t = tr_sub.add_parser("jsl", allow_abbrev=False,
                          description="JSL Section 5 (Theorems 5.1, 5.2): pretrain on the realistic problem (E), then "
                                      "on a downstream feature fine-tune only v, from N(0, omega^2), on N~ samples "
                                      "with A frozen: (a) the pretrained A, (b) A at initialization, (c) a GLM "
                                      "baseline. Prints test error against N~ and writes transfer.png, transfer.json.")
    _config_options(t, TRANSFER_DEFAULTS)
    g = t.add_argument_group("transfer")
    g.add_argument("--overlap", type=float, default=0.0, help="<w~, w*> of the downstream feature, in [-1, 1] "
                                                              "(default: 0)")
    g.add_argument("--n-tilde", type=_int_list, default=None, metavar="N1,N2,...",
                   help="downstream sample sizes (default: 8,16,32,64,128,256)")
    g.add_argument("--seeds", type=int, default=8, help="fine-tuning seeds per N~ (default: 8)")
    g.add_argument("--finetune-steps", type=int, default=None, help="GD steps of the fine-tuning (default: the library's)")
    g.add_argument("--finetune-eta", type=float, default=None, help="fine-tuning learning rate (default: the library's)")
    _out_options(g)


def _check_parser(sub) -> None:
    ck = sub.add_parser("check-theorems", allow_abbrev=False, help="evaluate each lemma and theorem on runs")
    ck_sub = ck.add_subparsers(dest="setting", required=True, parser_class=_Parser)
    c = ck_sub.add_parser("jsl", allow_abbrev=False,
                          description="Evaluate JSL Lemmas 4.1-4.3 and Theorems 3.1, 4.1, 4.2, 5.1 on runs of one "
                                      "configuration, each with its assumptions declared. Prints a table (claim, "
                                      "measured value, threshold, holds or fails); --json prints {\"claims\": [...]}. "
                                      "Exit 0 when every evaluated claim holds, 1 when one fails, 2 on invalid input.")
    _config_options(c, CHECK_DEFAULTS)
    g = c.add_argument_group("run")
    g.add_argument("--seeds", type=int, default=4, help="seeds of the realistic run and the GLM (default: 4)")
    g.add_argument("--json", action="store_true", help="print {\"claims\": [...]} as JSON instead of the table")
    _out_options(g)
    return ck_sub


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _write_json(path: str, data) -> None:
    from dynsim.trajectory import _atomic_write_text

    _atomic_write_text(path, json.dumps(data, indent=2, default=str))


def _run_logged(label: str, total: int, fn, timings: dict, key: str):
    """Run `fn()` under a progress bar, time it, and pass its warnings to stderr."""
    from dynsim import progress

    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with progress.bar(total, label):
            out = fn()
    timings[key] = time.perf_counter() - t0
    for w in caught:
        _log(f"warning: {w.message}")
    _log(f"{label}: done in {timings[key]:.1f} s")
    return out


def _events_section(red, ful) -> tuple[dict, str]:
    from dynsim.jsl import events

    ev = events.compare_events(red, ful)
    return ev, events.table(ev)


def _compare_jsl(args) -> int:
    import dynsim
    import full.jsl
    import reduced.jsl
    from dynsim import plotting
    from dynsim.jsl import reference

    cfg = _config(args)
    if args.mode == "realistic":
        if args.method != "gd" or args.t_max is not None:
            raise ValueError(f"--method {args.method} / --t-max are for --mode exact or sampled, not --mode realistic")
        return _compare_realistic(cfg, args)
    if args.seeds is not None or args.ladder is not None:
        raise ValueError(f"--seeds and --ladder are for --mode realistic, not --mode {args.mode}")
    full.jsl.check(cfg, args.mode, args.replicates)  # fail before any work
    _check_confidence(args.confidence)
    reduced_run = _reduced_flow_or_gd(args, cfg, reduced.jsl.simulate)
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    what = "population dynamics" if args.method == "gd" else "gradient flow (the eta -> 0 limit; O(eta) from GD)"
    _log(f"reduced: {what}, {cfg.steps} steps (D={cfg.D}, C={cfg.C}, {cfg.dtype}) ...")
    red = _run_logged("reduced", cfg.steps, reduced_run, timings, "reduced_seconds")
    _log(f"full: {args.mode} gradient descent on the {cfg.D}x{cfg.D} matrix A and v in R^{cfg.d} ...")
    ful = _run_logged("full", cfg.steps, lambda: full.jsl.simulate(cfg, mode=args.mode, replicates=args.replicates),
                      timings, "full_seconds")
    report = dynsim.compare(red, ful, confidence=args.confidence)
    ev, ev_table = _events_section(red, ful)
    lines = reference.lines(cfg)
    out = {**report.to_dict(), "events": ev, "reference_lines": lines, "timings": timings,
           "reduced_meta": red.meta, "full_meta": ful.meta}
    return _emit_compare(
        args, report, out, {"reduced": red, "full": ful},
        lambda path: plotting.compare_plot({"reduced": red, "full": ful}, path,
                                           title=f"JSL D={cfg.D} C={cfg.C} q={cfg.q} p={cfg.p} "
                                                 f"temperature={cfg.temperature} eta={cfg.eta} ({cfg.dtype}, "
                                                 f"{red.meta['device']})"),
        [ev_table, "reference lines (exact): " + ", ".join(f"{k} = {v:.4g}" for k, v in lines.items())])


def _emit_compare(args, report, out: dict, trajectories: dict, plot, extra: list) -> int:
    """The outputs of every `compare`: report.json (`out`), trajectories.npz, compare.png via `plot(path)` unless
    --no-plot; then `out` as JSON (--json) or the report's table, the `extra` lines and what was written.
    Exit 0 when the levels agree, 1 when they disagree."""
    from dynsim.trajectory import save_many

    _write_json(os.path.join(args.out, "report.json"), out)
    save_many(os.path.join(args.out, "trajectories.npz"), trajectories)
    if not args.no_plot:
        plot(os.path.join(args.out, "compare.png"))
    if args.json:
        print(json.dumps(out, indent=2, default=str))
    else:
        print(report.table())
        for line in extra:
            print(line)
        print(f"wrote {args.out}/report.json, trajectories.npz" + ("" if args.no_plot else ", compare.png"))
    return EXIT_AGREE if report.passed else EXIT_DISAGREE


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"--confidence = {confidence} is invalid: must lie strictly between 0 and 1")


def _compare_realistic(cfg, args) -> int:
    import full.jsl
    from dynsim import plotting
    from dynsim.jsl import approach, reference

    if args.replicates is not None:
        raise ValueError("--replicates is for --mode sampled; --mode realistic takes --seeds")
    seeds = 8 if args.seeds is None else args.seeds
    full.jsl.check(cfg, "realistic", seeds=seeds)
    if seeds < 2:
        raise ValueError(f"--seeds = {seeds} is invalid in compare: the standard error needs at least 2 seeds")
    _check_confidence(args.confidence)
    ladder = sorted(set(args.ladder)) if args.ladder else approach.ladder(cfg.N)
    for n in ladder:
        cfg.replace(N=n)  # validates every size before any work
    if cfg.N not in ladder:
        ladder = sorted(set(ladder) | {cfg.N})
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    runs: dict = {}
    _log(f"realistic (E) at N = {', '.join(map(str, ladder))}, {seeds} seeds each, and reduced (P) from each "
         f"seed's projected start ...")
    # one bar per N of the ladder: each run reports its own step count
    result = _run_logged("realistic", cfg.steps, lambda: approach.approach(cfg, ladder, seeds, args.confidence, runs),
                         timings, "seconds")
    red, ful = runs[cfg.N]
    report = result.reports[ladder.index(cfg.N)]
    ev, ev_table = _events_section(red, ful)
    lines = reference.lines(cfg)
    out = {**report.to_dict(), "approach": result.to_dict(), "events": ev, "reference_lines": lines,
           "timings": timings, "reduced_meta": red.meta, "full_meta": ful.meta}
    trajectories = {**{f"reduced_N{n}": r for n, (r, _) in runs.items()},
                    **{f"full_N{n}": f for n, (_, f) in runs.items()}}
    return _emit_compare(
        args, report, out, trajectories,
        lambda path: plotting.compare_plot({"reduced": red, "realistic": ful}, path,
                                           title=f"JSL realistic N={cfg.N} ({seeds} seeds) vs reduced, D={cfg.D} "
                                                 f"C={cfg.C} q={cfg.q} temperature={cfg.temperature} eta={cfg.eta}"),
        [result.table(), ev_table,
         "reference lines (exact): " + ", ".join(f"{k} = {v:.4g}" for k, v in lines.items()),
         f"realistic at T: test error {ful['test_error'][-1]:.4f}, cos(w*, v) {ful['cos_v'][-1]:.4f}, "
         f"patch association {ful['patch_association'][-1]:.3f}"])


def _figure(args) -> int:
    import numpy as np

    import full.jsl
    from dynsim import plotting
    from dynsim.jsl import association, partition, reference
    from dynsim.trajectory import save_many

    cfg = _config(args)
    full.jsl.check(cfg, "realistic", seeds=args.seeds)
    if args.figure == "jsl-fig2":
        full.jsl.fig2.check(cfg)
        if args.seeds < 2:
            raise ValueError(f"--seeds = {args.seeds} is invalid for jsl-fig2: must be >= 2 (the standard error needs two runs)")
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    mask = partition.same_set_mask(cfg).astype(float)
    name = args.figure
    if name == "jsl-fig4":
        _log(f"realistic (E): D={cfg.D}, C={cfg.C}, N={cfg.N}, {cfg.steps} steps, {args.seeds} seed(s) ...")
        traj, final = _run_logged("realistic", cfg.steps, lambda: full.jsl.realistic.run(cfg, seeds=args.seeds),
                                  timings, "seconds")
        lines = reference.lines(cfg)
        A = np.asarray(final["A"][0])
        plotting.figure4(mask, A, traj.steps, traj["test_error"], traj["cos_v"], os.path.join(args.out, f"{name}.png"),
                         references=lines, test_error_se=traj.observables.get("test_error_se"),
                         cos_v_se=traj.observables.get("cos_v_se"),
                         title=f"JSL Figure 4 (realistic): D={cfg.D} C={cfg.C} N={cfg.N} q={cfg.q} "
                               f"temperature={cfg.temperature} eta={cfg.eta}, {args.seeds} seed(s)")
        summary = {"test_error_at_T": float(traj["test_error"][-1]), "cos_v_at_T": float(traj["cos_v"][-1]),
                   "patch_association_at_T": float(traj["patch_association"][-1]), **lines}
    else:
        _log(f"Figure 2 data (CNN teacher on Gaussian patches): D={cfg.D}, C={cfg.C}, N={cfg.N}, {cfg.steps} steps ...")
        traj, final = _run_logged("realistic", cfg.steps, lambda: full.jsl.fig2.run_fig2(cfg, seeds=args.seeds),
                                  timings, "seconds")
        lines = {}
        A = np.asarray(final["A"][0])
        chance = association.chance(cfg)
        plotting.figure2(mask, A, traj.steps, traj["test_error"], traj["patch_association"],
                         os.path.join(args.out, f"{name}.png"), chance=chance,
                         title=f"JSL Figure 2 (CNN-labelled Gaussian patches): D={cfg.D} C={cfg.C} N={cfg.N} "
                               f"temperature={cfg.temperature} eta={cfg.eta}")
        summary = {"test_error_at_T": float(traj["test_error"][-1]),
                   "patch_association_at_T": float(traj["patch_association"][-1]), "patch_association_chance": chance}
    save_many(os.path.join(args.out, f"{name}.npz"), {"realistic": traj})
    _write_npz(os.path.join(args.out, f"{name}-final.npz"), {"mask": mask, **{k: np.asarray(v) for k, v in final.items()}})
    _write_json(os.path.join(args.out, f"{name}.json"), {"summary": summary, "timings": timings, "meta": traj.meta})
    for k, v in summary.items():
        print(f"{k:<28} {v:.4g}")
    print(f"wrote {args.out}/{name}.png, {name}.npz (trajectory), {name}-final.npz (mask, A, v), {name}.json")
    return EXIT_AGREE


def _write_npz(path: str, arrays: dict) -> None:
    from dynsim.trajectory import _atomic_savez

    _atomic_savez(path, arrays)


def _transfer(args) -> int:
    import full.jsl
    import full.jsl.transfer
    from dynsim import plotting
    from dynsim.jsl import reference

    cfg = _config(args)
    full.jsl.check(cfg, "realistic", seeds=1)
    kwargs = {"overlap": args.overlap, "seeds": args.seeds}
    if args.n_tilde is not None:
        kwargs["n_tilde"] = tuple(args.n_tilde)
    if args.finetune_steps is not None:
        kwargs["steps"] = args.finetune_steps
    if args.finetune_eta is not None:
        kwargs["eta"] = args.finetune_eta
    full.jsl.transfer.check(cfg, **kwargs)  # every transfer argument, before the pretraining
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    _log(f"pretraining (realistic, N={cfg.N}, {cfg.steps} steps), then fine-tuning v on a new feature ...")
    result = _run_logged("pretrain", cfg.steps, lambda: full.jsl.transfer.transfer(cfg, **kwargs), timings, "seconds")
    lines = reference.lines(cfg)
    labels = {"pretrained": "(a) pretrained A, fine-tune v", "initial": "(b) A at initialization, fine-tune v",
              "glm": "(c) GLM baseline"}
    curves = {labels[k]: (result.mean[k], result.se[k]) for k in labels}
    plotting.transfer_plot(result.n_tilde, curves, os.path.join(args.out, "transfer.png"), references=lines,
                           title=f"JSL transfer: D={cfg.D} C={cfg.C} q={cfg.q}, overlap {args.overlap}, "
                                 f"{args.seeds} seeds")
    _write_json(os.path.join(args.out, "transfer.json"), {**result.to_dict(), "reference_lines": lines,
                                                           "timings": timings})
    print(result.table())
    print("reference lines (exact, for the downstream feature): " + ", ".join(f"{k} = {v:.4g}" for k, v in lines.items()))
    print(f"wrote {args.out}/transfer.png, transfer.json")
    return EXIT_AGREE


def _check_theorems(args) -> int:
    import full.jsl
    from dynsim.jsl import theorems

    cfg = _config(args)
    full.jsl.check(cfg, "realistic", seeds=args.seeds)
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    claims = _run_logged("claims", cfg.steps, lambda: theorems.check_theorems(cfg, seeds=args.seeds, log=_log),
                         timings, "seconds")
    text = theorems.to_json(claims)
    _write_json(os.path.join(args.out, "theorems.json"), {**json.loads(text), "timings": timings,
                                                          "config": cfg.to_dict()})
    print(text if args.json else theorems.table(claims))
    return EXIT_DISAGREE if any(c.holds is False for c in claims) else EXIT_AGREE


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
        from dynsim import cli_mim, cli_sweep

        if args.command == "sweep":
            return cli_sweep.run(args)
        if getattr(args, "setting", None) == "mim" or str(getattr(args, "figure", "")).startswith("mim-"):
            return cli_mim.run(args)
        commands = {"compare": _compare_jsl, "derive": _derive_jsl, "figure": _figure, "transfer": _transfer,
                    "check-theorems": _check_theorems}
        return commands[args.command](args)
    except (UsageError, ValueError) as exc:
        print(f"dynsim: error: {exc}" if not str(exc).startswith("dynsim") else f"{exc}", file=sys.stderr)
        return EXIT_INVALID
    except KeyboardInterrupt:
        print("dynsim: interrupted; files already written are complete (writes are atomic)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader of stdout went away (e.g. `| head`): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_AGREE
    except Exception as exc:  # Ctrl-C inside a compiled run's progress callback arrives wrapped by JAX
        from dynsim import progress

        if not progress.interrupted(exc):
            raise
        print("dynsim: interrupted; files already written are complete (writes are atomic)", file=sys.stderr)
        return EXIT_INTERRUPTED


def main_entry() -> None:
    """Console-script entry point: exit with `main`'s code."""
    sys.exit(main())


if __name__ == "__main__":
    main_entry()
