"""ICLConfig as a JAX pytree (`dynsim.pytree`): its NUMBERS (kappa, sigma, eta) are traced, its
other fields static. Both levels import this module, so a config passed to their compiled programs
compiles once per shape; and Lambda's and Gamma's diagonals in JAX, with kappa traced."""

from __future__ import annotations

import jax.numpy as jnp

from dynsim import pytree

from .config import ICLConfig

pytree.register(ICLConfig)


def spectrum(cfg: ICLConfig) -> jnp.ndarray:
    """The diagonal of Lambda, kappa^((k - 1) / (d - 1)), k = 1..d (ones when d = 1)."""
    if cfg.d == 1:
        return jnp.ones(1, cfg.dtype)
    return jnp.asarray(cfg.kappa, cfg.dtype) ** (jnp.arange(cfg.d, dtype=cfg.dtype) / (cfg.d - 1))


def gamma(cfg: ICLConfig) -> jnp.ndarray:
    """The diagonal of Gamma = (1 + 1/N) Lambda + tr(Lambda)/N I_d (Theorem 4.1)."""
    lam = spectrum(cfg)
    return (1 + 1 / cfg.N) * lam + jnp.sum(lam) / cfg.N
