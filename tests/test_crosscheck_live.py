"""The cross-checks run live: each original (LAVIS 1.0.2's BLIP VQA and PNP-VQA, iflytek/VLE's VLEForVQA) is run again in its side
environment by the command that made the committed fixture, and must give the same outputs. Slow (a side environment is a few
minutes to build): `python scripts/test.py --flags slow`. VLE needs a checkout of iflytek/VLE in VLE_SRC."""
import json, os, subprocess, sys
from pathlib import Path
import pytest, torch
from safetensors.torch import load_file

root = Path(__file__).resolve().parent.parent
fixtures = root / "tests" / "fixtures" / "crosscheck"
pytestmark = pytest.mark.slow

def regenerate(script: str, *args: str):
    p = subprocess.run([sys.executable, str(root / "scripts" / "crosscheck" / script), *args], capture_output=True, text=True, cwd=root)
    assert p.returncode == 0, p.stderr[-3000:]

def same(a, b) -> bool:
    "Equal, tensors element for element, through lists and dicts."
    if torch.is_tensor(a): return torch.is_tensor(b) and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, (list, tuple)): return isinstance(b, (list, tuple)) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict): return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b

def same_tensors(a: dict, b: dict):
    assert a.keys() == b.keys()
    for k in a: assert same(a[k], b[k]), k

def test_blip_live(tmp_path):
    regenerate("blip.py", str(tmp_path))
    committed, again = (json.loads((d / "original.json").read_text()) for d in (fixtures / "blip", tmp_path))
    for key in committed.keys() - {"provenance"}: assert again[key] == committed[key], key  # answers, every beam's ids and score
    same_tensors(torch.load(fixtures / "blip" / "original_state_dict.pt"), torch.load(tmp_path / "original_state_dict.pt"))

def test_pnp_live(tmp_path):
    regenerate("pnp.py", str(tmp_path))
    committed, again = (json.loads((d / "outputs.json").read_text()) for d in (fixtures / "pnp", tmp_path))
    assert again == committed
    same_tensors(torch.load(fixtures / "pnp" / "outputs.pt"), torch.load(tmp_path / "outputs.pt"))

@pytest.mark.skipif(not os.environ.get("VLE_SRC"), reason="VLE_SRC: a checkout of iflytek/VLE")
def test_vle_live(tmp_path):
    regenerate("vle.py", "--vle-src", os.environ["VLE_SRC"], "--out", str(tmp_path))
    for name in json.loads((fixtures / "vle" / "provenance.json").read_text())["configurations"]:
        same_tensors(load_file(fixtures / "vle" / name / "io.safetensors"), load_file(tmp_path / name / "io.safetensors"))
