"""The MIM commands of the `dynsim` CLI: `compare mim`, `derive mim`, `figure mim-phases|mim-attention`,
`check-theorems mim`. Exit codes as in `dynsim.cli`: 0 agree / hold / written, 1 disagree / a claim fails,
2 invalid input, 130 interrupted."""

from __future__ import annotations

import json
import os

from dynsim.cli import (EXIT_AGREE, EXIT_DISAGREE, _check_confidence, _config, _config_options, _emit_compare, _log,
                        _method_options, _out_options, _reduced_flow_or_gd, _run_logged, _write_json)

APPROX_CHOICES = ("none", "pp_frozen", "mean_field", "pp_frozen+mean_field")
# mim-phases: the spec's suggested settings (mim-model-spec §10, "Parameters"): Delta = +0.4 and Delta = -0.2.
PHASES_DEFAULTS = dict(P=1024, mask_ratio=0.5, eta=1.0, steps=3000, record_every=5)
ATTENTION_DEFAULTS = dict(steps=1000, record_every=50)


def compare_parser(cmp_sub) -> None:
    m = cmp_sub.add_parser("mim", allow_abbrev=False,
                           help="Huang, Wen, Chi, Liang (2024): masked image modeling, FP and PP correlations",
                           description="Compare the reduced per-query MIM dynamics (FP correlations A, PP correlations "
                                       "B, Lemmas 5.1-5.2) with full-matrix GD on the literal d x d matrix Q. With K = 1 "
                                       "the reduction is exact and both levels agree to float rounding; with K > 1 the "
                                       "reduced level needs the 'pp_frozen' approximation and the report gives its "
                                       "deviation from full and the PP magnitude it drops.")
    _config_options(m, setting="mim")
    run = m.add_argument_group("run")
    run.add_argument("--mode", choices=("exact", "sampled"), default="exact",
                     help="full level: exact population loss (every cluster, latent vector and mask) or a fresh "
                          "batch of N samples each step (default: exact)")
    run.add_argument("--approximation", choices=APPROX_CHOICES, default=None,
                     help="reduced level: none (exact; K = 1 only), pp_frozen (B = 0), mean_field (counts at their "
                          "means) or both (default: none for K = 1, pp_frozen for K > 1)")
    run.add_argument("--replicates", type=int, default=None, help="independent runs in --mode sampled (default: 8)")
    run.add_argument("--confidence", type=float, default=0.999,
                     help="confidence of the Monte Carlo band in --mode sampled (default: 0.999)")
    run.add_argument("--approximation-tolerance", type=float, default=0.05,
                     help="with an approximation: allowed |difference| as a fraction of each observable's largest "
                          "magnitude (a stated choice, not a derived bound) (default: 0.05)")
    _out_options(run)
    run.add_argument("--json", action="store_true", help="print the report as JSON instead of the table")
    run.add_argument("--no-plot", action="store_true", help="do not draw compare.png")
    _method_options(run)


def derive_parser(der_sub) -> None:
    d = der_sub.add_parser("mim", allow_abbrev=False,
                           description="Print the per-query MIM loss built in sympy (own-area and other-area views) "
                                       "and its derivatives in A_n, B_n, B_self, A_i, B_i.")
    d.add_argument("--latex", action="store_true", help="print LaTeX instead of plain text")


def figure_parsers(fig_sub) -> None:
    ph = fig_sub.add_parser("mim-phases", allow_abbrev=False,
                            help="MIM: FP and PP trajectories for Delta > 0 (two phases) and Delta < 0 (one phase)",
                            description="Reduced MIM dynamics (default approximation: mean_field, which keeps the PP "
                                        "correlations) at kappa = (0.9, 0.4) (Delta = +0.4) and (0.6, 0.4) "
                                        "(Delta = -0.2), side by side on a log-time axis: FP correlations of a local "
                                        "query (target, global, another local area) and of a global query, the "
                                        "predicted switch level -(Delta/2) log P, and the PP correlations. Writes "
                                        "mim-phases.png, mim-phases.npz, mim-phases.json.")
    _config_options(ph, PHASES_DEFAULTS, setting="mim")
    g = ph.add_argument_group("run")
    g.add_argument("--kappa-pos", default="0.9,0.4", metavar="KC,KS", help="kappas of the Delta > 0 run (default: 0.9,0.4)")
    g.add_argument("--kappa-neg", default="0.6,0.4", metavar="KC,KS", help="kappas of the Delta < 0 run (default: 0.6,0.4)")
    g.add_argument("--approximation", choices=APPROX_CHOICES, default="mean_field",
                   help="reduced approximation (default: mean_field; none is exact but only feasible for small P)")
    _out_options(g)
    at = fig_sub.add_parser("mim-attention", allow_abbrev=False,
                            help="MIM: attention maps of the trained full model and its attention diversity",
                            description="Train the full MIM model (exact population GD), draw the attention of a local "
                                        "and a global query on the patch grid, and rank the trained attention by the "
                                        "attention diversity of Section 6 (top-k) and the average attention distance "
                                        "against uniform and collapsed attention. Writes mim-attention.png and "
                                        "mim-attention.json.")
    _config_options(at, ATTENTION_DEFAULTS, setting="mim")
    g = at.add_argument_group("run")
    g.add_argument("--top-k", type=int, default=None, help="k of the diversity metric (default: min(10, P // 4))")
    _out_options(g)


