"""JAX's persistent compilation cache for every dynsim process: a program compiled by one run is
read back from disk by the next, in a per-user folder.

Importing dynsim (the command line imports it first) calls `enable`: unless the user configured
JAX's cache themselves, it points JAX at `folder()`, $XDG_CACHE_HOME/dynsim/jax or
~/.cache/dynsim/jax. Before JAX is imported it sets JAX_COMPILATION_CACHE_DIR and the minimum
compile time of an entry in the environment (JAX reads them on import; subprocesses started
afterwards, such as Dask's local workers, inherit them and share the folder); a JAX imported
before dynsim is configured at once (effective if it has compiled nothing yet).

- JAX_COMPILATION_CACHE_DIR in the environment, or jax_compilation_cache_dir set in a JAX imported
  earlier, wins: dynsim changes nothing of JAX's cache settings then (nor under
  JAX_ENABLE_COMPILATION_CACHE=0, JAX's own switch).
- DYNSIM_CACHE_DIR=PATH chooses the folder; DYNSIM_CACHE=0 (or off, false, no), or
  DYNSIM_CACHE_DIR set empty, leaves the cache off.
- A folder that cannot be created or written leaves the cache off, silently for the default
  folder, with one warning for a DYNSIM_CACHE_DIR the user named.

The folder holds only compiled programs, keyed by the program, JAX's version and the machine: it
is safe to delete at any time. Programs that call back to the host are never written by JAX (the
training scans' progress and Ctrl-C checks, the flow's vector field): those compile in every run.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Optional

SWITCH = "DYNSIM_CACHE"
DIR = "DYNSIM_CACHE_DIR"
OFF = ("0", "false", "no", "off")
JAX_DIR = "JAX_COMPILATION_CACHE_DIR"
JAX_MIN_TIME = "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"
JAX_SWITCH = "JAX_ENABLE_COMPILATION_CACHE"
# seconds of compilation below which a program is not written: reading an entry back costs a few
# milliseconds, so only programs that compile faster than that are skipped (JAX's default, 1 s,
# would skip most of dynsim's programs; docs/benchmarks.md m)
MIN_COMPILE_TIME = "0.02"


def folder(environ=None) -> Optional[str]:
    """The folder dynsim's cache uses: DYNSIM_CACHE_DIR, else $XDG_CACHE_HOME/dynsim/jax (an
    absolute XDG_CACHE_HOME), else ~/.cache/dynsim/jax; None when DYNSIM_CACHE is off, when
    DYNSIM_CACHE_DIR is set empty, or when there is no home folder to put it in."""
    env = os.environ if environ is None else environ
    if env.get(SWITCH, "").strip().lower() in OFF:
        return None
    if DIR in env:
        return os.path.abspath(os.path.expanduser(env[DIR])) if env[DIR].strip() else None
    base = env.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
        if not os.path.isabs(base):  # no home folder: "~" left unexpanded
            return None
    return os.path.join(base, "dynsim", "jax")


def enable() -> Optional[str]:
    """Turn JAX's persistent compilation cache on in `folder()` unless the user configured it
    (module docstring); returns the folder it turned on, None when it left JAX's settings alone."""
    if JAX_DIR in os.environ or os.environ.get(JAX_SWITCH, "").strip().lower() in OFF:
        return None
    jax = sys.modules.get("jax")
    if jax is not None and jax.config.jax_compilation_cache_dir is not None:
        return None
    path = folder()
    if path is None or not _writable(path, warn=DIR in os.environ):
        return None
    if jax is None:
        os.environ[JAX_DIR] = path
        os.environ.setdefault(JAX_MIN_TIME, MIN_COMPILE_TIME)
    else:
        jax.config.update("jax_compilation_cache_dir", path)
        if JAX_MIN_TIME not in os.environ:
            jax.config.update("jax_persistent_cache_min_compile_time_secs", float(MIN_COMPILE_TIME))
    return path


def _writable(path: str, warn: bool) -> bool:
    """Whether `path` is (or can be made) a folder this process can write; warn=True: one warning
    saying why not."""
    try:
        os.makedirs(path, exist_ok=True)
        if not os.access(path, os.W_OK | os.X_OK):
            raise PermissionError(f"no permission to write in {path}")
    except OSError as exc:
        if warn:
            warnings.warn(
                f"dynsim: the compilation cache folder {path} ({DIR}) cannot be written ({exc}); "
                f"running without the cache",
                stacklevel=3,
            )
        return False
    return True
