"""What a MIM run would hold in memory and do, from the config's field values before the
config is built (a MIMConfig of P = 10^8 would itself build 10^8 patch indices): `needs` per level
(the Setting's resources hook) and `estimate_*` per command. Rough on purpose: the areas per cluster
are estimated from the kappas, the sizes are the arrays the levels allocate (per-query class tables,
the d x d matrix Q and its batches, recorded arrays), the work a few operations per entry and
step."""

from __future__ import annotations

import dataclasses
import math

from dynsim.cli import options
from dynsim.resources import Need, record_need, records, sequential
from dynsim.validation import DEFAULT_REPLICATES
from reduced.mim import classes
from reduced.mim.dynamics import per_patch_entries

from . import ladder, setting
from .config import PARTITIONS, MIMConfig
from .records import cell_index
from .theorems import negative_kappa_c

CHUNK = 16  # images per chunk of the sampled full level (full.mim.batch.MAX_CHUNK)
# MIMConfig's own kappas, where the values give None (MIMConfig then refuses or partitions replace
# them)
KAPPAS = {f.name: f.default for f in dataclasses.fields(MIMConfig) if f.name.startswith("kappa")}


def _kappas_ok(v: dict) -> bool:
    """Whether the kappas are numbers in (0, 1) (or explicit partitions replace them): else no
    estimate is made and MIMConfig names the bad kappa (P^kappa with kappa = 100 or -1000 would
    overflow here first)."""
    if v.get("partitions"):
        return True
    try:
        return all(0.0 < float(v[k] if v[k] is not None else KAPPAS[k]) < 1.0 for k in KAPPAS)
    except (TypeError, ValueError):
        return False


def _sizes(v: dict) -> tuple:
    """(P, K, areas per cluster, d): the areas from the kappas (one global of P^kappa_c, locals of
    P^kappa_s), or from explicit partitions; d as given, else P + K areas."""
    P, K = max(int(v["P"]), 1), max(int(v["K"]), 1)
    if v.get("partitions"):
        try:
            N = max((len(c) for c in v["partitions"]), default=1)
        except TypeError:  # not a list of lists: MIMConfig names it
            N = 1
    else:
        kc, ks = (float(KAPPAS[k] if v[k] is None else v[k]) for k in ("kappa_c", "kappa_s"))
        N = 1 + math.ceil(max(P - P**kc, 0) / max(P**ks, 1.0))
    d = max(int(v["d"]), 1) if v.get("d") is not None else P + K * N
    return P, K, N, d


def reduced_need(v: dict, approximation) -> Need:
    """The reduced level: per query class a row over the areas (about K x areas^2 numbers), the
    (counts, latents) rows of its exact expectation (at most classes.MAX_CONFIGURATIONS; one per
    class under mean_field), and the per-patch views expanded from the records
    (`reduced.mim.dynamics.per_patch_entries`, at most its PATCH_BUDGET in all)."""
    P, K, N, _ = _sizes(v)
    rows = K * N * N
    if "mean_field" not in str(approximation or ""):
        rows += min(classes.MAX_CONFIGURATIONS, 1000 * rows)
    per_patch = sum(per_patch_entries(records(v["steps"], v["record_every"]), P, K, N))
    return Need(
        f"reduced class tables: K {K} x ({N:,} areas)^2",
        {"--P": P, "--K": K},
        bytes=64.0 * rows + 8.0 * per_patch,
        flops=50.0 * rows * max(int(v["steps"]), 0),
        instead="a smaller --P or a larger --kappa-s (fewer areas), or --approximation mean_field",
        work_options={"--steps": v["steps"]},
    )


