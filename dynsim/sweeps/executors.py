"""Where the chunks of a sweep run: in this process (default), on a local Dask cluster (`workers=N`) or on an
existing one (`scheduler="tcp://host:port"`). Results come back to the caller, which alone writes the store, so
a chunk whose worker died and was recomputed elsewhere is still written once."""

from __future__ import annotations

from typing import Iterator, Optional

from dynsim import progress
from dynsim.validation import check_int

from .tasks import compute_chunk


def check(scheduler: Optional[str], workers: Optional[int]) -> None:
    """Validate the executor arguments before any work."""
    if scheduler is not None and workers is not None:
        raise ValueError(f"scheduler = {scheduler!r} and workers = {workers!r} are exclusive: give the address of an "
                         "existing cluster, or a number of local workers, not both")
    if scheduler is not None and (not isinstance(scheduler, str) or "://" not in scheduler):
        raise ValueError(f"scheduler = {scheduler!r} is invalid: must be an address like tcp://HOST:PORT")
    if workers is not None:
        check_int("workers", workers, 1)


def run(tasks: list, scheduler: Optional[str] = None, workers: Optional[int] = None) -> Iterator[list]:
    """Each task's result, as it finishes (in order in-process; in completion order on Dask)."""
    if scheduler is None and workers is None:
        for task in tasks:
            try:
                result = compute_chunk(*task)
            except Exception as exc:
                if progress.interrupted(exc):  # Ctrl-C inside a compiled run: a KeyboardInterrupt for the caller
                    raise KeyboardInterrupt from exc
                raise
            yield result
        return
    if not tasks:
        return
    yield from _dask(tasks, scheduler, workers)


def _dask(tasks: list, scheduler: Optional[str], workers: Optional[int]) -> Iterator[list]:
    from distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler is None:
        # one thread per worker process: JAX uses the cores itself, and processes keep a killed worker's loss local
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster if cluster is not None else scheduler)
    futures = []
    try:
        # pure=False: every task runs even if two look alike; a task of a lost worker is rescheduled by Dask
        futures = [client.submit(compute_chunk, *task, pure=False) for task in tasks]
        for future in as_completed(futures):
            yield future.result()
    finally:
        client.cancel(futures)
        client.close()
        if cluster is not None:
            cluster.close()
