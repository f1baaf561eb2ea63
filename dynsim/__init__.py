"""dynsim: run the reduced and the full-matrix training dynamics of a one-layer transformer and compare them.

Importing dynsim enables float64 in JAX (`jax_enable_x64`): every comparison is made in float64
unless a config asks for float32.
"""

import jax

jax.config.update("jax_enable_x64", True)

from . import metrics  # noqa: E402
from .checker import Report, compare  # noqa: E402
from .jsl import JSLConfig  # noqa: E402
from .mim import MIMConfig  # noqa: E402
from .sweeps import sweep  # noqa: E402
from .trajectory import Trajectory  # noqa: E402

__version__ = "0.1.0"
__all__ = ["JSLConfig", "MIMConfig", "Trajectory", "compare", "Report", "metrics", "sweep", "__version__"]
