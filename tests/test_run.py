"""End-to-end checks of a run as users start it: the library call `vqa_robust.run.run` (most tests), the command `vqa-robust run` and the
papermill entry point `nbs/run.ipynb` (one test each, giving the same answers row for row); parameters, run folder, errors."""
import json, os, re, subprocess, sys, time
from pathlib import Path
import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.usefixtures("kernels_in_this_process")  # the runs' data workers inherit the kernels (tests/conftest.py)
root = Path(__file__).resolve().parent.parent
papermill = str(Path(sys.executable).parent / "papermill")

def run_notebook(out_dir: Path, *params: str, env: dict | None = None) -> subprocess.CompletedProcess:
    args = [papermill, str(root / "nbs" / "run.ipynb"), str(out_dir / "run.ipynb"), "-k", "python3", "-p", "out_dir", str(out_dir)]
    for p in params: args += ["-p", *p.split("=", 1)]
    return subprocess.run(args, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}, cwd=root)

def run_command(out_dir: Path, *params: str, env: dict | None = None) -> subprocess.CompletedProcess:
    "`vqa-robust run --name value ...` (the console script; its function where the package was installed before it existed)."
    script = Path(sys.executable).parent / "vqa-robust"
    command = [str(script)] if script.exists() else [sys.executable, "-c", "import sys; from vqa_robust.cli import main; sys.exit(main())"]
    args = command + ["run", "--out-dir", str(out_dir)]
    for p in params:
        name, value = p.split("=", 1)
        args += ["--" + name.replace("_", "-"), value]
    return subprocess.run(args, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}, cwd=root)

def run_library(out_dir: Path, *params: str, figures: bool = True):
    "`vqa_robust.run.run(name=value, ...)` with the values as text, as papermill and the command line pass them (figures=False: tables only, where a test reads no figure)."
    from vqa_robust.run import run
    return run(out_dir=str(out_dir), progress=False, figures=figures, **dict(p.split("=", 1) for p in params))

@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    run_library(out, *SMALL)
    return out

SMALL = ("n_images=24", "corruptions=gaussian_noise,defocus_blur", "severities=1,2,3,4,5", "seed=3")
SHIPPED = {"easy-vqa-vilt", "easy-vqa-blip"}  # the default: both shipped models

