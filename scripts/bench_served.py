"""Answers per second of one checkpoint in-process against the same checkpoint behind `transformers serve` (an OpenAI-compatible
server started here on localhost), side by side in one run: the in-process adapter at batch 1 and 8, the served model at 1, 4 and 8
requests in flight. Prints a table and the ratios to in-process batch 8, and checks that every setting gives the same answers.

    python scripts/bench_served.py                         # a tiny SmolVLM (random weights, offline): the client's and server's overhead
    python scripts/bench_served.py --checkpoint FOLDER     # any local VLM checkpoint folder the zoo can load
    python scripts/bench_served.py --questions 128 --port 8011
    python scripts/bench_served.py --server-args=--continuous-batching   # the server batches concurrent requests

On a GPU node the same comparison against `vllm serve` is the one that matters (continuous batching); here, on CPU with a tiny
model, it measures what serving costs: PNG encoding, HTTP and the server's per-request work.
"""
import argparse, os, sys, tempfile, time
from pathlib import Path

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="", help="a local VLM checkpoint folder; default: a tiny SmolVLM written here")
    parser.add_argument("--questions", type=int, default=96, help="easy-VQA test questions to answer in each setting")
    parser.add_argument("--port", type=int, default=0, help="the server's port; 0: a free one")
    parser.add_argument("--server-args", default="", help="more arguments for transformers serve, e.g. '--continuous-batching'")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    torch.set_num_threads(1)
    from vqa_robust.data import load_easy_vqa
    from vqa_robust.zoo import load_model, tiny_checkpoint
    folder = Path(args.checkpoint) if args.checkpoint else tiny_checkpoint("smolvlm-instruct", Path(tempfile.mkdtemp()) / "tiny-smolvlm")
    data = load_easy_vqa("test")
    questions = data.questions.head(args.questions)
    images = [data.load_image(i) for i in questions.image_id]
    texts = questions.question.tolist()
    from vqa_robust.served import serve_checkpoint, stop_server
    server, url = serve_checkpoint(folder, args.port, extra=args.server_args.split())
    try:
        rows, answers = [], {}
        local = load_model(str(folder))
        for batch in (1, 8):
            began, got = time.perf_counter(), []
            for k in range(0, len(texts), batch): got += local.predict(images[k:k + batch], texts[k:k + batch])[0]
            rows.append((f"in-process, batch {batch}", len(texts) / (time.perf_counter() - began))); answers[rows[-1][0]] = got
        for concurrency in (1, 4, 8):
            served = load_model(f"openai:{folder}@{url}", concurrency=concurrency)
            began, got = time.perf_counter(), []
            for k in range(0, len(texts), 32): got += served.predict(images[k:k + 32], texts[k:k + 32])[0]
            rows.append((f"served, {concurrency} in flight", len(texts) / (time.perf_counter() - began))); answers[rows[-1][0]] = got
            usage = served.usage()
            print(f"served, {concurrency} in flight: latency p50 {usage['latency_p50_s']} s, p90 {usage['latency_p90_s']} s, "
                  f"{usage['prompt_tokens']} prompt and {usage['completion_tokens']} completion tokens")
    finally: stop_server(server)
    base = dict(rows)["in-process, batch 8"]
    print(f"\n{len(texts)} questions, checkpoint {folder.name}, torch threads 1\n{'setting':28s} {'answers/s':>10s} {'vs batch 8':>10s}")
    for name, rate in rows: print(f"{name:28s} {rate:10.1f} {rate / base:10.2f}")
    reference = answers["in-process, batch 1"]
    same = {name: sum(a == b for a, b in zip(got, reference)) for name, got in answers.items()}
    print("answers equal to in-process batch 1: " + ", ".join(f"{name} {n}/{len(reference)}" for name, n in same.items()))
    return 0 if all(n == len(reference) for name, n in same.items() if name.startswith("served")) else 1

if __name__ == "__main__":
    sys.exit(main())
