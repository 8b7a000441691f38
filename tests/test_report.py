"""The report as a reader gets it: `vqa-robust report` on a run and on two runs ranked together, opened from disk in
headless Chromium by scripts/check_report.py (no console error, no request, every chart drawn, the gallery filtered);
and the check itself shown to fail on a page that fetches something or logs an error."""

import json, os, re, shutil, subprocess, sys
from pathlib import Path
import pandas as pd
import pytest

root = Path(__file__).resolve().parent.parent
chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(chromium is None, reason="no Chromium (scripts/setup.sh installs it as root)")
GRID = dict(
    n_images=8, corruptions="gaussian_noise,defocus_blur", severities="1,2,3,4,5", seed=4, progress=False, figures=False
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    "A run of both shipped models, and each model's run alone (the two to rank together)."
    from vqa_robust.run import run

    out = tmp_path_factory.mktemp("report")
    run(out_dir=str(out / "both"), **GRID)
    for model in ("easy-vqa-vilt", "easy-vqa-blip"):
        run(model=model, out_dir=str(out / model), **GRID)
    return out


def command(*args: str) -> subprocess.CompletedProcess:
    "`vqa-robust ARGS` (the console script, or its function where the package was installed before it existed)."
    script = Path(sys.executable).parent / "vqa-robust"
    first = (
        [str(script)]
        if script.exists()
        else [sys.executable, "-c", "import sys; from vqa_robust.cli import main; sys.exit(main())"]
    )
    return subprocess.run(first + list(args), capture_output=True, text=True, cwd=root)


def check_report(path: Path, *more: str) -> tuple[int, dict]:
    "scripts/check_report.py on `path`: its exit status and what it counted."
    p = subprocess.run(
        [sys.executable, "scripts/check_report.py", str(path), "--chromium", chromium, *more],
        capture_output=True,
        text=True,
        cwd=root,
    )
    return p.returncode, json.loads(p.stdout.splitlines()[0])


def page_charts(path: Path) -> dict:
    "The Vega-Lite specifications the page embeds, by placeholder id."
    return json.loads(re.search(r"const charts = (\{.*?\});\n", path.read_text()).group(1))


def chart_rows(spec: dict) -> pd.DataFrame:
    return pd.concat([pd.DataFrame(rows) for rows in spec["datasets"].values()], ignore_index=True)


@needs_chromium
def test_report_of_a_run_opens_offline_in_chromium(runs, tmp_path):
    p = command("report", str(runs / "both"), "--out", str(tmp_path / "report.html"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"report in {tmp_path / 'report.html'}")
    status, seen = check_report(tmp_path / "report.html", "--screenshot", str(tmp_path / "shot.png"))
    assert status == 0, seen["failures"]
    assert seen["console_errors"] == []
    assert seen["requests"] == []
    assert {"chart-heatmap", "chart-curves", "chart-ranking", "chart-reliability"} <= {
        name for name, _ in seen["charts"]
    }
    assert all(drawn for _, drawn in seen["charts"])
    assert seen["cards"] > 0
    assert seen["filtered"]["others_shown"] == 0
    assert seen["bytes"] < 5 * 2**20
    assert (tmp_path / "shot.png").stat().st_size > 10_000


def test_report_shows_the_runs_numbers(runs, tmp_path):
    "The heatmap's rows are accuracy_ci.csv's corrupted rows, the ranking's vre_model_ci.csv's, read independently."
    from vqa_robust.report import report

    charts = page_charts(report([runs / "both"], tmp_path / "r.html"))
    written = pd.read_csv(runs / "both" / "accuracy_ci.csv").query("corruption != 'clean'")
    heat = chart_rows(charts["chart-heatmap"]).sort_values(["model", "corruption", "severity"])
    assert heat.estimate.tolist() == written.sort_values(["model", "corruption", "severity"]).estimate.tolist()
    vre = pd.read_csv(runs / "both" / "vre_model_ci.csv").set_index("model")
    shown = chart_rows(charts["chart-ranking"]).drop_duplicates("model").set_index("model")
    assert shown.loc[vre.index, "low"].tolist() == vre["low"].tolist()


@needs_chromium
def test_two_runs_become_one_report(runs, tmp_path):
    "Two one-model runs ranked together: both models on one page, with the joint run's VRE; it opens cleanly."
    p = command("report", str(runs / "easy-vqa-vilt"), str(runs / "easy-vqa-blip"), "--out", str(tmp_path / "two.html"))
    assert p.returncode == 0, p.stderr
    shown = chart_rows(page_charts(tmp_path / "two.html")["chart-ranking"]).drop_duplicates("model").set_index("model")
    joint = pd.read_csv(runs / "both" / "vre_model_ci.csv").set_index("model")
    assert shown.loc[joint.index, "estimate"].tolist() == joint.estimate.tolist()
    assert shown.loc[joint.index, "rank"].tolist() == joint["rank"].tolist()
    status, seen = check_report(tmp_path / "two.html")
    assert status == 0, seen["failures"]


def test_report_refuses_runs_that_cannot_be_ranked_together(runs, tmp_path):
    p = command("report", str(runs / "both"), str(runs / "easy-vqa-vilt"), "--out", str(tmp_path / "no.html"))
    assert p.returncode == 2
    assert "model easy-vqa-vilt is in two runs" in p.stderr
    assert not (tmp_path / "no.html").exists()


@needs_chromium
def test_the_check_fails_on_a_page_that_fetches_or_errs(runs, tmp_path):
    "A report with an outside image, or with a script error, fails the browser check: the check can fail."
    from vqa_robust.report import report

    page = report([runs / "both"], tmp_path / "good.html").read_text()
    end = page.rindex("</body>")  # the page's own end (a script of the runtime may hold the text too)
    fetching = page[:end] + '<img src="http://127.0.0.1:9/x.png">' + page[end:]
    (tmp_path / "fetching.html").write_text(fetching)
    status, seen = check_report(tmp_path / "fetching.html")
    assert status == 1
    assert seen["requests"] == ["http://127.0.0.1:9/x.png"]
    (tmp_path / "erring.html").write_text(page[:end] + "<script>undefinedFunction()</script>" + page[end:])
    status, seen = check_report(tmp_path / "erring.html")
    assert status == 1
    assert any("undefinedFunction" in e for e in seen["console_errors"])
    status, seen = check_report(tmp_path / "good.html", "--max-mb", "0.1")
    assert status == 1
    assert any(f.startswith("weighs") for f in seen["failures"])
