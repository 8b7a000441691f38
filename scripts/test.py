"""Run the whole test suite: every notebook through `nbdev_test`, then `pytest tests/` (printing its 10 slowest tests); end with 'N passed, N failed'.

    python scripts/test.py                 # default flags (notest, slow and gpu cells skipped)
    python scripts/test.py --flags slow    # also run cells flagged #| slow (and --flags gpu on a GPU machine)
"""
import argparse, os, subprocess, sys, time, xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

root = Path(__file__).resolve().parent.parent
bin_dir = Path(sys.executable).parent

def run_notebook(nb: Path, flags: str) -> tuple[str, bool, float, str]:
    "Test one notebook with nbdev_test; (name, passed, seconds, output)."
    start = time.time()
    cmd = [str(bin_dir / "nbdev_test"), "--path", str(nb.relative_to(root))] + (["--flags", flags] if flags else [])
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    p = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
    return nb.name, p.returncode == 0, time.time() - start, p.stdout + p.stderr

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

def run_pytest(extra: list[str]) -> tuple[int, int, int]:
    "Run pytest on tests/; (passed, failed, skipped)."
    report = root / ".pytest_report.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "tests", "--durations=10", f"--junitxml={report}", *extra], cwd=root)
    if not report.exists(): return 0, 1, 0
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    total, failed = int(suite.get("tests")), int(suite.get("failures")) + int(suite.get("errors"))
    skipped = int(suite.get("skipped")); report.unlink()
    return total - failed - skipped, failed, skipped

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flags", default="", help="space-separated nbdev test flags to run (slow, gpu)")
    ap.add_argument("--workers", type=int, default=2, help="notebooks tested at once")
    ap.add_argument("--notebooks-only", action="store_true")
    args = ap.parse_args()
    notebooks = sorted(p for p in (root / "nbs").glob("*.ipynb") if not p.name.startswith(("_", ".")))  # as nbdev_test
    passed = failed = skipped = 0
    in_sync, why = library_in_sync()
    print(f"{'PASS' if in_sync else 'FAIL'} library in sync with the notebooks" + ("" if in_sync else f": {why}"), flush=True)
    passed, failed = passed + in_sync, failed + (not in_sync)
    for nb in [nb for nb in notebooks if skips_execution(nb)]:
        print(f"SKIP nbs/{nb.name} (skip_exec: tested by pytest through papermill)", flush=True); skipped += 1
    notebooks = [nb for nb in notebooks if not skips_execution(nb)]
    with ThreadPoolExecutor(args.workers) as pool:
        for name, ok, seconds, output in pool.map(lambda nb: run_notebook(nb, args.flags), notebooks):
            print(f"{'PASS' if ok else 'FAIL'} nbs/{name} ({seconds:.0f} s)", flush=True)
            if not ok: print(output[-6000:], flush=True)
            passed, failed = passed + ok, failed + (not ok)
    if not args.notebooks_only:
        skipped_marks = [m for m in ("gpu", "slow") if m not in args.flags.split()]  # pytest marks run only with their flag, as nbdev's
        p, f, s = run_pytest(["-m", " and ".join(f"not {m}" for m in skipped_marks)] if skipped_marks else [])
        passed, failed, skipped = passed + p, failed + f, skipped + s
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    sys.exit(1 if failed else 0)

if __name__ == "__main__":
    main()
