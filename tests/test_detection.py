"""The claims check the simulator: every setting's planted defects (`dynsim.mutation`, its
`Setting.mutations` catalogue) are caught where the last full detection matrix found them caught
(docs/claims.md, "Detection matrix"), and the healthy simulator holds every claim the matrix reads.

The declared matrix runs in a child process (`python -m dynsim.detection SETTING --declared`): each
defect in the columns its catalogue entry says catch it, between two healthy baselines (a defect
that leaked out of its block would change the second). The child is one process per setting, so a
patched module never reaches the test worker. The framework's own seams are tested in-process
below on small functions."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from dynsim import claims, detection, mutation, setting
from dynsim.claims import NOT_EVALUATED

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARE = 0.9  # the bar: each setting's catalogue is at least 90% caught
# settings still below the bar, with the share their last full matrix measured as a floor that may
# only rise (docs/claims.md, "Detection matrix", says which defects are missed and what would catch
# them); the bar is met when this is empty
SHORTFALL: dict[str, float] = {}
MIN_DEFECTS = 12  # and holds at least this many defects
CATALOGUED = [n for n, s in setting.settings().items() if s.mutations is not None]


def test_every_installed_setting_has_a_catalogue():
    """Every setting the entry points install declares its planted defects: a claim that no defect
    could make fail verifies nothing."""
    assert set(CATALOGUED) >= {"jsl", "mim", "icl"}, CATALOGUED


@pytest.mark.parametrize("name", CATALOGUED)
def test_the_catalogue_is_large_and_mostly_caught(name):
    """At least MIN_DEFECTS defects over at least four kinds; at least SHARE of them declared
    caught; every column the baseline reads (compare and each claim) catches some defect."""
    cat = detection.catalogue(name)
    assert len(cat) >= MIN_DEFECTS
    assert len({m.kind for m in cat}) >= 4
    assert {m.level for m in cat} >= {"full", "both"}
    caught = [m for m in cat if m.caught_by]
    bar = SHORTFALL.get(name, SHARE)
    assert len(caught) >= bar * len(cat) - 1e-9, [m.name for m in cat if not m.caught_by]


@pytest.fixture(scope="module", params=CATALOGUED)
def declared(request, tmp_path_factory):
    """The declared matrix of one setting, computed in a child process."""
    name = request.param
    path = tmp_path_factory.mktemp(f"detect-{name}") / "matrix.json"
    cmd = [sys.executable, "-m", "dynsim.detection", name, "--declared", "--json", str(path)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert path.exists(), done.stderr[-3000:]
    return json.loads(path.read_text()), done


def test_each_defect_is_caught_where_the_catalogue_says(declared):
    """Each defect is caught by every column its catalogue entry names (the child exits 1 and
    names what is missing otherwise); the baselines hold every claim and agree with each other."""
    result, done = declared
    cat = detection.catalogue(result["setting"])
    assert not detection.problems(result), detection.problems(result)
    plan = detection.cover(list(cat))
    assert [r["mutation"] for r in result["rows"]] == list(plan)
    for r in result["rows"]:
        assert set(detection.caught(r)) == set(plan[r["mutation"]]), (r["mutation"], r["cells"])
    assert done.returncode == 0, done.stderr[-3000:]


def test_every_claim_catches_a_defect(declared):
    """Every column of the healthy baseline (compare and each claim) is declared to catch at
    least one defect, and the declared run confirmed it."""
    result, _ = declared
    confirmed = {c for r in result["rows"] for c in detection.caught(r)}
    assert set(detection.columns(result)) <= confirmed, set(detection.columns(result)) - confirmed


# ------------------------------------------------------------------ the seams, on small functions


def _target():
    return "tests.test_detection:scaled"


def scaled(x):
    """A function for the seams: 2 x."""
    return 2 * x


def test_edit_recompiles_one_slip_and_restores():
    slip = mutation.Mutation(
        "twice-twice",
        "factor",
        "full",
        "2 x written 4 x",
        (mutation.edit(_target(), "2 *", "4 *"),),
    )
    module = sys.modules[__name__]
    with mutation.applied(slip, clear=False) as record:
        assert module.scaled(3) == 12
    assert module.scaled(3) == 6
    assert record.calls == {_target(): 1} and not record.silent()


def test_an_edit_that_does_not_match_once_is_refused():
    slip = mutation.Mutation(
        "nothing", "factor", "full", "", (mutation.edit(_target(), "3 *", "4 *"),)
    )
    with pytest.raises(ValueError, match="occurs 0 times"):
        with mutation.applied(slip, clear=False):
            pass
    assert scaled(3) == 6


def test_a_patch_that_never_runs_is_silent():
    slip = mutation.Mutation(
        "unused", "factor", "full", "", (mutation.swap(_target(), lambda f: lambda x: 0),)
    )
    with mutation.applied(slip, clear=False) as record:
        pass
    assert record.silent() == [_target()]


def test_a_crash_inside_one_claim_is_that_claim_not_evaluated():
    """`claims.guarded`: the exception is the claim's reason; a Ctrl-C is raised on."""

    def broken():
        raise ValueError("frozen PP correlations have no switch")

    found = claims.guarded("Lemma X", claims.LITERAL, broken)
    assert found.verdict == NOT_EVALUATED
    assert "ValueError: frozen PP correlations" in found.why()
    with pytest.raises(KeyboardInterrupt):
        claims.guarded("Lemma X", claims.LITERAL, lambda: (_ for _ in ()).throw(KeyboardInterrupt))


def _documented(name: str) -> dict[str, set[str]]:
    """The detection matrix of `name` as docs/claims.md shows it: defect -> its caught columns."""
    text = open(os.path.join(ROOT, "docs", "claims.md"), encoding="utf-8").read()
    section = text.split(f"<!-- detection matrix: {name} -->", 1)[1].split("<!-- end -->", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    out = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        out[cells[0].strip("`")] = {h for h, c in zip(header[3:], cells[3:]) if c == "**caught**"}
    return out


@pytest.mark.parametrize("name", CATALOGUED)
def test_the_documented_matrix_is_the_catalogue(name):
    """docs/claims.md shows each setting's last full matrix; its caught cells are the catalogue's
    caught_by, defect for defect (a catalogue changed without its matrix fails here)."""
    cat = detection.catalogue(name)
    assert _documented(name) == {m.name: set(m.caught_by) for m in cat}
