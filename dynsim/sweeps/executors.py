"""Where the chunks of a sweep run: in this process (default), on a private local Dask cluster
(`workers=N`) or on an existing one (`scheduler="tls://host:port"` with `security=FILE`). Results
come back to the caller, which alone writes the store, so a chunk whose worker died and was
recomputed elsewhere is still written once.

The local cluster is private: TLS with credentials made for it in memory (`Security.temporary()`),
scheduler, nannies and workers bound to 127.0.0.1, no dashboard unless asked (then on 127.0.0.1
too). A connection without the credentials is refused in the TLS handshake, before any message is
read (docs/sweeps.md §6).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import signal
import threading
import time
import warnings
from typing import Any, Callable, Iterable, Iterator, Optional

from dynsim import inputs, interrupt, progress
from dynsim.validation import check_int

from .tasks import compute_chunk
from .threads import POLL_S, side_by_side

HOST = "127.0.0.1"
# each worker ignores SIGINT (its module docstring); a light module: the workers load it at start-up
WORKER_SETUP = "dynsim.dask_worker"
# seconds for each stage of connecting to a scheduler (Dask's `Client(timeout=...)`); the whole
# connection gets three times this (`_connect`): a listener that accepts and stays silent is
# refused, not waited on
CONNECT_SECONDS = 30.0
# the loggers silenced while a sweep kills its workers (`_dask_quiet`)
QUIET_LOGGERS = ("distributed", "tornado.application", "asyncio")
# the fields of a --security file: paths to PEM files (relative to the file's folder), as
# distributed.Security names them
SECURITY_FIELDS = ("tls_ca_file", "tls_client_cert", "tls_client_key")
MAX_SECURITY_BYTES = 1 << 16  # three paths in TOML: a larger file is not a security file


def validate_executor(
    scheduler: Optional[str],
    workers: Optional[int],
    security: Any = None,
    dashboard: bool = False,
    insecure: bool = False,
) -> None:
    """Validate the executor arguments before any work. A scheduler without TLS credentials is
    refused unless `insecure`: its workers' results are unpickled in this process, that is, run."""
    if scheduler is not None and workers is not None:
        raise ValueError(
            f"scheduler = {scheduler!r} and workers = {workers!r} are exclusive: give the "
            f"address of an "
            "existing cluster, or a number of local workers, not both"
        )
    if scheduler is not None and (not isinstance(scheduler, str) or "://" not in scheduler):
        raise ValueError(
            f"scheduler = {scheduler!r} is invalid: must be an address like tls://HOST:PORT"
        )
    if scheduler is not None and security is None and not insecure:
        raise ValueError(
            f"scheduler = {scheduler!r} is invalid without TLS credentials (--security FILE): "
            "its workers' results are unpickled in this process, so whoever runs them runs code "
            "here; --insecure-scheduler (insecure_scheduler=True) connects anyway, trusting the "
            "scheduler, its workers and the network (docs/sweeps.md §6)"
        )
    if workers is not None:
        check_int("workers", workers, 1)
    if dashboard and workers is None:
        raise ValueError(
            "dashboard = True is invalid without workers: it is the dashboard of the local cluster "
            "that workers=N starts"
        )
    if dashboard and importlib.util.find_spec("bokeh") is None:
        raise ValueError(
            "dashboard = True is invalid here: the Dask dashboard needs bokeh (pip install bokeh)"
        )
    if security is not None:
        if scheduler is None:
            raise ValueError(
                f"security = {security!r} is invalid without a scheduler: it holds the "
                f"credentials of "
                "an existing TLS cluster (a local cluster, workers=N, makes its own)"
            )
        if not scheduler.startswith("tls://"):
            raise ValueError(
                f"scheduler = {scheduler!r} is invalid with security = {security!r}: a secured "
                "scheduler's address starts with tls://"
            )
        load_security(security)


