"""Reference fixture for the random ImageNet-C corruptions, made by RUNNING imagecorruptions 1.1.2 (the common ImageNet-C
reference; PyPI `imagecorruptions==1.1.2`, installed by scripts/setup.sh without its dependencies and imported through the
shims of scripts/reference_corruptions.py). No copy of its code is kept here.

Command (from the repository root):

    python scripts/crosscheck/imagenet_c.py --out tests/fixtures/crosscheck/imagecorruptions

The input is scikit-image's astronaut resized to 64 x 64 (bicubic: `photo`, which tests/test_reference_corruptions.py uses too). For each
random corruption and severities 1, 3 and 5 the reference corrupts it DRAWS[name] times, `np.random.seed(10_000 + k)` before
draw k, and the fixture `random_statistics.json` keeps the mean absolute per-pixel change and its standard deviation over
all draws, with the input's SHA-256, the versions that made it and this command. tests/test_reference_corruptions.py compares
the package's statistics (its own seeds) with these within 2%, and with `--flags slow` runs imagecorruptions again and
checks that it still gives these numbers. imagecorruptions' impulse noise ignores `np.random.seed` (scikit-image draws it
from its own generator), so that one entry is a sample: 300 draws keep its spread from run to run near 0.3%.
"""
import argparse, datetime, hashlib, json, sys
from pathlib import Path

import numpy as np
from PIL import Image

root = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(root / "scripts"))
from reference_corruptions import load_imagecorruptions  # noqa: E402

COMMAND = "python scripts/crosscheck/imagenet_c.py --out tests/fixtures/crosscheck/imagecorruptions"
DRAWS = {"gaussian_noise": 20, "shot_noise": 20, "impulse_noise": 300, "speckle_noise": 20, "glass_blur": 20,
         "motion_blur": 200, "snow": 200, "spatter": 1500, "elastic_transform": 100, "fog": 300}
SEVERITIES = (1, 3, 5)
FIRST_SEED = 10_000

def photo(name: str = "astronaut", size=(64, 64)) -> np.ndarray:
    "One of scikit-image's sample photographs, RGB, resized bicubically to `size` (width, height)."
    from skimage import data
    return np.asarray(Image.fromarray(getattr(data, name)()).convert("RGB").resize(size, Image.BICUBIC))

def change_statistics(outputs, x) -> np.ndarray:
    "Mean absolute per-pixel change of `outputs` from `x`, and the change's standard deviation."
    d = np.stack(outputs).astype(np.float64) - x
    return np.array([np.abs(d).mean(), d.std()])

def reference_statistics(reference, x, name: str, severity: int, draws: int) -> np.ndarray:
    "imagecorruptions' statistics for one corruption and severity: draw k after `np.random.seed(FIRST_SEED + k)`."
    outputs = []
    for k in range(draws):
        np.random.seed(FIRST_SEED + k)
        outputs.append(reference.corrupt(x, severity=severity, corruption_name=name))
    return change_statistics(outputs, x)

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(root / "tests/fixtures/crosscheck/imagecorruptions"))
    args = ap.parse_args(argv)
    import importlib.metadata as md
    reference, x = load_imagecorruptions(), photo()
    cases = [{"corruption": name, "severity": s, "draws": n, "statistics": reference_statistics(reference, x, name, s, n).tolist()}
             for name, n in DRAWS.items() for s in SEVERITIES]
    fixture = {"provenance": {"package": "imagecorruptions==1.1.2 (PyPI), through scripts/reference_corruptions.py's shims",
                              "command": COMMAND, "made": datetime.date.today().isoformat(),
                              "versions": {p: md.version(p) for p in ("imagecorruptions", "numpy", "scipy", "scikit-image", "opencv-python-headless", "Pillow")},
                              "input": "skimage.data.astronaut() resized to 64 x 64, bicubic", "input_sha256": hashlib.sha256(x.tobytes()).hexdigest(),
                              "seeds": f"np.random.seed({FIRST_SEED} + k) before draw k", "statistics": "[mean |change|, std of change] over all draws"},
               "cases": cases}
    out = Path(args.out); out.mkdir(parents=True, exist_ok=True)
    (out / "random_statistics.json").write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {out / 'random_statistics.json'}: {len(cases)} cases")
    return 0

if __name__ == "__main__":
    sys.exit(main())
