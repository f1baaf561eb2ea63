"""dynsim: run the reduced and the full-matrix training dynamics of a one-layer transformer and compare them.

Importing dynsim enables float64 in JAX (`jax_enable_x64`, process-wide): every comparison is made in float64
unless a config asks for float32. To keep JAX's own setting (e.g. in a program that wants float32 everywhere), set
the environment variable DYNSIM_X64=0 before the import; `dynsim.enable_x64(True | False)` switches it explicitly.
A float64 config run without x64 is refused with a message, never computed in float32 silently.
"""

import os

import jax

X64_OFF = ("0", "false", "no", "off")


def enable_x64(on: bool = True) -> None:
    """Turn JAX's float64 support (`jax_enable_x64`, process-wide) on or off; dynsim's import turns it on unless
    DYNSIM_X64=0."""
    jax.config.update("jax_enable_x64", bool(on))


if os.environ.get("DYNSIM_X64", "1").strip().lower() not in X64_OFF:
    enable_x64(True)

__version__ = "0.1.0"

from . import metrics  # noqa: E402
from .checker import Report, compare  # noqa: E402
from .jsl import JSLConfig  # noqa: E402
from .mim import MIMConfig  # noqa: E402
from .setting import Checks, Command, Setting, SweepSpec, register, settings  # noqa: E402
from .sweeps import sweep  # noqa: E402
from .trajectory import Trajectory  # noqa: E402

__all__ = ["JSLConfig", "MIMConfig", "Trajectory", "compare", "Report", "metrics", "sweep", "Setting", "Checks",
           "Command", "SweepSpec", "register", "settings", "enable_x64", "__version__"]