def full_need(v: dict, mode: str, replicates) -> Need:
    """The full level: Q (d x d) with its gradient, and per step every masked query's scores (exact:
    every cluster, z and mask; sampled: replicates x N images, in chunks of CHUNK)."""
    P, K, N, d = _sizes(v)
    steps = max(int(v["steps"]), 0)
    if mode == "exact":
        return Need(
            f"full exact: Q d x d = {d:,}^2, K {K} x P {P:,} queries",
            {"--P": P, "--d": d},
            bytes=48.0 * d * d + 32.0 * K * P * d,
            flops=20.0 * K * P * d * d * steps,
            instead="a smaller --P (or the reduced level's Monte Carlo / mean_field approximation)",
            work_options={"--steps": steps},
        )
    R = DEFAULT_REPLICATES if replicates is None else max(int(replicates), 1)
    n = max(int(v["N"]), 1)
    return Need(
        f"full sampled: replicates {R} x (Q d x d = {d:,}^2 + {CHUNK} images x P {P:,} x d)",
        {"--replicates": R, "--N": n, "--P": P},
        bytes=R * (48.0 * d * d + 16.0 * CHUNK * P * d),
        flops=3.0 * R * n * P * P * d * steps,
        instead="fewer --replicates, a smaller --N or --P, or the reduced level's approximations",
        work_options={"--steps": steps},
    )


def needs(v: dict, level: str, opts: dict) -> list:
    """The Setting's resources hook: one run at `level` with the run options `opts` (none when a
    kappa is invalid: MIMConfig says so)."""
    if not _kappas_ok(v):
        return []
    P, K, N, _ = _sizes(v)
    R = (
        1
        if level == "reduced" or opts.get("mode", "exact") == "exact"
        else (opts.get("replicates") or DEFAULT_REPLICATES)
    )
    if level == "reduced":
        main = reduced_need(v, opts.get("approximation"))
        per_record = 4 * K * N * N  # class records (the per-patch views are in the main term)
    else:
        main = full_need(v, opts.get("mode", "exact"), R)
        # pp_corr P x P, fp_corr and area attention per patch
        per_record = R * (P * P + 2 * K * P * N)
    grows = {"--P": P, **({"--replicates": R} if R > 1 else {})}
    return [
        main,
        record_need(
            v["steps"],
            v["record_every"],
            per_record,
            f"{per_record:,} numbers",
            grows,
            ", or a smaller --P" + (" or fewer --replicates" if R > 1 else ""),
        ),
    ]


def estimate_compare(args) -> list:
    """`compare mim`: the reduced level with its approximation and the full level in its mode."""
    v = options.values(args)
    return needs(v, "reduced", {"approximation": args.approximation}) + needs(
        v, "full", {"mode": args.mode, "replicates": args.replicates}
    )


def estimate_phases(args) -> list:
    """`figure mim-phases`: two reduced runs with the approximation, one at a time, at the kappas of
    --kappa-pos and
    --kappa-neg (the command ignores --kappa-c / --kappa-s): the memory of the larger, the time of
      both. Unreadable
    kappas: no estimate (the command names the option)."""
    v = options.values(args)
    runs = []
    for text in (args.kappa_pos, args.kappa_neg):
        try:
            kc, ks = (float(x) for x in str(text).split(","))
        except ValueError:
            return []
        run = {**v, "kappa_c": kc, "kappa_s": ks, "partitions": None}
        if not _kappas_ok(run):
            return []
        runs.append(
            [
                dataclasses.replace(
                    n,
                    instead=n.instead.replace(
                        "--kappa-s", "second kappa in --kappa-pos / --kappa-neg"
                    ),
                )
                for n in needs(run, "reduced", {"approximation": args.approximation})
            ]
        )
    return sequential(runs)


def estimate_attention(args) -> list:
    """`figure mim-attention`: the full level, exact."""
    return needs(options.values(args), "full", {"mode": "exact"})