def test_import():
    p = subprocess.run([sys.executable, "-c", "import vqa_robust, vqa_robust.vqav2, vqa_robust.corruptions, vqa_robust.models, "
                        "vqa_robust.inference, vqa_robust.metrics, vqa_robust.analysis; print(vqa_robust.__version__)"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().count(".") == 2

def test_run_folder(small_run):
    for name in ("answers.parquet", "accuracy.csv", "family_accuracy.csv", "robustness.csv", "split.json", "accuracy_vs_severity.png", "run.json",
                 "error_vs_severity.png", "average_error.png", "relative_drop.png", "submetric_radars.png", "vre_weights.png", "vre_weights.csv", "vre_model_ci.csv"):
        assert (small_run / name).is_file(), name
    answers = pd.read_parquet(small_run / "answers.parquet")
    assert {"model", "corruption", "severity", "seed", "question_id", "answer", "confidence", "score"} <= set(answers.columns)
    assert answers.confidence.between(0, 1).all()  # both shipped models report a confidence per answer
    acc = pd.read_csv(small_run / "accuracy.csv")
    assert list(acc.columns) == ["model", "corruption", "severity", "accuracy", "n"]
    assert len(acc) == 2 * (1 + 2 * 5)  # 2 models x (clean + 2 corruptions x 5 severities)
    assert acc.accuracy.between(0, 1).all()
    robustness = pd.read_csv(small_run / "robustness.csv")
    assert {"F", "R", "rho", "mu", "delta", "VRE"} <= set(robustness.columns)
    assert set(answers.accuracy_mode) == {"official"}  # the default mode, recorded per row
    ci = pd.read_csv(small_run / "accuracy_ci.csv")
    assert len(ci) == len(acc)
    assert (ci.low <= ci.estimate + 1e-12).all()
    assert (ci.estimate <= ci.high + 1e-12).all()
    merged = ci.merge(acc, on=["model", "corruption", "severity"])
    assert (merged.estimate - merged.accuracy).abs().max() < 1e-12  # the bootstrap's point estimate is the table's accuracy
    vre_ci = pd.read_csv(small_run / "vre_ci.csv")
    assert set(vre_ci.corruption) == set(acc.corruption) - {"clean"}

def test_answer_changes(small_run):
    "Every answer a corruption changed, counted independently from answers.parquet, is in answer_changes.csv with a category."
    from vqa_robust.vocabulary import normalize_answer  # the official normalisation, checked against the VQA script in its notebook
    answers = pd.read_parquet(small_run / "answers.parquet")
    norm = lambda s: s.astype(str).map(normalize_answer)
    clean = answers[answers.corruption == "clean"].set_index(["model", "question_id"]).answer
    corrupted = answers[answers.corruption != "clean"]
    before = norm(clean.reindex(pd.MultiIndex.from_frame(corrupted[["model", "question_id"]])).reset_index(drop=True))
    n_changed = int((before.to_numpy() != norm(corrupted.answer).to_numpy()).sum())
    changes = pd.read_csv(small_run / "answer_changes.csv")
    assert len(changes) == n_changed > 0
    assert set(changes.category) <= {"blindness", "miscolour", "undercount", "overcount", "irrationality", "misclassify", "corrected"}
    table = pd.read_csv(small_run / "mispredictions.csv")
    assert table[table.by == "category"].groupby("model")["count"].sum().to_dict() == changes.groupby("model").size().to_dict()
    assert (small_run / "answer_changes.png").stat().st_size > 10_000
    flips = pd.read_csv(small_run / "flips.csv").set_index(["model", "corruption", "severity"])  # one definition of a changed answer in both files
    counted = (flips.flip * (flips.n - flips.n_without_clean)).round().astype(int)
    listed = changes.groupby(["model", "corruption", "severity"]).size().reindex(counted.index, fill_value=0)
    assert counted.to_dict() == listed.to_dict()
    assert counted.sum() == n_changed

def test_parameters_are_honoured(small_run):
    split = json.loads((small_run / "split.json").read_text())
    assert len(split["image_ids"]) == 24
    answers = pd.read_parquet(small_run / "answers.parquet")
    assert set(answers.severity) == {0, 1, 2, 3, 4, 5}
    assert set(answers.seed) == {3}
    assert set(answers.model) == SHIPPED
    run = json.loads((small_run / "run.json").read_text())
    assert [m["model"] for m in run["models"]] == ["easy-vqa-vilt", "easy-vqa-blip"]
    assert run["models"][1]["settings"]["num_beams"] == 3  # the registry's decoding is recorded with the results

def test_models_are_ranked_jointly(small_run):
    robustness = pd.read_csv(small_run / "robustness.csv")
    per_model = robustness[robustness.corruption == "all"].set_index("model")
    assert set(per_model.index) == SHIPPED
    assert per_model.VRE.between(0, 1).all()
    pairs = robustness[(robustness.model != "all") & (robustness.corruption != "all")]
    assert set(pairs.model) == SHIPPED
    # scaled jointly over models x corruptions: each scaled sub-metric spans [0, 1] over all pairs, not within each model
    for metric in ("F_scaled", "mu_scaled"):
        assert pairs[metric].min() == 0
        assert pairs[metric].max() == 1
    ci = pd.read_csv(small_run / "vre_model_ci.csv", index_col=0)
    assert set(ci.index) == SHIPPED
    assert sorted(ci["rank"]) == [1, 2]

def test_comparisons_and_plan_from_the_run_folder(small_run, capsys):
    "comparisons.csv pairs the two models on the same images (its accuracy differences are accuracy.csv's); `vqa-robust plan` reads the folder."
    from vqa_robust.cli import main
    answers = pd.read_parquet(small_run / "answers.parquet")
    assert json.loads((small_run / "run.json").read_text())["resampling_unit"] == "image"
    assert answers.image_id.nunique() == 24
    assert answers.groupby("question_id").image_id.nunique().max() == 1
    table = pd.read_csv(small_run / "comparisons.csv")
    assert set(table.measure) == {"accuracy", "drop", "vre"}
    assert len(table[table.measure == "accuracy"]) == 11
    acc = pd.read_csv(small_run / "accuracy.csv").set_index(["model", "corruption", "severity"]).accuracy
    for row in table[table.measure == "accuracy"].itertuples():  # differences recomputed from accuracy.csv, a - b
        assert abs(row.estimate - (acc[(row.model_a, row.corruption, row.severity)] - acc[(row.model_b, row.corruption, row.severity)])) < 1e-12
    assert (table.p_holm >= table.p_value - 1e-12).all()
    assert (table.low <= table.estimate + 1e-12).all()
    assert (small_run / "comparisons.png").is_file()
    assert main(["plan", str(small_run), "--width", "0.05", "--difference", "0.2"]) == 0
    printed = capsys.readouterr().out
    assert "images give every drop a 95% interval of width 0.05" in printed
    assert "a VRE difference between" in printed
    assert main(["plan", str(small_run), "--width", "-1"]) == 2  # refused, naming the parameter
    assert "width must be above 0" in capsys.readouterr().err

def test_combine_resamples_questions_where_a_run_names_no_images(small_run):
    "combine of a run of this version with one of an earlier version (no image_id): every run's questions resampled, and combine.json says so."
    from dataclasses import replace
    from vqa_robust.combine import combined_scores, read_run
    from vqa_robust.intervals import resampling_unit
    ours = read_run(small_run)
    vilt = replace(ours, answers=ours.answers[ours.answers.model == "easy-vqa-vilt"])
    blip = replace(ours, answers=ours.answers[ours.answers.model == "easy-vqa-blip"])
    older = replace(blip, answers=blip.answers.drop(columns="image_id"))
    assert resampling_unit(combined_scores([vilt, blip])) == "image"
    assert resampling_unit(combined_scores([vilt, older])) == "question"

def test_shipped_models_see_the_image(small_run):
    "A broken model fails here: each shipped model beats the blind baseline on clean questions and loses accuracy under defocus blur at severity 5."
    families = pd.read_csv(small_run / "family_accuracy.csv")
    blind = families[families.model == "blind"]["all"].iloc[0]
    acc = pd.read_csv(small_run / "accuracy.csv").set_index(["model", "corruption", "severity"]).accuracy
    for model in SHIPPED:
        clean, blurred = acc[(model, "clean", 0)], acc[(model, "defocus_blur", 5)]
        assert clean > blind + 0.15, (model, clean, blind)
        assert blurred < clean - 0.05, (model, clean, blurred)

def store_files(out: Path) -> dict:
    return {str(p.relative_to(out)): p.stat().st_mtime_ns for p in (out / "answers").rglob("*") if p.is_file()}

def test_rerun_resumes(small_run):
    saved = store_files(small_run)
    assert len(saved) == 2 * 11 * 3  # 2 models x 11 conditions x (one chunk, its sidecar, the record)
    run_library(small_run, *SMALL)
    assert store_files(small_run) == saved

def test_store_and_log(small_run):
    store = pd.read_parquet(small_run / "answers")  # the Hive-partitioned store reads as one table
    flat = pd.read_parquet(small_run / "answers.parquet")
    assert len(store) == len(flat)
    assert set(store.model.astype(str)) == SHIPPED
    log = (small_run / "run.log").read_text()
    assert "answers/s" in log
    assert "peak resident memory" in log
    assert "data worker(s)" in log
    run = json.loads((small_run / "run.json").read_text())
    assert run["peak_memory_mb"]["process"] > 0
    assert run["batch_sizes"] == {"easy-vqa-vilt": 64, "easy-vqa-blip": 32}
    tunables = [t for t in os.environ.get("GLIBC_TUNABLES", "").split(":") if t.startswith("glibc.malloc.")]  # this test's environment, which the run inherited
    assert run["malloc"] == (":".join(tunables) or "glibc defaults")
    assert run["arrow_pool"] == os.environ.get("ARROW_DEFAULT_MEMORY_POOL", "mimalloc")
    assert f"data worker(s), malloc: {run['malloc']}, arrow pool: {run['arrow_pool']}\n" in log  # the allocators beside the peaks they made
    answering = [int(m) for m in re.findall(r"done: .*peak resident memory (\d+) MB", log)]
    whole = [int(m) for m in re.findall(r"results written in .*peak resident memory of the whole run (\d+) MB", log)]
    assert len(whole) == len(answering) >= 1
    assert whole[-1] >= answering[-1]  # the whole run's peak, the results' writing included, is logged last ...
    assert whole[-1] == round(run["peak_memory_mb"]["process"])  # ... and is run.json's
    private = [int(m) for m in re.findall(r"peak resident memory of the whole run \d+ MB \(private (\d+) MB; workers", log)]
    assert private[-1] == round(run["peak_memory_mb"]["private"])
    assert 0 < run["peak_memory_mb"]["private"] <= run["peak_memory_mb"]["process"]  # the sampled private part
    breakdown = pd.read_csv(small_run / "accuracy_breakdown.csv")
    assert set(breakdown.breakdown) == {"answer_type", "question_type"}
    assert len(breakdown.groupby(["model", "corruption", "severity"])) == 22

def test_vqav2_from_its_official_files(tmp_path):
    "`dataset vqav2, data_dir ...` finds the official file names; per-type accuracy comes out per condition."
    from vqa_robust.vqav2 import write_mini_vqav2
    data_dir = write_mini_vqav2(tmp_path / "vqa", layout="flat")
    out = tmp_path / "out"
    run_library(out, "model=easy-vqa-vilt", "dataset=vqav2", f"data_dir={data_dir}", "split=sample", "n_images=0",
                "corruptions=brightness", "severities=1", "num_workers=1", figures=False)
    breakdown = pd.read_csv(out / "accuracy_breakdown.csv")
    assert set(breakdown[breakdown.breakdown == "answer_type"].type) == {"other", "yes/no", "number"}
    assert json.loads((out / "run.json").read_text())["n_questions"] == 15

def test_vqav2_number_of_images_is_a_sample(tmp_path):
    "A number of images asked for on VQAv2 is a sample (never silently VRB's 3,000); VRB's split of a folder that lacks its images says to sample."
    from vqa_robust.vqav2 import write_mini_vqav2
    data_dir = write_mini_vqav2(tmp_path / "vqa", layout="flat")
    run_library(tmp_path / "out", "model=easy-vqa-vilt", "dataset=vqav2", f"data_dir={data_dir}", "n_images=2", "corruptions=brightness", "severities=1", figures=False)
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert (run["split"], run["n_images"]) == ("sample", 2)
    with pytest.raises(ValueError, match="use split 'sample'"):
        run_library(tmp_path / "vrb", "model=easy-vqa-vilt", "dataset=vqav2", f"data_dir={data_dir}", "corruptions=brightness", "severities=1", figures=False)

def test_library_command_and_notebook_agree(tmp_path):
    "The three entry points (the library, the command's arguments, the notebook's parameters) give the same answers.parquet, row for row (papermill's one test here)."
    params = ("model=easy-vqa-vilt,easy-vqa-blip", "n_images=4", "corruptions=gaussian_noise", "severities=1,2", "seed=1")
    result = run_library(tmp_path / "library", *params, figures=False)
    from vqa_robust.cli import main  # the console script's function, in this process (test_unreachable_model_fails_clearly runs the script itself)
    argv = ["run", "--out-dir", str(tmp_path / "command")] + [a for p in params for a in ("--" + p.split("=", 1)[0].replace("_", "-"), p.split("=", 1)[1])]
    assert main(argv) == 0
    (tmp_path / "notebook").mkdir()
    notebook = run_notebook(tmp_path / "notebook", *params)
    assert notebook.returncode == 0, notebook.stderr[-3000:]
    library = pd.read_parquet(tmp_path / "library" / "answers.parquet")
    assert len(library) == 2 * 3 * result.summary["n_questions"] > 0  # 2 models x (clean + 2 severities)
    for other in ("command", "notebook"):
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / other / "answers.parquet"), library)
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / other / "accuracy.csv"), result.accuracy)
    split = json.loads((tmp_path / "notebook" / "split.json").read_text())
    assert len(split["image_ids"]) == 4
    run = json.loads((tmp_path / "notebook" / "run.json").read_text())
    assert (run["seed"], run["severities"], run["corruptions"]) == (1, [1, 2], ["gaussian_noise"])
    assert "need severities 1-5 of at least one corruption" in (tmp_path / "notebook" / "run.ipynb").read_text()  # the notebook shows the result
    assert not (tmp_path / "notebook" / "robustness.csv").exists()
    assert "chart-heatmap" in (tmp_path / "notebook" / "report.html").read_text()  # the notebook's page, without VRE

