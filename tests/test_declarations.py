"""The built-in settings use the core's verbs and declare each level option once."""

import pytest

from dynsim import setting as registry
from dynsim import verbs

CORE = {"mode", "confidence"}  # the sweep's own level options, not declared by a setting


@pytest.mark.parametrize("name", ["jsl", "mim"])
def test_the_setting_declares_no_compare_check_or_derive_of_its_own(name):
    """compare, check-theorems and derive are the core's (dynsim.cli.runs) for JSL and MIM: a
    Command of the setting under those verbs would replace them."""
    found = registry.get(name)
    assert [
        c.verb for c in found.commands if c.verb in ("compare", "check-theorems", "derive")
    ] == []
    assert verbs.claims(found) is not None and verbs.derivation(found) is not None


@pytest.mark.parametrize("name", ["jsl", "mim"])
def test_the_sweeps_option_names_are_the_declared_options(name):
    """A sweep records the option names of its SweepSpec in each point's key; the command line
    offers the levels' declared options with "sweep" in their verbs. The two name the same
    options, so an option is declared once (its help, type and default in one place)."""
    found = registry.get(name)
    spec = found.sweep
    declared = {o.dest for o in verbs.sweep_options(found)}
    assert declared == set(spec.reduced_options + spec.full_options) - CORE
