"""Benchmark vqa_robust's corruptions against imagecorruptions 1.1.2, side by side in one run.

    python scripts/bench_corruptions.py                    # the VRB set in ImageNet-C form, 14 x 5, on a 640x480 photo
    python scripts/bench_corruptions.py --repeats 5 --glass
    python scripts/bench_corruptions.py --only geometric   # the geometric set (preset geometric) beside Albumentations, under a minute
    python scripts/bench_corruptions.py --only capture --mirrors /work/.mirror  # the capture set beside MMD-Bench's own code

Both run on one thread (OpenCV and BLAS), timed in CPU seconds (time.process_time), median of --repeats calls.
Prints corruption, severity, reference ms, ours ms (one `corrupt` call) and their ratio; per corruption, the five levels
through `corrupt_levels` (one call that shares work across levels, as the generator runs); then the whole-set totals per image.
Needs imagecorruptions without its dependencies: pip install --no-deps imagecorruptions==1.1.2
The geometric set is timed beside Albumentations (pip install albumentations; 2.0.8 here) with the nearest parameters it has,
and low_light beside a direct NumPy transcription of its formula; without Albumentations those rows print n/a.
The capture set (preset capture) is timed beside MMD-Bench's own functions (haoxiangzhao12138/CLEAR @ 411d6bd, read from a
mirror of the repository as scripts/crosscheck/capture.py reads it, with Python's own `random`); the two visible watermarks,
which MMD-Bench does not define, print n/a; without the mirror every reference prints n/a.
"""
import argparse, os, statistics, sys, time
os.environ.setdefault("OMP_NUM_THREADS", "1"); os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from pathlib import Path
import cv2
import numpy as np
from PIL import Image
sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference_corruptions import load_imagecorruptions
from vqa_robust.corruptions import corrupt, corrupt_levels, preset, SEVERITIES

def cpu_ms(f, repeats: int) -> float:
    "Median CPU milliseconds of f() over `repeats` calls (one warm-up call first)."
    f(); times = []
    for _ in range(repeats):
        start = time.process_time(); f(); times.append(1000 * (time.process_time() - start))
    return statistics.median(times)

def geometric_references(h: int, w: int) -> dict:
    "name -> [five callables image -> image, one per severity]: Albumentations' nearest transform (None when not installed), NumPy for low_light."
    import math, warnings
    from vqa_robust import geometric as C
    def low_light_direct(g):
        rng = np.random.default_rng(0)
        def f(x):
            v = x / 255.0
            linear = np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)
            y = np.clip((rng.poisson(linear * g * C.LOW_LIGHT_ELECTRONS) + rng.normal(0, C.LOW_LIGHT_READ_NOISE, x.shape)) / C.LOW_LIGHT_ELECTRONS, 0, 1)
            return np.round(np.where(y <= 0.0031308, 12.92 * y, 1.055 * y ** (1 / 2.4) - 0.055) * 255).astype(np.uint8)
        return f
    refs = {"low_light": [low_light_direct(g) for g in C.LOW_LIGHT_FRACTIONS]}
    os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")
    try:
        warnings.filterwarnings("ignore")
        import albumentations as A
    except ImportError:
        return refs
    def wrap(t): return lambda x: t(image=x)["image"]
    pair = lambda k1, k2: {"downscale": k1, "upscale": k2}
    flags = {"resample_nearest": cv2.INTER_NEAREST_EXACT, "resample_bilinear": cv2.INTER_LINEAR, "resample_bicubic": cv2.INTER_CUBIC, "resample_area": cv2.INTER_AREA}
    refs.update({
        "rotation": [wrap(A.Rotate(limit=(a, a), border_mode=cv2.BORDER_CONSTANT, fill=0, p=1)) for a in C.ROTATION_DEGREES],
        "shear": [wrap(A.Affine(shear={"x": (math.degrees(math.atan(s)),) * 2, "y": (0, 0)}, fill=0, p=1)) for s in C.SHEAR_FACTORS],
        "perspective": [wrap(A.Perspective(scale=(d / 2, d / 2), fill=0, p=1)) for d in C.PERSPECTIVE_INSET],
        "zoom_out": [wrap(A.Affine(scale=(c, c), fill=0, p=1)) for c in C.ZOOM_OUT_SCALES],
        "translation": [wrap(A.Affine(translate_percent=(f, f), fill=0, p=1)) for f in C.TRANSLATION_FRACTIONS],
        "crop_and_resize": [wrap(A.Compose([A.CenterCrop(round(h * c), round(w * c)), A.Resize(h, w)])) for c in C.CROP_FRACTIONS],
        **{n: [wrap(A.Downscale(scale_range=(f, f), interpolation_pair=pair(k, k), p=1)) for f in C.RESAMPLE_FACTORS] for n, k in flags.items()},
        "upsample": [wrap(A.Downscale(scale_range=(f, f), interpolation_pair=pair(cv2.INTER_AREA, cv2.INTER_CUBIC), p=1)) for f in C.UPSAMPLE_FACTORS],
        "barrel_distortion": [wrap(A.OpticalDistortion(distort_limit=(k, k), p=1)) for k in C.LENS_COEFFICIENTS],
        "pincushion_distortion": [wrap(A.OpticalDistortion(distort_limit=(-k, -k), p=1)) for k in C.LENS_COEFFICIENTS],
    })
    return refs

