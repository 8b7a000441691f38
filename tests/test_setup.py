"""What the setup installs, checked where it matters: JupyterLab opens the notebooks with the package importable, and
no process that imports Ray compiles jsonschema's IRI grammar (scripts/setup.sh removes rfc3987-syntax, README)."""

import json, os, socket, subprocess, sys, time, urllib.request
from pathlib import Path
import pytest

root = Path(__file__).resolve().parent.parent
bin_dir = Path(sys.executable).parent


def test_importing_ray_compiles_no_iri_grammar():
    "jsonschema, imported by Ray, finds no rfc3987-syntax: its Lark grammar is built in no Ray process."
    code = "import ray, jsonschema, sys; print(json.dumps(['rfc3987_syntax' in sys.modules, 'lark' in sys.modules]))"
    p = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == [False, False]


def test_jupyterlab_is_installed_with_the_setup():
    p = subprocess.run([str(bin_dir / "jupyter"), "lab", "--version"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert int(p.stdout.strip().split(".")[0]) >= 4


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_jupyterlab_serves_the_notebooks_with_the_package(tmp_path):
    "`jupyter lab nbs` from .venv: the server lists the notebooks and its python3 kernel is this environment's."
    port, token = free_port(), "vqa-robust-test"
    server = subprocess.Popen(
        [
            str(bin_dir / "jupyter"),
            "lab",
            "--no-browser",
            f"--port={port}",
            "--ip=127.0.0.1",
            "--allow-root",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root / 'nbs'}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path)},
    )
    get = lambda path: json.loads(
        urllib.request.urlopen(f"http://127.0.0.1:{port}{path}?token={token}", timeout=5).read()
    )
    try:
        listing = None
        for _ in range(120):
            try:
                listing = get("/api/contents/")
                break
            except OSError:
                time.sleep(0.5)
        assert listing is not None, "the server did not answer within a minute"
        names = {item["name"] for item in listing["content"]}
        assert {"run.ipynb", "05d_report.ipynb"} <= names
        assert get("/api/kernelspecs")["default"] == "python3"
        launch = (
            "from jupyter_client.manager import KernelManager; "
            "print(KernelManager(kernel_name='python3').format_kernel_cmd()[0])"
        )
        kernel = subprocess.run(
            [sys.executable, "-c", launch], capture_output=True, text=True
        ).stdout.strip()  # as the server starts it
        p = subprocess.run(
            [kernel, "-c", "import vqa_robust, vqa_robust.report; print(vqa_robust.__file__)"],
            capture_output=True,
            text=True,
        )
        assert p.stdout.strip() == str(root / "vqa_robust" / "__init__.py"), p.stderr
    finally:
        server.terminate()
        server.wait(timeout=30)