def test_some_severities_skip_robustness(tmp_path, capsys):
    run_library(tmp_path, "model=easy-vqa-vilt", "n_images=3", "corruptions=brightness", "severities=1,5", figures=False)
    assert len(pd.read_csv(tmp_path / "accuracy.csv")) == 3  # one model (given as text), clean + 2 levels
    assert not (tmp_path / "robustness.csv").exists()
    assert "need severities 1-5 of at least one corruption" in capsys.readouterr().out

def test_unreachable_model_fails_clearly(tmp_path):
    p = run_command(tmp_path, "model=blip", "n_images=2", env={"HF_HUB_OFFLINE": "1"})
    assert p.returncode != 0
    assert "could not load the weights of model 'blip' from 'Salesforce/blip-vqa-capfilt-large'" in p.stderr
    assert "HF_HUB_OFFLINE is set" in p.stderr or "cannot be reached" in p.stderr
    assert list(tmp_path.iterdir()) == []  # refused before any work: no lock, no store, no question read

def test_unknown_model_fails_before_any_work(tmp_path):
    with pytest.raises(KeyError, match="unknown model 'no-such-model'"):
        run_library(tmp_path, "model=easy-vqa-vilt,no-such-model", "n_images=2")
    assert not (tmp_path / "answers").exists()

def test_unreachable_hub_fails_fast(tmp_path):
    from vqa_robust.models import hub_unreachable_reason
    if hub_unreachable_reason("Salesforce/blip-vqa-capfilt-large") is None: pytest.skip("the model hub is reachable (or BLIP is cached) here")
    start = time.time()
    p = run_command(tmp_path, "model=blip", "n_images=2")
    assert p.returncode != 0
    assert "cannot be reached" in p.stderr
    assert time.time() - start < 60  # no minutes of network retries
    assert list(tmp_path.iterdir()) == []
    assert "answers:" not in p.stderr  # refused before any work: nothing written, nothing answered

def test_parameters_cell_is_tagged():
    nb = json.loads((root / "nbs" / "run.ipynb").read_text())
    assert any("parameters" in c.get("metadata", {}).get("tags", []) for c in nb["cells"])

def test_defaults_are_written_once():
    "Neither run_config nor run_parameters repeats the parameter list: both take RunParameters (or its fields by name), whose defaults are the notebook's."
    import inspect
    from vqa_robust.run import run_config
    from vqa_robust.parameters import RunParameters, run_parameters
    for function in (run_config, run_parameters):
        assert list(inspect.signature(function).parameters) == ["parameters", "values"], function
    assert run_parameters(model="easy-vqa-vilt", n_images=2).seed == RunParameters().seed == 0
    assert run_parameters(RunParameters(model="easy-vqa-vilt", n_images=2, seed=3)).seed == 3

def test_the_three_parameter_lists_are_one():
    "nbs/run.ipynb's parameters cell, run()'s keywords and `vqa-robust run --help` all come from RunParameters."
    from vqa_robust.parameters import RUN_PARAMETERS, RunParameters, parameters_cell
    from vqa_robust.cli import command_parser
    nb = json.loads((root / "nbs" / "run.ipynb").read_text())
    cell = [("".join(c["source"])) for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert cell == [parameters_cell()]  # the notebook's cell is the rendering of RunParameters (regenerate it when a field changes)
    run_parser = next(a for a in command_parser()._actions if a.dest == "command").choices["run"]
    options = {a.dest: a.default for a in run_parser._actions if a.dest not in ("help", "debug")}
    assert options == vars(RunParameters())  # every parameter an option, with its default
    assert list(options) == RUN_PARAMETERS

def test_notebook_is_one_call():
    "nbs/run.ipynb: its parameters (every parameter of the run, with its defaults), one call of the library, and cells that show the result."
    from vqa_robust.parameters import PARAMETER_GROUPS, RUN_PARAMETERS, RunParameters
    nb = json.loads((root / "nbs" / "run.ipynb").read_text())
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert not any(line.lstrip().startswith(("def ", "class ")) for c in code for line in c.splitlines())  # no orchestration defined here
    cell = ["".join(c["source"]) for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])][0]
    import ast
    lines = [line for line in cell.splitlines() if line.strip()]
    assert len([line for line in lines if not line.startswith("#")]) == len(RUN_PARAMETERS)  # one line a parameter, and the groups' titles as comments
    assert [line for line in lines if line.startswith("#")] == [f"# {group.__doc__}" for group in PARAMETER_GROUPS]
    assert [node.target.id for node in ast.parse(cell).body if isinstance(node, ast.AnnAssign)] == RUN_PARAMETERS == [
        getattr(node, "target", None) and node.target.id for node in ast.parse(cell).body]  # each a typed assignment, in RunParameters' order
    rest = [node for c in code if c != cell for node in ast.parse(c).body]  # everything but the parameters: the import, the one call, the shown result
    assert [ast.unparse(node) for node in rest] == ["from vqa_robust.run import run", "from vqa_robust.parameters import RUN_PARAMETERS",
                                                    "result = run(**{name: globals()[name] for name in RUN_PARAMETERS})", "result.show()",
                                                    "from vqa_robust.report import report",  # and the run's page, from its folder
                                                    "page = report([result.out_dir], result.out_dir / 'report.html')",
                                                    "print(f'{page.name}: {page.stat().st_size / 2 ** 20:.1f} MB')"], [ast.unparse(n) for n in rest]
    namespace = {}
    exec(cell, namespace)
    assert {k: namespace[k] for k in RUN_PARAMETERS} == vars(RunParameters())

