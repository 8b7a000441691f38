"""Faults real machines and datasets produce, through a whole run: two runs into one folder, a full disk during the final
writes, an empty question in the official files (issue 20). Each test reproduces the fault and checks what the run gives now."""
import errno, json, os, subprocess, sys, time
from pathlib import Path
import pandas as pd
import pytest

root = Path(__file__).resolve().parent.parent
SETTINGS = dict(model="easy-vqa-vilt", corruptions="brightness", severities="1", progress=False, figures=False)  # no test here reads a figure

def store_files(out: Path) -> dict:
    return {str(p.relative_to(out)): p.stat().st_mtime_ns for p in (out / "answers").rglob("*") if p.is_file()}

def test_second_run_into_a_busy_folder_stops_and_changes_nothing(tmp_path):
    "A run answering into a folder, and a second run (other corruptions) started into it: the second stops at once naming the first; the first finishes whole."
    from vqa_robust.run import run, run_config
    from vqa_robust.store import FolderLockedError, LOCK
    out = tmp_path / "shared"
    second = run_config(out_dir=str(out), model="easy-vqa-vilt", n_images=24, corruptions="defocus_blur", severities="2")  # checked before the first starts
    command = ("import sys; from vqa_robust.run import run\n"
               "run(out_dir=sys.argv[1], model='easy-vqa-vilt', n_images=24, corruptions='gaussian_noise', severities='1,2', num_workers=0, progress=False, figures=False)")
    first = subprocess.Popen([sys.executable, "-c", command, str(out)], cwd=root, env={**os.environ, "OMP_NUM_THREADS": "1"},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not (out / "answers").is_dir():  # the first run holds the lock and has started answering
        assert first.poll() is None, first.communicate()
        time.sleep(0.05)
    owner = json.loads((out / LOCK).read_text())
    assert owner["pid"] == first.pid
    assert "released" not in owner
    with pytest.raises(FolderLockedError, match=f"run folder {out} is in use by another run: pid {first.pid} on .+, started {owner['started']}"):
        run(second, progress=False, figures=False)
    stdout, stderr = first.communicate(timeout=600)
    assert first.returncode == 0, stderr[-3000:]
    answers = pd.read_parquet(out / "answers.parquet")
    assert set(zip(answers.corruption, answers.severity)) == {("clean", 0), ("gaussian_noise", 1), ("gaussian_noise", 2)}
    assert len(answers) == 3 * json.loads((out / "run.json").read_text())["n_questions"]  # every question of every condition: nothing removed
    assert not any("defocus_blur" in p for p in store_files(out))
    assert json.loads((out / LOCK).read_text())["released"]
    clean = {p: t for p, t in store_files(out).items() if "corruption=clean" in p}
    result = run(second, progress=False, figures=False)  # once the first has ended, the folder is free: the same questions, so the first's clean answers are reused
    assert set(result.answers.corruption) == {"clean", "defocus_blur"}
    assert {p: t for p, t in store_files(out).items() if "corruption=clean" in p} == clean

def test_full_disk_during_the_final_writes(tmp_path, monkeypatch, capsys):
    "The disk fills while answers.parquet is written: no truncated file and no run.json (the folder is marked unfinished); a rerun reuses every answer."
    from vqa_robust.run import run
    out = tmp_path / "run"
    real = pd.DataFrame.to_parquet
    def disk_full(self, path, *args, **kwargs):
        if not Path(path).name.startswith(".answers.parquet."): return real(self, path, *args, **kwargs)  # the store's chunks are written
        Path(path).write_bytes(b"\0" * 4096)  # what the disk took of the final answers.parquet before it filled
        raise OSError(errno.ENOSPC, "No space left on device", str(path))
    monkeypatch.setattr(pd.DataFrame, "to_parquet", disk_full)
    with pytest.raises(OSError, match="No space left on device"):
        run(out_dir=out, n_images=3, **SETTINGS)
    assert not (out / "answers.parquet").exists()
    assert not (out / "run.json").exists()
    assert not list(out.glob(".*.partial"))  # no temporary file left behind
    saved = store_files(out)
    assert len(saved) == 2 * 3  # both conditions' chunk, sidecar and record: the answers were saved before the final writes
    monkeypatch.setattr(pd.DataFrame, "to_parquet", real)
    capsys.readouterr()  # what was said so far; the rerun's own lines below (print is not patched: numba resolves it)
    result = run(out_dir=out, n_images=3, **SETTINGS)
    said = capsys.readouterr().out
    assert "did not finish (answers, but no run.json)" in said, said
    assert store_files(out) == saved  # every answer reused, none answered again
    assert len(pd.read_parquet(out / "answers.parquet")) == len(result.answers) > 0
    assert (out / "run.json").is_file()
    run(out_dir=out, n_images=3, **SETTINGS)
    said = capsys.readouterr().out
    assert "previous run in this folder finished (its run.json is there)" in said, said

def test_empty_question_in_the_official_files(tmp_path):
    "An empty question in a VQAv2 questions file is refused, naming the file and the question id, before anything is written."
    from vqa_robust.vqav2 import write_mini_vqav2
    from vqa_robust.run import run
    data_dir = write_mini_vqav2(tmp_path / "vqa", layout="flat")
    questions_file = data_dir / "v2_OpenEnded_mscoco_val2014_questions.json"
    data = json.loads(questions_file.read_text())
    data["questions"][3]["question"] = "   "
    questions_file.write_text(json.dumps(data))
    out = tmp_path / "out"; out.mkdir()
    with pytest.raises(ValueError, match=f"{questions_file}: questions with an empty question .*question_id {data['questions'][3]['question_id']}$"):
        run(out_dir=out, dataset="vqav2", data_dir=str(data_dir), split="sample", n_images=0, **SETTINGS)
    assert list(out.iterdir()) == []

def test_any_aspect_ratio_and_long_questions_through_a_run(tmp_path):
    "Images of 10:1, 1:10, 2000x300 and 640x360 and a 63-word question, answered by both shipped models under a corruption; the cut questions are counted in run.log."
    from PIL import Image
    from vqa_robust.vqav2 import coco_image_template, write_mini_vqav2
    from vqa_robust.run import run
    data_dir = write_mini_vqav2(tmp_path / "vqa", layout="flat")
    shapes = {42: (640, 64), 73: (64, 640), 74: (2000, 300), 133: (640, 360)}  # width x height
    for image_id, size in shapes.items():
        Image.new("RGB", size, (200, 40, 40)).save(data_dir / "val2014" / coco_image_template("val2014").format(image_id=image_id), quality=90)
    questions_file = data_dir / "v2_OpenEnded_mscoco_val2014_questions.json"
    data = json.loads(questions_file.read_text())
    long_question = "is the " + " ".join(["very"] * 59) + " red shape?"  # 63 words
    data["questions"][0]["question"] = long_question
    questions_file.write_text(json.dumps(data))
    out = tmp_path / "out"
    result = run(out_dir=out, dataset="vqav2", data_dir=str(data_dir), split="sample", n_images=0, model="easy-vqa-vilt,easy-vqa-blip",
                 corruptions="gaussian_noise", severities="2", num_workers=1, progress=False, figures=False)
    answers = result.answers
    assert len(answers) == 2 * 2 * result.summary["n_questions"]
    assert answers.answer.map(lambda a: isinstance(a, str) and a != "").all()
    assert set(shapes) <= set(answers.question_id // 1000)
    log = (out / "run.log").read_text()
    assert "1 of 15 questions are longer than the model reads (24 tokens) and were cut" in log, log
