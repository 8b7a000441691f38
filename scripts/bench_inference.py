"""Throughput and memory of the inference pipeline, compared side by side in one run.

For each model: model-only answers/s (inputs encoded beforehand, in memory), the data side alone (images decoded,
corrupted and turned into model inputs, per worker), and the whole pipeline (`run_conditions`) at 0, 1, 2, ... data
workers, with its ratio to model-only. Batch size, dtype, device and worker count are printed beside every figure.

    .venv/bin/python scripts/bench_inference.py                       # shipped models + full-size random ViLT-B/32 and BLIP-base
    .venv/bin/python scripts/bench_inference.py --models vilt-b32-random --device cuda --dtype bfloat16 --questions 4096
    .venv/bin/python scripts/bench_inference.py --memory              # peak memory against the number of conditions, per malloc_trim policy (and glibc's tcache off), repeated
    .venv/bin/python scripts/bench_inference.py --results             # memory and time of writing a run's results, per pyarrow memory pool
    .venv/bin/python scripts/bench_inference.py --agreement           # bfloat16 against float32 answers of the shipped models
    .venv/bin/python scripts/bench_inference.py --defences all         # each defence's time per image, beside the corruption's (bm3d: ask by name)
    .venv/bin/python scripts/bench_inference.py --image-once --questions 64   # BLIP's ViT once per distinct image against once per question

Images are COCO-sized (640 x 480 JPEGs made from scikit-image's sample photographs), about 5.3 questions each as in
VRB's split; `--images easy_vqa` uses the 64 x 64 easy-VQA images instead. Full-size random-weight models have the
real architectures (and therefore the real cost) but answer nonsense: BLIP then writes all `max_length` tokens.
"""
from __future__ import annotations
import argparse, json, os, subprocess, sys, tempfile, time
from pathlib import Path

RANDOM_MODELS = ("vilt-b32-random", "blip-base-random")

def coco_like(folder: Path, n_questions: int):
    "A dataset of 640 x 480 JPEG photographs with easy-VQA's questions, about 5.3 per image."
    import numpy as np
    from PIL import Image
    from skimage import data
    from vqa_robust.vqav2 import VQADataset, load_easy_vqa
    photos = [getattr(data, name)() for name in ("astronaut", "coffee", "chelsea", "rocket", "immunohistochemistry", "retina", "motorcycle_left")
              if hasattr(data, name)]
    questions = load_easy_vqa("test").questions.iloc[:n_questions].copy()
    n_images = max(1, round(n_questions / 5.3))
    questions["image_id"] = np.arange(len(questions)) % n_images
    for i in range(n_images):
        photo = Image.fromarray(photos[i % len(photos)]).convert("RGB").resize((640, 480))
        photo.rotate(i % 360).save(folder / f"{i}.jpg", quality=90)  # distinct pixels per image
    return VQADataset(questions.reset_index(drop=True), folder, "{image_id}.jpg", "coco_like")

def easy_vqa(n_questions: int):
    from vqa_robust.vqav2 import VQADataset, load_easy_vqa
    full = load_easy_vqa("test")
    return VQADataset(full.questions.iloc[:n_questions].reset_index(drop=True), full.image_dir, full.image_template, full.name)

