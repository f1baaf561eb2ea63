"""JSLConfig as a JAX pytree (`dynsim.pytree`): its NUMBERS are traced, its other fields static.
Both levels import this module, so a JSLConfig passed to their compiled programs compiles once per
shape."""

from __future__ import annotations

from dynsim import pytree

from .config import JSLConfig

pytree.register(JSLConfig)