def bench_geometric(image: np.ndarray, repeats: int):
    "Print, per corruption of the geometric preset, ms per image over its five levels: reference, ours (`corrupt`) and the ratio."
    h, w = image.shape[:2]
    refs = geometric_references(h, w)
    print(f"\ngeometric set on {w}x{h}, ms per image summed over the five levels (reference: Albumentations; low_light: direct NumPy)")
    print(f"{'corruption':<22} {'reference ms':>13} {'ours ms':>9} {'ratio':>7}")
    ref_total = ours_total = 0.0
    for name in preset("geometric"):
        ours = sum(cpu_ms(lambda: corrupt(image, name, s, seed=0, image_id=1), repeats) for s in SEVERITIES)
        ref = sum(cpu_ms(lambda: f(image), repeats) for f in refs[name]) if name in refs else float("nan")
        ours_total += ours; ref_total += ref if name in refs else 0.0
        print(f"{name:<22} {ref:>13.1f} {ours:>9.2f} {ref / ours:>7.2f}" if name in refs else f"{name:<22} {'n/a':>13} {ours:>9.2f} {'n/a':>7}", flush=True)
    print(f"geometric set ({len(preset('geometric'))} x 5): ours {ours_total:.1f} ms per image; reference {ref_total:.1f} ms where it exists")

def bench_capture(image: np.ndarray, repeats: int, mirrors: str):
    "Print, per corruption of the capture preset, ms per image over its five levels: MMD-Bench's code, ours (`corrupt`) and the ratio."
    import random
    from vqa_robust.capture import mmd_intensity
    sys.path.insert(0, str(Path(__file__).resolve().parent / "crosscheck"))
    from capture import load_clear
    try: clear = load_clear(Path(mirrors), random)
    except Exception as e: clear = {}; print(f"MMD-Bench's code not read ({type(e).__name__}): reference n/a")
    random.seed(0)
    h, w = image.shape[:2]
    print(f"\ncapture set on {w}x{h}, ms per image summed over the five levels (reference: MMD-Bench's add_degradation.py on the BGR image)")
    print(f"{'corruption':<24} {'reference ms':>13} {'ours ms':>9} {'ratio':>7}")
    bgr = np.ascontiguousarray(image[..., ::-1])
    for name in preset("capture"):
        ours = sum(cpu_ms(lambda: corrupt(image, name, s, seed=0, image_id=1), repeats) for s in SEVERITIES)
        if name not in clear: print(f"{name:<24} {'n/a':>13} {ours:>9.2f} {'n/a':>7}", flush=True); continue
        ref = sum(cpu_ms(lambda: clear[name](bgr, mmd_intensity(s)), repeats) for s in SEVERITIES)
        print(f"{name:<24} {ref:>13.1f} {ours:>9.2f} {ref / ours:>7.2f}", flush=True)

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="vrb_imagenet_c")
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--glass", action="store_true", help="also time glass blur (the reference takes ~4 s a call)")
    ap.add_argument("--only", choices=["all", "vrb", "geometric", "capture"], default="all", help="time the VRB set, the geometric set, the capture set, or all")
    ap.add_argument("--mirrors", default="/work/.mirror", help="folder of repository mirrors holding haoxiangzhao12138+CLEAR (MMD-Bench's code)")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    from skimage import data
    w, h = map(int, args.size.split("x"))
    image = np.asarray(Image.fromarray(data.astronaut()).resize((w, h), Image.BICUBIC))
    if args.only in ("all", "capture"): bench_capture(image, args.repeats, args.mirrors)
    if args.only in ("all", "geometric"): bench_geometric(image, args.repeats)
    if args.only in ("geometric", "capture"): return
    reference = load_imagecorruptions()
    names = preset(args.preset) + (["glass_blur"] if args.glass else [])
    rows, together = [], {}
    print(f"{'corruption':<18} {'severity':>8} {'reference ms':>13} {'ours ms':>9} {'ratio':>7}")
    for name in names:
        for s in SEVERITIES:
            ref = cpu_ms(lambda: reference.corrupt(image, severity=s, corruption_name=name), 1 if name == "glass_blur" else args.repeats)
            ours = cpu_ms(lambda: corrupt(image, name, s, seed=0, image_id=1), args.repeats)
            rows.append((name, s, ref, ours))
            print(f"{name:<18} {s:>8} {ref:>13.1f} {ours:>9.2f} {ref / ours:>7.1f}", flush=True)
        together[name] = cpu_ms(lambda: corrupt_levels(image, name, SEVERITIES, seed=0, image_id=1), args.repeats)
        ref_sum, ours_sum = (sum(r[i] for r in rows if r[0] == name) for i in (2, 3))
        print(f"{name:<18} {'1-5':>8} {ref_sum:>13.1f} {ours_sum:>9.2f} {ref_sum / ours_sum:>7.1f}   all five in one corrupt_levels call: {together[name]:.2f} ms, {ref_sum / together[name]:.1f}x", flush=True)
    in_set = [r for r in rows if r[0] in preset(args.preset)]
    ref_total, ours_total = sum(r[2] for r in in_set), sum(r[3] for r in in_set)
    levels_total = sum(together[n] for n in preset(args.preset))
    print(f"\nwhole set ({args.preset}, {len(preset(args.preset))} x {len(SEVERITIES)} on {args.size}), CPU per image: reference {ref_total / 1000:.2f} s; "
          f"ours {ours_total / 1000:.3f} s by corrupt ({ref_total / ours_total:.1f}x), {levels_total / 1000:.3f} s by corrupt_levels ({ref_total / levels_total:.1f}x)")
    glass = [r for r in rows if r[0] == "glass_blur"]
    if glass: print(f"glass blur: reference {sum(r[2] for r in glass) / 5:.0f} ms, ours {sum(r[3] for r in glass) / 5:.1f} ms a call, ratio {sum(r[2] for r in glass) / sum(r[3] for r in glass):.0f}x")

if __name__ == "__main__":
    main()
