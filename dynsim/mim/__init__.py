"""The MIM setting (Huang, Wen, Chi, Liang 2024), shared by the reduced and the full level.

Its modules and `MIMConfig` load on first use (`dynsim.mim.data`, `from dynsim.mim import
MIMConfig`): finding the setting (`dynsim.mim.setting`) imports neither NumPy nor the levels."""

from dynsim.setting import load

__all__ = ["MIMConfig", "data", "embedding", "model", "partition"]


def __getattr__(name: str):
    if name == "MIMConfig":
        return load(f"{__name__}.config:MIMConfig")
    if name in __all__:
        return load(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
