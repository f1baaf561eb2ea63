"""What produced an output: level, dtype, device and package versions."""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import platform
from typing import Any, Callable

import jax
import numpy as np

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
        # "highest" under `precision`
        "matmul_precision": str(jax.config.jax_default_matmul_precision or "default"),
        "versions": versions(),
        **extra,
    }


@contextlib.contextmanager
def precision(dtype: str):
    """The precision guard of a run in `dtype`, the same on every device.

    float64 (every config's default) needs jax_enable_x64 (importing dynsim enables it): without it
    JAX would make every array float32 without a word, so a float64 run is refused. Matrix products
    run at "highest" precision (full float32 products on accelerators, where the default may use
    TF32 or bfloat16 passes) unless the caller asked for another through
    jax_default_matmul_precision (e.g. `jax.default_matmul_precision("tensorfloat32")` around the
    run, or JAX_DEFAULT_MATMUL_PRECISION): `meta` records the one in effect. float32 runs only when
    a config asks for it (its dtype). On the CPU, and for float64, "highest" changes nothing.
    """
    if np.dtype(dtype) == np.float64 and not jax.config.jax_enable_x64:
        raise ValueError(
            "dtype = 'float64' but jax_enable_x64 is off: JAX would compute in float32 without "
            "a word; enable it (jax.config.update('jax_enable_x64', True)) or ask for "
            "dtype='float32'"
        )
    with jax.default_matmul_precision(jax.config.jax_default_matmul_precision or "highest"):
        yield


def guarded(run: Callable) -> Callable:
    """Run `run(cfg, ...)` (cfg a config, or a list of configs of one dtype) inside
    `precision(cfg.dtype)`."""

    @functools.wraps(run)
    def wrapper(cfg, *args, **kwargs):
        first = cfg[0] if isinstance(cfg, (list, tuple)) and cfg else cfg
        with precision(getattr(first, "dtype", "float64")):
            return run(cfg, *args, **kwargs)

    return wrapper
