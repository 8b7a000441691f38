"""Interval widths of a run folder drawn by image (every interval of the package) beside drawn by question (before), and the
planner's predicted widths from a pilot of the run's first images against the widths the whole run gets.

    python scripts/bench_intervals.py runs/default [--pilot 100] [--n-boot 1000]

The run folder must name each question's image (answers.parquet's image_id: runs of this version). Prints, per measure, the
median 95% interval width resampling questions and resampling images and their ratio (VRE's debiased, as the
package's tables give it, and beside it the plain percentile interval of VRE that they gave before); then, for each drop and each VRE, the
width a pilot of `--pilot` images predicts for the run's size (its standard error times sqrt(pilot images / run images)) beside
the width the run's own bootstrap gives, and their ratio."""
import argparse, json, time
from pathlib import Path
import numpy as np, pandas as pd
from vqa_robust.comparisons import plan
from vqa_robust.metrics import image_condition_answers
from vqa_robust.intervals import bootstrap, bootstrap_replicates, interval

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("folder")
ap.add_argument("--pilot", type=int, default=100, help="images of the pilot (the run's first, by image id)")
ap.add_argument("--n-boot", type=int, default=1000)
args = ap.parse_args()
folder = Path(args.folder)
seed = json.loads((folder / "run.json").read_text())["seed"]
answers = image_condition_answers(pd.read_parquet(folder / "answers.parquet"))
answers = answers[answers.corruption != "resolution"]
assert "image_id" in answers, f"{folder}/answers.parquet names no images: rerun it with this version"


def widths(table: dict) -> dict:
    "Interval widths (high - low) of accuracy, drop and VRE from `bootstrap`'s tables."
    acc = table["accuracy"]
    return {
        "accuracy": (acc.high - acc.low),
        "vre_model": (table["vre_model"].high - table["vre_model"].low),
        "vre_corruption": (table["vre_corruption"].high - table["vre_corruption"].low),
    }


start = time.perf_counter()
by_image = widths(bootstrap(answers, n_boot=args.n_boot, seed=seed))
image_seconds = time.perf_counter() - start
start = time.perf_counter()
by_question = widths(bootstrap(answers.drop(columns="image_id"), n_boot=args.n_boot, seed=seed))
question_seconds = time.perf_counter() - start
n_images, n_questions = answers.image_id.nunique(), answers.question_id.nunique()
print(f"{folder}: {n_images} images, {n_questions} questions ({n_questions / n_images:.1f} an image), {args.n_boot} replicates")
r = bootstrap_replicates(answers, n_boot=args.n_boot, seed=seed)
plain = {  # VRE's percentile intervals of the replicates not debiased: what the tables gave before the correction
    f"{name} (not debiased)": np.subtract(*interval(getattr(r, name)[1:], 0.95)[::-1])
    for name in ("vre_model", "vre_corruption")
}
by_image = {**by_image, **{name: pd.Series(values) for name, values in plain.items()}}
rows = [(name, by_question.get(name, pd.Series([np.nan])).median(), by_image[name].median()) for name in by_image]
table = pd.DataFrame(rows, columns=["measure", "width by question", "width by image"])
print(table.assign(ratio=table["width by image"] / table["width by question"]).round(4).to_string(index=False))
print(f"bootstrap seconds: by image {image_seconds:.2f}, by question {question_seconds:.2f} ({image_seconds / question_seconds:.2f}x)")

pilot_images = sorted(answers.image_id.unique())[: args.pilot]
planned = plan(answers[answers.image_id.isin(pilot_images)], width=0.05, seed=seed)
scale = np.sqrt(len(pilot_images) / n_images)  # a standard error shrinks as 1 / sqrt(images)


def run_width(row) -> float:
    "The width the whole run's bootstrap gives the planned measure (drops from the same replicates as accuracy_ci.csv)."
    i = r.models.index(row.model)
    if row.measure == "vre":
        values = r.debiased["vre_model"][1:, i]  # the replicates vre_model_ci.csv takes
    else:
        j = r.corruptions.index(row.corruption)
        values = r.accuracy[1:, i, j, row.severity] - r.accuracy[1:, i, j, 0]
    low, high = interval(values, 0.95)
    return float(high - low)


rows = planned[planned.measure.isin(["drop", "vre"])].copy()
rows["predicted"] = rows.pilot_width * scale
rows["run"] = [run_width(row) for row in rows.itertuples()]
rows["ratio"] = rows.predicted / rows.run
print(f"\nplanner: a pilot of the first {len(pilot_images)} images predicting the widths of the run's {n_images}")
summary = rows.groupby(["measure", "model"])[["predicted", "run", "ratio"]].median()
print(summary.round(4).to_string())
print(f"ratio predicted / run over every drop: median {rows[rows.measure == 'drop'].ratio.median():.3f}, "
      f"range {rows[rows.measure == 'drop'].ratio.min():.3f}-{rows[rows.measure == 'drop'].ratio.max():.3f}")
