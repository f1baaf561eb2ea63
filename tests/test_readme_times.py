"""benchmarks/readme_times.py reads the README's test commands too and writes their measured times
into the README, between its markers."""

from pathlib import Path

from benchmarks import readme_times as rt

ROOT = Path(__file__).resolve().parents[1]


def test_the_test_commands_are_measured_and_the_readme_has_their_place():
    readme = (ROOT / "README.md").read_text()
    cmds = rt.commands(readme)
    assert "python -m pytest -q" in cmds and "python -m pytest -m smoke -q" in cmds
    assert readme.index(rt.SUITE_START) < readme.index(rt.SUITE_END)


def test_the_sentence_reads_the_rows_of_the_test_commands_only():
    rows = {
        "dynsim compare jsl --out x": rt.row("dynsim compare jsl --out x", _m(22.8), "2026-11-28"),
        "python -m pytest -q": rt.row("python -m pytest -q", _m(719.6), "2026-11-28"),
        "python -m pytest -m smoke -q": rt.row("python -m pytest -m smoke -q", _m(23.4), "d"),
    }
    text = rt.suite_sentence(rows, "2 CPU cores")
    assert text.startswith(rt.SUITE_START) and text.endswith(rt.SUITE_END)
    assert "`python -m pytest -q` took 12 min 0 s (exit 0, load 0.5 before, 2026-11-28)" in text
    assert "`python -m pytest -m smoke -q` took 23 s" in text and "compare" not in text


def test_minutes_rounds_to_whole_seconds():
    assert (rt.minutes(59.6), rt.minutes(830.3), rt.minutes(23.4)) == (
        "1 min 0 s",
        "13 min 50 s",
        "23 s",
    )


def _m(wall: float) -> dict:
    return {"wall": wall, "cpu": wall, "code": 0, "load": 0.5}


def test_an_install_and_its_main_job_are_two_commands_and_optional_parts_only_of_dynsim():
    assert rt._parts("pip install '.[test]' && dynsim compare jsl  # the main job") == [
        "pip install '.[test]'",
        "dynsim compare jsl",
    ]
    assert rt._parts('dynsim check-theorems jsl [--quick] --only "Lemma 4.1"') == [
        'dynsim check-theorems jsl --only "Lemma 4.1"'
    ]


def test_the_fresh_machine_sentence_names_the_install_the_main_job_and_the_tests():
    fresh = rt.fresh_commands((ROOT / "README.md").read_text())
    assert fresh[0].startswith(rt.INSTALL) and "dynsim compare jsl" in fresh
    assert "python -m pytest -q" in fresh
    rows = {c: rt.row(c, _m(100.0), "d") for c in [*fresh, "dynsim figure jsl-fig4"]}
    text = rt.suite_sentence(rows, "2 CPU cores", fresh)
    assert f"`{fresh[0]}` took 1 min 40 s" in text and "jsl-fig4" not in text


def test_a_measured_line_gets_its_commands_time():
    readme = "```bash\ndynsim compare jsl   # the job (measured: 3 h)\ndynsim derive jsl  # x\n```"
    rows = {"dynsim compare jsl": rt.row("dynsim compare jsl", _m(83.2), "d")}
    assert rt.stamped(readme, rows) == readme.replace("(measured: 3 h)", "(measured: 1 min 23 s)")
