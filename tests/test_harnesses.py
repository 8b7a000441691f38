"""The exported benchmark in the real harness: lmms-eval (PyPI, in a side environment this test makes) runs an exported corrupted
task against the package's local chat server, and sends, question for question, the prompt and the image pixels a run of the
package sends to the same server. Slow: the side environment takes about 3 minutes to install (once; LMMS_EVAL_VENV reuses one).

    python scripts/test.py --flags slow          # or: pytest -m slow tests/test_harnesses.py
"""
import json, os, subprocess, sys, time
from pathlib import Path

import pytest

root = Path(__file__).resolve().parent.parent
LMMS_EVAL = "lmms-eval==0.7.3"

def lmms_eval_venv() -> Path:
    """A venv holding lmms-eval (LMMS_EVAL_VENV, or made under ~/.cache): CPU torch first, then lmms-eval pinned to it; its CUDA
    torchvision removed (it breaks even `--help` on a CPU torch) and filelock below 4 (4.x breaks every run)."""
    venv = Path(os.environ.get("LMMS_EVAL_VENV") or Path.home() / ".cache" / "vqa_robust" / "lmms-eval-0.7.3")
    if (venv / "bin" / "lmms-eval").exists(): return venv
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    pin = venv.parent / "lmms-eval-pin.txt"
    venv.parent.mkdir(parents=True, exist_ok=True); pin.write_text("torch==2.13.0\n")
    for step in ([sys.executable, "-m", "venv", str(venv)], pip + ["torch==2.13.0"], pip + ["-c", str(pin), LMMS_EVAL],
                 [str(venv / "bin" / "python"), "-m", "pip", "uninstall", "-y", "-q", "torchvision", "torchaudio", "torchcodec"],
                 pip + ["filelock<4"]):
        p = subprocess.run(step, capture_output=True, text=True)
        if p.returncode and "uninstall" not in step: pytest.fail(f"{' '.join(step[:6])}: {p.stderr[-2000:]}")
    return venv

