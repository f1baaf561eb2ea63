"""dynsim: run the reduced and the full-matrix training dynamics of a one-layer transformer and
compare them.

Importing dynsim enables float64 in JAX (`jax_enable_x64`, process-wide): every comparison is made
in float64 unless a config asks for float32. To keep JAX's own setting (e.g. in a program that wants
float32 everywhere), set the environment variable DYNSIM_X64=0 before the import;
`dynsim.enable_x64(True | False)` switches it explicitly. A float64 config run without x64 is
refused with a message, never computed in float32 silently.

Importing dynsim imports neither JAX nor the levels: the names below that need them (`compare`,
`sweep`, `Trajectory`, the configs, `metrics`) load on first use, so the command line answers
`--help` at once."""

# the C module of `signal`, a builtin imported at once (`signal` itself builds its enums first): the
# start-up handler below is installed within microseconds of dynsim's first line
import _signal
import os
import sys


def _leave_at_start(signum, frame) -> None:
    os.write(2, b"dynsim: interrupted before the command started; nothing was written\n")
    os._exit(128 + signum)


# run as the `dynsim` program (its console script, or `python -m dynsim.cli`, whose argv[0] is "-m"
# while the package imports), a Ctrl-C or SIGTERM before the command takes the signals over
# (`dynsim.cli.main`) leaves with 130 or 143 instead of a traceback from inside an import; imported
# as a library, dynsim keeps the host's handlers (a notebook's Ctrl-C)
if os.path.basename(sys.argv[0] if sys.argv else "") in ("dynsim", "-m"):
    for _sig in (_signal.SIGINT, _signal.SIGTERM):
        if _signal.getsignal(_sig) in (_signal.default_int_handler, _signal.SIG_DFL):
            _signal.signal(_sig, _leave_at_start)

from .setting import (  # noqa: E402
    Checks,
    Command,
    Setting,
    SweepSpec,
    for_config,
    load,
    register,
    settings,
)

X64_OFF = ("0", "false", "no", "off")

__version__ = "0.1.0"

# dynsim's public names in heavier modules: "module:attr" (or a module), loaded on first use
LAZY = {
    "metrics": "dynsim.metrics",
    "compare": "dynsim.checker:compare",
    "Report": "dynsim.checker:Report",
    "JSLConfig": "dynsim.jsl.config:JSLConfig",
    "MIMConfig": "dynsim.mim.config:MIMConfig",
    "sweep": "dynsim.sweeps:sweep",
    "Trajectory": "dynsim.trajectory:Trajectory",
}

__all__ = [
    "JSLConfig",
    "MIMConfig",
    "Trajectory",
    "compare",
    "Report",
    "metrics",
    "sweep",
    "Setting",
    "Checks",
    "Command",
    "SweepSpec",
    "register",
    "settings",
    "enable_x64",
    "__version__",
]


def enable_x64(on: bool = True) -> None:
    """Turn JAX's float64 support (`jax_enable_x64`, process-wide) on or off; dynsim's import turns
    it on unless DYNSIM_X64=0."""
    load("jax").config.update("jax_enable_x64", bool(on))


def __getattr__(name: str):
    if name in LAZY:
        value = load(LAZY[name])
        globals()[name] = value
        return value
    if name.endswith("Config"):
        # a registered setting's config class (a plugin's too): `from dynsim import ICLConfig`
        found = for_config(name)
        if found is not None:
            globals()[name] = found.config
            return found.config
    raise AttributeError(f"module 'dynsim' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))


# x64 without importing JAX: JAX reads JAX_ENABLE_X64 when it is first imported, so setting the
# variable here turns float64 on for this process at no cost; a JAX imported before dynsim is
# switched at once. The variable is in os.environ on purpose: subprocesses started afterwards
# (Dask's local workers, a `dynsim` run as a child) inherit it and compute in float64 from their
# first JAX array, as this process does, even before they import dynsim (which would set it too).
# DYNSIM_X64=0 leaves JAX's setting, and the environment, as they are.
if os.environ.get("DYNSIM_X64", "1").strip().lower() not in X64_OFF:
    if "jax" in sys.modules:
        enable_x64(True)
    else:
        os.environ["JAX_ENABLE_X64"] = "1"

# JAX's persistent compilation cache in a per-user folder (dynsim/compile_cache.py), the same way:
# environment variables before JAX is imported, JAX's config after; a cache the user configured
# is left as it is, and DYNSIM_CACHE=0 leaves it off
from . import compile_cache  # noqa: E402

compile_cache.enable()
