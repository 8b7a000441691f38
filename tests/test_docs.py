"""The documentation site: scripts/docs.py turns nbdev's processed notebooks into MkDocs pages (unit tests on hand-written
cells), builds the site offline, and scripts/check_site.py opens every page in headless Chromium."""
import importlib.util, json, os, re, shutil, subprocess, sys
from pathlib import Path

import pytest

root = Path(__file__).resolve().parent.parent

def load_script(name):
    spec = importlib.util.spec_from_file_location(name, root / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
    return module

docs = load_script("docs")
CFG = {"doc_host": "https://vqa-robust.github.io", "doc_baseurl": "/vqa_robust", "git_url": "https://github.com/vqa-robust/vqa_robust",
       "branch": "main", "lib_path": "vqa_robust"}
PAGES = {"04_metrics.ipynb": "metrics", "03_inference.ipynb": "inference", "index.ipynb": "index"}

def test_cell_options():
    assert docs.cell_options("#| echo: false\n#| output: asis\nshow_doc(f)") == ({"echo": "false", "output": "asis"}, "show_doc(f)")
    assert docs.cell_options("#| hide\nx = 1") == ({"hide": True}, "x = 1")
    assert docs.cell_options("x = 1  #| not an option") == ({}, "x = 1  #| not an option")

def test_links_stay_on_the_site():
    md = ("See [`vre`](https://vqa-robust.github.io/vqa_robust/metrics.html#vre), [Inference](03_inference.ipynb), "
          "[run](../scripts/run.sh), [src](https://github.com/x/y.py#L3){target=\"_blank\" style=\"float:right\"} and [nb](nbs/run.ipynb).")
    out = docs.rewrite_links(md, PAGES, CFG)
    assert "[`vre`](metrics.md#vre)" in out
    assert "[Inference](inference.md)" in out
    assert "[run](https://github.com/vqa-robust/vqa_robust/blob/main/scripts/run.sh)" in out
    assert "[src](https://github.com/x/y.py#L3) and" in out  # Quarto's attributes dropped
    assert "[nb](https://github.com/vqa-robust/vqa_robust/blob/main/nbs/run.ipynb)" in out  # not a page of this site

def test_maths_to_mathml_outside_code():
    out = docs.markdown_cell("Error $E = 1 - A$ and `$HOME` and $$\\frac{a}{b}$$ cost $5 and $6.", PAGES, CFG)
    assert out.count("<math") == 2
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in out
    assert "<mi>E</mi>" in out
    assert "<mfrac>" in out
    assert "`$HOME`" in out
    assert "cost $5 and $6." in out  # code and prices are not maths

def documented(a: int = 1,  # the first number
               b=None,      # anything
               ) -> str:    # a sentence
    "A function documented as nbdev documents."
    return ""

def undocumented(a: int, b: str = "x"): return a

def test_parameter_table():
    table = docs.parameter_table(documented)
    assert "<th>Type</th><th>Default</th><th>Details</th>" in table
    assert "<tr><td><strong>a</strong></td><td><code>int</code></td><td><code>1</code></td><td>the first number</td></tr>" in table
    assert "<tr><td><strong>b</strong></td><td></td><td><code>None</code></td><td>anything</td></tr>" in table
    assert "<tr><td><strong>Returns</strong></td><td><code>str</code></td><td></td><td>a sentence</td></tr>" in table
    table = docs.parameter_table(undocumented)  # no comments: no empty Details column, as nbdev
    assert "<th>Type</th><th>Default</th></tr>" in table
    assert "Details" not in table
    assert docs.signature_block(undocumented, "undocumented") == "def undocumented(a: int, b: str = 'x')"

def test_show_doc_entry():
    nbdev_md = ('---\n\n[source](https://github.com/vqa-robust/vqa_robust/blob/main/vqa_robust/metrics.py#L122){target="_blank" '
                'style="float:right; font-size:smaller"}\n\n### vqa_accuracy\n\n```python\n\ndef vqa_accuracy(\n    prediction:str\n)->float:\n\n\n```\n\n'
                '*VQA accuracy of one prediction.*')
    out = docs.show_doc_entry(nbdev_md, "metrics", {("metrics", "vqa_accuracy"): "vqa_robust.metrics.vqa_accuracy"}, PAGES, CFG)
    assert "### vqa_accuracy { #vqa_accuracy .doc-heading }" in out
    assert '<a class="doc-source" href="https://github.com/vqa-robust/vqa_robust/blob/main/vqa_robust/metrics.py#L122">source</a>' in out
    assert "*VQA accuracy of one prediction.*" in out
    assert "{target=" not in out
    assert "---" not in out
    assert "<td>the model&#x27;s answer</td>" in out  # the parameter comment written in nbs/04_metrics.ipynb

def test_code_cells_honour_directives(tmp_path):
    import nbformat
    cell = lambda src, outputs=(): nbformat.v4.new_code_cell(src, outputs=list(outputs))
    out = nbformat.v4.new_output("stream", name="stdout", text="42\n")
    render = lambda c: docs.code_cell(c, "metrics", tmp_path, [0], {}, PAGES, CFG)
    assert render(cell("#| hide\nx = 1", [out])) == ""
    assert render(cell("#| include: false\nx = 1", [out])) == ""
    echo_false = render(cell("#| echo: false\nprint(42)", [out]))
    assert "print(42)" not in echo_false
    assert "```text\n42\n```" in echo_false
    plain = render(cell("print(42)", [out]))
    assert plain.startswith("```python\nprint(42)\n```")
    assert "42" in plain.split("```python")[1].split("```", 2)[2]

def test_anchors_to_undocumented_methods(tmp_path):
    (tmp_path / "models.md").write_text("### VQAAdapter { #vqaadapter .doc-heading }\n")
    (tmp_path / "inference.md").write_text("[a](models.md#vqaadapter.encoder) [b](models.md#nothing) [c](models.md#vqaadapter)")
    assert docs.fix_anchors(tmp_path) == 2
    assert (tmp_path / "inference.md").read_text() == "[a](models.md#vqaadapter) [b](models.md) [c](models.md#vqaadapter)"

def chromium():
    return os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")

def test_site_builds_offline_and_reads_in_chromium():
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    p = subprocess.run([sys.executable, "scripts/docs.py"], cwd=root, capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    pages = re.findall(r"-\s+(\S+)\.ipynb", (root / "nbs" / "sidebar.yml").read_text())
    built = sorted(f.name for f in (root / "_docs").glob("*.html") if f.name != "404.html")
    assert len(built) == len(pages), built
    if not chromium():
        if os.environ.get("CI"): pytest.fail("CI: no Chromium for the browser check (scripts/setup.sh installs Debian's chromium as root)")
        pytest.skip("no Chromium installed (apt-get install chromium)")
    p = subprocess.run([sys.executable, "scripts/check_site.py"], cwd=root, capture_output=True, text=True)
    print(p.stdout[-3000:])
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    report = json.loads((root / "_site_check" / "report.json").read_text())
    assert report["pages"] == len(pages)
    assert report["failures"] == []
    assert report["console_errors"] == 0
    assert report["search_results"] > 0
    assert report["images"] >= 10
    assert report["anchors"] > 100
    assert report["pages_detail"]["metrics.html"]["title"].startswith("Metrics")
    assert all((root / s).is_file() and (root / s).stat().st_size > 10_000 for s in report["screenshots"])

def test_browser_check_fails_on_a_broken_page(tmp_path):
    "The check itself: a copy of the site with one damaged page must fail, naming each fault."
    if not (root / "_docs" / "metrics.html").is_file(): pytest.skip("run after the site is built")
    if not chromium(): pytest.skip("no Chromium installed")
    site = tmp_path / "site"; shutil.copytree(root / "_docs", site)
    page = site / "metrics.html"
    html = page.read_text()
    html = re.sub(r"<title>.*?</title>", "<title></title>", html, flags=re.S)
    html = html.replace("</article>", '<p>#| echo: false</p><img src="assets/missing.png" alt="x">'
                        '<a href="models.html#no-such-anchor">x</a><a href="nowhere.html">y</a>'
                        '<script>console.error("boom")</script><div style="width:3000px">wide</div></article>', 1)
    page.write_text(html)
    p = subprocess.run([sys.executable, "scripts/check_site.py", "--site", str(site), "--out", str(tmp_path / "out"), "--pages", "models.html", "metrics.html", "index.html"],
                       cwd=root, capture_output=True, text=True)  # one tab, in this order: the damaged page between two sound ones
    assert p.returncode == 1
    fails = [l for l in p.stdout.splitlines() if l.startswith("FAIL metrics.html")]
    for fault in ("no page title", "shows a cell directive", "image does not load: assets/missing.png",
                  "broken link models.html#no-such-anchor: models.html has no anchor #no-such-anchor",
                  "broken link nowhere.html: no such file nowhere.html", "console error: boom", "scrolls sideways by"):
        assert any(fault in f for f in fails), (fault, fails)
    assert any(f.endswith("px at 1280 px") for f in fails), fails  # checked wide, though the tab was left at 390 px by the page before
    assert not any(l.startswith("FAIL") and not l.startswith("FAIL metrics.html") and "placeholder" not in l and "weighs" not in l
                   for l in p.stdout.splitlines()), p.stdout  # models.html and index.html, undamaged, pass: nothing of metrics.html counted against the next
    assert "check_site: 3 pages" in p.stdout, p.stdout  # only the pages asked for

def test_every_notebook_has_a_page():
    "A notebook left out of sidebar.yml would be left out of the site (scripts/docs.py builds the pages sidebar.yml lists)."
    listed = set(re.findall(r"-\s+(\S+\.ipynb)", (root / "nbs" / "sidebar.yml").read_text()))
    assert listed == {p.name for p in (root / "nbs").glob("*.ipynb")}, sorted(listed ^ {p.name for p in (root / "nbs").glob("*.ipynb")})
