"""Reduced JSL: exact population dynamics (P) in (alpha, gamma, rho) (Lemmas 4.1-4.3)."""

from dynsim.jsl import traced  # noqa: F401 (JSLConfig as a pytree: numbers traced, shapes static)

from . import configurations, symbolic
from .dynamics import attention_weights, initial_state, loss_and_gradients
from .many import simulate_many
from .simulation import simulate

__all__ = [
    "simulate",
    "simulate_many",
    "loss_and_gradients",
    "attention_weights",
    "initial_state",
    "configurations",
    "symbolic",
]
