"""End-to-end answers/s of the local and the Ray executor, side by side, on this machine.

    python scripts/bench_distributed.py [--model easy-vqa-vilt] [--images 60] [--corruptions gaussian_noise,defocus_blur]
                                        [--severities 1,3,5] [--replicas 2] [--cpus N]
    python scripts/bench_distributed.py --replica-kernels [--shards 8] [--images N] [--workers 2] [--corruption gaussian_noise]

Both executors answer the same grid into fresh run folders; the Ray run starts a local Ray first (its start-up is timed
apart). The script checks that both gave the same rows before it prints any rate, and exits 1 if they did not.

`--replica-kernels`: one replica (`ShardWorker`, in a fresh process) answers `--shards` shards one after another, forking
`--workers` data workers for each, with `warm_corruptions` (the shard's numba kernels loaded in the replica, inherited by
its workers) and with it replaced by a no-op (each worker loads them itself), alternately, twice each; it prints the
replica's and its workers' CPU-seconds and the wall time of each, the medians and their ratios, and exits 1 if the
answers differ.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

REPLICA = """
import json, resource, sys, tempfile, time
from pathlib import Path
import torch
torch.set_num_threads(1)
import vqa_robust.distributed as distributed
from vqa_robust.distributed import Shard, ShardWorker
from vqa_robust.zoo import model_plan
from vqa_robust.store import condition_identity, identity_digest
from vqa_robust.vqav2 import dataset_fingerprint, load_easy_vqa, sample_images
warm, corruption, shards, images, workers = sys.argv[1] == "on", sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
if not warm: distributed.warm_corruptions = lambda names: []  # each data worker loads the kernels itself
data = sample_images(load_easy_vqa("test"), images, seed=0)
replica, fingerprint, out = ShardWorker(model_plan("easy-vqa-vilt", device="cpu"), num_workers=workers), dataset_fingerprint(data), Path(tempfile.mkdtemp())
chunk = -(-len(data) // shards)
cpu = lambda who: (lambda u: u.ru_utime + u.ru_stime)(resource.getrusage(who))
began, own, children, answers = time.time(), cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN), []
for k in range(shards):
    identity = condition_identity(replica.identity(), fingerprint, corruption, 3, 0, None, 32, chunk)
    answers += replica.answer(data, identity_digest(fingerprint), Shard(replica.model.name, corruption, 3, k), str(out), identity, 0, 32, chunk)[1].answer.tolist()
print(json.dumps({"wall": time.time() - began, "replica": cpu(resource.RUSAGE_SELF) - own, "workers": cpu(resource.RUSAGE_CHILDREN) - children,
                  "questions": len(data), "answers": answers}))
