"""Requests a precision run saves: a served model (the package's pixel-answering LocalChatServer, on localhost) answers the
whole grid, then runs with `-p precision W` for each width asked; prints the requests each sent, what it saved, where it
stopped, and whether its precision.csv intervals hold the whole run's accuracies and drops.

    python scripts/bench_precision.py [--n-images 300] [--corruptions gaussian_noise] [--widths 0.02,0.05]
"""
import argparse, json, tempfile, time
from pathlib import Path
import pandas as pd
from vqa_robust.run import run
from vqa_robust.testing import LocalChatServer

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--n-images", type=int, default=300)
ap.add_argument("--corruptions", default="gaussian_noise")
ap.add_argument("--severities", default="1,2,3,4,5")
ap.add_argument("--widths", default="0.02,0.05")
args = ap.parse_args()
grid = dict(corruptions=args.corruptions, severities=args.severities, n_images=args.n_images, seed=0, num_workers=0)
tmp = Path(tempfile.mkdtemp())
with LocalChatServer(model="colours") as server:
    name = f"openai:colours@{server.url}"
    start = time.perf_counter()
    full = run(out_dir=str(tmp / "full"), model=name, progress=False, figures=False, **grid)
    full_requests, full_seconds = len(server.received), time.perf_counter() - start
    acc = full.accuracy.set_index(["corruption", "severity"]).accuracy
    truth = {c: acc[c] - (0 if c == ("clean", 0) else acc[("clean", 0)]) for c in acc.index}
    print(f"whole grid: {args.n_images} images, {len(acc)} conditions, {full_requests} requests, {full_seconds:.0f} s")
    for width in args.widths.split(","):
        before, start = len(server.received), time.perf_counter()
        run(out_dir=str(tmp / f"precision-{width}"), model=name, progress=False, figures=False, precision=width, **grid)
        sent, seconds = len(server.received) - before, time.perf_counter() - start
        rule = json.loads((tmp / f"precision-{width}" / "run.json").read_text())["precision"]
        table = pd.read_csv(tmp / f"precision-{width}" / "precision.csv").set_index(["corruption", "severity"])
        held = sum(table.loc[c, "low"] <= truth[c] <= table.loc[c, "high"] for c in truth)
        print(f"precision {width}: stopped at look {rule['looks']}/{rule['max_looks']} ({rule['images']} of {rule['of_images']} "
              f"images, widest {rule['widest']:.4f}); {sent} requests ({sent / full_requests:.2f}x the whole grid's, "
              f"saved {1 - sent / full_requests:.0%}), {seconds:.0f} s; its intervals hold {held} of {len(truth)} of the whole "
              f"run's accuracies and drops")
