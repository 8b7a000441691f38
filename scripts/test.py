"""Run the whole test suite: every notebook through `nbdev_test` and `pytest tests/` (printing the 10 slowest tests of each group); end with 'N passed, N failed'.

    python scripts/test.py                 # default flags (notest, slow and gpu cells skipped)
    python scripts/test.py --flags slow    # also run cells flagged #| slow (and --flags gpu on a GPU machine)

The notebooks and pytest's test files run side by side, `--workers` at a time (3 by default on 2 cores), the two that wait
on a cluster or on servers first (WAITING), then the longest first: pytest is
split into groups of files, and the two that start Ray (nbs/03a_distributed and tests/test_distributed.py) run one after
the other in one task, so that two local Ray clusters never share the machine; the other notebooks are tested in three
processes, one after the other in each, as nbdev_test's own workers do (torch and transformers imported once a process, not
once a notebook): the three that read WordNet and spaCy together (loaded once), the four corruption families apart (their cells register
the notebook's own functions), the rest in two groups of about equal work.
Every task but the Ray pair runs at a lower priority (BACKGROUND_NICE), so that the cluster gets the CPU it waits for; in
each test process what a notebook cell or a test leaves alive is collected and frozen (`collect_and_freeze`, and
tests/conftest.py), so that later collections do not walk torch, WordNet and the models again and again.
"""
import argparse, gc, os, shutil, signal, subprocess, sys, tempfile, time, xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

root = Path(__file__).resolve().parent.parent
bin_dir = Path(sys.executable).parent
PYTEST_GROUPS = {  # pytest runs as these groups of files; the files no group names form one more group
    "tests/test_run.py": ["tests/test_run.py"],
    "tests/test_docs.py": ["tests/test_docs.py"],
    "tests/test_faults.py": ["tests/test_faults.py"],
    "tests/test_served.py": ["tests/test_served.py"],
    "tests/test_report.py": ["tests/test_report.py"],
}
RAY_CHAIN = ("nbs/03a_distributed.ipynb", "tests/test_distributed.py")  # both start a local Ray: never at the same time
SHARED = ("nbs/06_text.ipynb", "nbs/06a_text_eval.ipynb", "nbs/01b_defences.ipynb")  # these load WordNet (and spaCy): one process loads them once
REGISTERING = ("nbs/01c_imagenet_c.ipynb", "nbs/01d_vrb_corruptions.ipynb", "nbs/01e_geometric.ipynb", "nbs/01f_capture.ipynb")  # their cells register corruptions defined in the notebook (`__main__`) into the one registry: a process that ran them reads that code, not the package's, so they share a process of their own
BACKGROUND_NICE = 10  # niceness of every task but the Ray pair: the longest chain, whose cluster (heartbeats, worker start-up) slows most when starved, keeps the CPU it asks for
NOTEBOOK_GROUPS = 2  # processes the other notebooks (but 03a) are tested in, of about equal work
NOTEBOOK_SECONDS = {  # seconds each notebook took in a shared process on the project's 2-core machine: groups' balance and order (5 for one not listed)
    "nbs/01b_defences.ipynb": 83, "nbs/02a_training.ipynb": 52, "nbs/06a_text_eval.ipynb": 54,
    "nbs/03_inference.ipynb": 37, "nbs/05b_combine.ipynb": 45, "nbs/08_run_library.ipynb": 25, "nbs/08a_results.ipynb": 25, "nbs/08_parameters.ipynb": 8, "nbs/08_questions.ipynb": 8, "nbs/08b_harness_scoring.ipynb": 8, "nbs/08c_command_line.ipynb": 34, "nbs/05d_report.ipynb": 55, "nbs/05f_hub_results.ipynb": 22, "nbs/05e_hf_dataset.ipynb": 10,
    "nbs/06_text.ipynb": 25, "nbs/04a_calibration.ipynb": 17, "nbs/07a_changes.ipynb": 17,
    "nbs/07_explain.ipynb": 17, "nbs/02f_served.ipynb": 14, "nbs/04d_discrimination.ipynb": 13,
    "nbs/01_corruptions.ipynb": 2, "nbs/01c_imagenet_c.ipynb": 5, "nbs/01d_vrb_corruptions.ipynb": 3, "nbs/01e_geometric.ipynb": 3, "nbs/01g_corruption_sets.ipynb": 5,
    "nbs/04c_consistency.ipynb": 10, "nbs/04g_model_input.ipynb": 10, "nbs/04h_comparisons.ipynb": 70,
    "nbs/04b_flips.ipynb": 9, "nbs/02_models.ipynb": 8, "nbs/05_analysis.ipynb": 8, "nbs/05c_harnesses.ipynb": 8,
    "nbs/02e_model_zoo.ipynb": 7, "nbs/06b_question_corruptions.ipynb": 6, "nbs/00_base.ipynb": 5,
    "nbs/01a_generator.ipynb": 5}