"""

def replica_kernels(args) -> int:
    "The --replica-kernels comparison (see the docstring)."
    runs = {"on": [], "off": []}
    for _ in range(2):
        for mode in ("off", "on"):
            p = subprocess.run([sys.executable, "-c", REPLICA, mode, args.corruption, str(args.shards), str(args.images), str(args.workers)],
                               capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
            if p.returncode: print(p.stderr[-3000:]); return 1
            runs[mode].append(json.loads(p.stdout.splitlines()[-1]))
    if len({json.dumps(r["answers"]) for rs in runs.values() for r in rs}) != 1: print("FAIL: the answers differ"); return 1
    median = {m: {k: statistics.median(r[k] for r in rs) for k in ("wall", "replica", "workers")} for m, rs in runs.items()}
    print(f"one replica, {args.shards} shards of {runs['on'][0]['questions']} questions under {args.corruption} 3, {args.workers} data workers a shard; medians of two")
    print(f"{'kernels loaded':<34}{'replica CPU-s':>14}{'workers CPU-s':>15}{'total':>8}{'wall s':>8}")
    for mode, label in (("off", "by each worker (without warm)"), ("on", "once in the replica (warm)")):
        m = median[mode]; print(f"{label:<34}{m['replica']:>14.2f}{m['workers']:>15.2f}{m['replica'] + m['workers']:>8.2f}{m['wall']:>8.2f}")
    off, on = median["off"], median["on"]
    print(f"warm / without: CPU {(on['replica'] + on['workers']) / (off['replica'] + off['workers']):.2f}, wall {on['wall'] / off['wall']:.2f}; the same answers")
    return 0

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="easy-vqa-vilt"); ap.add_argument("--images", type=int, default=60)
    ap.add_argument("--corruptions", default="gaussian_noise,defocus_blur"); ap.add_argument("--severities", default="1,3,5")
    ap.add_argument("--replicas", type=int, default=2); ap.add_argument("--cpus", type=int, default=os.cpu_count())
    ap.add_argument("--batch-size", type=int, default=32); ap.add_argument("--chunk-size", type=int, default=64)
    ap.add_argument("--replica-kernels", action="store_true", help="compare a replica with and without warm_corruptions (see above)")
    ap.add_argument("--shards", type=int, default=8); ap.add_argument("--workers", type=int, default=2); ap.add_argument("--corruption", default="gaussian_noise")
    args = ap.parse_args(argv)
    if args.replica_kernels: return replica_kernels(args)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    torch.set_num_threads(1)
    from vqa_robust.vqav2 import load_easy_vqa, sample_images
    from vqa_robust.zoo import load_model, model_plan
    from vqa_robust.inference import conditions, run_conditions
    from vqa_robust.distributed import start_ray, ray_pool, ray_resources, ray_answer
    dataset = sample_images(load_easy_vqa("test"), args.images, seed=0)
    grid = conditions(args.corruptions.split(","), [int(s) for s in args.severities.split(",")])
    n = len(grid) * len(dataset)
    settings = dict(seed=0, batch_size=args.batch_size, chunk_size=args.chunk_size, progress=False)
    work = Path(tempfile.mkdtemp())
    try:
        began = time.time(); model = load_model(args.model); local_load = time.time() - began
        began = time.time(); local = run_conditions(model, dataset, grid, work / "local", **settings); local_s = time.time() - began
        began = time.time(); ray = start_ray(num_cpus=args.cpus, object_store_mb=300); ray_start = time.time() - began
        resources = ray_resources("cpu", args.replicas, ray.cluster_resources().get("CPU"))
        began = time.time(); pool = ray_pool(model_plan(args.model), args.replicas, resources); ray.get([w.pid.remote() for w in pool]); ray_load = time.time() - began
        began = time.time(); remote = ray_answer(model_plan(args.model), dataset, grid, work / "ray", pool=pool, **settings); ray_s = time.time() - began
        if not (remote.drop(columns="confidence").equals(local.drop(columns="confidence")) and (remote.confidence.to_numpy() == local.confidence.to_numpy()).all()):
            print("FAIL: the Ray executor's rows differ from the local executor's"); return 1
        ray.shutdown()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{args.model}: {len(dataset.image_ids)} images, {len(dataset)} questions x {len(grid)} conditions = {n} answers "
          f"(batch {args.batch_size}, chunk {args.chunk_size}); {os.cpu_count()} CPU(s), 1 torch thread per process")
    print(f"{'executor':<30}{'answers/s':>12}{'seconds':>10}")
    print(f"{'local (1 process)':<30}{n / local_s:>12.1f}{local_s:>10.1f}   (model load {local_load:.1f} s, not counted)")
    label = f"ray ({args.replicas} replicas, {resources['num_cpus']} CPU each)"
    print(f"{label:<30}{n / ray_s:>12.1f}{ray_s:>10.1f}   (Ray start {ray_start:.1f} s and replicas' load {ray_load:.1f} s, not counted)")
    print(f"ray / local: {local_s / ray_s:.2f}x; with Ray's start and load: {local_s / (ray_s + ray_start + ray_load):.2f}x; rows identical")
    return 0

if __name__ == "__main__":
    sys.exit(main())
