"""Side environments for the cross-checks: a virtual environment per original code base, pinned to the versions that code ran on."""
import os, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OFFLINE = {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONHASHSEED": "0"}
LAVIS_PACKAGES = [  # one pip call per group
    ["torch==2.13.0", "transformers==4.26.1", "tokenizers==0.13.3"],  # the versions LAVIS 1.0.2 runs on (transformers <4.27)
    ["--no-deps", "salesforce-lavis==1.0.2", "timm==0.4.12", "fairscale==0.4.4", "torchvision==0.28.0"],  # LAVIS's pins; no extras
    ["omegaconf", "iopath", "pandas", "pillow", "opencv-python-headless", "sentencepiece"],  # the rest of blip_vqa's and pnp_vqa's import chains
]


def side_python(env: Path, groups: list[list[str]]) -> Path:
    "The side environment's python, creating the environment and installing `groups` (one pip call each) unless it already has them."
    python, marker = env / "bin" / "python", env / ".crosscheck_packages"
    wanted = "\n".join(" ".join(g) for g in groups)
    if marker.exists() and marker.read_text() == wanted: return python
    if not python.exists(): subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    for group in groups: subprocess.run([str(python), "-m", "pip", "install", "-q", *group], check=True)
    marker.write_text(wanted)
    return python


def run_driver(python: Path, driver: str, *args: str):
    "Run a driver script beside this file in the side environment, offline and on one thread."
    subprocess.run([str(python), str(Path(__file__).with_name(driver)), *args], check=True, env={**os.environ, **OFFLINE})
