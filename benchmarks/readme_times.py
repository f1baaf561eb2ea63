"""Run every command of the README on this machine and write its wall and CPU time into
docs/benchmarks.md (section "README commands"), so the README cites measured times, not promises;
the times of the fresh-machine commands (install, main job, tests) also go into the README, beside
them (between SUITE_START and SUITE_END), and a README line whose comment holds "(measured: ...)"
gets its command's time there.

The commands are read from the README's ```bash blocks (`commands`): every line that starts with
`dynsim `, `pip install ` (a `pip install ... && dynsim ...` line contributes both parts) or `python
-m pytest`, continuation lines joined, comments dropped; an optional part in brackets (`[--quick]`,
`[--only CLAIM]`) is left out, so each command runs at its defaults. Each runs in a fresh scratch
folder (its relative --out lands there, and a `dynsim` command's compilation cache, empty; a test
command in a fresh clone of the checkout's last commit, its compilation cache cold, as CI starts; an
install in a fresh virtual environment from a fresh clone, pip's cache off, as on a fresh machine),
one after another; wall time from
`time.perf_counter`, CPU time as user + sys of the child (`resource.getrusage(RUSAGE_CHILDREN)`
before and after), the load average before each run beside it. A command that exits with another
code than the README says it does still gets its time, and its exit code is in the table.

Run: python benchmarks/readme_times.py [--only TEXT ...] [--skip TEXT ...] [--list] [--dry-run]
--only / --skip: run the commands containing TEXT (or all but them); the rows of commands not run
are kept from the table already in docs/benchmarks.md, so one slow command can be measured apart.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOC = ROOT / "docs" / "benchmarks.md"
START, END = "<!-- readme-times:start -->", "<!-- readme-times:end -->"
SUITE_START, SUITE_END = "<!-- suite-time:start -->", "<!-- suite-time:end -->"
TESTS, INSTALL = "python -m pytest", "pip install "
# the README's section whose commands' times go into its sentence between SUITE_START and SUITE_END
FRESH = "## Fresh machine"
STAMP = re.compile(r"\(measured: [^)]*\)")
ROW = re.compile(r"^\| `(?P<cmd>[^`]+)` \|")


def commands(text: str) -> list[str]:
    """The dynsim commands of the README's bash blocks, as the README spells them (brackets
    removed, continuation lines joined)."""
    out, block = [], re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    for body in block:
        body = re.sub(r"\\\n\s*", " ", body)  # continuation lines
        for line in body.splitlines():
            for part in _parts(line):
                out.append(part)
    return list(dict.fromkeys(out))


def _parts(line: str) -> list[str]:
    """The measured commands of one README line (comment dropped, a `pip install ... && dynsim ...`
    line split in two, optional [parts] left out), as the table names them."""
    line = line.split("  #", 1)[0].split(" # ", 1)[0].strip()
    out = []
    for part in line.split(" && "):
        part = part.strip()
        if part.startswith("dynsim "):  # optional parts: the defaults run ('.[test]' stays)
            part = re.sub(r"\s*\[[^\]]*\]", "", part)
        part = part.split(" & ")[0]  # two processes on one store: the first one's time
        if part.startswith(("dynsim ", TESTS, INSTALL)):
            out.append(" ".join(part.split()))
    return out


def measure(command: str, scratch: Path) -> dict:
    """Run `command` in `scratch`: wall and CPU seconds, exit code, load average before."""
    argv, env = shlex.split(command), dict(os.environ)
    if command.startswith(TESTS):  # the committed tree, imported from the clone itself
        argv[0] = sys.executable
        subprocess.run(["git", "clone", "-q", str(ROOT), str(scratch / "clone")], check=True)
        scratch = scratch / "clone"
        env["PYTHONPATH"] = str(scratch)
    elif command.startswith(INSTALL):  # a fresh environment and clone, pip's cache off
        subprocess.run(["git", "clone", "-q", str(ROOT), str(scratch / "clone")], check=True)
        subprocess.run([sys.executable, "-m", "venv", str(scratch / "venv")], check=True)
        argv = [str(scratch / "venv" / "bin" / "pip"), *argv[1:], "--no-cache-dir"]
        scratch = scratch / "clone"
        env.pop("PYTHONPATH", None)
    else:
        argv[0] = shutil.which("dynsim") or argv[0]
        # a compilation cache of its own, empty: the command's time on a fresh machine, whatever
        # ran before it (docs/cli.md 6d)
        env.pop("JAX_COMPILATION_CACHE_DIR", None)
        env["DYNSIM_CACHE_DIR"] = str(scratch / "jax-cache")
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(
        argv, cwd=scratch, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
    return {"wall": wall, "cpu": cpu, "code": done.returncode, "load": load, "tail": tail[0]}


def row(command: str, m: dict, day: str) -> str:
    return (
        f"| `{command}` | {m['wall']:.1f} | {m['cpu']:.1f} | {m['code']} | {m['load']:.1f} "
        f"| {day} |"
    )


def table(rows: dict[str, str], machine: str) -> str:
    head = [
        START,
        f"Machine: {machine}. Wall and CPU (user + sys) seconds of each README command, run one "
        "after another by `python benchmarks/readme_times.py`; load: the 1-minute load average "
        "before the run (on this 2-core machine a load above 2 means the command shared it).",
        "",
        "| command | wall s | CPU s | exit | load | measured |",
        "|---|---|---|---|---|---|",
    ]
    return "\n".join(head + list(rows.values()) + [END])


def minutes(seconds: float) -> str:
    """Seconds as "13 min 50 s" (whole seconds), or "23 s" under a minute."""
    whole = round(seconds)
    return f"{whole // 60} min {whole % 60} s" if whole >= 60 else f"{whole} s"


def suite_sentence(rows: dict[str, str], machine: str, fresh=None) -> str:
    """The README's sentence on the fresh-machine commands' measured times (`fresh`: those of the
    README's FRESH section; None: the test commands), from their rows of the table."""
    times = []
    chosen = [c for c in rows if c.startswith(TESTS)] if fresh is None else fresh
    for command in (c for c in chosen if c in rows):
        cells = [c.strip() for c in rows[command].strip("|").split("|")]
        times.append(
            f"`{command}` took {minutes(float(cells[1]))} (exit {cells[3]}, load "
            f"{cells[4]} before, {cells[5]})"
        )
    return (
        f"{SUITE_START}\nMeasured on {machine} by `python benchmarks/readme_times.py` "
        "(docs/benchmarks.md §n), the install in a fresh environment with pip's cache off and the "
        "tests in a fresh clone with a cold compilation cache, as CI starts: "
        + "; ".join(times)
        + f".\n{SUITE_END}"
    )


def fresh_commands(readme: str) -> list[str]:
    """The commands of the README's FRESH section, up to the sentence of their times."""
    section = readme.split(FRESH, 1)[1].split(SUITE_START, 1)[0] if FRESH in readme else ""
    return commands(section)


def stamped(readme: str, rows: dict[str, str]) -> str:
    """The README with each "(measured: ...)" of a line whose command has a row set to its time."""
    out = []
    for line in readme.split("\n"):
        parts = _parts(line) if STAMP.search(line) else []
        if len(parts) == 1 and parts[0] in rows:
            cells = [c.strip() for c in rows[parts[0]].strip("|").split("|")]
            line = STAMP.sub(f"(measured: {minutes(float(cells[1]))})", line)
        out.append(line)
    return "\n".join(out)


def previous_rows(doc: str) -> dict[str, str]:
    if START not in doc:
        return {}
    body = doc.split(START, 1)[1].split(END, 1)[0]
    return {m["cmd"]: line for line in body.splitlines() if (m := ROW.match(line))}


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    return f"{os.cpu_count()} CPU cores ({cpu}), Python {platform.python_version()}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", nargs="+", default=None, help="run the commands containing TEXT")
    p.add_argument("--skip", nargs="+", default=(), help="do not run those containing TEXT")
    p.add_argument("--list", action="store_true", help="print the commands and exit")
    p.add_argument("--dry-run", action="store_true", help="write nothing to docs/benchmarks.md")
    args = p.parse_args(argv)
    cmds = commands(README.read_text())
    if args.list:
        print("\n".join(cmds))
        return 0
    doc = DOC.read_text()
    old = previous_rows(doc)
    day = datetime.date.today().isoformat()
    rows = {}
    for c in cmds:
        run = (args.only is None or any(t in c for t in args.only)) and not any(
            t in c for t in args.skip
        )
        if not run:
            if c in old:
                rows[c] = old[c]
            continue
        with tempfile.TemporaryDirectory(prefix="readme-times-") as scratch:
            m = measure(c, Path(scratch))
        rows[c] = row(c, m, day)
        print(f"{m['wall']:8.1f} s wall {m['cpu']:8.1f} s CPU  exit {m['code']}  {c}", flush=True)
        if m["code"] not in (0, 1):
            print(f"    {m['tail']}", file=sys.stderr)
    text = table(rows, machine())
    if args.dry_run:
        print(text)
        return 0
    doc = DOC.read_text()  # again: edited while the commands ran, its other sections are kept
    if START in doc:
        doc = doc.split(START, 1)[0] + text + doc.split(END, 1)[1]
    else:
        doc = doc.rstrip("\n") + "\n\n## n. README commands: measured times\n\n" + text + "\n"
    DOC.write_text(doc)
    readme = stamped(README.read_text(), rows)
    if SUITE_START in readme:
        readme = (
            readme.split(SUITE_START, 1)[0]
            + suite_sentence(rows, machine(), fresh_commands(readme))
            + readme.split(SUITE_END, 1)[1]
        )
    README.write_text(readme)
    return 0


if __name__ == "__main__":
    sys.exit(main())
