"""A level's options as a typed, self-checking record (`dynsim.runoptions`), and the flags the
command line generates from it (`dynsim.cli.declared`)."""

import pytest

from dynsim import runoptions
from dynsim.cli import declared
from full.icl import spec as full_icl
from full.jsl import spec as full_jsl
from full.mim import spec as full_mim
from reduced.jsl import spec as reduced_jsl
from reduced.mim import spec as reduced_mim


@pytest.mark.parametrize(
    "record,values,error,needle",
    [
        (full_jsl.FullOptions, {"replicates": "4"}, TypeError, "FullOptions.replicates must be"),
        (full_jsl.FullOptions, {"replicates": 0}, ValueError, "FullOptions.replicates = 0"),
        (full_jsl.FullOptions, {"ladder": [4000, 0]}, ValueError, "FullOptions.ladder = 0"),
        (full_jsl.FullOptions, {"ladder": "4000"}, TypeError, "a list of integers"),
        (full_icl.FullOptions, {"replicates": 2.5}, TypeError, "must be an integer"),
        (full_mim.FullOptions, {"replicates": True}, TypeError, "must be an integer"),
        (reduced_mim.ReducedOptions, {"approximation": "x"}, ValueError, "must be one of"),
        (reduced_mim.ReducedOptions, {"versus_frozen": 1}, TypeError, "True or False"),
        (reduced_mim.ReducedOptions, {"approximation_tolerance": float("nan")}, ValueError,
         "finite"),
        # the record's own check (`check_sum_options`), after each field's kind
        (reduced_jsl.ReducedOptions, {"tail_target": 2.0}, ValueError, "strictly between 0 and 1"),
    ],
)  # fmt: skip
def test_a_record_refuses_a_field_naming_it(record, values, error, needle):
    with pytest.raises(error, match=needle):
        record(**values)


def test_a_record_of_good_values_is_built_and_of_ignores_other_options():
    r = full_jsl.FullOptions.of({"replicates": 4, "mode": "sampled", "ladder": [250, 1000]})
    assert (r.replicates, r.seeds, r.ladder) == (4, None, [250, 1000])


def test_the_flags_are_generated_from_the_fields():
    """Each field one flag, in the record's order, its parse, metavar, verbs and modes as declared;
    --replicates is the core's declaration in every full level."""
    flags = {o.flag: o for o in declared.level_options(full_jsl.FullOptions)}
    assert list(flags) == ["--replicates", "--seeds", "--ladder"]
    assert flags["--replicates"].metavar == "R" and flags["--replicates"].modes == ("sampled",)
    assert flags["--replicates"].verbs == ("compare", "sweep")
    assert flags["--ladder"].type("250,1000") == [250, 1000] and flags["--seeds"].type("3") == 3
    replicates = [
        declared.level_options(r)[0] for r in (full_icl.FullOptions, full_mim.FullOptions)
    ]
    assert all(o.flag == "--replicates" and o.metavar == "R" for o in replicates)
    mim = {o.flag: o for o in declared.level_options(reduced_mim.ReducedOptions)}
    assert mim["--versus-frozen"].action == "store_true" and mim["--versus-frozen"].default is False
    assert mim["--approximation-tolerance"].checker and mim["--approximation"].choices


def test_an_unknown_parse_is_refused():
    with pytest.raises(ValueError, match="parse"):
        runoptions.option("help", parse=("complex",))