def test_bad_parameters_change_nothing(tmp_path):
    "Parameters are checked before anything is written or any model loads, each refused with a message naming it."
    empty = tmp_path / "empty_split.json"; empty.write_text(json.dumps({"dataset": "easy_vqa_test", "image_ids": []}))
    other = tmp_path / "other_split.json"; other.write_text(json.dumps({"dataset": "mmbench_dev_en", "image_ids": [0]}))
    for params, message in ((("n_images=2", "accuracy_mode=offical"), "accuracy_mode: unknown accuracy mode"), (("n_images=2", "corruptions="), "corruptions: name at least one"),
                            (("n_images=2", "severities=2.5"), "severities"), (("n_images=2", "severities=1,1"), "names a level twice"),
                            (("n_images=2", "device=gpu"), "is not a torch device"), ((f"split={empty}",), "leaves no question"),
                            ((f"split={other}",), "is a split of dataset 'mmbench_dev_en'"),
                            (("model=openai:m@http://127.0.0.1:9",), "does not end in a version (/v1)")):
        out = tmp_path / f"refused{len(list(tmp_path.glob('refused*')))}"; out.mkdir()
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            run_library(out, *(["model=easy-vqa-vilt"] if not params[0].startswith("model=") else []), *params)
        assert list(out.iterdir()) == [], (params, list(out.iterdir()))

def test_rerun_with_other_severities_leaves_no_stale_results(tmp_path):
    run_library(tmp_path, "model=easy-vqa-vilt", "n_images=3", "corruptions=brightness", "severities=1,2,3,4,5")
    assert (tmp_path / "robustness.csv").is_file()
    assert (tmp_path / "vre_ci.csv").is_file()
    run_library(tmp_path, "model=easy-vqa-vilt", "n_images=3", "corruptions=brightness", "severities=1,5")
    for name in ("robustness.csv", "accuracy_ci.csv", "vre_ci.csv", "relative_drop.png"): assert not (tmp_path / name).exists(), name
    run = json.loads((tmp_path / "run.json").read_text())
    assert "severities 1-5" in run["not_computed"]["robustness.csv"]
    assert run["severities"] == [1, 5]
    assert len(pd.read_csv(tmp_path / "accuracy.csv")) == 3

