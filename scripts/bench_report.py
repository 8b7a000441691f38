"""What a report costs: time to build it (each section apart), its size (the runtime, the charts, the gallery), memory.

    python scripts/bench_report.py RUN [RUN ...] [--out report.html]

RUN: the folders `vqa-robust report` takes (the default run: runs/default, made by `bash scripts/run.sh`). Prints one
line per part, then the file's size split into Vega's inlined runtime, the charts' specifications and the rest (the
gallery's images, tables, style), and the peak memory of this process.
"""

from __future__ import annotations
import argparse, resource, sys, time
from pathlib import Path


def timed(what: str, work):
    "Run `work()`, print how long it took, and return its result."
    start = time.perf_counter()
    result = work()
    print(f"{what:28s} {time.perf_counter() - start:7.2f} s", flush=True)
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--out", default="report.html")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    report = timed("import vqa_robust.report", lambda: __import__("vqa_robust.report", fromlist=["report"]))
    results = timed("read_results", lambda: report.read_results(args.folders))
    files = dict(data_dir="", questions_file="", annotations_file="", image_dir="")
    dataset, why = timed("run_images (open the data)", lambda: report.run_images(results, files))
    given = report.ReportInput(results, dataset, why)
    built = {
        name: timed(f"section {name}", lambda build=build: build(given))
        for name, build in report.REPORT_SECTIONS.items()
    }
    runtime = timed("chart_runtime (vl-convert)", report.chart_runtime)
    page = timed("report_page", lambda: report.report_page("bench", built, runtime))
    Path(args.out).write_text(page, encoding="utf-8")
    whole = timed("report() end to end", lambda: report.report(args.folders, args.out))
    size = whole.stat().st_size
    charts = sum(len(str(spec)) for s in built.values() if isinstance(s, report.Section) for spec in s.charts.values())
    print(f"total (this script)          {time.perf_counter() - start:7.2f} s")
    print(
        f"file {size / 2**20:.2f} MB: runtime {len(runtime) / 2**20:.2f} MB ({len(runtime) / size:.0%}), "
        f"charts ~{charts / 2**20:.2f} MB, the rest (gallery images, tables, style) "
        f"{(size - len(runtime) - charts) / 2**20:.2f} MB"
    )
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