WAITING = (" + ".join(RAY_CHAIN), "tests/test_served.py")  # tasks that wait much of their time (on a cluster, on servers): started first, beside the others
EXPECTED_SECONDS = {  # seconds measured on the project's 2-core machine (CI, fresh clone): only the order tasks start in (longest first)
    "nbs/03a_distributed.ipynb + tests/test_distributed.py": 150, "tests/test_run.py": 140, "tests/test_docs.py": 96,
    "other tests": 80, "tests/test_served.py": 110, "tests/test_faults.py": 43, "tests/test_report.py": 70,
}

def notebook_groups(notebooks: list[Path], n: int) -> list[list[Path]]:
    "The notebooks in n groups of about equal expected time (the longest first, each to the group with least so far)."
    groups, totals = [[] for _ in range(n)], [0.0] * n
    for nb in sorted(notebooks, key=lambda nb: -NOTEBOOK_SECONDS.get(f"nbs/{nb.name}", 5)):
        k = totals.index(min(totals)); groups[k].append(nb); totals[k] += NOTEBOOK_SECONDS.get(f"nbs/{nb.name}", 5)
    return [sorted(g) for g in groups if g]

def niced(nice: int):
    "A `preexec_fn` lowering a child's priority by `nice` (its own children inherit it)."
    return (lambda: os.nice(nice)) if nice else None

def run_notebook(nb: Path, flags: str, nice: int = BACKGROUND_NICE) -> tuple[int, int, int, str]:
    "Test one notebook with nbdev_test; (passed, failed, skipped, report)."
    start = time.time()
    cmd = [str(bin_dir / "nbdev_test"), "--path", str(nb.relative_to(root))] + (["--flags", flags] if flags else [])
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    p = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env, preexec_fn=niced(nice))
    ok = p.returncode == 0
    report = f"{'PASS' if ok else 'FAIL'} nbs/{nb.name} ({time.time() - start:.0f} s)" + ("" if ok else "\n" + (p.stdout + p.stderr)[-6000:])
    return int(ok), int(not ok), 0, report

def run_notebooks(nbs: list[Path], flags: str, nice: int = BACKGROUND_NICE) -> tuple[int, int, int, str]:
    """Test several short notebooks one after the other in one process (as nbdev_test's own workers do), so that torch and
    transformers are imported once for all of them; (passed, failed, skipped, report with each notebook's line)."""
    start = time.time()
    cmd = [sys.executable, str(Path(__file__).resolve()), "--in-process", *[str(nb.relative_to(root)) for nb in nbs]] + (["--flags", flags] if flags else [])
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    p = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env, preexec_fn=niced(nice))
    lines = [l for l in p.stdout.splitlines() if l.startswith(("PASS nbs/", "FAIL nbs/"))]
    passed = sum(l.startswith("PASS") for l in lines)
    failed = len(nbs) - passed  # a notebook without its line (the process died) fails
    head = f"{'PASS' if not failed and p.returncode == 0 else 'FAIL'} {len(nbs)} notebooks in one process ({time.time() - start:.0f} s)"
    tail = "" if not failed and p.returncode == 0 else "\n" + (p.stdout + p.stderr)[-6000:]
    return passed, max(failed, int(p.returncode != 0 and not failed)), 0, "\n".join([head, *lines]) + tail

