"""The Hub's evaluation results and the leaderboard JSON of a real small run (vqa_robust.hub_results): every file
parses with `yaml.safe_load` and with huggingface_hub's own reader, every value and interval equals the number the run
wrote in its CSVs (read here independently with pandas), and entries mutated away from the Hub's schema are refused by
file and field. One small run (two models, 8 images, Gaussian noise at severities 1-5, no figures: about 10 s) is shared
by the tests."""

import contextlib, copy, io, json, re

import pandas as pd
import pytest
import yaml
from huggingface_hub import parse_eval_result_entries

DATASET_ID = "ORG/vqa-robust"
SOURCE_URL = "https://huggingface.co/datasets/ORG/vqa-robust-runs"


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    "A finished run folder of the two shipped models."
    from vqa_robust.run import run

    out = tmp_path_factory.mktemp("hub") / "run"
    with contextlib.redirect_stdout(io.StringIO()):
        run(
            model="easy-vqa-vilt,easy-vqa-blip",
            out_dir=out,
            n_images=8,
            corruptions="gaussian_noise",
            severities="1,2,3,4,5",
            seed=3,
            progress=False,
            figures=False,
        )
    return out


@pytest.fixture(scope="module")
def published(small_run, tmp_path_factory):
    "The run's tables published: (output folder, accuracy_ci.csv, vre_model_ci.csv, run.json), as a reader reads them."
    from vqa_robust.hub_results import publish_results

    accuracy, vre = pd.read_csv(small_run / "accuracy_ci.csv"), pd.read_csv(small_run / "vre_model_ci.csv")
    summary = json.loads((small_run / "run.json").read_text())
    out = tmp_path_factory.mktemp("published")
    publish_results(accuracy, vre, summary, DATASET_ID, out, source_url=SOURCE_URL, date="2025-01-15")
    return out, accuracy, vre, summary


def read_entries(out, model: str, name: str) -> list:
    "A written file, read as the Hub reads YAML."
    return yaml.safe_load((out / model / ".eval_results" / f"{name}.yaml").read_text())


def interval_in(notes: str) -> list[float]:
    "The first [low, high] written in a note."
    return [float(x) for x in re.search(r"\[([^,\]]+), ([^\]]+)\]", notes).groups()]


def test_one_file_per_condition_and_summary(published):
    out, accuracy, _, _ = published
    for model, rows in accuracy.groupby("model"):
        names = sorted(p.name for p in (out / model / ".eval_results").iterdir())
        conditions = [
            ("clean" if r.corruption == "clean" else f"{r.corruption}_{r.severity}") + ".yaml"
            for r in rows.itertuples()
        ]
        assert names == sorted(conditions + ["mean_corrupted.yaml", "vre.yaml"])
        assert len(names) == 1 + 5 + 2


def test_accuracy_values_and_intervals_equal_the_csv(published):
    out, accuracy, _, _ = published
    for r in accuracy.itertuples():
        name = "clean" if r.corruption == "clean" else f"{r.corruption}_{r.severity}"
        entries = read_entries(out, r.model, name)
        hub = parse_eval_result_entries(entries)  # huggingface_hub's reader of the format
        assert len(hub) == 1
        assert (hub[0].dataset_id, hub[0].task_id, hub[0].date) == (DATASET_ID, name, "2025-01-15")
        assert hub[0].value == r.estimate  # exactly: every digit the run wrote
        assert interval_in(hub[0].notes) == [r.low, r.high]
        assert hub[0].source_url == SOURCE_URL


def test_summary_values_equal_the_csvs(published):
    out, accuracy, vre, summary = published
    corrupted = accuracy[accuracy.corruption != "clean"].groupby("model").estimate.mean()
    for r in vre.itertuples():
        entry = parse_eval_result_entries(read_entries(out, r.model, "vre"))[0]
        assert entry.value == r.estimate
        assert interval_in(entry.notes) == [r.low, r.high]
        assert f"Debiased {r.debiased!r}" in entry.notes
        assert f"rank {r.rank} of 2" in entry.notes
        mean = parse_eval_result_entries(read_entries(out, r.model, "mean_corrupted"))[0]
        assert mean.value == pytest.approx(corrupted[r.model], abs=1e-15)  # a mean of five numbers: summation order


