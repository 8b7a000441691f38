"The notebooks keep fastcore's rhythm (scripts/notebook_rhythm.py): small export cells, each definition followed by its example and its test."
import importlib.util, json
from pathlib import Path

root = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("notebook_rhythm", root / "scripts" / "notebook_rhythm.py")
rhythm = importlib.util.module_from_spec(spec); spec.loader.exec_module(rhythm)

def test_every_notebook_keeps_the_rhythm():
    "No notebook has more problems than its count in the to-do file (none if unlisted), nor fewer (then its count must come down)."
    notebooks, todo = rhythm.notebooks(), rhythm.todo()
    assert len(notebooks) >= 30
    assert all(p.name[0].isdigit() for p in notebooks)
    assert set(todo) <= {p.name for p in notebooks}, "the to-do file names a notebook that is gone"
    counts = {p.name: len(rhythm.problems(p)) for p in notebooks}
    worse = {name: (n, todo.get(name, 0)) for name, n in counts.items() if n > todo.get(name, 0)}
    better = {name: (counts[name], n) for name, n in todo.items() if counts[name] < n}
    assert not worse, f"(problems, allowed): {worse}; see python scripts/notebook_rhythm.py NOTEBOOK"
    assert not better, f"(problems, allowed): {better}; lower the counts: python scripts/notebook_rhythm.py --todo"

def notebook(tmp_path, *cells) -> Path:
    "A notebook of code cells (id c0, c1, ...) holding these sources."
    path = tmp_path / "99_probe.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "id": f"c{i}", "source": s.splitlines(True), "metadata": {},
                                           "outputs": [], "execution_count": None} for i, s in enumerate(cells)]}))
    return path

def test_checker_finds_what_breaks_the_rhythm(tmp_path):
    long_cell = "#| export\n" + "\n".join(f"x{i} = {i}" for i in range(40))  # 41 lines with the flag
    nb = notebook(tmp_path,
        "#| export\ndef shown(x): return x\ndef hidden(x): return x\ndef _private(x): return x\nclass BadInput(ValueError): pass",
        "shown(1)  # test_eq(shown(1), 1) and assert, in a comment\nprint('test_eq')",  # names shown, tests nothing; hidden never named
        "#| export\nclass Box: pass\n@patch\ndef grow(self: Box): pass",
        "b = Box(); b.grow()\ntest_eq(type(b), Box)",             # the patched method is named as an attribute
        long_cell,
        "#| export\ndef last(): pass")                           # nothing after it
    found = rhythm.problems(nb)
    assert found == ["99_probe.ipynb cell c0: not shown or tested before the next export cell: hidden",
                     "99_probe.ipynb cell c0: no test follows (shown, hidden)",
                     "99_probe.ipynb cell c4: 41 lines (at most 40)",
                     "99_probe.ipynb cell c5: not shown or tested before the next export cell: last",
                     "99_probe.ipynb cell c5: no test follows (last)"]

def test_checker_passes_the_rhythm(tmp_path):
    nb = notebook(tmp_path, "#| export\nimport numpy as np", "#| hide\nfrom fastcore.test import test_eq",
                  "#| export\ndef double(x): return 2 * x", "double(3)", "test_eq(double(3), 6)",
                  "#| export\nLIMIT = 3", "#| export\ndef f(): pass", "%time f()\nassert f() is None")
    assert rhythm.problems(nb) == []
