"""Sweeps on Dask: a LocalCluster on loopback gives the in-process table, also when a worker is killed mid-sweep."""

from __future__ import annotations

import os
import signal
import threading
import time

import dynsim
from dynsim.cli import main

AXES = {"q": [0.15, 0.2, 0.25, 0.3, 0.35, 0.4]}
BASE = dict(D=9, C=3, steps=40000, record_every=1000)


def test_killed_worker_points_are_recomputed_elsewhere_once(tmp_path):
    from distributed import Client, LocalCluster

    store = tmp_path / "dask"
    killed: dict = {}
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)

    def kill_a_busy_worker():
        deadline = time.time() + 300
        while time.time() < deadline and "pid" not in killed:
            stored = list(store.glob("points/*/*.npz"))
            busy = [w for w, tasks in client.processing().items() if tasks]
            if stored and busy:
                pids = client.run(os.getpid, workers=[busy[0]])
                killed.update(pid=pids[busy[0]], stored_before=len(stored))
                os.kill(killed["pid"], signal.SIGKILL)
            time.sleep(0.05)

    killer = threading.Thread(target=kill_a_busy_worker, daemon=True)
    try:
        killer.start()
        res = dynsim.sweep("jsl", AXES, base=BASE, out=str(store), scheduler=cluster.scheduler_address,
                           chunk_size=1, batch_size=1)
        killer.join(timeout=5)
    finally:
        client.close()
        cluster.close()
    assert "pid" in killed and killed["stored_before"] < len(AXES["q"]), killed  # the kill came mid-sweep
    assert len(res.computed) == len(set(res.computed)) == len(AXES["q"])  # every point once: none lost or doubled
    local = dynsim.sweep("jsl", AXES, base=BASE, out=str(tmp_path / "local"), chunk_size=1, batch_size=1)
    assert (store / "table.csv").read_text() == (tmp_path / "local" / "table.csv").read_text()
    assert res.rows == local.rows


def test_cli_workers_2_gives_the_in_process_table(tmp_path, capsys):
    args = ["sweep", "jsl", "--D", "9", "--C", "3", "--q", "0.2,0.3", "--eta", "0.05,0.1", "--steps", "400",
            "--record-every", "100", "--chunk-size", "2"]
    assert main(args + ["--out", str(tmp_path / "a")]) == 0
    assert main(args + ["--out", str(tmp_path / "b"), "--workers", "2"]) == 0
    assert (tmp_path / "a" / "table.csv").read_text() == (tmp_path / "b" / "table.csv").read_text()
    assert "4 computed now" in capsys.readouterr().out