def test_source_names_the_run(published):
    out, _, _, summary = published
    for record in summary["models"]:
        source = read_entries(out, record["model"], "clean")[0]["source"]
        assert source["url"] == SOURCE_URL
        for part in (
            record["identity"],
            summary["data"]["questions"],
            summary["data"]["images"],
            summary["corruption_code"]["corruptions_sha256"],
            f"seed {summary['seed']}",
        ):
            assert part in source["name"]


def test_without_a_source_url_the_identity_is_in_the_notes(small_run):
    from vqa_robust.hub_results import eval_result_files

    summary = json.loads((small_run / "run.json").read_text())
    files = eval_result_files(
        pd.read_csv(small_run / "accuracy_ci.csv"), pd.read_csv(small_run / "vre_model_ci.csv"), summary, DATASET_ID
    )
    entry = files["easy-vqa-blip"]["clean.yaml"][0]
    assert "source" not in entry
    assert entry["date"] == summary["date"]  # none given: when the run finished, from run.json
    blip = next(m for m in summary["models"] if m["model"] == "easy-vqa-blip")
    assert f"model identity {blip['identity']}" in entry["notes"]


def test_leaderboard_json_equals_the_csvs(published):
    out, accuracy, vre, summary = published
    board = json.loads((out / "leaderboard.json").read_text())
    assert (board["format"], board["format_version"], board["ranked_by"]) == ("vqa_robust leaderboard", 1, "vre")
    assert board["benchmark"]["data"] == summary["data"]
    assert board["benchmark"]["corruption_code"] == summary["corruption_code"]
    assert board["benchmark"]["seed"] == summary["seed"]
    assert board["benchmark"]["n_images"] == summary["n_images"]
    assert [m["rank"] for m in board["models"]] == sorted(vre["rank"])
    by_model = vre.set_index("model")
    identities = {m["model"]: m["identity"] for m in summary["models"]}
    for m in board["models"]:
        row = by_model.loc[m["model"]]
        assert m["vre"] == {k: row[k] for k in ("estimate", "low", "high", "debiased", "rank_stability")}
        assert m["rank"] == row["rank"]
        assert m["identity"] == identities[m["model"]]
        mine = accuracy[accuracy.model == m["model"]]
        clean = mine[mine.corruption == "clean"].iloc[0]
        assert m["clean_accuracy"] == {"estimate": clean.estimate, "low": clean.low, "high": clean.high}
        for r in mine.itertuples():
            name = "clean" if r.corruption == "clean" else f"{r.corruption}_{r.severity}"
            assert m["accuracy"][name] == {
                "corruption": r.corruption,
                "severity": r.severity,
                "estimate": r.estimate,
                "low": r.low,
                "high": r.high,
            }


MUTATIONS = {  # what breaks the schema -> (mutation of a written entry, the field the message must name)
    "missing value": (lambda e: e.pop("value"), "value: missing (required)"),
    "source without url": (lambda e: e["source"].pop("url"), "source.url: missing (required)"),
    "bad date": (lambda e: e.update(date="15/01/2025"), "date: '15/01/2025' is not an ISO-8601 date"),
    "unknown key": (lambda e: e.update(verify_token="x"), "verify_token: unknown key"),
    "value as text": (lambda e: e.update(value="0.9"), "value: '0.9' is not a finite number"),
    "no task id": (lambda e: e["dataset"].pop("task_id"), "dataset.task_id: missing (required)"),
    "dataset id without org": (lambda e: e["dataset"].update(id="vqa-robust"), "dataset.id: 'vqa-robust' is not"),
}


@pytest.mark.parametrize("what", MUTATIONS)
def test_mutated_entries_are_refused(published, what):
    from vqa_robust.hub_results import check_eval_results

    out, _, _, _ = published
    entries = read_entries(out, "easy-vqa-vilt", "clean")
    check_eval_results(entries, "clean.yaml")  # as written: accepted
    mutate, field = MUTATIONS[what]
    broken = copy.deepcopy(entries)
    mutate(broken[0])
    with pytest.raises(ValueError, match=re.escape(f"easy-vqa-vilt/.eval_results/clean.yaml, entry 0, {field}")):
        check_eval_results(broken, "easy-vqa-vilt/.eval_results/clean.yaml")