def random_checkpoint(name: str, folder: Path) -> str:
    "A full-size random-weight ViLT-B/32 (VQAv2 head) or BLIP-base VQA checkpoint (run as VRB ran BLIP: 480 px, 3 beams) with its processor, loadable by load_model."
    import torch
    from vqa_robust.models import question_tokenizer, TINY_WORDS
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = question_tokenizer(TINY_WORDS, folder / "vocab")
    torch.manual_seed(0)
    if name == "vilt-b32-random":
        from transformers import ViltConfig, ViltForQuestionAnswering, ViltImageProcessor, ViltProcessor
        labels = {i: f"answer{i}" for i in range(3129)}
        ViltForQuestionAnswering(ViltConfig(num_labels=3129, id2label=labels, label2id={v: k for k, v in labels.items()})).save_pretrained(folder)
        ViltProcessor(ViltImageProcessor(size={"shortest_edge": 384}), tokenizer).save_pretrained(folder)
        family, settings = "vilt", {"score": "sigmoid"}
    else:
        from transformers import BlipConfig, BlipForQuestionAnswering, BlipImageProcessor, BlipProcessor
        vocab = tokenizer.get_vocab()
        config = BlipConfig(text_config=dict(pad_token_id=vocab["[PAD]"], bos_token_id=vocab["[DEC]"], sep_token_id=vocab["[SEP]"], eos_token_id=vocab["[SEP]"]))
        BlipForQuestionAnswering(config).save_pretrained(folder)
        tokenizer.bos_token = "[DEC]"
        BlipProcessor(image_processor=BlipImageProcessor(size={"height": 384, "width": 384}), tokenizer=tokenizer).save_pretrained(folder)
        family, settings = "blip", {"num_beams": 3, "max_length": 10, "min_length": 1, "image_size": 480}  # VRB's decoding, at 480 px
    (folder / "vqa_robust.json").write_text(json.dumps({"name": name, "family": family, "settings": settings}))
    return str(folder)

def load(name: str, device: str, dtype, work: Path):
    from vqa_robust.zoo import load_model
    path = random_checkpoint(name, work / name) if name in RANDOM_MODELS else name
    return load_model(path, device=device, dtype=dtype)

def timed(function, repeat: int = 1) -> float:
    "Seconds of the fastest of `repeat` calls (after the first, a warm-up, when repeating)."
    times = []
    for _ in range(repeat):
        start = time.perf_counter(); function(); times.append(time.perf_counter() - start)
    return min(times)

def sync(device: str):
    import torch
    if device.startswith("cuda"): torch.cuda.synchronize()

def batch_source(dataset, encoder, condition, batch_size: int, chunk_size: int = 1024):
    "The dataset's questions in a run's order, a run's batches of them under `condition`, and each batch prepared on demand (`source[i]`): (order, batches, source)."
    from vqa_robust.inference import ConditionBatches, plan_batches, question_order
    from vqa_robust.store import n_chunks
    order = question_order(dataset)
    batches = plan_batches(len(order), {condition: set(range(n_chunks(len(order), chunk_size)))}, chunk_size, batch_size)
    return order, batches, ConditionBatches(dataset, order, encoder, encoder.questions(order.question.tolist()), batches, 0)

def bench_model(name: str, dataset, args, work: Path) -> list[dict]:
    from vqa_robust.inference import run_conditions
    from vqa_robust.models import resolve_dtype
    from vqa_robust.zoo import FAMILIES
    device = args.device
    model = load(name, device, resolve_dtype(args.dtype, device, FAMILIES["vilt" if "vilt" in name else "blip"]), work)
    batch_size = args.batch_size or FAMILIES[model.spec.family].batch_size
    dtype = str(model.model.dtype).replace("torch.", "")
    condition = (args.corruption, args.severity)
    order, batches, source = batch_source(dataset, model.encoder(), condition, batch_size)
    rows, n = [], len(order)
    where = dict(model=name, device=device, dtype=dtype, batch=batch_size)

    # data side only, in this process: images decoded, corrupted and encoded (after a warm-up batch: Numba compiles on first use)
    source[0]
    data_seconds = timed(lambda: [source[i] for i in range(len(batches))])
    rows.append({**where, "what": f"data side only ({args.corruption} {args.severity})", "workers": 1, "answers/s": n / data_seconds,
                 "images/s": len(dataset.image_ids) / data_seconds})
    if args.data_only: return rows
    # model only: every batch encoded beforehand, in memory (pinned on CUDA, as the loader gives them)
    encoded = [source[i][1] for i in range(len(batches))]
    if device.startswith("cuda"): encoded = [{k: v.pin_memory() for k, v in e.items()} for e in encoded]
    model.predict_encoded(encoded[0]); sync(device)  # warm-up
    def model_only():
        for inputs in encoded: model.predict_encoded(inputs)
        sync(device)
    model_seconds = timed(model_only, args.repeat)
    rows.append({**where, "what": "model only", "workers": "-", "answers/s": n / model_seconds, "ratio": 1.0})
    del encoded
    # the whole pipeline, as a run runs it
    for workers in args.workers:
        def pipeline():
            run_conditions(model, dataset, [condition], Path(tempfile.mkdtemp(dir=work)), batch_size=batch_size, progress=False, num_workers=workers)
            sync(device)
        seconds = timed(pipeline, args.repeat)
        rows.append({**where, "what": "pipeline", "workers": workers, "answers/s": n / seconds, "ratio": model_seconds / seconds})
    return rows

