"""The Ray executor on a real local Ray (head and workers on this machine): losing a replica mid-run, or the driver and its
whole cluster, loses no finished shard and doubles no row; the rows equal the local executor's."""
import importlib.util, json, os, shutil, signal, subprocess, sys, tempfile, textwrap, time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

root = Path(__file__).resolve().parent.parent
GRID = [("clean", 0), ("gaussian_noise", 3), ("defocus_blur", 5)]
SETTINGS = dict(seed=0, batch_size=8, chunk_size=16)

spec = importlib.util.spec_from_file_location("suite_runner", root / "scripts" / "test.py")
runner = importlib.util.module_from_spec(spec); spec.loader.exec_module(runner)
MARK = os.environ.setdefault(runner.SUITE_MARK, f"pytest-{os.getpid()}-{time.time_ns()}")  # a pytest run alone marks its own
OWN_ROOT = "RAY_TMPDIR" not in os.environ  # run alone: this module makes the Ray folder, and removes it
RAY_ROOT = os.environ["RAY_TMPDIR"] if not OWN_ROOT else tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # the suite's Ray sessions
os.environ["RAY_TMPDIR"] = RAY_ROOT

@pytest.fixture(scope="module", autouse=True)
def own_ray_folder():
    yield
    if OWN_ROOT: shutil.rmtree(RAY_ROOT, ignore_errors=True)

def marked_ray_pids() -> list[int]:
    "The Ray processes this suite started: its mark in their environment, or (Ray's agents) its Ray folder among their files."
    ours = runner.servers_running(MARK, RAY_ROOT)  # a served test's server too: not this test's to stop
    return [pid for pid, args in ours.items() if any(p in args for p in runner.RAY_PROCESSES)]

def ray_stop():
    "Stop the Ray processes this suite started (what a lost cluster leaves behind), never another suite's cluster."
    for pid in marked_ray_pids():
        try: os.kill(pid, signal.SIGKILL)
        except ProcessLookupError: pass
    deadline = time.time() + 30
    while marked_ray_pids() and time.time() < deadline: time.sleep(0.2)

@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from vqa_robust.vqav2 import load_easy_vqa, sample_images
    from vqa_robust.zoo import load_model
    from vqa_robust.inference import run_conditions
    folder = tmp_path_factory.mktemp("distributed")
    dataset = sample_images(load_easy_vqa("test"), 12, seed=4)
    model = load_model("easy-vqa-vilt")
    local = run_conditions(model, dataset, GRID, folder / "local", progress=False, **SETTINGS)
    yield dataset, model, local, folder
    import ray
    ray.shutdown(); ray_stop()

def store_rows(out_dir):
    from vqa_robust.store import read_store
    return read_store(out_dir)

def check_store(out_dir, local, dataset):
    "The store holds each question of each condition once, and the same rows as the local run."
    from vqa_robust.store import RECORD, partition_dir, n_chunks, chunk_file
    rows = store_rows(out_dir)
    assert not rows.duplicated(["model", "corruption", "severity", "question_id"]).any()
    assert rows.drop(columns="confidence").to_dict("list") == local.sort_values(["model", "corruption", "severity", "question_id"], ignore_index=True).drop(columns="confidence").to_dict("list")
    for c in GRID:
        record = json.loads((partition_dir(out_dir, "easy-vqa-vilt", *c) / RECORD).read_text())
        assert sorted(record["chunks"]) == [chunk_file(k) for k in range(n_chunks(len(dataset), SETTINGS["chunk_size"]))]

