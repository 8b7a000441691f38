"""Served models end to end: a real OpenAI-compatible server (`transformers serve`, started here on localhost with a tiny checkpoint)
answering a run as the same checkpoint answers in this process; the server killed mid-run and the rerun asking only the rest; a wrong key
refused before anything is written; and a run on each of today's benchmarks (MMBench, TextVQA, ChartQA, DocVQA, MMMU-Pro) in their official layouts."""
import json, os, subprocess, sys, time
from pathlib import Path
import pandas as pd
import pytest
from vqa_robust.testing import serve_checkpoint, stop_server

pytestmark = pytest.mark.usefixtures("kernels_in_this_process")  # the runs' data workers inherit the kernels (tests/conftest.py)
root = Path(__file__).resolve().parent.parent

def run_library(out_dir: Path, figures: bool = False, **params):
    from vqa_robust.run import run
    return run(out_dir=str(out_dir), progress=False, figures=figures, **params)

GRID = dict(corruptions="gaussian_noise,defocus_blur", severities="1", n_images=4, seed=1)

@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory):
    "A tiny SmolVLM (Idefics3 classes: its processor needs no torchvision) and `transformers serve` serving it."
    from vqa_robust.testing_models import tiny_checkpoint
    folder = tiny_checkpoint("smolvlm-instruct", tmp_path_factory.mktemp("ckpt") / "tiny-smolvlm")
    log = tmp_path_factory.mktemp("logs") / "serve.log"
    server, url = serve_checkpoint(folder, log=log)
    state = {"folder": folder, "url": url, "log": log, "server": server}
    yield state
    stop_server(state["server"])  # the one running now: a test may have restarted it

def served_name(tiny_vlm) -> str: return f"openai:{tiny_vlm['folder']}@{tiny_vlm['url']}"

def test_served_answers_equal_in_process(tiny_vlm, tmp_path):
    "The same checkpoint, prompt and greedy decoding: the server's answers are the in-process adapter's, question by question."
    served = run_library(tmp_path / "served", model=served_name(tiny_vlm), max_concurrency=4, **GRID)
    local = run_library(tmp_path / "local", model=str(tiny_vlm["folder"]), batch_size=1, **GRID)
    key = ["corruption", "severity", "question_id"]
    a, b = (pd.read_parquet(d / "answers.parquet").sort_values(key, ignore_index=True) for d in (tmp_path / "served", tmp_path / "local"))
    assert len(a) == len(b) == len(served.answers) > 0
    assert a[key].equals(b[key])
    assert a.answer.tolist() == b.answer.tolist()
    assert a.answer.nunique() > 1
    assert len(local.answers) == len(a)  # not one answer repeated: the comparison can fail
    assert a.confidence.isna().all()  # transformers serve returns no log-probabilities: confidence absent, not 1.0
    assert b.confidence.between(0, 1).all()
    log = (tmp_path / "served" / "run.log").read_text()
    assert "requests" in log
    assert "latency_p50_s" in log
    assert "confidence absent" in log
    assert "concurrency 4" in log
    summary = json.loads((tmp_path / "served" / "run.json").read_text())
    identity, usage = summary["models"][0], summary["served"][served.answers.model.iloc[0]]
    assert (usage["requests"], usage["reused"], usage["concurrency"], usage["confidence"]) == (len(a), 0, 4, "absent")
    assert usage["completion_tokens"] > 0
    assert 0 < usage["latency_p50_s"] <= usage["latency_p99_s"]
    assert identity["weights"] == {"endpoint": tiny_vlm["url"], "served": {"id": str(tiny_vlm["folder"]), "owned_by": "local"}}

