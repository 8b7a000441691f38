"""The VLM families on transformers 5.25.0, the newest release settings.ini admits, behave as on 5.24.0: whichever of the two
this interpreter holds (the project's venv installs the newest admitted), a side environment holds the other, with the
package's other requirements (made once
under ~/.cache/vqa_robust/, or TRANSFORMERS_SIDE_VENV reuses one) writes every tiny VLM entry with the package's own
builders, loads it through `load_model` and answers three questions; the token ids each model is sent, the answers and
their confidences must equal this interpreter's, and each side must read the checkpoints the other wrote the same way.
Both sides run the working tree's package (PYTHONPATH), without torchvision, as the project's venv. Slow: the side
environment takes about 5 minutes to install here (once, 2.7 GB); the comparison under a minute.

    python scripts/test.py --flags slow       # or: pytest -m slow tests/test_transformers_versions.py
    TRANSFORMERS_SIDE_VENV=/path/to/venv pytest -m slow tests/test_transformers_versions.py   # a venv made before
"""
import configparser, importlib.metadata, json, os, shutil, subprocess, sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

root = Path(__file__).resolve().parent.parent
RELEASES = ("5.24.0", "5.25.0")  # the floor the families were built on, and the newest release settings.ini admits
HERE = importlib.metadata.version("transformers")
SIDE = RELEASES[0] if HERE == RELEASES[1] else RELEASES[1]  # the side environment holds the other one
PINS = ("torch==2.13.0", f"transformers=={SIDE}")  # a CPU torch from the local wheels, as scripts/setup.sh installs

def requirements() -> list[str]:
    "The package's requirements, as settings.ini lists them."
    config = configparser.ConfigParser()
    config.read(root / "settings.ini")
    return config["DEFAULT"]["requirements"].split()

def transformers_requirement() -> Requirement:
    "The transformers requirement of settings.ini."
    return next(Requirement(r) for r in requirements() if Requirement(r).name == "transformers")

def side_venv() -> Path:
    """A venv holding transformers SIDE, the package's other requirements and CPU torch: TRANSFORMERS_SIDE_VENV, or one
    made under ~/.cache/vqa_robust/ (a marker file says it is complete). Skips the test where it cannot be made."""
    given = os.environ.get("TRANSFORMERS_SIDE_VENV")
    venv = Path(given or Path.home() / ".cache" / "vqa_robust" / f"transformers-{SIDE}")
    if given and not (venv / "bin" / "python").exists(): pytest.skip(f"TRANSFORMERS_SIDE_VENV={given} has no bin/python")
    if given or (venv / ".complete").exists(): return venv
    venv.parent.mkdir(parents=True, exist_ok=True)
    pin = venv.parent / f"transformers-{SIDE}-pin.txt"
    pin.write_text("\n".join(PINS) + "\n")
    others = [r for r in requirements() if Requirement(r).name != "transformers"]
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-c", str(pin)]
    for step in ([sys.executable, "-m", "venv", "--clear", str(venv)], pip + [PINS[0]], pip + [PINS[1], *others]):
        p = subprocess.run(step, capture_output=True, text=True)
        if p.returncode:
            shutil.rmtree(venv, ignore_errors=True)
            pytest.skip(f"could not make the transformers {SIDE} venv ({' '.join(step[:6])} ...): {p.stderr[-1500:]}")
    (venv / ".complete").write_text(SIDE)
    return venv

# Run by both interpreters: write the tiny VLM entries into argv[1] (unless "-"), answer with them and, if given, with
# the checkpoints in argv[2]; print one JSON object.
ANSWER = r'''
import json, sys
from pathlib import Path
import numpy as np, torch, transformers
from PIL import Image
from vqa_robust.zoo import MODELS, load_model
from vqa_robust.testing_models import tiny_checkpoint
torch.set_num_threads(1)
rng = np.random.default_rng(0)
images = [Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)) for _ in range(3)]
questions = ["what is the color of the shape?", "how many people are there?", "is there a dog in the image?"]
names = [n for n, spec in MODELS.items() if spec.family in ("vlm", "paligemma")]
def answers(folder):
    model = load_model(str(folder), device="cpu")
    with torch.inference_mode(): sent = model.inputs(images, questions)
    said, confidence = model.predict(images, questions)
    return {"input_ids": sent["input_ids"].tolist(), "pixel_shape": list(sent["pixel_values"].shape),
            "processor": type(model.processor).__name__, "answers": said, "confidence": [float(c) for c in confidence]}
write, read = Path(sys.argv[1]), sys.argv[2:]
result = {"transformers": transformers.__version__, "torchvision": transformers.utils.is_torchvision_available()}
if str(write) != "-": result["own"] = {n: answers(tiny_checkpoint(n, write / n)) for n in names}
if read: result["other"] = {n: answers(Path(read[0]) / n) for n in names}
print(json.dumps(result))
'''

def answer(python: str, write, read=None) -> dict:
    "What `python` answers with the tiny VLM entries it writes into `write` and, if given, those in `read`."
    env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error"}
    args = [python, "-c", ANSWER, str(write), *([str(read)] if read else [])]
    p = subprocess.run(args, capture_output=True, text=True, env=env, cwd=root, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])

def test_the_pin_admits_both_releases():
    "settings.ini admits the release the side environment holds, and the floor's."
    import transformers
    pin = transformers_requirement()
    assert all(pin.specifier.contains(r) for r in RELEASES)
    assert pin.specifier.contains(transformers.__version__)
    assert pin.specifier.contains("4.56.0")

@pytest.mark.slow
def test_vlm_families_answer_alike_on_transformers_5_25(tmp_path):
    import transformers
    if HERE not in RELEASES: pytest.skip(f"this interpreter holds transformers {HERE}, neither of {RELEASES}")
    venv = side_venv()
    here = answer(sys.executable, tmp_path / "here")
    side = answer(str(venv / "bin" / "python"), tmp_path / "side", tmp_path / "here")
    back = answer(sys.executable, "-", tmp_path / "side")
    assert side["transformers"] == SIDE
    assert here["torchvision"] == side["torchvision"]  # the same processors: with, or (here) without, the video part
    assert sorted(here["own"]) == sorted(side["own"])
    assert len(here["own"]) == 7
    for name, ours in here["own"].items():
        assert side["own"][name] == ours, name     # written by the other release: same ids, pixel shapes, answers, confidences
        assert side["other"][name] == ours, name   # this release's checkpoint read by the other
        assert back["other"][name] == ours, name   # the other's checkpoint read by this one
    assert len({tuple(a["answers"]) for a in here["own"].values()}) > 1  # models answer differently: the check can fail
