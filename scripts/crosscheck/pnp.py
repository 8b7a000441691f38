"""Cross-check fixture for PNP-VQA: build the side environment `.side/lavis-pnp` (torch 2.13.0, transformers 4.26.1,
salesforce-lavis 1.0.2) if it is missing, then run `pnp_driver.py` in it, which builds tiny seeded versions of LAVIS's
three PNP-VQA parts, runs LAVIS's own stages and writes `tests/fixtures/crosscheck/pnp/`.

Usage: python scripts/crosscheck/pnp.py [OUT]   (OUT: another folder for the fixture; LAVIS_PNP_VENV: another side environment)
"""
import os, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("LAVIS_PNP_VENV", ROOT / ".side" / "lavis-pnp"))
OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "fixtures" / "crosscheck" / "pnp"
PIP = [["torch==2.13.0", "transformers==4.26.1", "tokenizers==0.13.3"],  # the versions LAVIS 1.0.2 runs on (transformers <4.27)
       ["--no-deps", "salesforce-lavis==1.0.2", "timm==0.4.12", "fairscale==0.4.4", "torchvision==0.28.0"],  # LAVIS's pins; no extras
       ["omegaconf", "iopath", "pandas", "pillow", "opencv-python-headless", "sentencepiece"]]  # the rest of the import chain; T5's spiece.model

def main():
    python = VENV / "bin" / "python"
    if not (VENV / ".pnp_ready").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        for args in PIP: subprocess.run([str(python), "-m", "pip", "install", "-q", *args], check=True)
        (VENV / ".pnp_ready").write_text("ok\n")
    OUT.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(python), str(Path(__file__).with_name("pnp_driver.py")), str(OUT)], check=True,
                   env={**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})

if __name__ == "__main__": main()
