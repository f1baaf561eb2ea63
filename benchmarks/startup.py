"""CPU time of the command line's quick answers, each in a fresh process: `dynsim --help`, `dynsim
compare jsl --help`, `dynsim --version` and `python -c 'import dynsim'`, and the heavy modules each
one imports.

CPU time is user + sys of the child (`resource.getrusage(RUSAGE_CHILDREN)` before and after it), the
median of `--repeats` runs, interleaved across the commands (and across the trees with `--before`).
A command runs as the `dynsim` console script does (`from dynsim.cli import main_entry;
main_entry()`), without the launcher of a version manager in front of it. `--before DIR` measures a
second source tree (e.g. `git archive` of an older commit unpacked in DIR) in the same run, side by
side.

Run: python benchmarks/startup.py [--repeats 7] [--before DIR] [--json FILE]"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = (
    "jax",
    "numpy",
    "scipy",
    "matplotlib",
    "sympy",
    "flax",
    "optax",
    "diffrax",
    "dask",
    "distributed",
)
ENTRY = "from dynsim.cli import main_entry; main_entry()"
COMMANDS = {
    "dynsim --help": [ENTRY, "--help"],
    "dynsim compare jsl --help": [ENTRY, "compare", "jsl", "--help"],
    "dynsim --version": [ENTRY, "--version"],
    "python -c 'import dynsim'": ["import dynsim"],
}
# the same in one process, then the heavy top-level modules it imported and the count of all modules
PROBE = (
    "import sys\nsys.argv = ['dynsim', *sys.argv[1:]]\ntry:\n    exec(sys.argv.pop(1))\nexcept "
    "SystemExit:\n"
    "    pass\nprint('PROBE', len(sys.modules), [m for m in {heavy!r} if m in sys.modules], "
    "file=sys.stderr)"
)


def env_for(root: Path) -> dict:
    """The environment of a child that imports dynsim from `root` (and nothing set by this
    process)."""
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_ENABLE_X64", "PYTHONPATH")}
    return {**env, "PYTHONPATH": str(root)}


def cpu_seconds(argv: list[str], env: dict) -> float:
    """User + sys CPU seconds of one child running `python -c argv[0] argv[1:]`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-c", *argv],
        env=env,
        cwd="/",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def imported(argv: list[str], env: dict) -> tuple[int, list[str]]:
    """How many modules the command imports, and which of HEAVY."""
    probe = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv],
        env=env,
        cwd="/",
        capture_output=True,
        text=True,
        check=False,
    )
    line = next(x for x in probe.stderr.splitlines() if x.startswith("PROBE"))
    _, count, heavy = line.split(" ", 2)
    return int(count), json.loads(heavy.replace("'", '"'))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument(
        "--before", type=Path, default=None, help="a second source tree, measured side by side"
    )
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    a = ap.parse_args()
    trees = {"after": ROOT} if a.before is None else {"before": a.before.resolve(), "after": ROOT}
    times: dict = {(t, c): [] for t in trees for c in COMMANDS}
    for _ in range(a.repeats):
        for t, root in trees.items():
            for c, argv in COMMANDS.items():
                times[(t, c)].append(cpu_seconds(argv, env_for(root)))
    rows = {}
    for (t, c), ts in times.items():
        count, heavy = imported(COMMANDS[c], env_for(trees[t]))
        rows[(t, c)] = {
            "cpu_s": statistics.median(ts),
            "min_s": min(ts),
            "modules": count,
            "heavy": heavy,
        }
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, python "
        f"{platform.python_version()}, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
        f"median of {a.repeats} fresh processes, CPU = user + sys"
    )
    print(
        "| command | "
        + " | ".join(f"{t}: CPU s (min) | {t}: modules | {t}: heavy modules" for t in trees)
        + " |"
    )
    print("|---|" + "---|---|---|" * len(trees))
    for c in COMMANDS:
        cells = [
            f"{rows[(t, c)]['cpu_s']:.2f} ({rows[(t, c)]['min_s']:.2f}) | "
            f"{rows[(t, c)]['modules']} | "
            f"{', '.join(rows[(t, c)]['heavy']) or 'none'}"
            for t in trees
        ]
        print(f"| `{c}` | " + " | ".join(cells) + " |")
    if a.json is not None:
        a.json.write_text(json.dumps({f"{t}: {c}": r for (t, c), r in rows.items()}, indent=1))


if __name__ == "__main__":
    main()