def estimate_check(args) -> list:
    """`check-theorems mim`: mean-field reduced runs on the P ladder, `ladder.steps_at` steps each
    (steps scaled by (P/1024)^(1 - kappa_s) (0.5/gamma) (1/eta) K), about 100 records, one after
    another: the memory of the largest run, the time of all (K > 1: the joint cells' runs)."""
    v = options.values(args)
    if not _kappas_ok(v):
        return []
    try:
        gamma, eta = float(v["mask_ratio"]), float(v["eta"])
    except (TypeError, ValueError):
        return []
    if not (0.0 < gamma < 1.0 and eta > 0):  # MIMConfig names the bad value
        return []
    K = v["K"]
    if isinstance(K, bool) or not isinstance(K, int) or K < 1 or v["partition"] not in PARTITIONS:
        return []  # run_check names a bad --K (argparse a bad --partition)
    runs = []
    # run_check names a bad eps
    eps = float(args.eps) if 0.0 < float(args.eps) < 1.0 else ladder.EPS_REF
    steps = ladder.steps_for(max(int(v["steps"]), 1), eps)
    ladder_sizes = setting.QUICK_LADDER if args.quick else setting.LADDER
    # the ladder's P are the command's, not options: what the user sets is --steps (and --kappa-s,
    # --eta, --mask-ratio, --K, which scale T; with K > 1 --partition sets the joint cells)
    opts = {
        "--steps": v["steps"],
        "--kappa-s": v["kappa_s"],
        "--mask-ratio": v["mask_ratio"],
        "--eta": v["eta"],
        "--eps": eps,
        **({"--K": K, "--partition": v["partition"]} if K > 1 else {}),
    }
    for P in ladder_sizes:
        T = ladder.steps_at(P, steps, float(v["kappa_s"]), gamma, eta, K)
        scale = ladder.steps_at(P, ladder.STEPS_REF, float(v["kappa_s"]), gamma, eta, K)
        rung = {
            **v,
            "P": P,
            "d": None,
            "partitions": None,
            "steps": T,
            "record_every": max(1, min(T, scale) // 100),
        }
        if K == 1:
            runs.append(_named(needs(rung, "reduced", {"approximation": "mean_field"}), opts))
            continue
        runs.append(_named(cells_needs(rung), opts))
        if P == ladder_sizes[0]:  # the Delta < 0 run and the Section 6 model sit at this rung
            runs += [
                _named(cells_needs({**rung, "kappa_c": negative_kappa_c(rung["kappa_s"])}), opts),
                _named(cells_needs(rung), opts),
            ]
    return sequential(runs)


def _named(run: list, opts: dict) -> list:
    """A ladder run's needs, growing with the options the user sets (not the ladder's P)."""
    instead = "fewer --steps, a larger --eta"
    if "--K" in opts:
        instead += ", a smaller --K or --partition grid (fewer joint cells)"
    return [dataclasses.replace(n, options=opts, work_options={}, instead=instead) for n in run]


# per (joint cell, cluster, key type) and step: the masses, the loss's partials and the gradients,
# about 30 element operations (`reduced.mim.cells.cluster_terms`)
CELL_TERM_FLOPS = 30.0
# compiling a rung's run, its first step recorded within (`ladder.run_rung`), counted as work:
# about as much as 5e9 element operations on the 2-core development machine, whatever the size
COMPILE_FLOPS = 5e9
# K P entries up to which the estimate builds the areas to count the joint cells
CELLS_BUILT = 10**6


def cells_needs(v: dict) -> list:
    """One K > 1 mean-field rung (`reduced.mim.cells`): G joint cells, each a query over G key
    types, per cluster. The cells come from the areas (the ladder's P are small enough to build),
    or, for more than CELLS_BUILT cluster-patch entries, G = P (its most)."""
    P, K, N, _ = _sizes(v)
    if K * P <= CELLS_BUILT:
        cfg = MIMConfig(
            **{k: v[k] for k in ("P", "K", "kappa_c", "kappa_s", "mask_ratio", "partition", "seed")}
        )
        G, N = int(cell_index(cfg).size.size), cfg.max_areas
    else:
        G = P
    steps = int(v["steps"])
    n = records(steps, v["record_every"])
    per_patch = sum(per_patch_entries(n, P, K, N))
    # the step's intermediates (a few (G, K, G) arrays; the clusters' shares B_k of B, their
    # gradients and update add three), the records per cell and the per-patch views that fit
    work = Need(
        f"K > 1 mean field: {G:,} joint cells x {G:,} key types x K {K}",
        {"--K": K, "--P": P},
        bytes=8.0 * (13 * G * K * G + 2 * n * G * K * N + per_patch),
        flops=CELL_TERM_FLOPS * G * K * G * steps + COMPILE_FLOPS,
        work_options={"--steps": steps},
    )
    return [work]
