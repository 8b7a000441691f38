"""Reference fixture for MMD-Bench's capture corruptions, made by RUNNING MMD-Bench's own degradation code on our draws.

MMD-Bench (arXiv 2604.04780) builds its degraded benchmarks with haoxiangzhao12138/CLEAR @
411d6bdb210c7d79eb7e5304b0f1feeae3034c9a, data/corruption_datasets_create/add_degradation.py: functions lens_flare,
dirty_lens, atmospheric_turbulence, watermark_damage (image in BGR, intensity in [0, 1]). The file is read at run time from a
local bare git mirror (`git --git-dir MIRROR show COMMIT:PATH`), its four definitions cut out with `ast` and `exec`uted in a
namespace holding cv2, numpy and a stand-in for Python's `random`: a replayer that returns, call by call, the draws our
port makes from the image's own generator (`vqa_robust.corruptions.corruption_rng`), and refuses a call whose bounds are
not the ones our draw was made with (so a draw out of order fails here, not silently). No copy of their code is kept here.

Command (from the repository root):

    python scripts/crosscheck/capture.py --mirrors /work/.mirror --out tests/fixtures/crosscheck/capture

The input is scikit-image's astronaut (shipped with scikit-image) taken every 4th pixel (128 x 128) and its top-left
96 x 128 corner, seed 0, image id 0. The fixture `clear_capture.json` holds, per corruption and level, the SHA-256 of
MMD-Bench's output (turned back to RGB) and its mean, with the input's SHA-256 and the provenance; the test in
nbs/01f_capture.ipynb compares `corrupt(...)`'s bytes with it.
"""
import argparse, ast, datetime, hashlib, json, math, subprocess, sys
from pathlib import Path

import cv2
import numpy as np

root = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(root))
from vqa_robust import capture, corruptions as C  # noqa: E402

COMMAND = "python scripts/crosscheck/capture.py --mirrors /work/.mirror --out tests/fixtures/crosscheck/capture"
REPO, COMMIT, PATH = "haoxiangzhao12138/CLEAR", "411d6bdb210c7d79eb7e5304b0f1feeae3034c9a", "data/corruption_datasets_create/add_degradation.py"
NAMES = ("lens_flare", "dirty_lens", "atmospheric_turbulence", "watermark_damage")

def git_dir(mirrors: Path) -> Path:
    d = mirrors / REPO.replace("/", "+") / "repo"
    return d / ".git" if (d / ".git").is_dir() else d

def load_clear(mirrors: Path, replayer) -> dict:
    "The four functions of MMD-Bench's file, executed with `random` replaced by `replayer`."
    src = subprocess.run(["git", "--git-dir", str(git_dir(mirrors)), "show", f"{COMMIT}:{PATH}"], check=True, capture_output=True, text=True).stdout
    nodes = [n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name in NAMES]
    assert sorted(n.name for n in nodes) == sorted(NAMES), [n.name for n in nodes]
    namespace = {"cv2": cv2, "np": np, "random": replayer}
    for node in nodes: exec(compile(ast.Module([node], []), PATH, "exec"), namespace)
    return namespace

class Replayer:
    "Python's `random`, answering each call with the next recorded draw (checked against the call's bounds)."
    def __init__(self): self.queue = []
    def load(self, draws): self.queue = list(draws)
    def _next(self, kind, a, b):
        got_kind, ga, gb, value = self.queue.pop(0)
        if (got_kind, ga, gb) != (kind, a, b): raise AssertionError(f"MMD-Bench asked {kind}({a}, {b}), our port drew {got_kind}({ga}, {gb})")
        return value
    def randint(self, a, b): return self._next("randint", a, b)
    def uniform(self, a, b): return self._next("uniform", a, b)

class Recorder:
    "A numpy Generator stand-in for our port: draws from the real one, recording (kind, bounds, value) as Python's random would be called."
    def __init__(self, rng): self.rng, self.draws = rng, []
    def integers(self, low, high):
        v = self.rng.integers(low, high); self.draws.append(("randint", int(low), int(high) - 1, int(v))); return v
    def uniform(self, low, high):
        v = self.rng.uniform(low, high); self.draws.append(("uniform", low, high, float(v))); return v

def astronaut() -> np.ndarray:
    from skimage import data
    return np.ascontiguousarray(data.astronaut()[::4, ::4][:96])

def sha(x: np.ndarray) -> str: return hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", default="/work/.mirror"); ap.add_argument("--out", default="tests/fixtures/crosscheck/capture")
    args = ap.parse_args()
    replayer = Replayer(); clear = load_clear(Path(args.mirrors), replayer)
    x = astronaut(); cases = []
    for name in NAMES:
        for s in C.SEVERITIES:
            recorder = Recorder(C.corruption_rng(0, 0, name, s))
            ours = C.truncate_to_uint8(C.CORRUPTIONS[name].function(x, s, recorder))
            replayer.load(recorder.draws)
            theirs = clear[name](np.ascontiguousarray(x[..., ::-1]), capture.mmd_intensity(s))[..., ::-1]
            assert not replayer.queue, f"{name} {s}: {len(replayer.queue)} of our draws unused"
            cases.append({"corruption": name, "severity": s, "intensity": capture.mmd_intensity(s), "draws": len(recorder.draws),
                          "sha256": sha(theirs), "mean": round(float(theirs.mean()), 6)})
            print(name, s, "draws", len(recorder.draws), "equal" if np.array_equal(ours, theirs) else f"DIFFERS in {(ours != theirs).sum()} values")
    out = Path(args.out); out.mkdir(parents=True, exist_ok=True)
    blob = subprocess.run(["git", "--git-dir", str(git_dir(Path(args.mirrors))), "rev-parse", f"{COMMIT}:{PATH}"], check=True, capture_output=True, text=True).stdout.strip()
    fixture = {"cases": cases, "provenance": {"repository": REPO, "commit": COMMIT, "path": PATH, "blob": blob, "functions": list(NAMES),
               "command": COMMAND, "input": "skimage.data.astronaut()[::4, ::4][:96] (96 x 128 RGB), seed 0, image id 0",
               "input_sha256": sha(x), "opencv": cv2.__version__, "numpy": np.__version__, "generated": datetime.date.today().isoformat(),
               "note": "sha256 of MMD-Bench's output (BGR in, turned back to RGB) given our port's draws, replayed in its own call order"}}
    (out / "clear_capture.json").write_text(json.dumps(fixture, indent=1, sort_keys=True) + "\n")

if __name__ == "__main__":
    main()
