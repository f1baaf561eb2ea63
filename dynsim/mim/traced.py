"""MIMConfig as a JAX pytree (`dynsim.pytree`): its NUMBERS (eta) are traced, its other fields
static. Both levels import this module, so a MIMConfig passed to their compiled programs compiles
once per shape."""

from __future__ import annotations

from dynsim import pytree

from .config import MIMConfig

pytree.register(MIMConfig)
