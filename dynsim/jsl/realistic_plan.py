"""The sizes of JSL's realistic-run claims (docs/jsl.md §13): the `Plan` (the realistic problem's D,
C, q, eta, the horizon T, the N ladder, transfer's N~, Figure 2's search), the realistic config it
gives, and `--realistic-sizes` parsed onto it."""

from __future__ import annotations

import dataclasses
from typing import Optional

from dynsim.claims import Premise

from . import reference
from .config import JSLConfig

# Definition 2.1 (P[y f* > 0] = 1 - d^(-omega(1))) and Theorem 3.1's separation read at a finite
# size with the paper's only finite constant on f*-errors, Theorem 3.1's 1/8. Where f* = 0 on 1/8
# or more of the inputs, every F (an associated transformer too) errs 1/8 against f*: the GLM's
# bound separates nothing. Where y and f* disagree on 1/8 or more, a model that fits y (what GD
# trains on) may err against f* as much as the GLM bound allows: "fits the labeling function" is
# not what training on y asks. P[y f* <= 0] >= P[f* = 0] (f* = 0 is a tie), so the first implies
# the second; both are stated and printed
DEFINITION_BOUND = 0.125


# check-theorems' realistic seeds: 6, the fewest whose two-sided 95% Clopper-Pearson interval can
# decide Theorem 4.2's w.h.p. (6 of 6 associated: [0.54, 1], above 1/2; 0 of 6: [0, 0.46], below
# it); 4 of 4 gives [0.40, 1], which decides nothing
CHECK_SEEDS = 6


@dataclasses.dataclass(frozen=True)
class Plan:
    """Sizes of the realistic claims: the problem, the N ladder of Theorem 4.2, its horizon,
    transfer's N~ and Figure 2's search."""

    n_ladder: tuple[int, ...]
    horizon: int  # cap on cfg.steps for the realistic runs
    n_test: int
    n_tilde: tuple[int, ...]
    transfer_seeds: int
    transfer_steps: int
    fig2_grid: tuple[tuple[float, float], ...]  # (eta, omega) points of Figure 2's plateau search
    fig2_steps: int  # cap on cfg.steps for Figure 2's runs
    fig2_n: int
    D: int = 9  # the realistic problem's size (realistic_config)
    C: int = 3
    q: Optional[float] = None  # None: the judged point's q
    eta: float = 0.1
    dtype: Optional[str] = None  # the realistic runs' dtype (None: cfg's)
    records: int = 8  # records after the start: record_every = horizon // records
    seeds: Optional[int] = None  # the realistic seeds when --seeds is not given (None: CHECK_SEEDS)


# The default: the smallest C = 2 size that meets `criterion` (docs/jsl.md §13): D = 16, C = 2,
# q = 2/7, q(D - C) = C^2 = 4, P[y f* <= 0] = 0.119 and P[f* = 0] = 0.112 below 1/8 (margins 0.006
# and 0.013, exact), the sign-of-count GLM's f*-error 0.259 against that floor. D = 21, C = 3 meets
# it with more room (0.080) but needs eta below 0.02 from its start and as long a flow time: over
# the command's time budget on 2 cores (docs/benchmarks.md §o).
# eta = 0.01: the training loss sharpens along the run; probes at N = 4000 and 8000 (seed 0, not the
# judged settings) reached eta lambda_max = 2.39 at eta = 0.015 by t = 2700, and at eta = 0.03 sat
# at GD's edge and lost the association the slower runs keep; 0.01 stays below 1.4 (the stability
# premise re-measures every judged run).
# T = 254,000 steps, t = eta T = 2540: past the exact population gradient flow's end of Event II at
# this size (t_flow = 2510.2 at check-theorems' nu = 1e-4, 2527.6 at 0.01: Theorems 4.2 and 5.1's
# horizon premise, claims_realistic.association_horizon), from the flow, not the judged seeds.
# N ladder 1000, 2000, 4000: N = poly(d) at d = 16; at N = 2000 one seed of six kept every row
# associated to T (float64), so 2000 cannot be the judged rung.
# float32: the step is 1.4 to 2 times faster at these N (docs/benchmarks.md §o), and the three
# realistic verdicts of this plan are float64's (docs/jsl.md §13: the same plan run in both).
# Transfer: N~ = 8, 32, 128, 24 seeds (Theorem 5.1's paired differences at N~ = 8 were within their
# interval with 8 seeds at D = 10, outside it with 24).
# 127 records (every 2000 steps): Theorem 4.2's settled-association premise reads the verdict at
# every record of the run's last quarter (32 records), not at two; they add about 13% to an
# N = 1000 run (docs/benchmarks.md §s).
FULL = Plan(
    n_ladder=(1000, 2000, 4000),
    horizon=254_000,
    n_test=4096,
    n_tilde=(8, 32, 128),
    transfer_seeds=24,
    transfer_steps=2000,
    fig2_grid=((0.005, 0.01), (0.02, 0.01), (0.005, 0.1), (0.001, 0.3)),
    fig2_steps=4000,
    fig2_n=2048,
    D=16,
    C=2,
    q=2 / 7,
    eta=0.01,
    dtype="float32",
    records=127,
)
# --plan decide: Theorem 4.2 decided at this size. N = 16,000, four times the default's largest
# rung: at first order the finite-N fluctuation of A around the population flow has variance 1/N, so
# the pairs' noise against the flow's association gap halves (docs/jsl.md §13 says what sizes it
# and what is still open). T: the default's, just past the flow's end of Event II. N = 4000 beside
# it, the default's rung, reported. 10 seeds: the fewest with which a per-seed association
# probability of 0.95 decides the w.h.p. reading with probability >= 0.9 (9 of 10 lie above 1/2
# by Clopper-Pearson at 95%, 8 of 10 do not; P[>= 9 of 10 | 0.95] = 0.914).
DECIDE = dataclasses.replace(FULL, n_ladder=(4000, 16_000), seeds=10)
# --quick: the CI-sized D = 9, C = 3 below the separation size, the judged point's q. T = 5300: the
# next hundred steps past t_flow / eta = 5263, t_flow = 421.0 the exact population gradient flow's
# end of Event II at D = 9, C = 3, q = 0.5 (claims_realistic.association_horizon), so the quick
# plan meets Theorems 4.2 and 5.1's horizon premise. eta = 0.08: at eta = 0.1 the N = 8000 runs
# to t = 430 reach eta lambda_max = 2.07 (lambda_max 20.7, growing as the attention sharpens), past
# GD's edge 2; 0.08 puts that lambda_max at 1.66 (the stability premise re-measures every run)
QUICK = Plan(
    n_ladder=(500, 8000),
    horizon=5300,
    n_test=2048,
    n_tilde=(8,),
    transfer_seeds=8,
    transfer_steps=2000,
    fig2_grid=(),
    fig2_steps=0,
    fig2_n=256,
    eta=0.08,
)  # no Figure 2 search


