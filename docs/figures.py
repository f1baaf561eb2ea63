"""Regenerate the images of docs/img, each from the dynsim command that makes it.

    python docs/figures.py --list              # every image and its command
    python docs/figures.py compare-jsl ...     # regenerate some (names with or without .png)
    nice python docs/figures.py                # regenerate all (minutes on 2 CPU cores)

Each command runs in a temporary folder (`python -m dynsim.cli COMMAND --out TMP`, exit 0 expected;
a command that judges claims, whose figure is written whatever their verdicts, may exit 0, 1 or 3),
and the PNG it writes there is copied into docs/img under the image's name. Images made by one
command (the K study's two heatmaps) share one run. Exit 0 when every image asked for was written,
2 on an unknown name or a command that failed.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile

IMG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "img")
# the exit codes of a command that judges claims (an experiment, check-theorems) that still mean
# its figure was written (its claims' verdicts)
VERDICT_EXITS = (0, 1, 3)


@dataclasses.dataclass(frozen=True)
class Figure:
    """One image of docs/img: its file name, the dynsim arguments that make it (without --out),
    the PNG the command writes into --out, and the exit codes that mean it was written."""

    name: str
    command: tuple[str, ...]
    output: str
    exits: tuple[int, ...] = (0,)

    def argv(self, out: str) -> list[str]:
        """The dynsim arguments with --out `out`."""
        return [*self.command, "--out", out]


JSL_SWEEP = (
    *("sweep", "jsl", "--D", "16", "--C", "4", "--temperature", "unit", "--nu", "0.02"),
    *("--q", "0.1,0.15,0.2,0.25,0.3,0.35,0.4,0.45,0.5"),
    *("--eta", "0.025,0.05,0.075,0.1,0.15,0.2", "--steps", "20000", "--record-every", "200"),
    *("--seeds", "2", "--heatmap", "T1_attention,final_loss"),
)
# docs/mim.md §6b, the K study
MIM_K_STUDY = (
    *("sweep", "mim", "--P", "64,256", "--K", "1,2,4,8", "--kappa-c", "0.9", "--kappa-s", "0.4"),
    *("--mask-ratio", "0.5", "--partition", "random", "--approximation", "mean_field"),
    *("--versus-frozen", "--steps", "8000", "--record-every", "80"),
    *("--heatmap", "pp_over_fp,fp_deviation_from_pp_frozen,own_area_attention_min"),
    *("--heatmap-axes", "K,P"),
)
FIGURES = (
    # README's headline: a small problem whose Events I-III (T0, T1_attention, T3) all happen
    # within the run
    Figure(
        "compare-jsl.png",
        (
            *("compare", "jsl", "--q", "0.3", "--nu", "1e-3", "--temperature", "unit"),
            *("--eta", "0.25", "--steps", "30000", "--record-every", "10"),
        ),
        "compare.png",
    ),
    Figure("jsl-fig4.png", ("figure", "jsl-fig4"), "jsl-fig4.png"),
    Figure("mim-phases.png", ("figure", "mim-phases"), "mim-phases.png"),
    Figure("mim-attention.png", ("figure", "mim-attention"), "mim-attention.png"),
    Figure("sweep-jsl.png", JSL_SWEEP, "heatmap-reduced_T1_attention.png"),
    Figure("mim-k-study.png", MIM_K_STUDY, "heatmap-reduced_pp_over_fp.png"),
    Figure(
        "mim-k-study-frozen.png", MIM_K_STUDY, "heatmap-reduced_fp_deviation_from_pp_frozen.png"
    ),
    # docs/icl.md: the trained layer's error against the paper's formula and least squares
    Figure("icl-error.png", ("figure", "icl-error"), "icl-error.png"),
    # docs/claims.md: what each verdict of check-theorems mim --quick read
    Figure("theorems-mim.png", ("check-theorems", "mim", "--quick"), "theorems.png", VERDICT_EXITS),
    # docs/images.md: the papers' Section 6 in miniature, the figure written whatever the claims'
    # verdicts: dynsim.claims.exit_code, 0 every claim holds, 1 some fails, 3 none fails but some
    # is not applicable or not evaluated
    Figure("jsl-images.png", ("experiment", "jsl-images"), "jsl-images.png", VERDICT_EXITS),
    Figure("mim-images.png", ("experiment", "mim-images"), "mim-images.png", VERDICT_EXITS),
)


def command_line(figure: Figure) -> str:
    """The command as one types it (--out left to the reader)."""
    return "dynsim " + " ".join(figure.command) + " --out DIR"


def select(names: list[str]) -> list[Figure]:
    """The figures named (with or without .png), all of them for none; an unknown name raises
    ValueError naming the known ones."""
    if not names:
        return list(FIGURES)
    known = {f.name: f for f in FIGURES}
    wanted = [n if n.endswith(".png") else n + ".png" for n in names]
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise ValueError(
            f"unknown image {', '.join(unknown)}: the images are "
            + ", ".join(f.name[: -len(".png")] for f in FIGURES)
        )
    return [known[n] for n in dict.fromkeys(wanted)]


def regenerate(figures: list[Figure], img: str = IMG) -> None:
    """Run each figure's command in a temporary folder (once per distinct command) and copy its PNG
    into `img`; a command that exits non-zero raises RuntimeError."""
    done: dict[tuple[str, ...], str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for figure in figures:
            if figure.command not in done:
                out = os.path.join(tmp, f"run{len(done)}")
                print(f"{figure.name}: {command_line(figure)}", flush=True)
                argv = [sys.executable, "-m", "dynsim.cli", *figure.argv(out)]
                code = subprocess.run(argv).returncode
                if code not in figure.exits:
                    raise RuntimeError(f"{command_line(figure)} exited {code}")
                done[figure.command] = out
            shutil.copyfile(
                os.path.join(done[figure.command], figure.output), os.path.join(img, figure.name)
            )
            print(f"wrote {os.path.join(img, figure.name)}", flush=True)


def main(argv=None) -> int:
    """The command line: --list, or the images to regenerate."""
    parser = argparse.ArgumentParser(
        description="Regenerate the images of docs/img from the dynsim commands that make them."
    )
    parser.add_argument("names", nargs="*", help="images to regenerate (default: all)")
    parser.add_argument("--list", action="store_true", help="print each image and its command")
    args = parser.parse_args(argv)
    try:
        figures = select(args.names)
        if args.list:
            for figure in figures:
                print(f"{figure.name}: {command_line(figure)}  (writes {figure.output})")
            return 0
        regenerate(figures)
    except (ValueError, RuntimeError) as exc:
        print(f"figures.py: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
