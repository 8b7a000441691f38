"Imports of vqa_robust only go down its floors (scripts/import_graph.py): no cycle, no import back up, inner imports included."
import importlib.util, textwrap
from pathlib import Path

root = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("import_graph", root / "scripts" / "import_graph.py")
graph_module = importlib.util.module_from_spec(spec); spec.loader.exec_module(graph_module)

def test_package_imports_only_go_down():
    graph = graph_module.import_graph(root / "vqa_robust")
    assert {"base", "store", "zoo", "run"} <= set(graph)
    assert graph_module.problems(graph) == []

def test_checker_finds_cycles_upward_and_inner_imports(tmp_path):
    (tmp_path / "base.py").write_text("from .store import x\n")                            # runs back up
    (tmp_path / "store.py").write_text("def f():\n    from vqa_robust.run import y\n")       # inner, and up
    (tmp_path / "run.py").write_text("from . import store\nfrom vqa_robust import base\n")  # down: fine
    (tmp_path / "vle.py").write_text("import vqa_robust.pnp\n")                            # same floor
    (tmp_path / "pnp.py").write_text("def f():\n    from vqa_robust.pnp import g\n")                # itself: not a tie
    (tmp_path / "extra.py").write_text("")                                                  # no floor
    graph = graph_module.import_graph(tmp_path)
    assert graph["store"] == [("run", "inner:2")]
    found = graph_module.problems(graph)
    assert "extra: not on any floor of FLOORS" in found
    assert "base -> store (top): runs back up" in found
    assert "store -> run (inner:2): runs back up" in found
    assert "vle -> pnp (top): same floor" in found
    assert not any(p.startswith(("run ->", "pnp ->")) for p in found)
    assert graph["pnp"] == [("pnp", "inner:2")]
    assert len(found) == 4

def test_the_run_imports_no_vle_code():
    "VLE's network (transformers' CLIP, DeBERTa-v2, BERT attention: seconds to import) loads with the first VLE, not with the run, the zoo or the command."
    import subprocess, sys
    code = ("import sys, vqa_robust.run, vqa_robust.cli, vqa_robust.zoo as zoo\n"
            "print('vqa_robust.vle' in sys.modules, 'transformers.models.deberta_v2.modeling_deberta_v2' in sys.modules, zoo.MODELS['vle'].family)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split() == ["False", "False", "vle"]

def test_one_condition_key():
    "The columns of a condition are written once (vqa_robust.base.CONDITION): no module spells them out again."
    import re
    spelled = [f"{p.name}:{i}" for p in sorted((root / "vqa_robust").glob("*.py")) if p.name not in ("base.py", "_modidx.py")
               for i, line in enumerate(p.read_text().splitlines(), 1) if re.search(r'"model", "corruption", "severity"', line)]
    assert spelled == [], spelled
