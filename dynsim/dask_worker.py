"""Loaded by each worker process of a sweep's private Dask cluster (its `preload`,
`dynsim.sweeps.executors.local_cluster`; outside `dynsim.sweeps`, whose import takes seconds): the
worker ignores SIGINT, so a Ctrl-C at a terminal, which reaches the whole process group, is acted
on by the sweep alone (it then kills its workers); a worker would otherwise die with a
KeyboardInterrupt traceback."""

import signal
import threading


def dask_setup(worker) -> None:
    """Dask's preload hook, run in the worker process when it starts."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