def lmms_eval(venv: Path, url: str, include: Path, tasks: str, out: Path, model_args: str = "") -> None:
    "lmms-eval's `openai_compatible` model on `tasks` of an export, against the server at `url`, its samples logged into `out`; offline."
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "WANDB_MODE": "disabled", "OPENAI_API_KEY": "none"}
    args = f"model_version=local-colours,base_url={url}" + (f",{model_args}" if model_args else "")
    p = subprocess.run([str(venv / "bin" / "lmms-eval"), "--model", "openai_compatible", "--model_args", args,
                        "--include_path", str(include), "--tasks", tasks, "--batch_size", "1", "--log_samples", "--output_path", str(out)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    assert "Error during evaluation" not in p.stdout + p.stderr, (p.stdout + p.stderr)[-3000:]  # it exits 0 on a failed evaluation

@pytest.mark.slow
def test_lmms_eval_runs_an_exported_task_as_the_package_asks(tmp_path):
    from vqa_robust.harnesses import export, served_settings
    from vqa_robust.vqav2 import load_easy_vqa, sample_images
    from vqa_robust.run import run
    from vqa_robust.harness_scoring import score_predictions
    from vqa_robust.testing import LocalChatServer
    venv = lmms_eval_venv()
    questions = sample_images(load_easy_vqa("test"), 2, seed=0)  # two images: the served model gets some right (the fixture's export)
    manifest = export(questions, tmp_path / "export", [("brightness", 1)], seed=0, settings=served_settings("easy_vqa"),
                      source={"dataset": "easy_vqa", "dataset_split": "test"})
    task = next(c["name"] for c in manifest["conditions"] if c["corruption"] == "brightness")
    tasks = ",".join(c["name"] for c in manifest["conditions"])  # clean and brightness 1: what `score_predictions` imports
    with LocalChatServer() as server:
        started = time.time()
        lmms_eval(venv, server.url, tmp_path / "export" / "lmms_eval", tasks, tmp_path / "lmms")
        harness_seconds = time.time() - started
        asked_by_harness = list(server.received)
        started = time.time()
        result = run(model=f"openai:local-colours@{server.url}", n_images=2, corruptions="brightness", severities="1", seed=0,
                     out_dir=tmp_path / "run", progress=False, figures=False, max_concurrency=1)
        package_seconds = time.time() - started
        asked_by_package = server.received[len(asked_by_harness):]
    samples = [json.loads(line) for line in next((tmp_path / "lmms").rglob(f"*_samples_{task}.jsonl")).read_text().splitlines()]
    assert [s["doc_id"] for s in samples] == list(range(manifest["n_questions"]))
    assert len(asked_by_harness) == 2 * manifest["n_questions"]
    pairs = lambda received: sorted((r["question"], r["sha256"]) for r in received)
    assert set(pairs(asked_by_harness)) <= set(pairs(asked_by_package))  # the package asked the clean condition too: each harness request is one of its requests
    assert len(set(r["sha256"] for r in asked_by_harness)) == 4  # two images, clean and corrupted: the check can fail on pixels
    brightness = result.answers[result.answers.corruption == "brightness"].set_index("question_id").answer
    by_doc = dict(zip(range(len(manifest["question_ids"])), manifest["question_ids"]))
    from vqa_robust.vlms import clean_answer  # what the package makes of a reply's text (the served family's cleaning)
    harness_answers = {by_doc[s["doc_id"]]: clean_answer(s["filtered_resps"], manifest["settings"]["lowercase"]) for s in samples}
    assert harness_answers == brightness.to_dict()  # the same server, prompt and pixels: the same answer to every question
    scored = json.loads(next((tmp_path / "lmms").rglob("*_results.json")).read_text())["results"][task]["exact_match,none"]
    assert abs(scored - sum(s["exact_match"] for s in samples) / len(samples)) < 1e-12
    imported = score_predictions(tmp_path / "lmms", tmp_path / "export" / "export.json", data_dir="", out_dir=tmp_path / "imported", figures=False)
    key = ["corruption", "severity", "question_id"]
    mine, theirs = result.answers.sort_values(key), imported.answers.sort_values(key)
    assert theirs[key + ["answer", "score"]].to_dict("list") == mine[key + ["answer", "score"]].to_dict("list")  # the run folder's answers and scores are the run's
    agreement = imported.harness_scores.set_index("corruption").loc["brightness"]
    assert abs(agreement.harness_accuracy - scored) < 1e-12
    assert scored > 0  # lmms-eval's own score of these predictions, beside the package's
    print(f"lmms-eval: {len(imported.answers)} predictions (clean and brightness 1) in {harness_seconds:.1f} s (process start included); the package's served run: "
          f"{len(result.answers)} answers (clean and brightness 1) in {package_seconds:.1f} s, ratio {harness_seconds / package_seconds:.1f}; "
          f"imported {len(imported.answers)} predictions; brightness 1: lmms-eval exact_match {scored:.4f}, the package's VQA accuracy "
          f"{agreement.accuracy:.4f} (difference {agreement.difference:+.4f}, {agreement.n_scored_differently} answers scored differently)")

@pytest.mark.slow
@pytest.mark.parametrize("dataset,split", [("mmbench", "dev_en"), ("textvqa", "val")])
def test_lmms_eval_predictions_score_as_the_packages_own_run(tmp_path, dataset, split):
    """The tiny MMBench and TextVQA layouts (the loaders' test records) exported, answered by lmms-eval against the local chat server,
    and imported by `score_predictions`: the run folder's answers, scores and accuracy per condition are those of the package's own
    served run on the same questions against the same server (MMBench: every rotation asked, folded by CircularEval)."""
    from vqa_robust.testing_data import write_records
    from vqa_robust.run import run
    from vqa_robust.cli import export_benchmark
    from vqa_robust.harness_scoring import score_predictions
    from vqa_robust.testing import LocalChatServer
    venv = lmms_eval_venv()
    data = write_records(dataset, tmp_path / "data", split)
    common = dict(dataset=dataset, data_dir=str(data), dataset_split=split, corruptions="brightness", severities="1", seed=0)
    manifest = export_benchmark(**common, format="lmms-eval", out_dir=str(tmp_path / "export"))
    with LocalChatServer() as server:
        started = time.time()
        lmms_eval(venv, server.url, tmp_path / "export" / "lmms_eval", ",".join(c["name"] for c in manifest["conditions"]), tmp_path / "lmms")
        harness_seconds, started = time.time() - started, time.time()
        own = run(model=f"openai:local-colours@{server.url}", **common, out_dir=tmp_path / "run", progress=False, figures=False, max_concurrency=1)
        package_seconds = time.time() - started
    imported = score_predictions(tmp_path / "lmms", tmp_path / "export" / "export.json", data_dir=str(data), out_dir=tmp_path / "imported", figures=False)
    key = ["corruption", "severity", "question_id"]
    assert len(imported.answers) == len(own.answers) > 0
    assert imported.answers.sort_values(key)[key + ["answer", "score"]].to_dict("list") == own.answers.sort_values(key)[key + ["answer", "score"]].to_dict("list")
    condition = ["corruption", "severity"]
    assert imported.accuracy.sort_values(condition)[condition + ["n", "accuracy"]].to_dict("list") == own.accuracy.sort_values(condition)[condition + ["n", "accuracy"]].to_dict("list")
    results = json.loads(next((tmp_path / "lmms").rglob("*_results.json")).read_text())["results"]
    for c in manifest["conditions"]:  # lmms-eval's own score of each condition, beside the package's
        row = imported.harness_scores.set_index(condition).loc[(c["corruption"], c["severity"])]
        assert abs(row.harness_accuracy - results[c["name"]]["exact_match,none"]) < 1e-12
    print(f"{dataset}: lmms-eval {manifest['n_questions'] * len(manifest['conditions'])} requests in {harness_seconds:.1f} s (process start included), "
          f"the package's served run {package_seconds:.1f} s (ratio {harness_seconds / package_seconds:.1f}); imported {len(imported.answers)} scored rows; "
          + "; ".join(f"{r.corruption} {r.severity}: package {r.accuracy:.4f}, lmms-eval {r.harness_accuracy:.4f}" for r in imported.harness_scores.itertuples()))

def test_every_dataset_exports_and_its_images_read_back(tmp_path):
    """Every dataset the package reads (its loader's test records in the official layout) exports in both layouts, every question once per
    condition, and each image read back from the TSV and the Parquet file is, pixel for pixel, the package's corrupted image."""
    import base64
    import pandas as pd
    from vqa_robust.corruptions import image_under_condition
    from vqa_robust.datasets import DATASETS
    from vqa_robust.testing_data import write_records
    from vqa_robust.harnesses import decoded
    from vqa_robust.cli import export_benchmark, grid_questions
    for name, spec in DATASETS.items():
        data = str(write_records(name, tmp_path / name / "data", spec.splits[0])) if spec.needs_data_dir else ""
        manifest = export_benchmark(dataset=name, data_dir=data, n_images=2, corruptions="brightness", severities="1", out_dir=str(tmp_path / name / "out"))
        questions = grid_questions(name, data, "", "", "", "", 2, "brightness", "1", 0)[0]
        assert manifest["n_questions"] == len(questions) > 0, name
        assert manifest["source"] == {"dataset": name, "dataset_split": spec.splits[0]}, name
        bright = next(c["name"] for c in manifest["conditions"] if c["corruption"] == "brightness")
        tsv = pd.read_csv(tmp_path / name / "out" / "vlmevalkit" / f"{bright}.tsv", sep="\t")
        parquet = pd.read_parquet(tmp_path / name / "out" / "lmms_eval" / f"{bright}.parquet")
        assert tsv["index"].tolist() == parquet.question_id.tolist() == manifest["question_ids"], name
        image_of = questions.questions.set_index("question_id").image_id
        for qid, image in ((tsv["index"].iloc[-1], decoded(base64.b64decode(tsv.image.iloc[-1]))), (parquet.question_id.iloc[0], decoded(parquet.image.iloc[0]))):
            i = int(image_of[qid])
            assert (image == image_under_condition(questions.load_image(i), "brightness", 1, 0, i)).all(), name

@pytest.mark.slow
def test_lmms_eval_failed_requests_are_counted_not_scored(tmp_path):
    """A server answering HTTP 429 to lmms-eval's first 70 requests (one retry each): lmms-eval writes the requests that failed
    every try as `[LMMS_EVAL_REQUEST_FAILED ...]` samples and exits 0; `score` refuses them, and `allow_failed` leaves them out."""
    import pandas as pd
    from vqa_robust.cli import export_benchmark
    from vqa_robust.harness_scoring import score_predictions
    from vqa_robust.testing import LocalChatServer
    venv = lmms_eval_venv()
    manifest = export_benchmark(n_images=2, corruptions="brightness", severities="1", out_dir=str(tmp_path / "export"))
    with LocalChatServer(busy=70) as server:
        lmms_eval(venv, server.url, tmp_path / "export" / "lmms_eval", manifest["group"], tmp_path / "lmms", "max_retries=1")
    marked = sum("LMMS_EVAL_REQUEST_FAILED" in line for f in (tmp_path / "lmms").rglob("*_samples_*") for line in f.open())
    assert marked > 0
    with pytest.raises(ValueError, match=f"{marked} prediction\\(s\\) are failed requests, not answers"):
        score_predictions(tmp_path / "lmms", tmp_path / "export", out_dir=tmp_path / "refused", figures=False)
    partial = score_predictions(tmp_path / "lmms", tmp_path / "export", out_dir=tmp_path / "partial", allow_failed=True, figures=False)
    assert int(partial.harness_scores.n_failed.sum()) == marked
    failed = {f["question_id"] for f in json.loads((tmp_path / "partial" / "run.json").read_text())["models"][0]["failures"]}
    assert not set(partial.answers.question_id) & failed
    assert partial.accuracy.n.tolist() == [manifest["n_questions"] - len(failed)] * 2
    print(f"lmms-eval against a busy server: {marked} failed request(s) found, none scored; "
          f"{manifest['n_questions'] - len(failed)} of {manifest['n_questions']} questions scored in each condition")

def test_a_harness_added_in_one_registration_exports_and_scores_end_to_end(tmp_path):
    """A toy harness, registered once from here (its writer and its reader in one `Harness`), is all `--format`, `export`,
    `read_predictions` and `score_predictions` need: its layout (a JSON-lines file per condition) is written and listed in the
    manifest, its images are checked again from its files, its predictions are read back, mapped, checked and scored as a
    run's; removed again, it is unknown."""
    import base64
    import pandas as pd
    from vqa_robust.cli import export_benchmark
    from vqa_robust.harness_scoring import score_predictions
    from vqa_robust.harnesses import HARNESSES, Harness, json_line, text_of

    def write(out, group, name, questions, images, settings):  # a condition: a line per question, its image as base64
        path = out / "toy" / f"{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [{"id": int(q.question_id), "prompt": q.prompt, "answer": q.answer, "image": base64.b64encode(images[q.image_id]).decode()}
                 for q in questions.itertuples()]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        return [path]

    def lines(path):
        return [json_line(line, path, k) for k, line in enumerate(text_of(path).splitlines(), 1)]

    def exported(files):  # the condition's rows read back from its file: question_id, image bytes
        return pd.DataFrame([{"question_id": s["id"], "image": base64.b64decode(s["image"])} for s in lines(files[0])]) if files else None

    def rows(path):  # the harness's output: a line per question with what it asked and its reply
        return [{"row": k, "key": s["id"], "asked": s["prompt"], "target": s["answer"], "prediction": s["reply"], "harness_score": None}
                for k, s in enumerate(lines(path), 1)]

    toy = Harness(folder="toy", write=write, exported=exported, outputs=lambda folder: sorted(folder.rglob("*.toy.jsonl")),
                  condition=lambda path, known: (path.name[: -len(".toy.jsonl")], "predictions"), rows=rows,
                  question_of=lambda row, ids, path: int(row["key"]), failure="TOY FAILED", model=lambda path, condition: "toy-model")
    HARNESSES.register("toy", toy)
    try:
        manifest = export_benchmark(n_images=2, corruptions="brightness", severities="1", format="toy", out_dir=str(tmp_path / "export"))
        assert manifest["formats"] == ["toy"]
        assert manifest["images_sent"] == {"toy": "png"}
        assert sorted(p.relative_to(tmp_path / "export").as_posix() for p in (tmp_path / "export").rglob("*") if p.is_file()) == \
            sorted(["export.json"] + [f for c in manifest["conditions"] for f in c["files"]["toy"]])  # its layout, and nothing else
        (tmp_path / "predictions").mkdir()
        for c in manifest["conditions"]:  # the toy harness answers: right on the clean images, "blue" under brightness
            asked = lines(tmp_path / "export" / next(iter(c["files"]["toy"])))
            replies = [{**s, "reply": s["answer"] if c["corruption"] == "clean" else "blue"} for s in asked]
            (tmp_path / "predictions" / f"{c['name']}.toy.jsonl").write_text("".join(json.dumps(r) + "\n" for r in replies))
        scored = score_predictions(tmp_path / "predictions", tmp_path / "export", out_dir=tmp_path / "scored", figures=False)
        run = json.loads((tmp_path / "scored" / "run.json").read_text())["models"][0]
    finally:
        del HARNESSES["toy"]
    assert set(scored.answers.model) == {"toy:toy-model"}
    assert len(scored.answers) == 2 * manifest["n_questions"]
    assert run["harness"] == "toy"
    assert run["images_sent"] == {"toy": "png"}
    assert run["export"]["rederived_conditions"] == 2  # both conditions' images made again and found in the toy's files
    accuracy = scored.accuracy.set_index("corruption").accuracy
    blue = sum(a == "blue" for a in scored.answers[scored.answers.corruption == "clean"].answer) / manifest["n_questions"]
    assert accuracy["clean"] == 1.0
    assert abs(accuracy["brightness"] - blue) < 1e-12  # easy-VQA's ten annotations agree
    assert "toy" not in HARNESSES
    with pytest.raises(ValueError, match="unknown export format\\(s\\) 'toy'"):
        export_benchmark(n_images=2, corruptions="brightness", severities="1", format="toy", out_dir=str(tmp_path / "again"))
