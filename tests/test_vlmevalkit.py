"""The exported benchmark in real VLMEvalKit (open-compass/VLMEvalKit at e8e78f05, not on PyPI: the side environment
`scripts/vlmevalkit_env.sh SRC` makes from its repository, at ~/.cache/vqa_robust/vlmevalkit-e8e78f05 or VLMEVALKIT_ENV).
VLMEvalKit runs an export's conditions with the config the export writes, against the package's local chat server, and its
predictions are imported by `score_predictions`; the package's own served run, with VLMEvalKit's image encoding
(`image_encoding="vlmevalkit_api"`), sends the same text and the same bytes and gets the same answers. Skipped where the side
environment has not been made (its source comes from the repository, which only `fetch` or git brings).

    scripts/vlmevalkit_env.sh /path/to/VLMEvalKit     # once
    python scripts/test.py --flags slow               # or: pytest -m slow tests/test_vlmevalkit.py
"""
import json, os, subprocess, time
from pathlib import Path

import pytest

ENV = Path(os.environ.get("VLMEVALKIT_ENV") or Path.home() / ".cache" / "vqa_robust" / "vlmevalkit-e8e78f05")
GRID = dict(n_images=3, corruptions="gaussian_noise", severities="1,3", seed=0)  # 28 questions, 3 conditions

def vlmevalkit_env() -> Path:
    "The side environment, or a skip naming how to make it."
    if not (ENV / "venv" / "bin" / "python").is_file() or not (ENV / "VLMEvalKit" / "run.py").is_file():
        pytest.skip(f"no VLMEvalKit side environment at {ENV}: scripts/vlmevalkit_env.sh SRC makes it from the repository")
    return ENV

def model_config(export: Path, manifest: dict, url: str, retry: int = 3) -> dict:
    "The export's own VLMEvalKit config, its model entry filled in for the local server."
    config = json.loads((export / "vlmevalkit" / f"{manifest['group']}.json").read_text())
    entry = {**config["model"]["MODEL"], "model": "local-colours", "api_base": f"{url}/chat/completions", "retry": retry}
    return {**config, "model": {"local-colours": entry}}

def vlmevalkit(env: Path, export: Path, config: dict, work: Path, *options: str) -> None:
    "VLMEvalKit's run.py on the export's TSVs (linked into a private $LMUData) with `config`, its work dir `work/out`."
    data = work / "LMUData"
    data.mkdir(parents=True, exist_ok=True)
    for tsv in (export / "vlmevalkit").glob("*.tsv"): (data / tsv.name).symlink_to(tsv)
    (work / "config.json").write_text(json.dumps(config))
    p = subprocess.run([str(env / "venv" / "bin" / "python"), str(env / "VLMEvalKit" / "run.py"), "--config", str(work / "config.json"),
                        "--work-dir", str(work / "out"), *options], cwd=work, capture_output=True, text=True, timeout=900,
                       env={**os.environ, "LMUData": str(data), "HF_HUB_OFFLINE": "1"})
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]

@pytest.mark.slow
def test_vlmevalkit_answers_as_the_package_sends(tmp_path):
    """Open questions: VLMEvalKit sends the export's prompt (CustomVQADataset, the TSV's question cell) and JPEG (its OpenAI
    client); the package's run with `image_encoding="vlmevalkit_api"` sends the same text and bytes: equal answers and scores."""
    from vqa_robust.run import run
    from vqa_robust.cli import export_benchmark
    from vqa_robust.harness_scoring import score_predictions
    from vqa_robust.testing import LocalChatServer
    env = vlmevalkit_env()
    manifest = export_benchmark(**GRID, out_dir=str(tmp_path / "export"))
    assert manifest["images_sent"]["vlmevalkit"] == "vlmevalkit_api"
    with LocalChatServer() as server:
        started = time.time()
        vlmevalkit(env, tmp_path / "export", model_config(tmp_path / "export", manifest, server.url), tmp_path / "vlm",
                   "--mode", "infer", "--api-nproc", "4")
        harness_seconds, theirs = time.time() - started, list(server.received)
        own = run(model=f"openai:local-colours@{server.url}", image_encoding="vlmevalkit_api", **GRID, out_dir=tmp_path / "run",
                  progress=False, figures=False, max_concurrency=4)
        mine = server.received[len(theirs):]
    sent = lambda received: sorted((r["question"], r["sha256"]) for r in received)
    assert len(theirs) == manifest["n_questions"] * len(manifest["conditions"])
    assert set(sent(theirs)) <= set(sent(mine))  # every request VLMEvalKit made, text and pixels, is one the package made
    assert {r["shape"] for r in theirs} == {(100, 100, 3)}  # 64 x 64 images, up to VLMEvalKit's minimum edge
    imported = score_predictions(tmp_path / "vlm" / "out", tmp_path / "export", out_dir=tmp_path / "imported", figures=False)
    key = ["corruption", "severity", "question_id"]
    assert imported.answers.sort_values(key)[key + ["answer", "score"]].to_dict("list") == \
        own.answers.sort_values(key)[key + ["answer", "score"]].to_dict("list")
    summary = json.loads((tmp_path / "imported" / "run.json").read_text())["models"][0]
    assert summary["model"] == "vlmevalkit:local-colours"
    assert summary["images_sent"] == {"vlmevalkit": "vlmevalkit_api"}
    print(f"VLMEvalKit: {len(imported.answers)} predictions imported in {harness_seconds:.1f} s, every answer equal to the package's "
          f"run with image_encoding=vlmevalkit_api; {len(theirs)} requests, all received as 100 x 100 JPEG")