def test_killing_a_replica_loses_and_doubles_nothing(setup):
    dataset, model, local, folder = setup
    from vqa_robust.distributed import start_ray, ray_pool, ray_resources, ray_answer
    from vqa_robust.zoo import model_plan
    ray = start_ray(num_cpus=2, object_store_mb=200)
    pool = ray_pool(model_plan("easy-vqa-vilt"), 2, ray_resources("cpu", 2, 2))
    pids = ray.get([w.pid.remote() for w in pool])
    finished, killed = [], []
    def kill_one(shard, workers):
        finished.append(shard.key)
        if len(finished) == 2 and not killed:  # mid-run: shards are in flight on both replicas
            os.kill(pids[1], signal.SIGKILL); killed.append(pids[1])
    answers = ray_answer(model_plan("easy-vqa-vilt"), dataset, GRID, folder / "killed", progress=False, pool=pool, on_shard=kill_one, **SETTINGS)
    assert killed, "the replica was never killed: the test did not test anything"
    assert len(finished) == len(set(finished)) == 3 * -(-len(dataset) // SETTINGS["chunk_size"])  # every shard once, none twice
    assert answers.drop(columns="confidence").to_dict("list") == local.drop(columns="confidence").to_dict("list")
    np.testing.assert_array_equal(answers.confidence.to_numpy(), local.confidence.to_numpy())
    new_pid = ray.get(pool[1].pid.remote())
    assert new_pid != pids[1]  # Ray restarted the replica, and its shards were retried there
    check_store(folder / "killed", local, dataset)

DRIVER = """
import os, signal, sys
from pathlib import Path
from vqa_robust.vqav2 import load_easy_vqa, sample_images
from vqa_robust.zoo import model_plan
from vqa_robust.distributed import ray_answer, start_ray
dataset = sample_images(load_easy_vqa("test"), 12, seed=4)
start_ray(num_cpus=2, object_store_mb=200)
done = []
def stop(shard, workers):
    done.append(shard.key)
    print("finished", shard.key, flush=True)
    if len(done) == {stop_after}: os.kill(os.getpid(), signal.SIGKILL)  # the driver dies, with the record of shards still in flight
ray_answer(model_plan("easy-vqa-vilt"), dataset, {grid}, Path(sys.argv[1]), progress=False, on_shard=stop,
           replicas=2, **{settings})
"""

def test_run_on_ray(tmp_path, setup):
    "A whole run with executor 'ray' on the Ray the test above left running (as a job on a running cluster): the same answers as the local executor's run."
    from vqa_robust.parallel import start_ray
    from vqa_robust.run import run
    start_ray(num_cpus=2, object_store_mb=200)  # the running Ray, or a new one if this test runs alone
    settings = dict(model="easy-vqa-vilt", n_images=6, corruptions="gaussian_noise", severities="2", progress=False, figures=False)
    a = run(out_dir=tmp_path / "local", **settings).answers
    b = run(out_dir=tmp_path / "ray", executor="ray", replicas=1, **settings).answers  # one replica: the pool of two is tested above
    assert len(a)
    assert a.drop(columns="confidence").to_dict("list") == b.drop(columns="confidence").to_dict("list")
    np.testing.assert_allclose(a.confidence.to_numpy(), b.confidence.to_numpy(), rtol=1e-6)
    assert json.loads((tmp_path / "ray" / "run.json").read_text())["executor"] == "ray"
    assert "easy-vqa-vilt: 1 replica(s) on Ray" in (tmp_path / "ray" / "run.log").read_text()  # the run's replicas parameter reached ray_start

def test_losing_the_driver_and_cluster_loses_no_finished_shard(setup):
    dataset, model, local, folder = setup
    import ray
    ray.shutdown(); ray_stop()
    out = folder / "lost"
    script = DRIVER.format(stop_after=4, grid=GRID, settings=SETTINGS)
    p = subprocess.run([sys.executable, "-c", script, str(out)], capture_output=True, text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert p.returncode == -signal.SIGKILL, p.stdout[-2000:] + p.stderr[-3000:]
    ray_stop()  # the rest of the cluster goes too
    from vqa_robust.store import chunk_sidecar, chunk_file
    written = sorted(f.parent.name + "/" + f.name for f in (out / "answers").rglob("part-*.parquet") if (f.parent / chunk_sidecar(int(f.stem[5:]))).is_file())
    assert len(written) >= 4  # at least the finished shards the driver saw
    from vqa_robust.inference import run_conditions
    before = {f: f.stat().st_mtime_ns for f in (out / "answers").rglob("part-*.parquet")}
    answers = run_conditions(model, dataset, GRID, out, progress=False, **SETTINGS)  # the rerun (any executor: they share the store)
    after = {f: f.stat().st_mtime_ns for f in (out / "answers").rglob("part-*.parquet")}
    total = 3 * -(-len(dataset) // SETTINGS["chunk_size"])
    assert len(after) == total
    assert all(after[f] == t for f, t in before.items() if f.parent.name + "/" + f.name in written)  # every written chunk adopted, not answered again
    assert answers.drop(columns="confidence").to_dict("list") == local.drop(columns="confidence").to_dict("list")
    check_store(out, local, dataset)

def test_local_executor_from_the_module(setup):
    "The registry's local executor imported as users import it (not inside its notebook, whose namespace has more names)."
    dataset, model, local, folder = setup
    from vqa_robust.distributed import executor
    from vqa_robust.zoo import model_plan
    answers = executor("local").answer(model_plan("easy-vqa-vilt"), dataset, GRID, folder / "via_registry", progress=False, **SETTINGS)
    assert answers.to_dict("list") == local.to_dict("list")