def test_server_killed_mid_run_resumes_with_the_rest(tiny_vlm, tmp_path):
    "Kill the server after some answers: the run stops with an error that says so; restarted, the rerun asks only the questions not yet answered."
    out, name = tmp_path / "killed", served_name(tiny_vlm)
    code = f"from vqa_robust.run import run; run(model={name!r}, out_dir={str(out)!r}, progress=False, figures=False, max_concurrency=1, served_retries=1, " + \
           ", ".join(f"{k}={v!r}" for k, v in GRID.items()) + ")"
    runner = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "OMP_NUM_THREADS": "1"}, cwd=root)
    from vqa_robust.served import served_name as store_name
    journal = out / "answers" / f"model={store_name(str(tiny_vlm['folder']))}" / "_served.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and not (journal.is_file() and len(journal.read_text().splitlines()) >= 6): time.sleep(0.05)
    stop_server(tiny_vlm["server"])
    _, stderr = runner.communicate(timeout=120)
    assert runner.returncode != 0, stderr[-2000:]
    assert "no answer after 2 attempts" in stderr, stderr[-2000:]
    assert "rerun to ask only the rest" in stderr, stderr[-2000:]  # one retry: the stop comes after 0.5 s of backoff, not the default 7.5
    answered = len(journal.read_text().splitlines())
    port = int(tiny_vlm["url"].rsplit(":", 1)[1].split("/")[0])  # the same endpoint: the run's identity names it
    tiny_vlm["server"], _ = serve_checkpoint(tiny_vlm["folder"], port, tiny_vlm["log"])
    result = run_library(out, model=name, max_concurrency=2, **GRID)
    total = len(result.answers)
    assert 6 <= answered < total
    usage = [l for l in (out / "run.log").read_text().splitlines() if "requests" in l][-1]
    assert f"requests {total - answered}," in usage, usage  # the rest only: the answers before the kill come from the journal (or a chunk saved whole)
    full = run_library(tmp_path / "whole", model=name, **GRID)
    key = ["corruption", "severity", "question_id"]
    assert result.answers.sort_values(key).answer.tolist() == full.answers.sort_values(key).answer.tolist()  # the resumed run's answers are a whole run's

def test_wrong_key_writes_nothing(tmp_path, monkeypatch):
    from vqa_robust.testing import LocalChatServer
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with LocalChatServer(api_key="sk-right") as server:
        with pytest.raises(RuntimeError, match=r"refused the API key in \$OPENAI_API_KEY \(HTTP 401\)"):
            run_library(tmp_path / "run", model=f"openai:local-colours@{server.url}", corruptions="gaussian_noise", severities="1", n_images=2)
        assert not server.received
    assert not (tmp_path / "run").exists()

@pytest.mark.parametrize("dataset", ["mmbench", "textvqa", "chartqa", "docvqa", "mmmu_pro"])
def test_benchmark_runs_write_the_run_folder(dataset, tmp_path):
    "Each benchmark from its official layout, two served models, a corruption at severities 1-5: the run folder, with VRB's metrics and intervals."
    from vqa_robust.datasets import DATASETS, load_dataset
    from vqa_robust.testing_data import write_records
    from vqa_robust.testing import LocalChatServer
    data_dir = write_records(dataset, tmp_path / "data")
    questions = load_dataset(dataset, data_dir)
    with LocalChatServer(model="colours-a") as a, LocalChatServer(model="colours-b", logprobs=False) as b:
        result = run_library(tmp_path / "run", model=f"openai:colours-a@{a.url},openai:colours-b@{b.url}", dataset=dataset, data_dir=str(data_dir),
                             corruptions="gaussian_noise", severities="1,2,3,4,5", n_images=0, figures=dataset == "mmbench")
        prompts = {r["question"] for r in a.received}
    for name in ("answers.parquet", "accuracy.csv", "accuracy_breakdown.csv", "robustness.csv", "accuracy_ci.csv", "vre_ci.csv", "calibration.csv", "run.json"):
        assert (tmp_path / "run" / name).is_file(), name
    originals = questions.questions.question_id[questions.questions.get("circular_of", questions.questions.question_id) == questions.questions.question_id]
    assert set(result.accuracy.n) == {len(originals)}
    assert len(result.accuracy) == 2 * 6
    answers = pd.read_parquet(tmp_path / "run" / "answers.parquet")
    assert len(answers) == 2 * 6 * len(questions)  # every rotation's answer kept
    assert set(answers.accuracy_mode) == {DATASETS[dataset].accuracy_mode}
    if dataset in ("mmbench", "mmmu_pro"):
        assert dataset != "mmbench" or (tmp_path / "run" / "error_vs_severity.png").is_file()  # VRB's figures, unchanged
        assert all(p.endswith("Answer with the option's letter from the given choices directly.") for p in prompts)
        assert set(answers.choice) <= set("ABCDEFGHIJZ")
    else: assert all(p.endswith("Answer the question using a single word or phrase.") for p in prompts)

