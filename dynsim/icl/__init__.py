"""The in-context linear regression setting of Zhang, Frei and Bartlett (JMLR 2024): a linear
self-attention layer trained on prompts of linear regression tasks (docs/icl.md).

Its modules load on first use: finding the setting (`dynsim.icl.setting`) imports neither JAX nor
the levels."""

from dynsim.setting import load

from .config import ICLConfig

__all__ = ["ICLConfig", "moments", "traced"]


def __getattr__(name: str):
    if name in __all__:
        return load(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
