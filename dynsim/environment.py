"""What produced an output: level, dtype, device and package versions."""

from __future__ import annotations

import importlib.metadata
import platform
from typing import Any

import jax

PACKAGES = ("dynsim", "jax", "jaxlib", "flax", "optax", "sympy", "numpy")


def versions() -> dict[str, str]:
    """Installed versions of dynsim and the packages it computes with."""
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def device() -> str:
    """The default JAX device, e.g. "cpu:0 (cpu)"."""
    dev = jax.devices()[0]
    return f"{dev.platform}:{dev.id} ({dev.device_kind})"


def meta(level: str, mode: str, cfg: Any, **extra: Any) -> dict[str, Any]:
    """The metadata every Trajectory carries."""
    return {
        "level": level,
        "mode": mode,
        "setting": type(cfg).__name__,
        "config": cfg.to_dict(),
        "dtype": cfg.dtype,
        "device": device(),
        "matmul_precision": str(jax.config.jax_default_matmul_precision or "default"),
        "versions": versions(),
        **extra,
    }