def test_mmbench_with_a_served_judge(tmp_path):
    "A served judge reads the answers VLMEvalKit's rules cannot; extraction.csv counts who decided; the judge's replies are journalled and reused."
    from vqa_robust.testing_data import write_records
    from vqa_robust.testing import LocalChatServer
    data_dir = write_records("mmbench", tmp_path / "data", "dev_en")
    grid = dict(dataset="mmbench", data_dir=str(data_dir), corruptions="gaussian_noise", severities="1", n_images=0)
    with LocalChatServer(model="colours") as model, LocalChatServer(model="judge", text_answer=lambda prompt: "A") as judge:
        name, judge_name = f"openai:colours@{model.url}", f"openai:judge@{judge.url}"
        plain = run_library(tmp_path / "plain", model=name, **grid)
        judged = run_library(tmp_path / "judged", model=name, judge=judge_name, **grid)
        asked = len(judge.received)
        again = run_library(tmp_path / "judged", model=name, judge=judge_name, **grid)
        assert len(judge.received) == asked  # the rerun reads the judge's journal
        with pytest.raises(ValueError, match="not multiple choice"):
            run_library(tmp_path / "text", model=name, judge=judge_name, dataset="textvqa", corruptions="gaussian_noise", severities="1", n_images=0,
                        data_dir=str(write_records("textvqa", tmp_path / "tv", "val")))
        with pytest.raises(ValueError, match="ask no judge"):
            run_library(tmp_path / "mmmu", model=name, judge=judge_name, option_rules="mmmu_pro", **grid)
    assert not (tmp_path / "text").exists()
    assert not (tmp_path / "mmmu").exists()  # refused before anything is written
    before, after = (pd.read_csv(tmp_path / d / "extraction.csv").set_index(["model", "corruption", "severity"]) for d in ("plain", "judged"))
    assert (before.n == after.n).all()
    assert (before[["refusal", "letter", "answer_is", "option_text", "judge", "judge_random", "none"]].sum(axis=1) == before.n).all()
    assert before.none.sum() > 0
    assert before.judge.sum() == 0  # without a judge, what the rules cannot read is nobody's (Z)
    assert (after.judge == before.none).all()
    assert after.none.sum() == 0  # with it, the judge reads exactly those
    assert asked == int(before.none.sum())                          # one request per unread answer
    answers = pd.read_parquet(tmp_path / "judged" / "answers.parquet")
    assert set(answers.option_rules) == {"vlmevalkit"}
    assert (answers.choice[answers.option_rule == "judge"] == "A").all()
    summary = json.loads((tmp_path / "judged" / "run.json").read_text())
    assert summary["judge"]["served"]["id"] == "judge"
    assert summary["option_rules"]["name"] == "vlmevalkit"
    assert "e8e78f05" in summary["option_rules"]["source"]
    assert json.loads((tmp_path / "plain" / "run.json").read_text())["judge"] is None
    assert again.extraction.equals(judged.extraction)

def test_switching_judges_and_overwriting_a_judge(tmp_path):
    """Judge A, then B, then B again: each run finishes, the model is asked once, only this run's judge's replies stay.
    A judge journal naming two models is refused before anything changes; overwrite then asks that judge again, not the model."""
    from vqa_robust.testing_data import write_records
    from vqa_robust.served import ServedModelError
    from vqa_robust.testing import LocalChatServer
    data_dir = write_records("mmbench", tmp_path / "data", "dev_en")
    grid = dict(dataset="mmbench", data_dir=str(data_dir), corruptions="gaussian_noise", severities="1", n_images=0)
    out = tmp_path / "run"
    with LocalChatServer(model="colours") as model, LocalChatServer(model="judge-a", text_answer=lambda prompt: "A") as a, \
            LocalChatServer(model="judge-b", text_answer=lambda prompt: "B") as b:
        name, judge_b = f"openai:colours@{model.url}", f"openai:judge-b@{b.url}"
        run_library(out, model=name, judge=f"openai:judge-a@{a.url}", **grid)
        asked = len(model.received)
        run_library(out, model=name, judge=judge_b, **grid)
        judged = len(b.received)
        again = run_library(out, model=name, judge=judge_b, **grid)  # the run that stopped before removing the results
        assert (len(model.received), len(b.received)) == (asked, judged)  # the model asked once, judge B once
        assert judged == len(a.received) > 0
        assert sorted(p.name for p in (out / "judge").iterdir()) == ["openai-judge-b"]  # judge A's replies went with it
        assert set(again.answers.choice[again.answers.option_rule == "judge"]) == {"B"}
        journal = out / "judge" / "openai-judge-b" / "_served.jsonl"
        with open(journal, "a") as handle:  # a reply of the model the server served before
            handle.write(json.dumps({"key": "old", "text": "C", "model": "judge-b-old"}) + "\n")
        finished = (out / "run.json").read_text()
        with pytest.raises(ServedModelError, match=r"holds answers of 2 served models \(judge-b, judge-b-old\)"):
            run_library(out, model=name, judge=judge_b, **grid)
        assert (out / "run.json").read_text() == finished  # refused before anything changed: the results stay
        assert (len(model.received), len(b.received)) == (asked, judged)
        rejudged = run_library(out, model=name, judge=judge_b, overwrite=True, **grid)
        assert (len(model.received), len(b.received)) == (asked, 2 * judged)  # overwrite asked the judge again, only it
    assert rejudged.extraction.equals(again.extraction)
    assert '"judge-b-old"' not in journal.read_text()

