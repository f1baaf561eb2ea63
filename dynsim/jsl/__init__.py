"""The JSL setting (Jelassi, Sander, Li 2022), shared by the reduced and the full level.

Its modules load on first use (`dynsim.jsl.data`, `from dynsim.jsl import model`): finding the
setting (`dynsim.jsl.setting`) imports neither JAX nor the levels."""

from dynsim.setting import load

from .config import JSLConfig

__all__ = ["JSLConfig", "data", "model", "partition"]


def __getattr__(name: str):
    if name in __all__:
        return load(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