def check_parser(ck_sub) -> None:
    c = ck_sub.add_parser("mim", allow_abbrev=False,
                          description="Evaluate the MIM claims on runs: Theorem 4.1 (area-wide attention at "
                                      "convergence), two phases for local patches when Delta > 0 with the switch "
                                      "point (Lemma 5.3), one phase when Delta < 0 and for global patches, the initial "
                                      "rate ratio against (1 - gamma) P^Delta, PP small against FP, and the trained "
                                      "model's attention diversity against collapsed attention (Section 6). About "
                                      "25 s. Prints a table "
                                      "(claim, measured, threshold, holds or fails); exit 0 when every claim holds, 1 "
                                      "when one fails, 2 on invalid input.")
    g = c.add_argument_group("the Delta > 0 and Delta < 0 runs (reduced, pp_frozen+mean_field)")
    g.add_argument("--P", type=int, default=1024, help="patches, a perfect square (default: 1024)")
    g.add_argument("--steps", type=int, default=1000, help="GD steps, recorded every steps/100 (default: 1000)")
    g.add_argument("--eta", type=float, default=1.0, help="learning rate (default: 1.0)")
    g.add_argument("--mask-ratio", type=float, default=0.5, help="masking ratio gamma (default: 0.5)")
    g.add_argument("--kappa-pos", default="0.9,0.4", metavar="KC,KS", help="kappas of the Delta > 0 run (default: 0.9,0.4)")
    g.add_argument("--kappa-neg", default="0.6,0.4", metavar="KC,KS", help="kappas of the Delta < 0 run (default: 0.6,0.4)")
    g.add_argument("--eps", type=float, default=0.05, help="Theorem 4.1: own-area attention >= 1 - eps (default: 0.05)")
    g = c.add_argument_group("output")
    g.add_argument("--json", action="store_true", help="print {\"claims\": [...]} as JSON instead of the table")
    _out_options(g)


def run(args) -> int:
    """Dispatch a parsed MIM command."""
    if args.command == "compare":
        return _compare(args)
    if args.command == "derive":
        from reduced.mim.symbolic import render

        print(render(latex=args.latex))
        return EXIT_AGREE
    if args.command == "figure":
        return _phases(args) if args.figure == "mim-phases" else _attention(args)
    return _check(args)


def _approx(value):
    return None if value in (None, "none") else value


def _compare(args) -> int:
    import dynsim
    import full.mim
    import reduced.mim
    from dynsim.mim import plotting

    cfg = _config(args)
    approx = _approx(args.approximation) if args.approximation is not None else (None if cfg.K == 1 else "pp_frozen")
    reduced.mim.check(cfg, approx)  # fail before any work
    full.mim.check(cfg, args.mode, args.replicates)
    _check_confidence(args.confidence)
    if not args.approximation_tolerance > 0:
        raise ValueError(f"--approximation-tolerance = {args.approximation_tolerance} is invalid: must be > 0")
    reduced_run = _reduced_flow_or_gd(args, cfg, reduced.mim.simulate, approximation=approx)
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    label = reduced.mim.label(reduced.mim.approximations(approx))
    sizes = [[len(a) for a in cl] for cl in cfg.areas]
    _log(f"MIM: P={cfg.P}, K={cfg.K}, areas {sizes}, |M|={cfg.masked}, Delta={cfg.delta:.3f}, d={cfg.d}, {cfg.dtype}")
    red = _run_logged("reduced", cfg.steps, reduced_run, timings, "reduced_seconds")
    _log(f"full: {args.mode} gradient descent on the {cfg.d}x{cfg.d} matrix Q ...")
    ful = _run_logged("full", cfg.steps, lambda: full.mim.simulate(cfg, mode=args.mode, replicates=args.replicates),
                      timings, "full_seconds")
    report = dynsim.compare(red, ful, confidence=args.confidence, approximation_tolerance=args.approximation_tolerance)
    out = {**report.to_dict(), "delta": cfg.delta, "area_sizes": sizes, "reduced_approximation": label,
           "timings": timings, "reduced_meta": red.meta, "full_meta": ful.meta}
    kappas = cfg.effective_kappas
    return _emit_compare(
        args, report, out, {"reduced": red, "full": ful},
        lambda path: plotting.compare_plot({"reduced": red, "full": ful}, cfg, path,
                                           title=f"MIM P={cfg.P} K={cfg.K} areas {sizes[0]} gamma={cfg.mask_ratio} "
                                                 f"eta={cfg.eta} Delta={cfg.delta:.2f} ({cfg.dtype}, "
                                                 f"{red.meta['device']})"),
        [f"information gap Delta = {cfg.delta:.3f} (effective kappas {kappas[0]:.3f}, {kappas[1]:.3f}); "
         f"reduced level: {label}" + ("" if args.method == "gd" else ", gradient flow (O(eta) from GD)")])


