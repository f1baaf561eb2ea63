"""What several test modules share: the clean-refusal assertion, the CLI's command list, the exact
joint law of Assumption 1 and the machine's measured slowdown for deadlines (test modules import
these from here, never from one another)."""

from __future__ import annotations

import argparse
import os
from collections import defaultdict
from fractions import Fraction
from itertools import product

from dynsim import cli
from dynsim import setting as registry


def assert_refused(code: int, err: str, *needles: str, one_line: bool = True) -> str:
    """A refusal of bad input: exit code 2, every needle in stderr, no traceback, and (one_line)
    stderr one line. Returns stderr, stripped."""
    err = err.strip()
    assert code == 2, (code, err)
    for needle in needles:
        assert needle in err, (needle, err)
    assert "Traceback" not in err, err
    if one_line:
        assert len(err.splitlines()) == 1, err
    return err


def register_for_the_test(monkeypatch, setting) -> None:
    """Register `setting` for one test only (what its entry point does in an install): the registry
    is restored afterwards."""
    monkeypatch.setattr(registry, "_registered", dict(registry._registered))
    registry.register(setting)


def run(capsys, *argv) -> tuple[int, str, str]:
    """`dynsim ARGV` in this process: (exit code, stdout, stderr)."""
    capsys.readouterr()
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def slowdown() -> float:
    """How much slower than an idle machine this one runs now, from its measured load: with a
    1-minute load average L on n cores a process gets about n / L of a core, so a deadline measured
    on an idle machine is multiplied by max(1, L / n). Deadlines of tests that time processes (the
    interrupt tests) scale by it instead of assuming an idle machine."""
    return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


def cli_commands() -> list[tuple[tuple[str, str], argparse.ArgumentParser]]:
    """(command line prefix, subparser) of every `dynsim VERB NAME` command."""
    parser = cli.build_parser()
    verbs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = []
    for verb, vp in verbs.choices.items():
        sub = [a for a in vp._actions if isinstance(a, argparse._SubParsersAction)]
        for name, p in sub[0].choices.items() if sub else []:
            out.append(((verb, name), p))
    return out


def joint_law(D, C, q):
    """P(s, y) over every (y, signal set, deltas) of Assumption 1, uniform prior on y and on the
    set, exact Fractions.

    The noise is independent of (y, l, delta) with one law, so it cancels from every posterior: s
    (the vector of <w*, X_j>) is a sufficient statistic, and the joint law of (s, y) is all the
    references need.
    """
    q = Fraction(q)  # the exact binary value of the float, as the code under test takes it
    prob = {1: q / 2, -1: q / 2, 0: 1 - q}
    L = D // C
    joint = defaultdict(Fraction)
    for y in (1, -1):
        for ell in range(L):
            others = [j for j in range(D) if not ell * C <= j < (ell + 1) * C]
            for deltas in product((1, -1, 0), repeat=D - C):
                w = Fraction(1, 2 * L)
                for dl in deltas:
                    w *= prob[dl]
                if w == 0:
                    continue
                s = [y] * D
                for j, dl in zip(others, deltas):
                    s[j] = dl
                joint[(tuple(s), y)] += w
    return joint
