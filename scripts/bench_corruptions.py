"""Benchmark vqa_robust's corruptions against imagecorruptions 1.1.2, side by side in one run.

    python scripts/bench_corruptions.py                    # the VRB set in ImageNet-C form, 14 x 5, on a 640x480 photo
    python scripts/bench_corruptions.py --repeats 5 --glass

Both run on one thread (OpenCV and BLAS), timed in CPU seconds (time.process_time), median of --repeats calls.
Prints corruption, severity, reference ms, ours ms (one `corrupt` call) and their ratio; per corruption, the five levels
through `corrupt_levels` (one call that shares work across levels, as the generator runs); then the whole-set totals per image.
Needs imagecorruptions without its dependencies: pip install --no-deps imagecorruptions==1.1.2
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

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="vrb_imagenet_c")
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--glass", action="store_true", help="also time glass blur (the reference takes ~4 s a call)")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    from skimage import data
    w, h = map(int, args.size.split("x"))
    image = np.asarray(Image.fromarray(data.astronaut()).resize((w, h), Image.BICUBIC))
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