def _signed_configs(base, args) -> tuple:
    """`base` with the kappas of --kappa-pos and of --kappa-neg (each "KC,KS"): the Delta > 0 and Delta < 0 configs."""
    out = []
    for option, text in (("--kappa-pos", args.kappa_pos), ("--kappa-neg", args.kappa_neg)):
        try:
            kc, ks = (float(x) for x in text.split(","))
        except ValueError:
            raise ValueError(f"{option} = {text!r} is invalid: expected two numbers KC,KS, e.g. 0.9,0.4") from None
        out.append(base.replace(kappa_c=kc, kappa_s=ks))
    return tuple(out)


def _phases(args) -> int:
    import reduced.mim
    from dynsim.mim import phases, plotting
    from dynsim.mim.partition import query_patches
    from dynsim.trajectory import save_many

    base = _config(args)
    approx = _approx(args.approximation)
    cfgs = dict(zip(("Delta > 0", "Delta < 0"), _signed_configs(base, args)))
    for cfg in cfgs.values():
        reduced.mim.check(cfg, approx)
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    runs, summary, switches = {}, {}, {}
    for label, cfg in cfgs.items():
        _log(f"{label}: P={cfg.P}, kappa=({cfg.kappa_c}, {cfg.kappa_s}), Delta={cfg.delta:.3f}, {cfg.steps} steps ...")
        t = _run_logged(label, cfg.steps, lambda cfg=cfg: reduced.mim.simulate(cfg, approximation=approx), timings,
                        label)
        runs[label] = (cfg, t)
        q = query_patches(cfg)
        local, glob = phases.classify(t, q["local"], 0, cfg=cfg), phases.classify(t, q["global"], 0, cfg=cfg)
        ratio = phases.initial_rate_ratio(t, q["local"], 0, cfg=cfg)
        summary[label] = {"delta": cfg.delta, "local_query": local.to_dict(), "global_query": glob.to_dict(),
                          "initial_rate_ratio": {"measured": ratio.measured, "predicted": ratio.predicted,
                                                 "interval": [0, int(t.steps[1]) if t.steps.size > 1 else 0]}}
        switches[label] = local.switch.step if local.switch is not None else None
    plotting.phases_plot(runs, os.path.join(args.out, "mim-phases.png"), switches,
                         title=f"MIM reduced dynamics ({reduced.mim.label(reduced.mim.approximations(approx))}), "
                               f"eta={base.eta}, gamma={base.mask_ratio}")
    save_many(os.path.join(args.out, "mim-phases.npz"), {("pos" if ">" in k else "neg"): t for k, (_, t) in runs.items()})
    _write_json(os.path.join(args.out, "mim-phases.json"), {"summary": summary, "timings": timings,
                                                            "configs": {k: c.to_dict() for k, c in cfgs.items()}})
    for label, info in summary.items():
        loc, glo, r = info["local_query"], info["global_query"], info["initial_rate_ratio"]
        print(f"{label} (Delta = {info['delta']:.3f}): local query {loc['p']}: {loc['label']} ({loc['reason']}); "
              f"|dA_global|/dA_target over steps {r['interval'][0]}-{r['interval'][1]} = {r['measured']:.3g} "
              f"(leading order (1 - gamma) P^Delta = {r['predicted']:.3g})")
        if loc["switch"] is not None:
            sw = loc["switch"]
            print(f"  switch at step {sw['step']}: A_global = {sw['A_global']:.3f} against -(Delta/2) log P = "
                  f"{sw['predicted']:.3f}")
        print(f"  global query {glo['p']}: {glo['label']} ({glo['reason']})")
    print(f"wrote {args.out}/mim-phases.png, mim-phases.npz, mim-phases.json")
    return EXIT_AGREE