def print_table(rows: list[dict]):
    import pandas as pd
    table = pd.DataFrame(rows)
    for column in ("answers/s", "images/s"):
        if column in table: table[column] = table[column].map(lambda v: f"{v:,.1f}" if v == v else "")
    if "ratio" in table: table["ratio"] = table["ratio"].map(lambda v: f"{v:.2f}" if v == v else "")
    print(table.fillna("").to_string(index=False))

MEMORY_CHILD = """
import json, sys, time, torch
torch.set_num_threads(1)
import vqa_robust.inference as inference
from pathlib import Path
from vqa_robust.vqav2 import load_easy_vqa, sample_images
from vqa_robust.zoo import load_model
n_conditions, trim, workers, out, n_images = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
release = inference.release_memory
if trim == "none": inference.release_memory = lambda: None
if trim == "batch":  # what-if: give freed pages back after every answered batch too, not only after each saved chunk
    answered = inference.answered_batches
    def every_batch(*args, **kwargs):
        for item in answered(*args, **kwargs): release(); yield item
    inference.answered_batches = every_batch
split = sample_images(load_easy_vqa("test"), n_images, seed=0)
corruptions = ["gaussian_noise", "defocus_blur", "brightness", "contrast", "shot_noise", "jpeg_compression"]
grid = inference.conditions(corruptions, [1, 2, 3, 4, 5])[:n_conditions]
start = time.time()
with inference.PrivatePeak() as private:
    for name in ("easy-vqa-vilt", "easy-vqa-blip"):
        inference.run_conditions(load_model(name, device="cpu"), split, grid, out, batch_size=64, progress=False, num_workers=workers)
print(json.dumps({**inference.peak_memory_mb(private), "seconds": time.time() - start, "answers": 2 * len(grid) * len(split)}))
"""

RUN_SH_MALLOC = {"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"}  # the malloc setting scripts/run.sh starts a run with

MEMORY_POLICIES = {  # name -> (when MEMORY_CHILD trims, environment the child starts with (glibc reads its tunables then), label)
    "none": ("none", {}, "never"),
    "chunk": ("chunk", {}, "after each saved chunk (the library)"),
    "batch": ("batch", {}, "after every batch too (what-if)"),
    "chunk+tcache0": ("chunk", RUN_SH_MALLOC, "after each saved chunk, glibc's tcache off (scripts/run.sh)")}

def bench_memory(args, work: Path):
    "Peak resident memory of a run of the shipped models on easy-VQA images, against the number of conditions, for each trimming policy, each run `--memory-repeats` times (with a data worker the peak varies from run to run: glibc heap fragmentation in the main process)."
    import statistics
    rows = []
    for n_conditions in args.memory_conditions:
        runs = {policy: [] for policy in MEMORY_POLICIES}
        for _ in range(args.memory_repeats):
            for policy, (trim, env, _) in MEMORY_POLICIES.items():  # interleaved, so that a busy moment of the machine falls on every policy alike
                out = Path(tempfile.mkdtemp(dir=work))
                p = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(n_conditions), trim, str(args.memory_workers), str(out), str(args.memory_images)],
                                   capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1", **env})
                if p.returncode: raise SystemExit(p.stderr[-3000:])
                runs[policy].append(json.loads(p.stdout.strip().splitlines()[-1]))
        speed = {policy: statistics.median(r["answers"] / r["seconds"] for r in results) for policy, results in runs.items()}
        for policy, results in runs.items():
            peaks, private = [r["process"] for r in results], [r.get("private", float("nan")) for r in results]
            rows.append({"images": args.memory_images, "conditions": n_conditions, "policy": MEMORY_POLICIES[policy][2], "runs": len(results),
                         "peak MB (main) min/median/max": "/".join(f"{v:.0f}" for v in (min(peaks), statistics.median(peaks), max(peaks))),
                         "private MB min/median/max": "/".join(f"{v:.0f}" for v in (min(private), statistics.median(private), max(private))),
                         "peak MB (worker)": max(r["workers"] for r in results), "answers/s": speed[policy], "ratio": speed[policy] / speed["chunk"]})
    print_table(rows)
    print("ratio: answers/s against the library's policy (trim after each saved chunk)")