def test_unscorable_annotations_refused_before_answering(tmp_path):
    "A TextVQA question with nine answers (its evaluator needs ten) is refused before any request is sent or file written."
    from vqa_robust.testing_data import write_records
    from vqa_robust.testing import LocalChatServer
    data_dir = write_records("textvqa", tmp_path / "data", "val")
    path = data_dir / "TextVQA_0.5.1_val.json"
    content = json.loads(path.read_text()); content["data"][0]["answers"] = content["data"][0]["answers"][:9]; path.write_text(json.dumps(content))
    with LocalChatServer() as server:
        with pytest.raises(ValueError, match=r"cannot be scored: question \d+: 9 human answer\(s\), but mode 'textvqa' needs the ten"):
            run_library(tmp_path / "run", model=f"openai:local-colours@{server.url}", dataset="textvqa", data_dir=str(data_dir),
                        corruptions="gaussian_noise", severities="1", n_images=0)
        assert not server.received
    assert not (tmp_path / "run").exists()

def test_rerun_reports_confidence_of_the_answers_kept(tmp_path):
    "A rerun answered wholly from the store asks nothing, and run.json still says its answers carry confidences (they are in answers.parquet)."
    from vqa_robust.testing import LocalChatServer
    with LocalChatServer() as server:
        grid = dict(model=f"openai:local-colours@{server.url}", corruptions="gaussian_noise", severities="1", n_images=2)
        first = run_library(tmp_path / "run", **grid)
        asked = len(server.received)
        again = run_library(tmp_path / "run", **grid)
        assert len(server.received) == asked  # every answer from the store
    for result in (first, again):
        usage = json.loads((result.out_dir / "run.json").read_text())["served"]["openai-local-colours"]
        assert usage["confidence"] == "log-probabilities", usage
        assert result.answers.confidence.notna().all(), usage
    assert json.loads((again.out_dir / "run.json").read_text())["served"]["openai-local-colours"]["requests"] == 0
    usage_lines = [l for l in (again.out_dir / "run.log").read_text().splitlines() if "requests 0," in l]
    assert usage_lines, usage_lines
    assert "confidence log-probabilities" in usage_lines[-1], usage_lines  # the rerun's own line in run.log

VLLM_ENV = os.environ.get("VQA_ROBUST_VLLM_ENV", "")  # a side venv with vLLM (scripts/vllm_env.sh); unset: this test is skipped

