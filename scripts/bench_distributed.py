"""End-to-end answers/s of the local and the Ray executor, side by side, on this machine.

    python scripts/bench_distributed.py [--model easy-vqa-vilt] [--images 60] [--corruptions gaussian_noise,defocus_blur]
                                        [--severities 1,3,5] [--replicas 2] [--cpus N]

Both executors answer the same grid into fresh run folders; the Ray run starts a local Ray first (its start-up is timed
apart). The script checks that both gave the same rows before it prints any rate, and exits 1 if they did not.
"""
import argparse, os, shutil, sys, tempfile, time
from pathlib import Path

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="easy-vqa-vilt"); ap.add_argument("--images", type=int, default=60)
    ap.add_argument("--corruptions", default="gaussian_noise,defocus_blur"); ap.add_argument("--severities", default="1,3,5")
    ap.add_argument("--replicas", type=int, default=2); ap.add_argument("--cpus", type=int, default=os.cpu_count())
    ap.add_argument("--batch-size", type=int, default=32); ap.add_argument("--chunk-size", type=int, default=64)
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    torch.set_num_threads(1)
    from vqa_robust.vqav2 import load_easy_vqa, sample_images
    from vqa_robust.zoo import load_model
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
        began = time.time(); pool = ray_pool(args.model, {}, args.replicas, resources); ray.get([w.pid.remote() for w in pool]); ray_load = time.time() - began
        began = time.time(); remote = ray_answer(args.model, model.identity, dataset, grid, work / "ray", pool=pool, **settings); ray_s = time.time() - began
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