def collect_and_freeze(cell=None) -> None:
    """Garbage collected, then what is left frozen (gc.freeze): a test process keeps torch, transformers, WordNet, models and
    results alive from cell to cell, and without this each later automatic collection walks them all again. Frozen objects
    are only left out of later collections (and the collections IPython's atexit runs once a shell): nothing else changes."""
    gc.collect(); gc.freeze()

def test_in_process(paths: list[str], flags: str) -> int:
    "`run_notebooks`' child: nbdev's `test_nb` on each notebook, in this process, with nbdev_test's flags and folders (`collect_and_freeze` after each cell); one line each."
    from execnb.shell import CaptureShell
    from nbdev.config import get_config
    from nbdev.test import test_nb
    run_all = CaptureShell.run_all
    CaptureShell.run_all = lambda self, nb, **kw: run_all(self, nb, **{**kw, "postproc": collect_and_freeze})  # test_nb passes none
    config = get_config()
    skip, failed = config.tst_flags.split(), 0
    os.chdir(config.nbs_path)
    for path in paths:
        ok, seconds = test_nb((root / path).absolute(), skip_flags=skip, force_flags=flags.split(), basepath=config.config_path)
        print(f"{'PASS' if ok else 'FAIL'} {path} ({seconds:.0f} s)", flush=True)
        failed += not ok
    return int(failed > 0)

def run_pytest(files: list[str], marks: list[str], nice: int = BACKGROUND_NICE) -> tuple[int, int, int, str]:
    "Run pytest on `files`; (passed, failed, skipped, report with its 10 slowest tests)."
    start = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        p = subprocess.run([sys.executable, "-m", "pytest", "-q", *files, "--durations=10", f"--junitxml={report}",
                            *(["-m", " and ".join(f"not {m}" for m in marks)] if marks else [])], cwd=root, capture_output=True, text=True, preexec_fn=niced(nice))
        if not report.exists(): return 0, 1, 0, f"FAIL pytest {' '.join(files)}: no report\n{(p.stdout + p.stderr)[-6000:]}"
        suite = ET.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    total, failed = int(suite.get("tests")), int(suite.get("failures")) + int(suite.get("errors"))
    skipped = int(suite.get("skipped"))
    out = p.stdout if failed else p.stdout[p.stdout.find("slowest 10 durations") - 30:] if "slowest 10" in p.stdout else p.stdout[-3000:]
    head = f"{'PASS' if not failed else 'FAIL'} pytest {' '.join(files)}: {total - failed - skipped} passed, {failed} failed, {skipped} skipped ({time.time() - start:.0f} s)"
    return total - failed - skipped, failed, skipped, head + "\n" + out.strip()

def skips_execution(nb: Path) -> bool:
    "A notebook whose front matter says skip_exec: nbdev_test executes nothing in it, so it must not count as a pass."
    import json
    cells = json.loads(nb.read_text())["cells"]
    return bool(cells) and cells[0]["cell_type"] == "raw" and "skip_exec: true" in "".join(cells[0]["source"])

def library_in_sync() -> tuple[bool, str]:
    "Whether vqa_robust/*.py is what the notebooks export (a hand edit of the library, or a stale export, fails)."
    lib = root / "vqa_robust"
    before = {p: p.read_bytes() for p in lib.glob("*.py")}
    p = subprocess.run([str(bin_dir / "nbdev_export")], cwd=root, capture_output=True, text=True)
    after = {q: q.read_bytes() for q in lib.glob("*.py")}
    changed = sorted(str(q.relative_to(root)) for q in set(before) | set(after) if before.get(q) != after.get(q))
    for q, text in before.items(): q.write_bytes(text)  # leave the tree as it was
    for q in set(after) - set(before): q.unlink()
    return (p.returncode == 0 and not changed), ("nbdev_export failed: " + p.stderr[-500:] if p.returncode else f"differs from the notebooks' export: {changed}")

