"""What the reduced ICL level accepts: no option of its own (GD or, with compare's --method flow,
the gradient flow), and `simulate`, which loads the simulation (JAX, sympy) when a run starts."""

from __future__ import annotations

from dynsim.icl.config import ICLConfig


def simulate(cfg: ICLConfig, **keywords):
    """The reduced level's run, `simulation.simulate` (its module imports JAX, loaded here)."""
    from . import simulation

    return simulation.simulate(cfg, **keywords)