def test_retrained_checkpoint_is_not_reused(tmp_path):
    "A checkpoint folder changed in place is another model: its old answers are refused, not reused; overwrite recomputes them."
    import shutil
    from safetensors.torch import load_file, save_file
    from vqa_robust.zoo import MODELS
    from vqa_robust.store import ChangedInputsError
    model = tmp_path / "my-vilt"
    shutil.copytree(MODELS["easy-vqa-vilt"].checkpoint, model)
    out = tmp_path / "out"; out.mkdir()
    args = (f"model={model}", "n_images=3", "corruptions=brightness", "severities=1")
    run_library(out, *args, figures=False)
    from vqa_robust.store import LOCK
    files = lambda: {f.name: f.stat().st_mtime_ns for f in out.iterdir() if f.name != LOCK}  # the folder's lock aside: every run that takes it rewrites it
    before = files()
    weights = load_file(model / "model.safetensors")
    weights["classifier.3.bias"] = weights["classifier.3.bias"].flip(0)  # another model under the same name
    save_file(weights, model / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(ChangedInputsError) as refused:
        run_library(out, *args, figures=False)
    assert "model.weights.checkpoint" in str(refused.value)
    assert "overwrite=True" in str(refused.value)
    assert files() == before  # a refused run changes nothing
    run_library(out, *args, "overwrite=True", figures=False)
    answers = pd.read_parquet(out / "answers.parquet")
    assert answers.model.unique().tolist() == ["my-vilt"]

def test_text_perturbations(tmp_path):
    "Perturbed questions are answered under every condition, paired with the originals, and explained; each row says which text it answered."
    run_library(tmp_path, "model=easy-vqa-vilt", "n_images=12", "corruptions=brightness", "severities=1",
                "text_perturbations=adj_synonym,noun_deletion,typo:2", figures=False)
    answers = pd.read_parquet(tmp_path / "answers.parquet")
    assert set(answers.text) == {"original", "adj_synonym", "noun_deletion", "typo"}
    typo = answers[answers.text == "typo"].merge(answers[answers.text == "original"], on=["model", "corruption", "severity", "question_id"])
    assert len(typo)
    assert (typo.question_x != typo.question_y).all()  # the typo rows answered another text of the same question
    table = pd.read_csv(tmp_path / "text_robustness.csv")
    assert set(table.kind) == {"adj_synonym", "noun_deletion", "typo"}
    assert len(table) == 3 * 2  # 3 kinds x (clean, brightness 1)
    assert table.flip_rate.between(0, 1).all()
    assert (tmp_path / "text" / "typo" / "answers").is_dir()
    assert list(table.columns) == ["model", "corruption", "severity", "kind", "text_severity", "n", "n_scored", "n_unscored",
                                   "accuracy_original", "accuracy_perturbed", "drop", "flip_rate", "consistency", "sensitivity"]
    kept, deleted = table[table.kind != "noun_deletion"], table[table.kind == "noun_deletion"]  # synonyms and typos keep the answer; a deletion may change it
    assert (kept.n_scored == kept.n).all()
    assert (kept.n_unscored == 0).all()
    assert kept.accuracy_perturbed.notna().all()
    assert kept.sensitivity.isna().all()
    assert ((kept.consistency - (1 - kept.flip_rate)).abs() < 1e-9).all()
    assert (deleted.n_scored == 0).all()
    assert deleted.accuracy_perturbed.isna().all()
    assert deleted.consistency.isna().all()
    assert ((deleted.sensitivity - deleted.flip_rate).abs() < 1e-9).all()  # unscored: its flips are the sensitivity
    for name in ("text_ci.csv", "text_perturbations.csv", "text_explanations.csv", "text_rules.csv"): assert (tmp_path / name).is_file(), name
    acc = pd.read_csv(tmp_path / "accuracy.csv")
    assert len(acc) == 2  # the image metrics are on the original questions only
    both = pd.read_csv(tmp_path / "interaction.csv").set_index("kind")  # brightness 1 with each kind that keeps the answer
    assert sorted(both.index) == ["adj_synonym", "typo"]
    assert (both.corruption == "brightness").all()
    typo_ids = both.loc["typo", "n"]
    cell = lambda corruption, text: answers[(answers.corruption == corruption) & (answers.text == text)].set_index("question_id").score
    known = cell("clean", "typo").dropna().index.intersection(cell("brightness", "typo").dropna().index)
    a00, a10, a01, a11 = (cell(c, t).loc[known].mean() for c, t in (("clean", "original"), ("brightness", "original"), ("clean", "typo"), ("brightness", "typo")))
    assert typo_ids == len(known)
    assert abs(both.loc["typo", "interaction"] - (a10 + a01 - a00 - a11)) < 1e-12  # from answers.parquet, by hand

def test_text_perturbations_on_clean_images(tmp_path):
    "`-p corruptions none` answers the perturbed questions on the clean images alone; the image-robustness results say why they are missing."
    run_library(tmp_path, "model=easy-vqa-vilt", "n_images=6", "corruptions=none", "text_perturbations=noun_deletion", figures=False)
    assert set(pd.read_parquet(tmp_path / "answers.parquet").corruption) == {"clean"}
    assert len(pd.read_csv(tmp_path / "text_robustness.csv")) == 1
    run = json.loads((tmp_path / "run.json").read_text())
    assert "no image corruption" in run["not_computed"]["accuracy_vs_severity.png"]
    assert "robustness.csv" in run["not_computed"]
    assert "no image corruption" in run["not_computed"]["answer_changes.csv"]
    assert not (tmp_path / "answer_changes.csv").exists()

def test_question_corruptions_in_a_run(tmp_path):
    "Question corruptions run as text perturbations: a preset expanded, the severity honoured, a deletion scored only where it deleted function words."
    from vqa_robust.question_corruptions import FUNCTION_WORDS, affected, word_spans
    run_library(tmp_path, "model=easy-vqa-vilt", "n_images=6", "corruptions=none", "text_perturbations=word:5", figures=False)
    table = pd.read_csv(tmp_path / "text_robustness.csv").set_index("kind")
    assert list(table.index) == ["word_insert", "word_punctuation", "word_delete", "word_swap", "word_synonym"]
    assert (table.text_severity == 5).all()
    records = pd.read_csv(tmp_path / "text_perturbations.csv")
    deletions = records[records.kind == "word_delete"]
    assert (deletions.perturbed.str.split().str.len() == deletions.original.map(lambda q: len(q.split()) - affected(5, len(word_spans(q))))).all()
    removed = deletions.edits.map(lambda edits: [e["source"] for e in json.loads(edits)])  # each deleted word, as the record keeps it
    assert (removed.str.len() == deletions.n_edits).all()
    only_function_words = int(sum(all(w.lower() in FUNCTION_WORDS for w in words) for words in removed))
    assert table.loc["word_delete", "n_scored"] == only_function_words < table.loc["word_delete", "n"]  # scored: the questions that lost function words only
    assert table.loc["word_swap", "n_scored"] == 0
    assert table.loc["word_insert", "n_scored"] == table.loc["word_insert", "n"]
    assert table.loc["word_synonym", "n_scored"] == table.loc["word_synonym", "n"] > 0  # synonyms keep the answer: every one scored

def test_sentence_rewrites_in_a_run(tmp_path):
    "The sentence-level rewrites in a run: what the rules cannot rewrite gets no perturbed question; every rewrite is scored; a severity is not theirs."
    from vqa_robust.question_corruptions import passive_of
    from vqa_robust.text import parse
    run_library(tmp_path, "model=easy-vqa-vilt", "n_images=4", "corruptions=none", "text_perturbations=sentence", figures=False)
    table = pd.read_csv(tmp_path / "text_robustness.csv").set_index("kind")
    records = pd.read_csv(tmp_path / "text_perturbations.csv")
    assert list(table.index) == ["sentence_formal", "sentence_casual", "sentence_passive", "sentence_past"]
    assert (table.n_scored == table.n).all()
    assert (table.text_severity == 0).all()  # no levels: the default severity (3) is not theirs
    split = pd.read_parquet(tmp_path / "answers.parquet").query("text == 'original'").drop_duplicates("question_id")
    n_questions = split.question_id.nunique()
    assert table.loc["sentence_formal", "n"] == n_questions  # every question takes the formal frame
    passive = records[records.kind == "sentence_passive"]
    assert 0 < len(passive) < n_questions
    assert all(passive_of(q, parse(q)) == p for q, p in zip(passive.original, passive.perturbed))  # "does the image contain a circle?" turns; "what is the red shape?" does not

def test_question_corruptions_at_severities_and_joint_pairs(tmp_path):
    "Several severities of one kind in one run, each its own store; a joint pair answered only on clean images and its image condition; the interaction recomputed by hand."
    from vqa_robust.question_corruptions import affected, word_spans
    run_library(tmp_path, "model=easy-vqa-vilt", "n_images=6", "corruptions=gaussian_noise", "severities=3,5",
                "text_perturbations=char_keyboard:1,char_keyboard:5,sentence_past,gaussian_noise:5+char_ocr:2", figures=False)
    table = pd.read_csv(tmp_path / "text_robustness.csv")
    assert sorted(set(zip(table.kind, table.text_severity))) == [("char_keyboard", 1), ("char_keyboard", 5), ("char_ocr", 2), ("sentence_past", 0)]
    assert sorted(p.name for p in (tmp_path / "text").iterdir()) == ["char_keyboard_s1", "char_keyboard_s5", "char_ocr", "sentence_past"]
    answers = pd.read_parquet(tmp_path / "answers.parquet")
    ocr = answers[answers.text == "char_ocr"]
    assert sorted(set(zip(ocr.corruption, ocr.severity))) == [("clean", 0), ("gaussian_noise", 5)]  # a joint pair: clean and its image condition only
    assert sorted(set(zip(answers[answers.text == "char_keyboard_s5"].corruption, answers[answers.text == "char_keyboard_s5"].severity))) == [("clean", 0), ("gaussian_noise", 3), ("gaussian_noise", 5)]
    records = pd.read_csv(tmp_path / "text_perturbations.csv")
    for level in (1, 5):  # each level damages its own share of the words
        rows = records[(records.kind == "char_keyboard") & (records.text_severity == level)]
        assert (rows.n_edits == rows.original.map(lambda q: affected(level, sum(any(ch.isalpha() for ch in w) for _, _, w in word_spans(q))))).all()
    interaction = pd.read_csv(tmp_path / "interaction.csv")
    assert sorted(set(zip(interaction.kind, interaction.corruption, interaction.severity)))[:1] == [("char_keyboard", "gaussian_noise", 3)]
    row = interaction[(interaction.kind == "char_ocr")].iloc[0]
    assert (row.corruption, row.severity) == ("gaussian_noise", 5)
    assert len(interaction[interaction.kind == "char_ocr"]) == 1
    scored = answers.dropna(subset=["score"]).set_index(["text", "corruption", "severity", "question_id"]).score.sort_index()
    both = scored.loc["char_ocr", "gaussian_noise", 5]
    ids = both.index  # the questions the corruption keeps the answer of, answered in all four cells
    cell = lambda text, corruption, severity: scored.loc[text, corruption, severity].loc[ids].mean()
    joint_drop = cell("original", "clean", 0) - both.mean()
    assert abs(row.joint_drop - joint_drop) < 1e-12
    assert abs(row.interaction - (joint_drop - (cell("original", "clean", 0) - cell("original", "gaussian_noise", 5)) - (cell("original", "clean", 0) - cell("char_ocr", "clean", 0)))) < 1e-12
    summary = json.loads((tmp_path / "run.json").read_text())["question_conditions"]
    assert {"label": "char_ocr", "kind": "char_ocr", "severity": 2, "image_conditions": [["gaussian_noise", 5]]} in summary
    for bad, message in [("text_perturbations=sentence_past:3", "sentence_past takes no severity"), ("text_perturbations=char_ocr:7", "the severity of char_ocr must be one of"),
                         ("text_perturbations=gaussian_noise:1+char_ocr:2", "not an image condition of this run"), ("text_perturbations=gaussian_noise+char_ocr", "is not IMAGE:SEVERITY"),
                         ("text_perturbations=char_ocr:2,char_ocr:2", "names a corruption or a pair twice"), ("text_perturbations=gaussian_noise:3+word", "names 5 question corruptions")]:
        with pytest.raises(ValueError, match=message):
            run_library(tmp_path / "bad", "model=easy-vqa-vilt", "corruptions=gaussian_noise", "severities=3,5", bad, figures=False)
    assert not (tmp_path / "bad").exists()

def test_mce_and_effective_robustness(tmp_path):
    "mCE against a named model of the run, and effective robustness across three models, recomputed by hand from accuracy.csv and numpy's own line fit."
    run_library(tmp_path, "model=easy-vqa-vilt,easy-vqa-vilt-augmented,easy-vqa-blip", "n_images=8", "corruptions=defocus_blur,gaussian_noise",
                "severities=1,3,5", "reference_model=easy-vqa-blip", figures=False)
    acc = pd.read_csv(tmp_path / "accuracy.csv")
    err = lambda m, c: (1 - acc[(acc.model == m) & (acc.corruption == c)].accuracy).sum()
    clean_err = lambda m: 1 - acc[(acc.model == m) & (acc.corruption == "clean")].accuracy.item()
    mce = pd.read_csv(tmp_path / "mce.csv").set_index(["model", "corruption"])
    for m in ("easy-vqa-vilt", "easy-vqa-vilt-augmented"):
        ce = [err(m, c) / err("easy-vqa-blip", c) for c in ("defocus_blur", "gaussian_noise")]
        assert abs(mce.loc[(m, "all"), "ce"] - np.mean(ce)) < 1e-12
        assert abs(mce.loc[(m, "defocus_blur"), "ce"] - ce[0]) < 1e-12
        rise = lambda model, c: err(model, c) - 3 * clean_err(model)
        assert abs(mce.loc[(m, "gaussian_noise"), "relative_ce"] - rise(m, "gaussian_noise") / rise("easy-vqa-blip", "gaussian_noise")) < 1e-12
    assert (mce.loc["easy-vqa-blip"].ce == 1).all()
    er = pd.read_csv(tmp_path / "effective_robustness.csv").set_index("model")
    clean = acc[acc.corruption == "clean"].set_index("model").accuracy
    corrupted = acc[acc.corruption != "clean"].groupby("model").accuracy.mean()  # every condition has the same questions: the mean of the means
    logit = lambda p: np.log(np.clip(p, 1e-4, 1 - 1e-4) / (1 - np.clip(p, 1e-4, 1 - 1e-4)))
    slope, intercept = np.polyfit(logit(clean[er.index]), logit(corrupted[er.index]), 1)
    predicted = 1 / (1 + np.exp(-(slope * logit(clean[er.index]) + intercept)))
    assert np.allclose(er.effective_robustness, corrupted[er.index] - predicted, atol=1e-9)
    assert np.allclose(er.slope, slope)
    with pytest.raises(ValueError, match="reference_model: 'alexnet' is not a model of this run"):
        run_library(tmp_path / "bad", "model=easy-vqa-vilt", "reference_model=alexnet", figures=False)

def test_resolution_study(tmp_path):
    "Res-Bench's study in a run: the resolutions answered beside one corruption, recomputed by hand from the answers; VRB's tables and combine leave them out."
    from scipy.stats import spearmanr
    from vqa_robust.combine import read_run
    run_library(tmp_path, "model=easy-vqa-vilt", "n_images=12", "corruptions=brightness", "severities=1,2,3,4,5", "resolutions=16,32,64,224")
    answers = pd.read_parquet(tmp_path / "answers.parquet")
    at = answers[answers.corruption == "resolution"].groupby("severity").score.mean()  # every answer is kept: the resolutions' too
    curve = pd.read_csv(tmp_path / "resolution.csv")
    assert curve.resolution.tolist() == [16, 32, 64, 224]
    assert np.allclose(curve.accuracy, at.loc[[16, 32, 64, 224]])
    clean = answers[answers.corruption == "clean"].score.mean()
    assert curve.set_index("resolution").accuracy[64] == clean  # easy-VQA's images are 64 x 64: at 64 the image is the clean one
    trend = pd.read_csv(tmp_path / "resolution_trend.csv").iloc[0]
    acc = curve.accuracy.to_numpy()
    assert abs(trend.ace - np.abs(np.diff(acc)).sum()) < 1e-12
    assert abs(trend.rce - trend.ace / acc.mean()) < 1e-12
    assert abs(trend.acc_res - acc.mean()) < 1e-12
    rho = spearmanr([16, 32, 64, 224], acc).statistic
    assert acc.std() > 0
    assert abs(trend.spearman - rho) < 1e-12  # the 12 images answer differently at 16 px: a trend to compare
    assert all(trend[f"{m}_low"] <= trend[m] <= trend[f"{m}_high"] for m in ("acc_res", "ace", "rce"))  # the intervals hold the point estimates
    assert (tmp_path / "resolution.png").exists()
    assert (tmp_path / "robustness.csv").exists()
    assert "resolution" not in set(pd.read_csv(tmp_path / "accuracy.csv").corruption)
    assert "resolution" not in set(pd.read_csv(tmp_path / "robustness.csv").corruption)
    assert "resolution" not in set(read_run(tmp_path).answers.corruption)
    assert json.loads((tmp_path / "run.json").read_text())["resolutions"] == [16, 32, 64, 224]
    for bad, message in [("resolutions=100", r"resolutions: \[100\] not among"), ("resolutions=res_bench,112", "names a size twice"),
                         ("corruptions=resolution", "takes sizes, not severities")]:
        with pytest.raises(ValueError, match=message): run_library(tmp_path / "bad", "model=easy-vqa-vilt", bad, figures=False)
    assert not (tmp_path / "bad").exists()

def test_vizwiz_with_its_unanswerable_questions(tmp_path):
    "A run on VizWiz records written in its official layout: its own scoring, its answer types (unanswerable included) and answerability."
    from vqa_robust.datasets import load_dataset
    from vqa_robust.testing_data import write_vizwiz_records
    data = write_vizwiz_records(tmp_path / "vizwiz")
    questions = load_dataset("vizwiz", data).questions
    run_library(tmp_path / "run", "model=easy-vqa-vilt", "dataset=vizwiz", f"data_dir={data}", "n_images=0", "corruptions=gaussian_noise", "severities=1", figures=False)
    answers = pd.read_parquet(tmp_path / "run" / "answers.parquet")
    assert set(answers.accuracy_mode) == {"vizwiz"}
    assert len(answers) == 2 * len(questions)  # clean and one corrupted condition
    breakdown = pd.read_csv(tmp_path / "run" / "accuracy_breakdown.csv")
    assert "unanswerable" in set(breakdown.astype(str).stack())  # the unanswerable questions are scored as a type of their own
    table = pd.read_csv(tmp_path / "run" / "answerability.csv")
    assert len(table) == 2
    assert (table.n == len(questions)).all()
    assert table.average_precision.between(0, 100).all()
    if not answers.answer.str.strip().str.lower().eq("unanswerable").any():  # a model that never says so: its score ties every question,
        prevalence = 100 * (1 - questions.answerable.mean())                  # so the average precision is the share of unanswerable ones
        assert (table.average_precision - prevalence).abs().max() < 1e-9, table
        assert (table.f1_score == 0).all(), table
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["dataset_split"] == "val"
    assert run["accuracy_mode"] == "vizwiz"

def test_geometric_corruption_reported_apart(tmp_path):
    "A corruption that can change a correct answer (shear: 'shape') gets comparability.csv, recomputed here from answers.parquet; calibration, flips and consistency are written."
    import re
    from vqa_robust.corruptions import CORRUPTIONS
    result = run_library(tmp_path, "model=easy-vqa-vilt", "n_images=4", "corruptions=shear", "severities=1,2,3,4,5")
    words = CORRUPTIONS["shear"].changes_answers
    answers = pd.read_parquet(tmp_path / "answers.parquet")
    affected = answers.question.map(lambda q: any(re.search(rf"\b{re.escape(w)}\b", q, re.I) for w in words))
    table = pd.read_csv(tmp_path / "comparability.csv").set_index("severity")
    for severity, rows in answers[answers.corruption == "shear"].groupby("severity"):
        keep = ~affected[rows.index]
        assert table.loc[severity, "n_affected"] == (~keep).sum() > 0
        assert abs(table.loc[severity, "accuracy_comparable"] - rows.score[keep].mean()) < 1e-12
        assert abs(table.loc[severity, "accuracy"] - rows.score.mean()) < 1e-12
    for name in ("calibration.csv", "reliability.png", "flips.csv", "consistency.csv", "unstable_questions.png"): assert (tmp_path / name).is_file(), name
    assert "comparability.csv" not in result.not_computed

def test_run_script_refused_by_the_lock_leaves_run_ipynb(tmp_path):
    "scripts/run.sh writes the executed notebook apart: a run refused by the folder's lock leaves the running run's run.ipynb alone."
    from vqa_robust.store import folder_lock
    out = tmp_path / "busy"; out.mkdir()
    (out / "run.ipynb").write_text("the running run's notebook")
    with folder_lock(out):  # another run writes the folder
        done = subprocess.run(["bash", str(root / "scripts" / "run.sh"), "-p", "out_dir", str(out), "-p", "model", "easy-vqa-vilt", "-p", "n_images", "2",
                               "-p", "corruptions", "brightness", "-p", "severities", "1"], capture_output=True, text=True, cwd=root,
                              env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "is in use by another run" in done.stdout + done.stderr, done.stderr[-2000:]
    assert f"{out}/run.ipynb is left as it was" in done.stderr
    assert (out / "run.ipynb").read_text() == "the running run's notebook"

RUN_ENV = ("OMP_NUM_THREADS", "GLIBC_TUNABLES", "ARROW_DEFAULT_MEMORY_POOL")

@pytest.mark.parametrize("given, expected", [
    ({}, {"OMP_NUM_THREADS": "1", "GLIBC_TUNABLES": "glibc.malloc.tcache_count=0", "ARROW_DEFAULT_MEMORY_POOL": "system"}),
    ({"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=131072"}, {"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=131072:glibc.malloc.tcache_count=0"}),
    ({"GLIBC_TUNABLES": "glibc.malloc.tcache_count=7", "OMP_NUM_THREADS": "4", "ARROW_DEFAULT_MEMORY_POOL": "mimalloc"},
     {"GLIBC_TUNABLES": "glibc.malloc.tcache_count=7", "OMP_NUM_THREADS": "4", "ARROW_DEFAULT_MEMORY_POOL": "mimalloc"}),
])
def test_run_script_environment(given, expected):
    "scripts/run.sh's settings (scripts/run_env.sh): one OpenMP thread, glibc's thread cache off, pyarrow's pool on malloc; each a user set is kept."
    env = {k: v for k, v in os.environ.items() if k not in RUN_ENV} | given
    p = subprocess.run(["bash", "-c", "set -euo pipefail; source scripts/run_env.sh; env"], cwd=root, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    found = dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)
    assert {k: found.get(k) for k in expected} == expected

def test_run_script_environment_reaches_the_run():
    "A process started in run_env.sh's environment reports it as run.log does: glibc read the tunable, pyarrow chose the system pool."
    code = "from vqa_robust.inference import malloc_settings, arrow_pool; print(malloc_settings(), arrow_pool())"
    p = subprocess.run(["bash", "-c", f"source scripts/run_env.sh; exec {sys.executable} -c '{code}'"], cwd=root, capture_output=True, text=True,
                       env={k: v for k, v in os.environ.items() if k not in RUN_ENV})
    assert p.stdout.split() == ["glibc.malloc.tcache_count=0", "system"], p.stdout + p.stderr[-2000:]
    assert "\nsource scripts/run_env.sh\n" in (root / "scripts" / "run.sh").read_text()  # the environment run.sh runs its job in

def test_readme_run_folder_table_is_the_sections():
    "The README's run-folder table names every file a result section (or the core) writes, and no other result file."
    import re
    from vqa_robust.results import result_files
    text = (root / "README.md").read_text()
    table = text.split("| file | content |\n|---|---|\n", 1)[1].split("\n\n", 1)[0]
    named = {name for row in table.splitlines() for name in re.findall(r"`([^`]+)`", row.split(" | ")[0])}
    beside = {"answers/", "text/<kind>/answers/", "run.log", "run.ipynb", "report.html"}  # the store, the log, the notebook and its page
    assert named - beside == set(result_files()), (sorted((named - beside) ^ set(result_files())))

def test_a_new_question_perturbation_is_one_registration(tmp_path):
    """A kind registered from outside with everything the evaluation reads of it (its expectation, its rule text's target)
    is answered, scored and tabled by a run, with no other edit: its registry entry is its one home."""
    from vqa_robust.text import PERTURBATIONS, make_edit, register_perturbation
    from vqa_robust.text_eval import expectation, target_of
    shout = lambda question, context: [[make_edit(0, len(question), question, question.upper(), "upper")]]
    register_perturbation("test_shout", shout, answer_preserving=True, expected="stay", target="capitals")
    try:
        assert (expectation("test_shout", "what shape?", []), target_of("test_shout")) == ("stay", "capitals")
        run_library(tmp_path, "model=easy-vqa-vilt", "n_images=3", "corruptions=brightness", "severities=1",
                    "text_perturbations=test_shout", figures=False)
        with pytest.raises(ValueError, match="expected must be one of"):
            register_perturbation("test_whisper", shout, expected="maybe")
    finally:
        del PERTURBATIONS["test_shout"]
    table = pd.read_csv(tmp_path / "text_robustness.csv")
    assert set(table.kind) == {"test_shout"}
    assert len(table) == 2  # one model, clean and brightness 1
    assert table.consistency.between(0, 1).all()  # "stay" expected: consistency measured, not NaN
    assert (tmp_path / "text" / "test_shout" / "answers").is_dir()

class ConstantAnswers:
    "A model family of a test's own: every question answered with its entry's `answer` setting."

    def __init__(self, spec):
        self.name, self.spec = spec.name, spec

    def encoder(self):
        from vqa_robust.models import RawEncoder
        return RawEncoder()

    def predict_encoded(self, inputs):
        return [self.spec.settings["answer"]] * len(inputs["questions"]), [1.0] * len(inputs["questions"])


def test_a_new_model_family_is_one_registration(tmp_path):
    "A family and its entry registered from outside run end to end: answered, scored, identified by their own fingerprint."
    from vqa_robust.models import model_entry, model_family
    from vqa_robust.zoo import FAMILIES, MODELS, register_family, register_model
    family = model_family("test_constant", load=lambda spec, options: ConstantAnswers(spec),
                          defaults={"answer": "yes"}, fingerprint=lambda spec: {"constant": spec.settings["answer"]})
    register_family(family)
    register_model(model_entry("test-yes", "nowhere", family))
    try:
        result = run_library(tmp_path, "model=test-yes", "n_images=3", "corruptions=brightness", "severities=1", figures=False)
    finally:
        del MODELS["test-yes"], FAMILIES["test_constant"]
    answers = pd.read_parquet(tmp_path / "answers.parquet")
    assert set(answers.answer) == {"yes"}
    assert set(answers.model) == {"test-yes"}
    assert answers.score.isin([0.0, 1.0]).all()
    assert 0 < answers.score.mean() < 1  # scored: some answers are yes
    summary = json.loads((tmp_path / "run.json").read_text())
    assert summary["models"][0]["weights"] == {"constant": "yes"}  # the family's fingerprint, as the run recorded it
    assert len(result.accuracy) == 2
    assert "preprocessing.csv" in summary["not_computed"]  # no views known for its family: said, not a crash

def test_a_model_is_identified_once_per_run(tmp_path):
    "A run resolves each model once: its family fingerprints it once, however many question sets and conditions load it."
    from vqa_robust.models import model_entry, model_family
    from vqa_robust.zoo import FAMILIES, MODELS, register_family, register_model
    fingerprinted = []
    counted = lambda spec: fingerprinted.append(spec.name) or {"constant": spec.settings["answer"]}
    family = model_family("test_counted", load=lambda spec, options: ConstantAnswers(spec),
                          defaults={"answer": "yes"}, fingerprint=counted)
    register_family(family)
    register_model(model_entry("test-counted", "nowhere", family))
    try:
        run_library(tmp_path, "model=test-counted", "defences=none,median", "text_perturbations=typo", "n_images=3",
                    "corruptions=brightness", "severities=1", figures=False)
    finally:
        del MODELS["test-counted"], FAMILIES["test_counted"]
    assert sorted(fingerprinted) == ["test-counted", "test-counted+median"]  # once each: never again where it loads
    models = json.loads((tmp_path / "run.json").read_text())["models"]
    assert [m["weights"] for m in models] == [{"constant": "yes"}] * 2


def test_a_new_result_section_is_one_registration(tmp_path):
    "A section registered from outside writes its file into every run folder and sets its attribute: run.py is not edited."
    from vqa_robust.results import RESULT_SECTIONS, result_section
    @result_section("test_answer_counts", ["answer_counts.csv"], attributes=("answer_counts",))
    def answer_counts(config, result, scores):
        result.answer_counts = result.answers.groupby("model").answer.nunique().rename("distinct_answers")
        result.answer_counts.to_csv(result.out_dir / "answer_counts.csv")
    try:
        result = run_library(tmp_path, "model=easy-vqa-vilt", "n_images=3", "corruptions=brightness", "severities=1",
                             figures=False)
    finally:
        del RESULT_SECTIONS["test_answer_counts"]
    written = pd.read_csv(tmp_path / "answer_counts.csv")
    answers = pd.read_parquet(tmp_path / "answers.parquet")
    assert written.distinct_answers.tolist() == [answers.answer.nunique()]
    assert result.answer_counts.tolist() == [answers.answer.nunique()]


def test_a_new_dataset_needs_no_edit_of_run_py(tmp_path):
    "A dataset registered from outside (its loader, its scoring and its blind baseline's training questions) runs end to end: run.py names no dataset of its own."
    import ast
    import vqa_robust.run as run_module
    from vqa_robust.vqav2 import load_easy_vqa
    from vqa_robust.datasets import DATASETS, register_dataset
    from vqa_robust.testing_data import write_easy_vqa_records
    import vqa_robust.parameters as parameters_module
    code = ast.parse(Path(run_module.__file__).read_text() + Path(parameters_module.__file__).read_text())
    compared = [n for n in ast.walk(code) if isinstance(n, ast.Compare) and any(isinstance(c, ast.Constant) and c.value in DATASETS for c in n.comparators)]
    assert not compared, [ast.unparse(n) for n in compared]  # no `dataset == "easy_vqa"` left: every dataset through its DatasetSpec
    calls = []
    register_dataset("shapes", lambda data_dir, split: load_easy_vqa(split, cache_dir=data_dir), ("test",), "exact",
                     "easy-VQA's questions read from a folder, scored by exact match", blind_questions=lambda: calls.append(1) or load_easy_vqa("train"))
    try:
        data = write_easy_vqa_records(tmp_path / "shapes", "test")  # its records in the layout its loader reads
        result = run_library(tmp_path / "run", "model=easy-vqa-vilt", "dataset=shapes", f"data_dir={data}", "n_images=4", "corruptions=brightness", "severities=1", figures=False)
        answers = pd.read_parquet(tmp_path / "run" / "answers.parquet")
        assert set(answers.accuracy_mode) == {"exact"}
        assert set(answers.corruption) == {"clean", "brightness"}
        assert calls == [1]
        assert "blind" in set(result.families.reset_index().astype(str).stack())  # its blind baseline, from its own training questions
        assert json.loads((tmp_path / "run" / "run.json").read_text())["dataset_split"] == "test"
        with pytest.raises(ValueError, match="data_dir: dataset shapes is read from the folder"): run_library(tmp_path / "other", "dataset=shapes")
    finally: del DATASETS["shapes"]