def realistic_config(cfg: JSLConfig, plan: Plan) -> JSLConfig:
    """The realistic runs' config: the plan's D, C (d = D, sigma = 1/sqrt(d)), q and dtype (None:
    cfg's) and eta, unit temperature, cfg's p, nu, sigma_A, omega and seed, steps = min(cfg.steps,
    plan.horizon), a record every steps // plan.records steps."""
    q = cfg.q if plan.q is None else plan.q
    steps = min(cfg.steps, plan.horizon)
    return JSLConfig(
        D=plan.D,
        C=plan.C,
        p=cfg.p,
        q=q,
        nu=cfg.nu,
        sigma_A=cfg.sigma_A,
        eta=plan.eta,
        temperature="unit",
        omega=cfg.omega,
        seed=cfg.seed,
        steps=steps,
        record_every=max(1, steps // plan.records),
        n_test=plan.n_test,
        dtype=cfg.dtype if plan.dtype is None else plan.dtype,
    )


SIZE_KEYS = {
    "D": ("D", int),
    "C": ("C", int),
    "q": ("q", float),
    "eta": ("eta", float),
    "T": ("horizon", int),
    "N": ("n_ladder", None),
    "dtype": ("dtype", str),
}


def with_sizes(plan: Plan, spec: Optional[str]) -> Plan:
    """`plan` with the realistic sizes of `spec`, any subset of the keys of
    "D=10,C=2,q=0.5,eta=0.015,T=60000,N=1000:4000:16000,dtype=float64" (None: plan). A bad key or
    value raises a ValueError naming it."""
    if spec is None:
        return plan
    where = "--realistic-sizes"
    changes: dict = {}
    for item in spec.split(","):
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in SIZE_KEYS:
            raise ValueError(
                f"{where} item {item!r} is invalid: write KEY=VALUE with KEY one of "
                f"{', '.join(SIZE_KEYS)}"
            )
        field, kind = SIZE_KEYS[key]
        try:
            parsed = tuple(int(n) for n in value.split(":")) if kind is None else kind(value)
        except ValueError:
            what = {None: "integers joined by ':'", int: "an integer", float: "a number"}[kind]
            raise ValueError(f"{where} {key} = {value!r} is invalid: must be {what}") from None
        changes[field] = parsed
    new = dataclasses.replace(plan, **changes)
    if any(n < 1 for n in new.n_ladder) or list(new.n_ladder) != sorted(set(new.n_ladder)):
        ladder = ":".join(map(str, new.n_ladder))
        raise ValueError(
            f"{where} N = {ladder} is invalid: must be increasing integers >= 1 (the N ladder)"
        )
    if new.horizon < 1:
        raise ValueError(f"{where} T = {new.horizon} is invalid: must be >= 1 (GD steps)")
    try:
        realistic_config(JSLConfig(q=new.q if new.q is not None else 0.5), new)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    return new


PLANS = {"default": FULL, "quick": QUICK, "decide": DECIDE}


def plan_for(quick: bool, spec: Optional[str] = None, name: Optional[str] = None) -> Plan:
    """The plan of `check-theorems jsl`: PLANS[name] (None: QUICK or FULL by quick), with
    --realistic-sizes' changes. A name other than "quick" with quick set is refused."""
    if name is not None and name not in PLANS:
        raise ValueError(f"--plan = {name!r} is invalid: must be one of {', '.join(PLANS)}")
    if quick and name not in (None, "quick"):
        raise ValueError(f"--quick and --plan {name} are exclusive: --quick is --plan quick")
    return with_sizes(PLANS[name or ("quick" if quick else "default")], spec)


def seeds_for(plan: Plan, seeds: Optional[int]) -> int:
    """The realistic seeds: --seeds where given, else the plan's own, else CHECK_SEEDS."""
    return seeds if seeds is not None else (plan.seeds or CHECK_SEEDS)


def describe_sizes(plan: Plan) -> str:
    """The plan's realistic sizes as a --realistic-sizes value (q empty: the judged point's)."""
    q = "" if plan.q is None else f"q={plan.q!r},"  # every digit: q = 2/7 read back equal
    return (
        f"D={plan.D},C={plan.C},{q}eta={plan.eta:g},T={plan.horizon},"
        f"N={':'.join(map(str, plan.n_ladder))}"
        + ("" if plan.dtype is None else f",dtype={plan.dtype}")
    )


def definition_values(rc: JSLConfig) -> dict[str, float]:
    """Exact P[y f* <= 0] (Definition 2.1's mislabel rate) and P[f* = 0] (the Bayes f*-floor) at
    rc's D, C, q (`dynsim.jsl.reference`)."""
    return {
        "p_y_f_star_not_positive": reference.mislabel_fstar(rc),
        "p_f_star_zero": reference.bayes_error_fstar(rc),
    }


EXACT_HOW = (
    "exact enumeration of the set counts (dynsim.jsl.reference.{}); 1/8: Theorem 3.1's constant"
)


def definition_premise(cfg: JSLConfig) -> Premise:
    """Definition 2.1 at cfg's D, C, q: f* labels almost every input, P[y f* <= 0] below
    DEFINITION_BOUND (exact)."""
    return Premise(
        "Definition 2.1: f* labels almost every input (P[y f* <= 0])",
        reference.mislabel_fstar(cfg),
        "<",
        DEFINITION_BOUND,
        EXACT_HOW.format("mislabel_fstar"),
    )


def separation_premise(cfg: JSLConfig) -> Premise:
    """Theorem 3.1's 1/8 separates at cfg's D, C, q: every F errs at least P[f* = 0] against f*
    (f* F <= 0 wherever f* = 0), so from 1/8 on the bound holds for every classifier (exact)."""
    return Premise(
        "Theorem 3.1's 1/8 separates (P[f* = 0], the error every F makes against f*)",
        reference.bayes_error_fstar(cfg),
        "<",
        DEFINITION_BOUND,
        EXACT_HOW.format("bayes_error_fstar"),
    )


def criterion(rc: JSLConfig) -> list[Premise]:
    """The realistic size's criterion at rc's D, C, q, three premises: Definition 2.1 and Theorem
    3.1's 1/8 separation (`definition_premise`, `separation_premise`: Theorems 4.2 and 5.1's
    premises) and dynsim's reading of Theorem 3.1's regime, q(D - C) >= C^2 (docs/jsl.md §12: the
    paper states no threshold; one condition of three, the default plan meets all three)."""
    regime = Premise(
        "dynsim's reading of Theorem 3.1's regime (q(D - C) >= C^2)",
        rc.q * (rc.D - rc.C),
        ">=",
        rc.C**2,
        "docs/jsl.md §12: the paper states no threshold",
    )
    return [definition_premise(rc), separation_premise(rc), regime]


def meets_criterion(rc: JSLConfig) -> bool:
    """Every premise of `criterion` at rc."""
    return all(p.met for p in criterion(rc))


def separation(rc: JSLConfig) -> str:
    """Where rc stands on `criterion`: Definition 2.1's mislabel rate and Theorem 3.1's floor P[f* =
    0] (exact) with their margins below DEFINITION_BOUND, and q(D - C) against C^2, in words."""
    definition, floor_premise, regime = criterion(rc)
    mislabel, floor = definition.measured, floor_premise.measured
    where = "at" if regime.met else "below"

    def margin(x):
        return f"1/8 {'-' if x < DEFINITION_BOUND else '+'} {abs(DEFINITION_BOUND - x):.3g}"

    return (
        f"P[y f* <= 0] = {mislabel:.4g} = {margin(mislabel)} (Definition 2.1 asks it "
        f"negligible), P[f* = 0] = {floor:.4g} = {margin(floor)} (Theorem 3.1's 1/8 separates "
        f"only below 1/8), exact; q(D - C) = {rc.q * (rc.D - rc.C):g} vs C^2 = {rc.C**2}: {where} "
        f"the separation size (dynsim's reading of Theorem 3.1's regime, q(D - C) >= C^2)"
    )