def _attention(args) -> int:
    import math

    import numpy as np

    import full.mim
    from dynsim import metrics
    from dynsim.mim import plotting
    from dynsim.mim.partition import query_patches

    cfg = _config(args)
    full.mim.check(cfg, "exact")
    side = math.isqrt(cfg.P)
    grid = (side, side) if side * side == cfg.P else (1, cfg.P)
    k = args.top_k if args.top_k is not None else max(1, min(10, cfg.P // 4))
    if not 1 <= k <= cfg.P:
        raise ValueError(f"--top-k = {k} is invalid: must lie in [1, P] = [1, {cfg.P}]")
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    t = _run_logged("full", cfg.steps, lambda: full.mim.simulate(cfg, mode="exact"), timings, "seconds")
    attn = np.asarray(full.mim.attention_maps(cfg, t.final_Q[0], t.basis))  # (K, P, P)
    uniform = np.full((1, cfg.P, cfg.P), 1.0 / cfg.P)
    collapsed = np.zeros((1, cfg.P, cfg.P))
    collapsed[0, :, :k] = 1.0 / k  # every query on the same k patches
    rows = {"trained (per cluster)": attn, "uniform": uniform, "collapsed": collapsed}
    table = {name: {"diversity": metrics.attention_diversity(a, grid, k=k).tolist(),
                    "average_distance": metrics.average_attention_distance(a, grid).tolist()} for name, a in rows.items()}
    q = query_patches(cfg)
    plotting.attention_maps(attn[0], cfg, [q["local"], q["global"]], os.path.join(args.out, "mim-attention.png"),
                            title=f"trained MIM attention, unmasked image of cluster 1 (P={cfg.P}, {cfg.steps} steps); "
                                  f"diversity top-{k}: trained {table['trained (per cluster)']['diversity'][0]:.3g}, "
                                  f"uniform {table['uniform']['diversity'][0]:.3g}, collapsed 0")
    _write_json(os.path.join(args.out, "mim-attention.json"), {"top_k": k, "grid": grid, "metrics": table,
                                                               "timings": timings, "meta": t.meta})
    print(f"{'attention':<24} {'diversity (top-' + str(k) + ')':>18} {'avg distance':>14}")
    for name, v in table.items():
        print(f"{name:<24} {np.mean(v['diversity']):>18.4f} {np.mean(v['average_distance']):>14.4f}")
    print(f"wrote {args.out}/mim-attention.png, mim-attention.json")
    return EXIT_AGREE


def _check(args) -> int:
    from dynsim.mim import theorems

    if not 0.0 < args.eps < 1.0:
        raise ValueError(f"--eps = {args.eps} is invalid: must lie strictly between 0 and 1")
    base = theorems.default_configs()["pos"].replace(P=args.P, steps=args.steps, eta=args.eta,
                                                    mask_ratio=args.mask_ratio, record_every=max(1, args.steps // 100))
    cfg_pos, cfg_neg = _signed_configs(base, args)
    for option, cfg, sign in (("--kappa-pos", cfg_pos, 1), ("--kappa-neg", cfg_neg, -1)):
        if not sign * cfg.delta > 0:
            raise ValueError(f"{option} = {args.kappa_pos if sign > 0 else args.kappa_neg} is invalid: the realised "
                             f"information gap is Delta = {cfg.delta:.4g} at P = {cfg.P}; it must be "
                             f"{'> 0' if sign > 0 else '< 0'}")
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    claims = _run_logged("claims", args.steps, lambda: theorems.check_theorems(cfg_pos, cfg_neg, log=_log, eps=args.eps),
                         timings, "seconds")
    text = theorems.to_json(claims)
    _write_json(os.path.join(args.out, "theorems.json"), {**json.loads(text), "timings": timings,
                                                          "configs": {"pos": cfg_pos.to_dict(), "neg": cfg_neg.to_dict()}})
    print(text if args.json else theorems.table(claims))
    return EXIT_DISAGREE if any(c.holds is False for c in claims) else EXIT_AGREE


__all__ = ["compare_parser", "derive_parser", "figure_parsers", "check_parser", "run"]
