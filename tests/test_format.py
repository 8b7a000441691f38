"The notebooks are formatted by ruff's formatter at 120 characters a line (pyproject.toml's [tool.ruff]): `ruff format nbs`."
import shutil, subprocess, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent

def ruff() -> str:
    "The ruff beside this interpreter (the dev environment installs it), else one on PATH."
    beside = Path(sys.executable).parent / "ruff"
    return str(beside) if beside.exists() else shutil.which("ruff") or "ruff"

def test_notebooks_are_formatted():
    p = subprocess.run([ruff(), "format", "--check", "nbs"], cwd=root, capture_output=True, text=True)
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:] + "\nrun: ruff format nbs && nbdev_export"

def test_the_check_fails_on_an_unformatted_notebook(tmp_path):
    "A cell with two statements on one line and a 130-character line is found."
    import json
    cell = {"cell_type": "code", "id": "c0", "metadata": {}, "outputs": [], "execution_count": None,
            "source": ["x = 1; y = 2\n", "z = [" + ", ".join(["1234567"] * 14) + "]\n"]}
    (tmp_path / "99_probe.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    p = subprocess.run([ruff(), "format", "--check", "--config", str(root / "pyproject.toml"), str(tmp_path)],
                       capture_output=True, text=True)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "99_probe.ipynb" in p.stdout