def warm_numba_cache() -> None:
    "Compile every corruption's numba code once (cache=True writes it beside the module), so that tasks started together do not each compile it."
    code = "from vqa_robust.corruptions import CORRUPTIONS, warm_corruptions; warm_corruptions(CORRUPTIONS)"
    subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, env={**os.environ, "OMP_NUM_THREADS": "1"})

def chain(*steps):
    "Run steps one after the other; the sums of their counts, and their reports."
    results = [step() for step in steps]
    return tuple(sum(r[i] for r in results) for i in range(3)) + ("\n".join(r[3] for r in results),)

def tasks(notebooks: list[Path], flags: str, with_pytest: bool) -> dict:
    "Name -> a function running it, for every notebook and pytest group (the Ray pair chained)."
    marks = [m for m in ("gpu", "slow") if m not in flags.split()]  # pytest marks run only with their flag, as nbdev's
    seconds = lambda group: sum(NOTEBOOK_SECONDS.get(f"nbs/{nb.name}", 5) for nb in group)
    ray = [nb for nb in notebooks if f"nbs/{nb.name}" == RAY_CHAIN[0]]
    shared = [nb for nb in notebooks if f"nbs/{nb.name}" in SHARED]
    registering = [nb for nb in notebooks if f"nbs/{nb.name}" in REGISTERING]
    todo = {f"nbs/{nb.name}": (lambda nb=nb: run_notebook(nb, flags, nice=0)) for nb in ray}
    apart = [group for group in (shared, registering) if group]
    groups = apart + notebook_groups([nb for nb in notebooks if nb not in ray + shared + registering], NOTEBOOK_GROUPS)
    for k, group in enumerate(groups):
        todo[f"notebooks {k + 1}"] = lambda group=group: run_notebooks(group, flags)
        EXPECTED_SECONDS[f"notebooks {k + 1}"] = seconds(group)
    if not with_pytest: return todo
    grouped = {f for files in PYTEST_GROUPS.values() for f in files} | {RAY_CHAIN[1]}
    rest = sorted(str(p.relative_to(root)) for p in (root / "tests").glob("test_*.py") if str(p.relative_to(root)) not in grouped)
    for name, files in {**PYTEST_GROUPS, "other tests": rest}.items(): todo[name] = lambda files=files: run_pytest(files, marks)
    if RAY_CHAIN[0] in todo:
        notebook = todo.pop(RAY_CHAIN[0])
        todo[" + ".join(RAY_CHAIN)] = lambda: chain(notebook, lambda: run_pytest([RAY_CHAIN[1]], marks, nice=0))
    return todo

RAY_PROCESSES = ("raylet", "gcs_server", "ray::", "site-packages/ray/")  # a Ray cluster's head, workers, agents and services
LEFT_RUNNING = ("transformers serve", "vllm serve", "vllm.entrypoints", *RAY_PROCESSES)  # servers and clusters tests start
SUITE_MARK = "VQA_ROBUST_TEST_SUITE"  # set to one suite's id in the environment that its every test process inherits

def started_by(pid: int, mark: str) -> bool:
    "Whether process `pid` carries the suite's `mark` in its environment: the suite, or a process it started, started it."
    try: environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError: return False  # gone, or another user's: not this suite's
    return f"{SUITE_MARK}={mark}".encode() in environ

def holds_files_under(pid: int, folder) -> bool:
    "Whether process `pid` has a file open under `folder`: Ray starts its agents with an environment of their own, but they write their session's logs."
    try: fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError: return False
    def target(fd):
        try: return os.readlink(fd)
        except OSError: return ""
    return any(target(fd).startswith(f"{folder}/") for fd in fds)

