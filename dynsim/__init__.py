"""dynsim: run the reduced and the full-matrix training dynamics of a one-layer transformer and compare them.

Importing dynsim enables float64 in JAX (`jax_enable_x64`): every comparison is made in float64
unless a config asks for float32.
"""

import jax

jax.config.update("jax_enable_x64", True)

__version__ = "0.1.0"

from . import metrics  # noqa: E402
from .checker import Report, compare  # noqa: E402
from .jsl import JSLConfig  # noqa: E402
from .mim import MIMConfig  # noqa: E402
from .setting import Checks, Command, Setting, SweepSpec, register, settings  # noqa: E402
from .sweeps import sweep  # noqa: E402
from .trajectory import Trajectory  # noqa: E402

__all__ = ["JSLConfig", "MIMConfig", "Trajectory", "compare", "Report", "metrics", "sweep", "Setting", "Checks",
           "Command", "SweepSpec", "register", "settings", "__version__"]