@pytest.mark.skipif(not (VLLM_ENV and (Path(VLLM_ENV) / "bin" / "vllm").exists()), reason="set VQA_ROBUST_VLLM_ENV to the venv scripts/vllm_env.sh makes")
def test_vllm_served_answers_equal_in_process():
    "vLLM itself, started with its defaults (the checkpoint's generation_config applied): the package's answers equal in-process ones."
    done = subprocess.run([sys.executable, str(root / "scripts" / "bench_served.py"), "--server", "vllm", "--vllm-env", VLLM_ENV,
                           "--questions", "48", "--in-flight", "1,8"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "served, 8 in flight 48/48" in done.stdout
    assert "served, 1 in flight 48/48" in done.stdout
    control = int(done.stdout.split("control, temperature 0 alone (the server's defaults for the rest): ")[1].split("/")[0])
    assert control < 48  # the server's defaults do change answers, so the equality above is the decoding the package states

def test_store_answered_by_two_reported_models_is_refused(tmp_path):
    """Chunks record the model the replies named: a resumed run whose server now answers as another model (the same /v1/models entry
    when the identity was taken, the journal gone) stops before it saves a chunk of the other model."""
    from vqa_robust.vqav2 import load_easy_vqa
    from vqa_robust.inference import run_conditions
    from vqa_robust.served import ServedModelError
    from vqa_robust.testing import LocalChatServer
    from vqa_robust.store import RECORD, partition_dir
    from vqa_robust.zoo import load_model
    easy = load_easy_vqa("test")
    data = easy.subset(easy.image_ids[:3])
    first_grid, grid = [("gaussian_noise", 1)], [("gaussian_noise", 1), ("defocus_blur", 1)]
    with LocalChatServer(model="m1") as server:
        name = f"openai:m1@{server.url}"
        first = load_model(name)
        run_conditions(first, data, first_grid, tmp_path, progress=False, chunk_size=4)
        folder = partition_dir(tmp_path, first.name, "gaussian_noise", 1)
        assert {e["reported"] for e in json.loads((folder / RECORD).read_text())["chunks"].values()} == {"m1"}
        for journal in (tmp_path / "answers").rglob("_served*.jsonl"): journal.unlink()
        resumed = load_model(name)      # identity taken while the server still says m1
        server.model = "m2"             # then it answers as another model
        with pytest.raises(ServedModelError, match="answered as model 'm2', earlier as 'm1'"):
            run_conditions(resumed, data, grid, tmp_path, progress=False, chunk_size=4)
        assert not partition_dir(tmp_path, first.name, "defocus_blur", 1).joinpath(RECORD).exists() or \
            not json.loads(partition_dir(tmp_path, first.name, "defocus_blur", 1).joinpath(RECORD).read_text())["chunks"]

def test_precision_run_stops_early_and_resumes_with_the_rest(tmp_path):
    "-p precision: a served run stops at the first look where every interval is narrow enough, sends each request once, and a rerun with a smaller width asks only the images it had not reached; its intervals hold the whole run's estimates."
    from vqa_robust.testing import LocalChatServer
    grid = dict(corruptions="gaussian_noise", severities="5", n_images=40, seed=2, num_workers=0)
    with LocalChatServer(model="colours") as server:
        name = f"openai:colours@{server.url}"
        loose = run_library(tmp_path / "run", model=name, precision="0.9", **grid)
        stopped = json.loads((tmp_path / "run" / "run.json").read_text())
        first = len(server.received)
        whole = run_library(tmp_path / "run", model=name, precision="0.0001", **grid)  # the same folder: resumed
        after = len(server.received)
        full = run_library(tmp_path / "full", model=name, **grid)
    rule = stopped["precision"]
    assert (rule["looks"], rule["images"], rule["of_images"]) == (8, 32, 40)  # 32 images: the first look that may stop (30 on)
    questions = loose.answers.question_id.nunique()
    assert rule["saved"] == round(1 - questions / full.answers.question_id.nunique(), 4)
    assert first == 2 * questions == rule["answers"]  # two conditions, every request once across eight looks
    assert stopped["served"][loose.answers.model.iloc[0]]["requests"] == first
    assert after - first == 2 * (whole.answers.question_id.nunique() - questions)  # the rerun asks only the other images
    assert json.loads((tmp_path / "run" / "run.json").read_text())["precision"]["looks"] == 10
    intervals = pd.read_csv(tmp_path / "run" / "precision.csv")
    assert len(pd.read_csv(tmp_path / "full" / "accuracy.csv")) == 2
    assert not (tmp_path / "full" / "precision.csv").exists()
    early = loose.precision.set_index(["corruption", "severity"])
    acc = full.accuracy.set_index(["corruption", "severity"]).accuracy
    assert early.loc[("clean", 0), "low"] <= acc[("clean", 0)] <= early.loc[("clean", 0), "high"]  # the stopped run's intervals hold the whole run's numbers
    drop = acc[("gaussian_noise", 5)] - acc[("clean", 0)]
    assert early.loc[("gaussian_noise", 5), "low"] <= drop <= early.loc[("gaussian_noise", 5), "high"]
    assert set(intervals.measure) == {"accuracy", "drop"}

def test_served_model_behind_a_defence_writes_the_defence_table(tmp_path):
    "A served model's answers are named by its spec ('openai-local-colours'), not as the run was given it: the defence table pairs them all the same."
    from vqa_robust.testing import LocalChatServer
    with LocalChatServer() as server:
        result = run_library(tmp_path / "run", model=f"openai:local-colours@{server.url}", defences="none,median",
                             corruptions="gaussian_noise", severities="1,2,3,4,5", n_images=2)
    table = pd.read_csv(tmp_path / "run" / "defences.csv")
    assert set(table.defence) == {"median"}
    assert len(table) == 6  # clean and severities 1-5
    assert (table.n == 24).all()  # every question paired with its undefended answer
    assert table.vre.notna().all()
    assert table.vre_none.notna().all()  # VRE behind the defence and without it, found by name
    assert "defences.csv" not in result.not_computed