def servers_running(mark: str, ray_root=None) -> dict:
    "pid -> command line of the processes that look like a server or a Ray cluster and that this suite started: they carry its `mark`, or hold files under its Ray folder `ray_root`."
    listing = subprocess.run(["ps", "-ww", "-eo", "pid=,args="], capture_output=True, text=True).stdout.splitlines()
    rows = (line.strip().split(None, 1) for line in listing if line.strip())
    looks = {int(pid): args for pid, args in (r for r in rows if len(r) == 2) if any(p in args for p in LEFT_RUNNING)}
    ours = lambda pid: started_by(pid, mark) or (ray_root is not None and holds_files_under(pid, ray_root))
    return {pid: args for pid, args in looks.items() if pid != os.getpid() and ours(pid)}

def left_running(mark: str, ray_root=None, grace: float = 10.0) -> dict:
    "The servers this suite started that are still running after `grace` seconds (a Ray cluster takes a moment to stop)."
    deadline = time.time() + grace
    while (left := servers_running(mark, ray_root)) and time.time() < deadline: time.sleep(0.5)
    return left

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flags", default="", help="space-separated nbdev test flags to run (slow, gpu)")
    ap.add_argument("--workers", type=int, default=3, help="tasks (notebooks, pytest groups) run at once (3 on 2 cores: tasks that wait on a server, a browser or a cluster leave a core free)")
    ap.add_argument("--notebooks-only", action="store_true")
    ap.add_argument("--in-process", nargs="+", metavar="NOTEBOOK", help=argparse.SUPPRESS)  # run_notebooks' child
    args = ap.parse_args()
    if args.in_process: sys.exit(test_in_process(args.in_process, args.flags))
    began = time.time()
    mark = os.environ[SUITE_MARK] = f"{os.getpid()}-{time.time_ns()}"  # this suite's id: every process it starts inherits it
    ray_root = os.environ["RAY_TMPDIR"] = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # its Ray clusters' sessions, apart from any other's
    notebooks = sorted(p for p in (root / "nbs").glob("*.ipynb") if not p.name.startswith(("_", ".")))  # as nbdev_test
    passed = failed = skipped = 0
    in_sync, why = library_in_sync()
    print(f"{'PASS' if in_sync else 'FAIL'} library in sync with the notebooks" + ("" if in_sync else f": {why}"), flush=True)
    passed, failed = passed + in_sync, failed + (not in_sync)
    for nb in [nb for nb in notebooks if skips_execution(nb)]:
        print(f"SKIP nbs/{nb.name} (skip_exec: tested by pytest through papermill)", flush=True); skipped += 1
    warm_numba_cache()
    todo = tasks([nb for nb in notebooks if not skips_execution(nb)], args.flags, not args.notebooks_only)
    order = sorted(todo, key=lambda name: (name not in WAITING, -EXPECTED_SECONDS.get(name, 10)))  # the waiting tasks, then the longest first
    timeline = {}  # task -> (start, end) in seconds since the suite began: where the cores sat idle
    def timed(name):
        start = time.time() - began
        result = todo[name]()
        timeline[name] = (start, time.time() - began)
        return result
    with ThreadPoolExecutor(args.workers) as pool:
        for p, f, s, report in pool.map(timed, order):
            print(report, flush=True)
            passed, failed, skipped = passed + p, failed + f, skipped + s
    for name, (start, end) in sorted(timeline.items(), key=lambda kv: kv[1]): print(f"  {start:5.0f}-{end:4.0f} s  {name}")
    left = left_running(mark, ray_root)  # every process a test started must be stopped by that test; another suite's are its own
    print(f"{'FAIL' if left else 'PASS'} no server or cluster left running by the tests" + "".join(f"\n  pid {pid}: {cmd[:140]}" for pid, cmd in left.items()), flush=True)
    for pid in left:
        try: os.kill(pid, signal.SIGTERM)
        except ProcessLookupError: pass
    shutil.rmtree(ray_root, ignore_errors=True)
    passed, failed = passed + (not left), failed + bool(left)
    print(f"test suite: {time.time() - began:.0f} s with {args.workers} workers")
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    sys.exit(1 if failed else 0)

if __name__ == "__main__":
    main()
