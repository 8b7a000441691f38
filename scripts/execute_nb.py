"""Execute notebooks in place so that their stored outputs are the docs' examples, skipping what `nbdev_test` skips.

Cells flagged `#| slow`, `#| gpu`, `#| notest` or `#| eval: false` keep their stored outputs unless their flag is passed.
Outputs are cleaned as the docs want them: no progress bars, no warnings written to stderr.

    python scripts/execute_nb.py nbs/02_models.ipynb [more.ipynb ...] [--flags slow]
    python scripts/execute_nb.py nbs/02a_training.ipynb --cells 1a2b3c4d   # also this flagged cell (by id), not the others
"""
import argparse, os, re, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
FLAGS = ("slow", "gpu", "notest")

def cell_flags(source: str) -> set[str]:
    "The nbdev flags (and `eval: false`) of one cell."
    found = set(re.findall(r"^#\|\s*(slow|gpu|notest)\s*$", source, re.M))
    if re.search(r"^#\|\s*eval:\s*false", source, re.M): found.add("eval-false")
    return found

def keep_output(output) -> bool:
    "Drop stderr streams (warnings, progress bars) from stored outputs."
    return not (output.get("output_type") == "stream" and output.get("name") == "stderr")

def execute(path: Path, flags: set[str], cells: set[str] = frozenset()) -> None:
    from execnb.nbio import read_nb, write_nb
    from execnb.shell import CaptureShell
    nb = read_nb(path)
    unknown = cells - {cell.id for cell in nb.cells}
    if unknown: raise SystemExit(f"{path.name}: no cell with id {sorted(unknown)}")
    skip = lambda cell: cell.cell_type != "code" or (bool(cell_flags(cell.source) - flags) and cell.id not in cells)
    os.chdir(path.parent)
    shell = CaptureShell(path)
    shell.run_all(nb, exc_stop=True, preproc=skip)
    for cell in nb.cells:  # skipped cells too: their stored outputs are docs as well
        if cell.cell_type == "code": cell.outputs = [o for o in cell.outputs if keep_output(o)]
    write_nb(nb, path)
    print(f"executed {path.relative_to(root)}")

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebooks", nargs="+")
    ap.add_argument("--flags", default="", help="space-separated flags whose cells also run (slow, gpu)")
    ap.add_argument("--cells", nargs="*", default=[], help="ids of flagged cells that also run (one slow cell, not every slow cell of the notebook)")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1"); os.environ.setdefault("TQDM_DISABLE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error"); os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    for nb in [Path(p).resolve() for p in args.notebooks]: execute(nb, set(args.flags.split()), set(args.cells))
