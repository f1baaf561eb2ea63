"""Full MIM: the literal d x d attention matrix Q trained by gradient descent (flax + optax)."""

from dynsim.mim import traced  # noqa: F401 (MIMConfig as a pytree: eta traced, shapes static)

from .module import MaskedAttention
from .training import attention_maps, correlations, simulate, trained, validate_run_options

__all__ = [
    "simulate",
    "validate_run_options",
    "correlations",
    "attention_maps",
    "trained",
    "MaskedAttention",
]
