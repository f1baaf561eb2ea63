"""What a JSL run would hold in memory and do, from the config's field values before the
config is built: `needs` per level (the Setting's resources hook) and `estimate_*` per command (each
Command's estimate). Rough on purpose: the sizes are the arrays the levels allocate (configurations,
batches, data sets, recorded arrays), the work a few operations per entry and step; the point is to
refuse a run that cannot fit, not to predict its peak."""

from __future__ import annotations

from dynsim.claims import parse_only, wanted
from dynsim.cli import options
from dynsim.resources import FLOP_RATE, Need, record_need, usable_cores
from dynsim.setting import Ref, load
from dynsim.validation import text_count

from full.jsl import spec as full_spec
from reduced.jsl import spec as reduced_spec

from .setting import CLAIMS
from .realistic_plan import plan_for, realistic_config, seeds_for

# what the levels' modules define (importing them imports JAX), loaded where an estimate needs it,
# after `estimate_compare` has run the levels' checks
SUMS, CONFIGURATIONS = "reduced.jsl.sums", "reduced.jsl.configurations"
GLM = "dynsim.jsl.claims_glm"
LADDER_CONFIGS = Ref("dynsim.jsl.claims_idealized:ladder_configs")
PENDING_SEEDS = Ref("dynsim.jsl.claims_realistic:pending_seeds")

# numbers recorded per step and run (alpha, gamma, rho, spreads, loss, error, events ...), rounded
# up
OBSERVABLES = 24
# derive jsl: seconds per set type, fitted to the measurements of docs/benchmarks.md l
DERIVE_SECONDS_PER_TYPE = 0.4
# the realistic step's operations a second, counted as its estimate counts them (6 N D d a step):
# measured 0.8e10 to 1.7e10 at N = 1000 to 4000, D = d = 16, float32 and float64, on 2 cores
# (docs/benchmarks.md §o), ten times FLOP_RATE's element-wise guess
REALISTIC_RATE = 1e10


def _sizes(v: dict) -> tuple:
    D, C = max(int(v["D"]), 1), max(int(v["C"]), 1)
    d = max(int(v["d"] if v.get("d") is not None else D), 1)
    return D, C, d


def types(C: int) -> int:
    """Set types (a, b) with a + b <= C: (C + 1)(C + 2)/2."""
    return (C + 1) * (C + 2) // 2


def reduced_need(v: dict, opts: dict) -> Need:
    """The reduced level's configuration sum: every moment class up to --max-configurations, else
    sampled."""
    D, C, _ = _sizes(v)
    T = types(C)
    if opts.get("mc_samples") is not None:
        rows, named = max(int(opts["mc_samples"]), 1), {"--mc-samples": opts["mc_samples"]}
    else:
        limit = opts.get("max_configurations") or load(f"{SUMS}:MAX_CLASSES")
        # math.comb of larger ones is itself slow; the limit bounds them
        small = T <= 1000 and D // C <= 10**6
        rows, named = (
            min(load(f"{CONFIGURATIONS}:count")(D, C) if small else limit, limit),
            {"--D": D, "--C": C},
        )
    return Need(
        f"reduced sum: {text_count(rows)} configurations x {T + 4} numbers",
        named,
        bytes=8.0 * rows * (T + 4),
        flops=20.0 * rows * T * max(int(v["steps"]), 0),
        work_options={"--steps": v["steps"]},
        instead="a smaller --mc-samples or --max-configurations (the Monte Carlo or truncated "
        "sum of `dynsim sweep jsl`), or a smaller --D",
    )


