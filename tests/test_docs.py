"""The documentation site builds offline (scripts/docs.py: nbdev's processing, then static HTML), with its figures."""
import re, subprocess, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent

def test_offline_docs_build():
    p = subprocess.run([sys.executable, "scripts/docs.py"], cwd=root, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    pages = re.findall(r"-\s+(\S+)\.ipynb", (root / "nbs" / "sidebar.yml").read_text())
    for page in pages:
        html = root / "_docs" / ("index.html" if page == "index" else f"{page}.html")
        assert html.is_file() and html.stat().st_size > 2000, html
    assert "data:image/png" in (root / "_docs" / "01_corruptions.html").read_text()  # the gallery renders
    assert (root / "_docs" / "05a_vrb_paper.html").read_text().count("data:image/png") >= 5  # the paper's figures 3, 4, 5, 7, 8
