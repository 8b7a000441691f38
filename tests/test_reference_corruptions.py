"""Equivalence with imagecorruptions 1.1.2, the common ImageNet-C reference (installed by scripts/setup.sh without its dependencies).

Deterministic corruptions: PSNR >= 40 dB on natural photos at every severity.
Random corruptions: over many seeds, the mean absolute per-pixel change and its standard deviation agree within 2%.
(imagecorruptions' impulse noise ignores np.random.seed, so its side varies from run to run: 300 draws keep that spread near 0.3%.)
"""
import sys
from pathlib import Path
import numpy as np
import pytest
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from reference_corruptions import load_imagecorruptions
from vqa_robust.corruptions import corrupt, SEVERITIES

try: reference = load_imagecorruptions()
except ImportError: reference = None
needs_reference = pytest.mark.skipif(reference is None, reason="imagecorruptions not installed (pip install --no-deps imagecorruptions==1.1.2)")

def photo(name: str, size=(320, 240)) -> np.ndarray:
    from skimage import data
    return np.asarray(Image.fromarray(getattr(data, name)()).convert("RGB").resize(size, Image.BICUBIC))

def psnr(a, b) -> float:
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255 ** 2 / mse)

DETERMINISTIC = ["defocus_blur", "zoom_blur", "brightness", "contrast", "saturate", "jpeg_compression", "pixelate", "gaussian_blur"]

@needs_reference
@pytest.mark.parametrize("name", DETERMINISTIC)
@pytest.mark.parametrize("image", ["astronaut", "coffee"])
def test_deterministic_psnr(name, image):
    x = photo(image)
    for s in SEVERITIES:
        assert psnr(corrupt(x, name, s), reference.corrupt(x, severity=s, corruption_name=name)) >= 40, (name, s)

RANDOM = {"gaussian_noise": 20, "shot_noise": 20, "impulse_noise": 300, "speckle_noise": 20, "glass_blur": 20,
          "motion_blur": 200, "snow": 200, "spatter": 1500, "elastic_transform": 100, "fog": 300}

def change_statistics(outputs, x) -> np.ndarray:
    d = np.stack(outputs).astype(np.float64) - x
    return np.array([np.abs(d).mean(), d.std()])

@needs_reference
@pytest.mark.parametrize("name", RANDOM)
def test_random_statistics(name):
    x = photo("astronaut", (64, 64))
    for s in (1, 3, 5):
        ours = change_statistics([corrupt(x, name, s, seed=k) for k in range(RANDOM[name])], x)
        theirs = []
        for k in range(RANDOM[name]):
            np.random.seed(10_000 + k)
            theirs.append(reference.corrupt(x, severity=s, corruption_name=name))
        np.testing.assert_allclose(ours / change_statistics(theirs, x), 1, atol=0.02, err_msg=f"{name} severity {s}: ours {ours}")


def test_snow_wand_agrees():
    "The fast snow (a compiled shifted sum) and ImageNet-C's ImageMagick motion blur give the same statistics."
    try:
        from vqa_robust.corruptions import snow_wand
        from wand.image import Image as _  # noqa: F401
    except ImportError as e: pytest.skip(f"Wand or ImageMagick missing: {e}")
    from vqa_robust.corruptions import corruption_rng, snow, truncate_to_uint8
    x = photo("astronaut", (160, 120))
    for s in (1, 3, 5):
        fast = change_statistics([truncate_to_uint8(snow(x, s, corruption_rng(k, 0, "snow", s))) for k in range(200)], x)
        wand = change_statistics([truncate_to_uint8(snow_wand(x, s, corruption_rng(k, 0, "snow", s))) for k in range(200)], x)
        np.testing.assert_allclose(fast / wand, 1, atol=0.02, err_msg=f"severity {s}")
