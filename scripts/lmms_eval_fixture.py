"""Remake tests/fixtures/lmms_eval/easy_vqa_brightness: an export and real lmms-eval 0.7.3's output on it.

    .venv/bin/python scripts/lmms_eval_fixture.py [--out tests/fixtures/lmms_eval/easy_vqa_brightness]

Exports two easy-VQA test images (clean and brightness 1, seed 0), then runs lmms-eval (its side venv, made as
tests/test_harnesses.py makes it) twice against the package's local chat server: once as it is (predictions/), once with the
server answering HTTP 429 to its first 70 requests and lmms-eval retrying once (failed/: lmms-eval writes the requests that
failed every retry as `[LMMS_EVAL_REQUEST_FAILED ...]` samples and exits 0).
"""
import argparse, json, os, shutil, subprocess, sys, tempfile
from pathlib import Path

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / "tests"))

def lmms_eval(venv: Path, export: Path, out: Path, busy: int) -> None:
    "lmms-eval's openai_compatible model on the export's group, against a LocalChatServer refusing its first `busy` requests."
    from vqa_robust.testing import LocalChatServer
    group = json.loads((export / "export.json").read_text())["group"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "WANDB_MODE": "disabled", "OPENAI_API_KEY": "none"}
    with LocalChatServer(busy=busy) as server:
        args = f"model_version=local-colours,base_url={server.url}" + (",max_retries=1" if busy else "")
        subprocess.run([str(venv / "bin" / "lmms-eval"), "--model", "openai_compatible", "--model_args", args,
                        "--include_path", str(export / "lmms_eval"), "--tasks", group, "--batch_size", "1", "--log_samples",
                        "--output_path", str(out)], check=True, capture_output=True, env=env, timeout=900)

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(root / "tests" / "fixtures" / "lmms_eval" / "easy_vqa_brightness"))
    out = Path(parser.parse_args().out)
    from test_harnesses import lmms_eval_venv
    from vqa_robust.cli import export_benchmark
    work = Path(tempfile.mkdtemp())
    export_benchmark(n_images=2, corruptions="brightness", severities="1", seed=0, out_dir=str(work / "export"))
    for folder, busy in (("predictions", 0), ("failed", 70)):
        lmms_eval(lmms_eval_venv(), work / "export", work / folder, busy)
    kept = (out / "README.md").read_text() if (out / "README.md").is_file() else None
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(work / "export", out)
    for folder in ("predictions", "failed"): shutil.copytree(work / folder / "local-colours", out / folder)
    if kept: (out / "README.md").write_text(kept)
    print(f"fixture in {out}")

if __name__ == "__main__":
    main()
