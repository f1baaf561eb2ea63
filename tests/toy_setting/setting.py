"""The toy setting's declaration: everything dynsim's face needs, in one record."""

from __future__ import annotations

import numpy as np

from dynsim.claims import LITERAL, Claim, Premise, judge
from dynsim.setting import Checks, Setting, SweepSpec, SweepTable
from dynsim.sweeps.common import verdict

from . import levels
from .config import ToyConfig


def monotone_loss(cfg: ToyConfig, log=lambda s: None) -> list[Claim]:
    """Claim: GD on the loss never increases it (true for 0 < eta <= 2; eta > 2 is the negative
    control)."""
    log("reduced: the (m, s) recurrence ...")
    t = levels.reduced(cfg)
    rise = float(np.max(np.diff(t["loss"])))
    return [
        judge(
            "monotone loss",
            statement="GD never increases the population loss",
            reading="max_t L(t+1) - L(t) on the exact population recurrence",
            reading_class=LITERAL,
            regime=f"exact population GD, {cfg.steps} steps",
            measured=rise,
            relation="<=",
            threshold=0.0,
            premises=[Premise("a descent step: eta > 0", cfg.eta, ">", 0.0, "the config's eta")],
            derivation="|1 - eta| <= 1 contracts the error; exact arithmetic gives rises <= 0",
            negative_control="eta = 2.5 diverges (tests/test_toy_setting.py)",
            assumptions=[
                f"linear teacher-student, d = {cfg.d}, {cfg.steps} steps, exact population GD"
            ],
            details={"final_loss": float(t["loss"][-1])},
        )
    ]


def summary(cfg: ToyConfig, red, ful, report) -> dict:
    """One sweep row: each level's final loss and overlap, and the checker's verdict."""
    row = {}
    for prefix, t in (("reduced_", red), ("full_", ful)):
        if t is not None:
            row.update(
                {
                    prefix + "final_loss": float(t["loss"][-1]),
                    prefix + "final_overlap": float(t["overlap"][-1]),
                }
            )
    return {**row, **verdict(report)}


SWEEP = SweepSpec(
    reduced=lambda cfgs, options, batch: [levels.reduced(c) for c in cfgs],
    full=lambda cfgs, options, batch: [
        levels.full(c, mode=options.get("mode", "exact")) for c in cfgs
    ],
    group=lambda cfg, options, level: cfg,
    check=lambda cfg, options, level: None,
    summary=summary,
    defaults={"mode": "exact", "replicates": None, "confidence": 0.999},
    table=SweepTable(
        heatmaps=("final_loss",),
        columns=("final_loss", "final_overlap"),
        example="toy grid, e.g. --eta 0.1,0.2 --d 4,8",
    ),
)

SETTING = Setting(
    name="toy",
    description="linear teacher-student regression (a test setting)",
    config=ToyConfig,
    reduced=levels.reduced,
    full=levels.full,
    checks=Checks(compared=("overlap", "norm2", "loss")),
    modes=("exact", "sampled"),
    claims=monotone_loss,
    sweep=SWEEP,
)

# A negative control: the same setting whose reduced level carries a bug (m drifts by 1e-6 a step)
BROKEN = Setting(
    name="toy-broken",
    description="the toy setting with a wrong reduced update (a negative control)",
    config=ToyConfig,
    reduced=lambda cfg, **kw: levels.reduced(cfg, bias=1e-6),
    full=levels.full,
    checks=SETTING.checks,
    modes=SETTING.modes,
    claims=monotone_loss,
)