@pytest.mark.slow
def test_vlmevalkit_failures_are_counted_not_scored(tmp_path):
    "A server refusing VLMEvalKit's first requests: its 'Failed to obtain answer via API.' rows are refused, or left out."
    from vqa_robust.cli import export_benchmark
    from vqa_robust.harness_scoring import score_predictions
    from vqa_robust.testing import LocalChatServer
    env = vlmevalkit_env()
    manifest = export_benchmark(**GRID, out_dir=str(tmp_path / "export"))
    with LocalChatServer(busy=4) as server:  # two requests fail both of their tries
        vlmevalkit(env, tmp_path / "export", model_config(tmp_path / "export", manifest, server.url, retry=2), tmp_path / "vlm",
                   "--mode", "infer", "--api-nproc", "1")
    with pytest.raises(ValueError, match="prediction\\(s\\) are failed requests, not answers"):
        score_predictions(tmp_path / "vlm" / "out", tmp_path / "export", out_dir=tmp_path / "refused", figures=False)
    assert not (tmp_path / "refused" / "run.json").exists()
    partial = score_predictions(tmp_path / "vlm" / "out", tmp_path / "export", out_dir=tmp_path / "partial", allow_failed=True,
                                figures=False)
    failures = json.loads((tmp_path / "partial" / "run.json").read_text())["models"][0]["failures"]
    assert len(failures) >= 1
    assert all("Failed to obtain answer via API" in f["failure"] for f in failures)
    assert int(partial.harness_scores.n_failed.sum()) == len(failures)
    assert not set(partial.answers.question_id) & {f["question_id"] for f in failures}
    print(f"VLMEvalKit against a busy server: {len(failures)} failed request(s) found, none scored; "
          f"{partial.accuracy.n.iloc[0]} of {manifest['n_questions']} questions scored in each condition")

@pytest.mark.slow
def test_vlmevalkit_multiple_choice_sends_the_packages_prompt(tmp_path):
    """MMBench: VLMEvalKit runs each condition as CVBench (the class that sends a TSV's own prompt), `--mode all`: the prompt
    received is the package's, its answers are the package's own run's, and its _acc.csv is taken as its reported accuracy."""
    from vqa_robust.testing_data import write_records
    from vqa_robust.run import run
    from vqa_robust.cli import export_benchmark
    from vqa_robust.harness_scoring import score_predictions
    from vqa_robust.testing import LocalChatServer
    env = vlmevalkit_env()
    data = write_records("mmbench", tmp_path / "data", "dev_en")
    common = dict(dataset="mmbench", data_dir=str(data), corruptions="gaussian_noise", severities="1,3", seed=0)
    manifest = export_benchmark(**common, out_dir=str(tmp_path / "export"))
    with LocalChatServer() as server:
        vlmevalkit(env, tmp_path / "export", model_config(tmp_path / "export", manifest, server.url), tmp_path / "vlm",
                   "--mode", "all", "--judge", "exact_matching", "--api-nproc", "4")
        theirs = list(server.received)
        own = run(model=f"openai:local-colours@{server.url}", image_encoding="vlmevalkit_api", **common, out_dir=tmp_path / "run",
                  progress=False, figures=False, max_concurrency=4)
        mine = server.received[len(theirs):]
    assert {r["question"] for r in theirs} == {r["question"] for r in mine}  # the package's prompt, byte for byte
    imported = score_predictions(tmp_path / "vlm" / "out", tmp_path / "export", data_dir=str(data), out_dir=tmp_path / "imported",
                                 figures=False)
    key = ["corruption", "severity", "question_id"]
    assert imported.answers.sort_values(key)[key + ["answer", "score"]].to_dict("list") == \
        own.answers.sort_values(key)[key + ["answer", "score"]].to_dict("list")
    reported = imported.harness_scores
    assert len(reported) == len(manifest["conditions"])
    assert reported.harness_accuracy.between(0, 1).all()
    print("VLMEvalKit MMBench (CVBench class): " + "; ".join(f"{r.corruption} {r.severity}: package {r.accuracy:.4f}, "
          f"VLMEvalKit {r.harness_accuracy:.4f}" for r in reported.itertuples()))
