"""The sizes of JSL's realistic-run claims (docs/jsl.md §13): the `Plan` (the realistic problem's D,
C, q, eta, the horizon T, the N ladder, transfer's N~, Figure 2's search), the realistic config it
gives, and `--realistic-sizes` parsed onto it."""

from __future__ import annotations

import dataclasses
from typing import Optional

from .config import JSLConfig


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


# The default: the smallest size in the separation regime (q(D - C) = C^2 = 4: exact sign-of-count
# GLM f*-error 0.270 against the Bayes floor 0.170), docs/jsl.md §13. eta = 0.02: half GD's
# stability edge at the largest sharpness the exact gradient flow at N = 4000 reaches by t = 750
# (about 50; the stability premise re-measures it on every run: up to 64 at N = 16,000).
# T = 37,500 steps, t = eta T = 750: 1.25 times the latest time by which every row of 4 seeds at
# N = 16,000 was associated (t <= 600 in float64 at eta = 0.02, <= 400 in float32 at eta = 0.015,
# kept to t = 1000).
# Transfer: N~ = 8, 32, 128 (the first below the exact GLM line at this size is 128), 24 seeds: at
# 8 the paired difference (-0.03) was within its 99% margin, at 24 it is not.
FULL = Plan(
    n_ladder=(1000, 4000, 16000),
    horizon=37_500,
    n_test=4096,
    n_tilde=(8, 32, 128),
    transfer_seeds=24,
    transfer_steps=2000,
    fig2_grid=((0.005, 0.01), (0.02, 0.01), (0.005, 0.1), (0.001, 0.3)),
    fig2_steps=4000,
    fig2_n=2048,
    D=10,
    C=2,
    q=0.5,
    eta=0.02,
)
# --quick: the CI-sized D = 9, C = 3 below the separation size (every seed associated by step 1500
# at N = 8000), the judged point's q
QUICK = Plan(
    n_ladder=(500, 8000),
    horizon=2000,
    n_test=2048,
    n_tilde=(8,),
    transfer_seeds=8,
    transfer_steps=2000,
    fig2_grid=(),
    fig2_steps=0,
    fig2_n=256,
)  # no Figure 2 search


def realistic_config(cfg: JSLConfig, plan: Plan) -> JSLConfig:
    """The realistic runs' config: the plan's D, C (d = D, sigma = 1/sqrt(d)), q (None: cfg's) and
    eta, unit temperature, cfg's p, nu, sigma_A, omega and seed, steps = min(cfg.steps,
    plan.horizon), 9 records."""
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
        record_every=max(1, steps // 8),
        n_test=plan.n_test,
        dtype=cfg.dtype,
    )


SIZE_KEYS = {
    "D": ("D", int),
    "C": ("C", int),
    "q": ("q", float),
    "eta": ("eta", float),
    "T": ("horizon", int),
    "N": ("n_ladder", None),
}


def with_sizes(plan: Plan, spec: Optional[str]) -> Plan:
    """`plan` with the realistic sizes of `spec`, any subset of the keys of
    "D=10,C=2,q=0.5,eta=0.015,T=60000,N=1000:4000:16000" (None: plan). A bad key or value raises
    a ValueError naming it."""
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


def plan_for(quick: bool, spec: Optional[str] = None) -> Plan:
    """The plan of `check-theorems jsl`: QUICK or FULL, with --realistic-sizes' changes."""
    return with_sizes(QUICK if quick else FULL, spec)


def describe_sizes(plan: Plan) -> str:
    """The plan's realistic sizes as a --realistic-sizes value (q empty: the judged point's)."""
    q = "" if plan.q is None else f"q={plan.q:g},"
    return (
        f"D={plan.D},C={plan.C},{q}eta={plan.eta:g},T={plan.horizon},"
        f"N={':'.join(map(str, plan.n_ladder))}"
    )


def separation(rc: JSLConfig) -> str:
    """Whether rc is at dynsim's reading of the size where Theorem 3.1's transformer/GLM separation
    exists (q(D - C) >= C^2, docs/jsl.md §12: the paper states no threshold), in words."""
    where = "at" if rc.q * (rc.D - rc.C) >= rc.C**2 else "below"
    return (
        f"q(D - C) = {rc.q * (rc.D - rc.C):g} vs C^2 = {rc.C**2}: {where} the separation size "
        f"(dynsim's reading of Theorem 3.1's regime, q(D - C) >= C^2)"
    )