def full_need(v: dict, mode: str, runs) -> Need:
    """The full level's batch: the enumerated configurations (exact), the sampled batch or the
    realistic data."""
    D, C, d = _sizes(v)
    steps, N, n_test = max(int(v["steps"]), 0), max(int(v["N"]), 1), max(int(v["n_test"]), 1)
    R = full_spec.DEFAULT_SEEDS if runs is None else max(int(runs), 1)
    if mode == "exact":
        # check_exact refuses beyond
        M = min(D // C * 3 ** min(D - C, 40), full_spec.MAX_EXACT_CONFIGURATIONS)
        return Need(
            f"exact population: {M:,} configurations x D = {D}",
            {"--D": D, "--C": C},
            bytes=32.0 * M * D,
            flops=2.0 * M * D * D * steps,
            instead="--mode sampled or a smaller --D",
            work_options={"--steps": steps},
        )
    if mode == "sampled":
        return Need(
            f"sampled batches: replicates {R} x N {N:,} x D {D}",
            {"--N": N, "--replicates": R},
            bytes=64.0 * R * N * D,
            flops=2.0 * R * N * D * D * steps,
            instead="fewer --replicates or a smaller --N",
            work_options={"--steps": steps},
        )
    return Need(
        f"realistic data: seeds {R} x (N + n_test) {N + n_test:,} x D {D} x d {d}",
        {"--N": N, "--n-test": n_test, "--seeds": R},
        bytes=16.0 * R * (N + n_test) * D * d,
        flops=6.0 * R * N * D * d * steps,
        instead="fewer --seeds or a smaller --N / --n-test",
        work_options={"--steps": steps},
    )


def parameters_need(v: dict, runs: int) -> Need:
    """The full level's parameters A (D x D) and v (d), with w* (d): each run holds them about four
    times (the parameters, their gradient, the optimizer's state and the update), in float64."""
    D, _, d = _sizes(v)
    return Need(
        f"parameters: {runs} run{'s' if runs > 1 else ''} x (A {D} x {D} + v and w* in d = {d})"
        " x 4",
        {"--D": D, "--d": d},
        bytes=4 * 8.0 * runs * (D * D + 2 * d),
        instead="a smaller --d or --D",
    )


def needs(v: dict, level: str, opts: dict) -> list:
    """The Setting's resources hook: one run at `level` with the run options `opts`."""
    mode = opts.get("mode", "exact")
    runs = opts.get("seeds") if mode == "realistic" else opts.get("replicates")
    runs = (
        1
        if level == "reduced" or mode == "exact"
        else full_spec.DEFAULT_SEEDS
        if runs is None
        else max(int(runs), 1)
    )
    main = reduced_need(v, opts) if level == "reduced" else full_need(v, mode, runs)
    named = {"--seeds" if mode == "realistic" else "--replicates": runs} if runs > 1 else {}
    return [
        main,
        *([] if level == "reduced" else [parameters_need(v, runs)]),
        record_need(
            v["steps"],
            v["record_every"],
            OBSERVABLES * max(int(runs), 1),
            f"{OBSERVABLES} numbers x {runs} runs",
            named,
            f", or fewer {next(iter(named))}" if named else "",
        ),
    ]


def estimate_compare(args) -> list:
    """`compare jsl`: both levels' options checked first, as the run checks them
    (`reduced_spec.validate_reduced`, `full_spec.validate_full`, in mode realistic
    `validate_realistic`), then both levels' needs; --mode realistic over its ladder of N."""
    v = options.values(args)
    if args.mode != "realistic":
        cfg, opts = options.config(args), {"mode": args.mode, "replicates": args.replicates}
        reduced_spec.validate_reduced(cfg, opts)
        full_spec.validate_full(cfg, opts)
        return needs(v, "reduced", {}) + needs(v, "full", opts)
    full_spec.validate_realistic(options.config(args), vars(args))
    # the default ladder N/16, N/4, N sums below 2 N
    total = sum(args.ladder) if args.ladder else 2 * int(v["N"])
    return needs({**v, "N": total}, "full", {"mode": "realistic", "seeds": args.seeds}) + needs(
        v, "reduced", {}
    )


def estimate_realistic(args) -> list:
    """`figure jsl-fig4|jsl-fig2`: realistic runs of --seeds."""
    return needs(options.values(args), "full", {"mode": "realistic", "seeds": args.seeds})


def estimate_check(args) -> list:
    """`check-theorems jsl`: the realistic seeds still to run at the realistic runs' sizes, one seed
    at a time (or one per worker), those --out holds already left out."""
    cfg = options.config(args)
    only = parse_only(args.only, CLAIMS)
    # an invalid judged point or ladder is refused as such, before its size is weighed
    LADDER_CONFIGS(cfg, args.quick, getattr(args, "sizes", None), only)
    claims_glm = load(GLM)
    plan = plan_for(args.quick, getattr(args, "realistic_sizes", None), getattr(args, "plan", None))
    seeds = seeds_for(plan, args.seeds)
    rc = realistic_config(cfg, plan)
    out = []
    if wanted(only, "Theorem 3.1"):  # the GLM's seeds run side by side (vmapped)
        N, n_test = (
            (min(cfg.N, claims_glm.QUICK_N), min(cfg.n_test, claims_glm.QUICK_N_TEST))
            if args.quick
            else (cfg.N, cfg.n_test)
        )
        S = seeds
        out.append(
            Need(
                f"GLM (Theorem 3.1): seeds {S} x (N + n_test) {N + n_test:,} x D {cfg.D} "
                f"x d {cfg.d}",
                {"--seeds": S, "--N": N, "--n-test": n_test},
                bytes=16.0 * S * (N + n_test) * cfg.D * cfg.d,
                flops=6.0 * S * N * cfg.D * cfg.d * min(cfg.steps, claims_glm.GLM_STEPS),
                instead="fewer --seeds or a smaller --N / --n-test",
                work_options={"--steps": cfg.steps},
            )
        )
    pending, total = PENDING_SEEDS(cfg, args.quick, seeds, only, args.out, plan)
    if not pending:
        return out
    top = max(pending)
    # seeds at once: one a Dask worker, or in this process one a core (`realistic_runs`)
    at_once = max(1, min(int(args.workers or usable_cores()), len(pending)))
    return out + [
        Need(
            f"realistic seeds: {len(pending)} of {total} to run ({total - len(pending)} "
            f"stored in {args.out}), each N up to {top:,} (+ {rc.n_test:,} test) x D {rc.D} "
            f"x d {rc.d}",
            {"--seeds": seeds},
            bytes=16.0 * at_once * (top + rc.n_test) * rc.D * rc.d,
            flops=sum(6.0 * N * rc.D * rc.d * rc.steps for N in pending),
            rate=REALISTIC_RATE * at_once,  # the measured rate of one seed, on each core
            instead="fewer --seeds, --quick, or --only the claims wanted",
            work_options={"--steps": rc.steps},
        )
    ]


def estimate_transfer(args) -> list:
    """`transfer jsl`: one realistic pretraining, then each N~ fine-tuned --finetune-seeds times by
    three learners."""
    v = options.values(args)
    D, _, d = _sizes(v)
    n = sum(max(int(x), 1) for x in args.n_tilde or full_spec.DEFAULT_N_TILDE)
    S = max(int(args.finetune_seeds), 1)
    steps = (
        full_spec.DEFAULT_STEPS if args.finetune_steps is None else max(int(args.finetune_steps), 0)
    )
    tune = Need(
        f"fine-tuning data: N~ {n:,} in all x seeds {S} x D {D} x d {d}, three learners",
        {"--n-tilde": ",".join(map(str, args.n_tilde or [])) or "default", "--finetune-seeds": S},
        bytes=24.0 * n * S * D * d,
        flops=18.0 * n * S * D * d * steps,
        instead="smaller --n-tilde sizes or fewer --finetune-seeds",
        work_options={"--finetune-steps": steps},
    )
    return needs(v, "full", {"mode": "realistic", "seeds": 1}) + [tune]


def estimate_derive(args) -> list:
    """`derive jsl`: sympy's time grows with the set types; --C is bounded (MAX_DERIVE_C), --p by
    JSLConfig."""
    T = types(max(int(args.C), 1))
    return [
        Need(
            f"symbolic derivation over {T} set types (about {DERIVE_SECONDS_PER_TYPE} s each)",
            {"--C": args.C},
            flops=DERIVE_SECONDS_PER_TYPE * T * FLOP_RATE,
            instead="a smaller --C",
        )
    ]