def load_security(security):
    """A distributed.Security from a TOML file of SECURITY_FIELDS (tls_ca_file and tls_client_cert
    required, the key may be in the certificate's file); a ValueError naming the file and what is
    wrong. A Security given instead of a path is returned as it is (the Python API's way to pass a
    cluster's credentials)."""
    from distributed.security import Security

    if isinstance(security, Security):
        return security
    path = security
    fields = inputs.read_toml(path, MAX_SECURITY_BYTES, "security")
    unknown = sorted(set(fields) - set(SECURITY_FIELDS))
    missing = [name for name in SECURITY_FIELDS[:2] if name not in fields]
    if unknown or missing:
        raise ValueError(
            f"security = {path!r} is invalid: it must give {', '.join(SECURITY_FIELDS[:2])} "
            f"(and may give tls_client_key), paths to PEM files; unknown {unknown}, missing "
            f"{missing}"
        )
    files = {}
    for name, value in fields.items():
        file = os.path.join(os.path.dirname(os.path.abspath(path)), str(value))
        if not isinstance(value, str) or not os.path.isfile(file):
            raise ValueError(
                f"security = {path!r} is invalid: {name} = {value!r} is not a readable file"
            )
        files[name] = file
    return Security(require_encryption=True, **files)


def local_cluster(workers: int, dashboard: bool = False):
    """A private LocalCluster of `workers` processes (one thread each) and the Security that admits
    a client: TLS with temporary credentials, everything on 127.0.0.1. Without `dashboard` the HTTP
    servers Dask starts anyway (scheduler and workers, free ports on 127.0.0.1) serve no route; with
    it, the scheduler's serves the dashboard and Dask's usual routes (metrics, info pages)."""
    import dask
    from distributed import LocalCluster
    from distributed.security import Security

    security = Security.temporary()
    quiet = (
        {}
        if dashboard
        else {"distributed.scheduler.http.routes": [], "distributed.worker.http.routes": []}
    )
    # the nannies hand this config to the workers they start; SIGINT is not ignored here while they
    # start (it was, and a Ctrl-C during start-up was lost): each worker ignores it itself
    # (WORKER_SETUP)
    with dask.config.set(quiet):
        # one thread per worker process: JAX uses the cores itself, and a killed worker's loss stays
        # local
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host=HOST,
            protocol="tls://",
            security=security,
            dashboard_address=f"{HOST}:0" if dashboard else None,
            scheduler_kwargs={"dashboard_address": f"{HOST}:0"},
            worker_dashboard_address=None,
            preload=[WORKER_SETUP],
        )
    return cluster, security


def run(
    tasks: Iterable,
    scheduler: Optional[str] = None,
    workers: Optional[int] = None,
    security: Any = None,
    dashboard: bool = False,
    log: Optional[Callable[[str], None]] = None,
    fn: Callable = compute_chunk,
    threads: int = 1,
) -> Iterator:
    """fn(*task) of each task, as it finishes (in order in-process; in completion order on Dask or
    with `threads` > 1). In process, a task is taken from `tasks` only when the previous one is done
    (a sweep claims its points then), or with `threads` > 1 when one of that many threads is free
    (`threads.side_by_side`). `fn`: a top-level function of plain data (by default a sweep's chunk,
    `compute_chunk`)."""
    if scheduler is None and workers is None and threads > 1:
        yield from side_by_side(tasks, fn, threads)
        return
    if scheduler is None and workers is None:
        for task in tasks:
            interrupt.raise_if_interrupted()  # a safe point between chunks
            try:
                result = fn(*task)
            except Exception as exc:
                # Ctrl-C inside a compiled run: a KeyboardInterrupt for the caller
                if progress.interrupted(exc):
                    raise KeyboardInterrupt from exc
                raise
            yield result
        return
    yield from _dask(tasks, scheduler, workers, security, dashboard, log, fn)


