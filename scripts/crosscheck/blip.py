"""Cross-check fixture for BLIP VQA: build the side environment `.side/lavis` (transformers 4.26.1, salesforce-lavis 1.0.2)
if it is missing, then run `blip_driver.py` in it, which writes `tests/fixtures/crosscheck/blip/`.

Usage: python scripts/crosscheck/blip.py
"""
import os, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV, OUT = ROOT / ".side" / "lavis", ROOT / "tests" / "fixtures" / "crosscheck" / "blip"
PIP = [["torch==2.13.0", "transformers==4.26.1", "tokenizers==0.13.3"],  # the versions LAVIS 1.0.2 runs on (transformers <4.27)
       ["--no-deps", "salesforce-lavis==1.0.2", "timm==0.4.12", "fairscale==0.4.4", "torchvision==0.28.0"],  # LAVIS's pins; no extras
       ["omegaconf", "iopath", "pandas", "pillow"]]  # the rest of blip_vqa's import chain

def main():
    python = VENV / "bin" / "python"
    if not (VENV / ".blip_ready").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        for args in PIP: subprocess.run([str(python), "-m", "pip", "install", "-q", *args], check=True)
        (VENV / ".blip_ready").write_text("ok\n")
    OUT.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(python), str(Path(__file__).with_name("blip_driver.py")), str(OUT)], check=True,
                   env={**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})

if __name__ == "__main__": main()