RESULTS_CHILD = """
import json, shutil, sys, time
import vqa_robust.run as R
from vqa_robust.inference import PrivatePeak, arrow_pool, peak_memory_mb
source, out, n_images, corruptions = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
shutil.copytree(source, out)  # the answers are reused: what is measured is scoring and the result sections
measured, write = {}, R.write_run_folder
def timed(*args, **kwargs):
    with PrivatePeak(interval=0.01) as private:
        start = time.time(); result = write(*args, **kwargs); measured.update(seconds=time.time() - start)
    measured.update(private=private.mb); return result
R.write_run_folder = timed
R.run(model="easy-vqa-vilt,easy-vqa-blip", n_images=n_images, corruptions=corruptions, severities="1,2,3,4,5", out_dir=out, progress=False)
print(json.dumps({**measured, "process": peak_memory_mb()["process"], "pool": arrow_pool()}))
"""
RESULTS_CORRUPTIONS = "gaussian_noise,defocus_blur,brightness"  # README command 1's
RESULTS_POOLS = {  # label -> environment the child starts with (pyarrow picks its pool then)
    "mimalloc (pyarrow's default)": {},
    "system (scripts/run.sh)": {"ARROW_DEFAULT_MEMORY_POOL": "system"}}

def bench_results(args, work: Path):
    "Private peak and time of scoring and writing a run folder's results (the answers of README command 1's job on `--results-images` images, made once and reused), under each pyarrow memory pool, glibc's tcache off as scripts/run.sh runs it, interleaved."
    import statistics
    from vqa_robust.run import run
    source = work / "answers"
    run(model="easy-vqa-vilt,easy-vqa-blip", n_images=args.results_images, corruptions=RESULTS_CORRUPTIONS, severities="1,2,3,4,5", out_dir=source, progress=False, figures=False)
    runs = {label: [] for label in RESULTS_POOLS}
    for i in range(args.memory_repeats):
        for k, (label, env) in enumerate(RESULTS_POOLS.items()):
            p = subprocess.run([sys.executable, "-c", RESULTS_CHILD, str(source), str(work / f"results-{i}-{k}"), str(args.results_images), RESULTS_CORRUPTIONS],
                               capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1", **RUN_SH_MALLOC, **env})
            if p.returncode: raise SystemExit(p.stderr[-3000:])
            runs[label].append(json.loads(p.stdout.strip().splitlines()[-1]))
    base = statistics.median(r["private"] for r in runs[next(iter(RESULTS_POOLS))])
    span = lambda values: "/".join(f"{v:.0f}" for v in (min(values), statistics.median(values), max(values)))
    print_table([{"images": args.results_images, "pool": label, "runs": len(rs), "results private peak MB min/median/max": span([r["private"] for r in rs]),
                  "child's whole peak MB (ru_maxrss) min/median/max": span([r["process"] for r in rs]), "results s (median)": statistics.median(r["seconds"] for r in rs),
                  "private ratio": statistics.median(r["private"] for r in rs) / base} for label, rs in runs.items()])
    print("private ratio: the results' private peak against pyarrow's default pool")

def bench_agreement(args):
    "bfloat16 against float32: the share of answers unchanged and the speed, for the shipped models on easy-VQA."
    import torch
    from vqa_robust.inference import answer_condition
    from vqa_robust.zoo import load_model
    dataset, rows = easy_vqa(args.questions), []
    for name in ("easy-vqa-vilt", "easy-vqa-blip"):
        results, seconds = {}, {}
        for dtype in (torch.float32, torch.bfloat16):
            model = load_model(name, device="cpu", dtype=dtype)
            start = time.perf_counter()
            results[dtype] = answer_condition(model, dataset, "gaussian_noise", 3, batch_size=64)
            seconds[dtype] = time.perf_counter() - start
        same = (results[torch.float32].answer == results[torch.bfloat16].answer).mean()
        rows.append({"model": name, "questions": len(dataset), "answers unchanged": f"{100 * same:.2f}%",
                     "float32 answers/s": len(dataset) / seconds[torch.float32], "bfloat16 answers/s": len(dataset) / seconds[torch.bfloat16],
                     "speed-up": seconds[torch.float32] / seconds[torch.bfloat16]})
    print_table(rows)

def bench_flops(args, work: Path):
    "Floating-point operations per answer (torch's FlopCounterMode over one batch of COCO-sized images), for the plan of a full benchmark."
    from torch.utils.flop_counter import FlopCounterMode
    images = work / "images"; images.mkdir(exist_ok=True)
    dataset = coco_like(images, 16)
    rows = []
    for name in args.models.split(","):
        model = load(name, "cpu", None, work)
        order, _, source = batch_source(dataset, model.encoder(), ("clean", 0), 16, chunk_size=16)
        inputs = source[0][1]
        with FlopCounterMode(display=False) as counter: model.predict_encoded(inputs)
        parameters = sum(p.numel() for p in model.model.parameters())
        rows.append({"model": name, "parameters (M)": parameters / 1e6, "pixels": "x".join(map(str, inputs["pixel_values"].shape[-2:])),
                     "GFLOP per answer": counter.get_total_flops() / len(order) / 1e9})
    print_table(rows)

def bench_image_once(args, dataset, work: Path):
    """BLIP's `encode_each_image_once` on and off, model only (inputs encoded beforehand), side by side: answers/s, the ratio,
    answers unchanged and the largest confidence difference; the shipped BLIP on easy-VQA, the full-size random BLIP on `dataset`."""
    from vqa_robust.zoo import FAMILIES, load_model
    rows = []
    for name, data in (("easy-vqa-blip", easy_vqa(args.questions)), ("blip-base-random", dataset)):
        path = random_checkpoint(name, work / name) if name in RANDOM_MODELS else name
        models = {once: load_model(path, device=args.device, encode_each_image_once=once) for once in (True, False)}
        batch_size = args.batch_size or FAMILIES[models[True].spec.family].batch_size
        order, batches, source = batch_source(data, models[True].encoder(), (args.corruption, args.severity), batch_size)
        encoded = [source[i][1] for i in range(len(batches))]
        answers, seconds = {}, {}
        for once, model in models.items():
            model.predict_encoded(encoded[0])  # warm-up
            start = time.perf_counter()
            answers[once] = [out for inputs in encoded for out in zip(*model.predict_encoded(inputs))]
            seconds[once] = time.perf_counter() - start
        same = sum(a[0] == b[0] for a, b in zip(answers[True], answers[False])) / len(order)
        rows.append({"model": name, "questions": len(order), "images": len(data.image_ids), "batch": batch_size,
                     "once a question, answers/s": len(order) / seconds[False], "once an image, answers/s": len(order) / seconds[True],
                     "speed-up": seconds[False] / seconds[True], "answers unchanged": f"{100 * same:.2f}%",
                     "largest confidence difference": max(abs(a[1] - b[1]) for a, b in zip(answers[True], answers[False]))})
    print_table(rows)

def bench_defences(args, dataset):
    "Each defence's milliseconds per image (per question for text defences) on the dataset's images under the corruption, beside the corruption's own."
    from vqa_robust.corruptions import image_under_condition
    from vqa_robust.defences import DEFENCES, defence_timing
    names = [n for n in DEFENCES if n != "bm3d"] if args.defences == "all" else args.defences.split(",")
    ids = list(dataset.image_ids)[:args.defence_images]
    began = time.perf_counter()
    images = [image_under_condition(dataset.load_image(i), args.corruption, args.severity, 0, i) for i in ids]
    corrupt_ms = 1000 * (time.perf_counter() - began) / len(ids)
    timing = defence_timing(names, images, dataset.questions.question.tolist(), repeats=args.repeat)
    h, w = images[0].shape[:2]
    print(f"\ndefences on {len(ids)} {w}x{h} images under {args.corruption} {args.severity} (decoding and corrupting: {corrupt_ms:.1f} ms an image), best of {args.repeat}")
    print(f"{'defence':<18}{'kind':<7}{'ms per item':>12}{'x corruption':>14}")
    for name in names:
        kind = DEFENCES[name].kind
        print(f"{name:<18}{kind:<7}{timing[name]:>12.2f}{(timing[name] / corrupt_ms if kind == 'image' else float('nan')):>14.2f}")

def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="easy-vqa-vilt,easy-vqa-blip," + ",".join(RANDOM_MODELS))
    parser.add_argument("--questions", type=int, default=256)
    parser.add_argument("--images", default="coco_like", choices=("coco_like", "easy_vqa"))
    parser.add_argument("--device", default="cpu"); parser.add_argument("--dtype", default="auto")
    parser.add_argument("--batch-size", type=int, default=0, help="0: the family's default")
    parser.add_argument("--workers", default="0,1,2"); parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--corruption", default="gaussian_noise"); parser.add_argument("--severity", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=1, help="time the fastest of this many runs")
    parser.add_argument("--memory", action="store_true"); parser.add_argument("--memory-conditions", default="4,16")
    parser.add_argument("--memory-workers", type=int, default=1); parser.add_argument("--memory-images", type=int, default=200)
    parser.add_argument("--memory-repeats", type=int, default=3)
    parser.add_argument("--results", action="store_true", help="memory and time of writing a run's results, per pyarrow memory pool (--memory-repeats each)")
    parser.add_argument("--results-images", type=int, default=200)
    parser.add_argument("--agreement", action="store_true"); parser.add_argument("--flops", action="store_true")
    parser.add_argument("--data-only", action="store_true", help="measure the data side only")
    parser.add_argument("--defences", default="", help="time these defences (comma-separated, or 'all': every one but bm3d) instead of the models")
    parser.add_argument("--defence-images", type=int, default=8, help="images the defences are timed on")
    parser.add_argument("--image-once", action="store_true", help="BLIP's ViT once per distinct image of a batch against once per question (encode_each_image_once)")
    args = parser.parse_args()
    args.workers = [int(w) for w in args.workers.split(",")]
    args.memory_conditions = [int(c) for c in args.memory_conditions.split(",")]
    import torch
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s), {len(os.sched_getaffinity(0))} CPUs"
          + (f", {torch.cuda.get_device_name()}" if args.device.startswith("cuda") else ""))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.memory: return bench_memory(args, work)
        if args.results: return bench_results(args, work)
        if args.agreement: return bench_agreement(args)
        if args.flops: return bench_flops(args, work)
        images = work / "images"; images.mkdir()
        dataset = coco_like(images, args.questions) if args.images == "coco_like" else easy_vqa(args.questions)
        print(f"{len(dataset)} questions on {len(dataset.image_ids)} images ({args.images})")
        if args.defences: return bench_defences(args, dataset)
        if args.image_once: return bench_image_once(args, dataset, work)
        rows = []
        for name in args.models.split(","):
            rows += bench_model(name, dataset, args, work)
            print_table(rows[-(1 if args.data_only else 2 + len(args.workers)):])
        print("\nall:"); print_table(rows)

if __name__ == "__main__":
    main()