def _dask(
    tasks: Iterable,
    scheduler: Optional[str],
    workers: Optional[int],
    security: Any,
    dashboard: bool,
    log: Optional[Callable[[str], None]],
    fn: Callable,
) -> Iterator:
    from distributed import Client, as_completed

    tasks = list(tasks)  # every chunk is claimed now: they run in parallel
    if not tasks:
        return
    cluster = None
    if scheduler is None:
        try:
            cluster, credentials = local_cluster(workers, dashboard)
        except Exception:
            # a signal to the process group while the workers start kills them, and the nanny
            # reports "failed to start": the interrupt is what happened, not Dask's error
            interrupt.raise_if_interrupted()
            raise
        if dashboard and log is not None:
            log(
                f"Dask dashboard at {cluster.dashboard_link} (this machine only; no password: "
                f"any local user can "
                "read it)"
            )
        client = Client(cluster, security=credentials)
    else:
        if security is None and not scheduler.startswith("tls://"):
            warnings.warn(
                f"scheduler {scheduler} is not authenticated: anyone who can reach it can run "
                f"code on its "
                "workers as their owner; use a TLS cluster and --security FILE (docs/sweeps.md §6)",
                UserWarning,
                stacklevel=2,
            )
        try:  # security None: Dask's configuration
            client = _connect(
                Client, scheduler, None if security is None else load_security(security)
            )
        # refused, timed out, or TLS without credentials (TypeError)
        except (OSError, TypeError) as exc:
            raise ValueError(
                f"scheduler = {scheduler!r} is invalid: cannot connect ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0] if str(exc) else ''}); with a TLS scheduler give "
                f"--security "
                "FILE"
            ) from None
    futures = []
    try:
        # pure=False: every task runs even if two look alike; a task of a lost worker is rescheduled
        # by Dask
        futures = [client.submit(fn, *task, pure=False) for task in tasks]
        yield from _as_completed(as_completed(futures))
    # Ctrl-C, or a failed task: our own workers are killed, not asked to finish their chunks
    except BaseException:
        # the scheduler's links to our killed workers break, as intended
        with _dask_quiet() if cluster is not None else contextlib.nullcontext():
            if cluster is not None:
                _kill_workers(cluster)
            # what closing a cluster of killed workers raises (a nanny that restarted a worker in
            # between and failed) must not replace the error or the interrupt being raised
            with contextlib.suppress(Exception):
                _close(client, futures, cluster)
        raise
    _close(client, futures, cluster)


def _connect(client_class, scheduler: str, security):
    """`Client(scheduler)` once the scheduler has answered Dask's handshake within 3 x
    CONNECT_SECONDS: Dask's Client bounds the connection but waits for that answer without a
    deadline, so a listener that accepts and stays silent would hold it forever. The probe runs on
    a fresh event loop in a thread of its own (a caller's running loop, a notebook's, is left
    alone), and is cancelled cleanly at its deadline."""
    from distributed.comm import connect

    args = {} if security is None else security.get_connection_args("client")
    failed: list = []

    async def probe():
        deadline = 3 * CONNECT_SECONDS
        comm = await asyncio.wait_for(connect(scheduler, CONNECT_SECONDS, **args), deadline)
        await comm.close()

    def run():
        try:
            asyncio.run(probe())
        except asyncio.TimeoutError:
            failed.append(TimeoutError(f"no answer in {3 * CONNECT_SECONDS:g} s"))
        except BaseException as exc:  # handed to the caller
            failed.append(exc)

    thread = threading.Thread(target=run, name="dynsim-connect", daemon=True)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return client_class(scheduler, security=security, timeout=CONNECT_SECONDS)


def _as_completed(pending) -> Iterator:
    """The results of a Dask `as_completed` as they finish, polled every POLL_S seconds with a safe
    point for Ctrl-C between polls (`interrupt.raise_if_interrupted`): waiting inside Dask, the
    signal would only be seen by the watchdog, which leaves without killing the workers."""
    while not pending.is_empty():
        interrupt.raise_if_interrupted()
        batch = pending.next_batch(block=False)
        if not batch:
            progress.pulse()  # the chunks run on the workers: the bar says how long
            time.sleep(POLL_S)
        for future in batch:
            yield future.result()


def _close(client, futures: list, cluster) -> None:
    """Cancel what is left, close the client and (ours only) the cluster; idempotent."""
    client.cancel(futures)
    client.close()
    if cluster is not None:
        cluster.close()


@contextlib.contextmanager
def _dask_quiet():
    """Dask's loggers in this process (the scheduler and the nannies run here), and those of the
    event loop they run on, silenced while our workers are killed and the cluster closes: each
    broken link to a killed worker is logged with its traceback ("Batched Comm Closed ...
    CommClosedError", seen in CI after a process-group Ctrl-C; "Nanny failed to start" from a
    nanny that restarted a worker a SIGTERM killed), which is noise to a user who pressed Ctrl-C.
    The levels are restored afterwards, for the next sweep of a library user."""
    loggers = [logging.getLogger(n) for n in QUIET_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def _kill_workers(cluster) -> None:
    """SIGKILL the worker processes of our LocalCluster: a busy worker asked to close waits 4 s for
    its compiled run (measured), past the interrupt watchdog; killed first, the cluster closes in
    0.03 s. Their finished chunks are already stored by this process."""
    for nanny in list(cluster.workers.values()):
        pid = getattr(getattr(getattr(nanny, "process", None), "process", None), "pid", None)
        if isinstance(pid, int):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
