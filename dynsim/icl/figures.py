"""`figure icl-error`: the trained layer's prediction error against the prompt length N, beside
Theorem 4.1's closed form and ordinary least squares on the same prompts (docs/icl.md §8). Its
options and checks are light; the run loads the levels and matplotlib when it starts."""

from __future__ import annotations

import os

import numpy as np

from dynsim.cli import options

from . import moments
from .config import MAX_TESTS

DEFAULT_LENGTHS = "2,4,8,16,32"
UNREAD = {"N": "the figure runs every length of --lengths", "batch": "the runs are exact"}


def check(cfg, args) -> None:
    """--lengths: integers >= 1; --tests: >= 32 (one per batch)."""
    if not args.lengths or min(args.lengths) < 1:
        raise ValueError(f"--lengths = {args.lengths} is invalid: give integers >= 1")
    if args.tests < 32:
        raise ValueError(f"--tests = {args.tests} is invalid: must be >= 32 (32 batches)")


def arguments(parser, setting) -> None:
    """Options of `figure icl-error`: every ICLConfig field it reads, the lengths, the Monte Carlo's
    prompts, --out."""
    options.config_options(parser, setting, exclude=UNREAD, check=check)
    g = parser.add_argument_group("run")
    g.add_argument(
        "--lengths",
        type=options.int_list,
        default=options.int_list(DEFAULT_LENGTHS),
        metavar="N,N,...",
        help=f"training (and test) prompt lengths N (default: {DEFAULT_LENGTHS})",
    )
    g.add_argument(
        "--tests",
        type=options.integer_in(32, MAX_TESTS, why=" (32 batches; more would take minutes)"),
        default=8192,
        help="test prompts per length, in 32 batches (default: 8192)",
    )
    options.out_options(g)


def errors(cfg, tests: int) -> dict:
    """At cfg.N: the trained layer's Monte Carlo error on fresh tasks w ~ N(0, I_d) (mean and
    standard error over 32 batches), the closed form 2 L*, and min-norm least squares on prompts of
    the same law."""
    from full.icl import training  # JAX

    from . import reading

    full = training.simulate(cfg, mode="exact")
    batches, size = 32, max(1, tests // 32)
    rng = np.random.default_rng(cfg.seed)
    lam = np.asarray(cfg.spectrum)
    learned = reading.test_errors(full.final, lam, cfg.N, None, cfg.seed, batches, size)
    x = rng.standard_normal((tests, cfg.N + 1, cfg.d)) * np.sqrt(lam)
    w = rng.standard_normal((tests, cfg.d))
    y = np.einsum("tnd,td->tn", x, w)
    fit = np.einsum("tdn,tn->td", np.linalg.pinv(x[:, : cfg.N]), y[:, : cfg.N])
    ols = (np.einsum("td,td->t", x[:, cfg.N], fit) - y[:, cfg.N]) ** 2
    return {
        "N": cfg.N,
        "learned": float(learned.mean()),
        "learned_se": float(learned.std(ddof=1) / np.sqrt(batches)),
        "theorem": 2 * moments.min_loss(cfg.spectrum, cfg.N),
        "ols": float(ols.mean()),
        "ols_se": float(ols.std(ddof=1) / np.sqrt(tests)),
        "final_gap": float(full["gap"][-1]),
    }


def run(args) -> int:
    """`dynsim figure icl-error`: train at each N, measure, draw icl-error.png, icl-error.json."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dynsim.cli import output

    base = options.config(args)
    rows = []
    for n in args.lengths:
        cfg = base.replace(N=n)
        output.log(f"N = {n}: exact GD, {cfg.steps} steps, then {args.tests} test prompts ...")
        rows.append(errors(cfg, args.tests))
    os.makedirs(args.out, exist_ok=True)
    with output.Staged(args.out) as stage:
        fig, ax = plt.subplots(figsize=(6, 4))
        n = [r["N"] for r in rows]
        ax.errorbar(
            n,
            [r["learned"] for r in rows],
            [2 * r["learned_se"] for r in rows],
            fmt="o",
            label="trained layer (Monte Carlo, 2 se)",
        )
        ax.plot(n, [r["theorem"] for r in rows], "-", label="Theorem 4.1: tr Λ - tr(Γ⁻¹Λ²)")
        ax.errorbar(
            n,
            [r["ols"] for r in rows],
            [2 * r["ols_se"] for r in rows],
            fmt="s",
            ms=4,
            label="least squares (min-norm) on the prompt, noiseless labels",
        )
        ax.set_xscale("log", base=2)
        ax.set_xlabel("prompt length N (train = test)")
        ax.set_ylabel("E (ŷ - y)², w ~ N(0, I)")
        ax.set_title(f"ICL (Zhang, Frei, Bartlett): d = {base.d}, κ = {base.kappa:g}")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(stage.path("icl-error.png"), dpi=120)
        plt.close(fig)
        stage.commit("icl-error.json", {"rows": rows, "invocation": output.invocation(args)})
    for r in rows:
        print(
            f"N = {r['N']}: trained {r['learned']:.4g} +- {r['learned_se']:.2g}, theorem "
            f"{r['theorem']:.4g}, least squares {r['ols']:.4g}"
        )
    print(output.wrote(args.out, ["icl-error.png", "icl-error.json"]))
    return options.EXIT_AGREE
