"""Cross-check fixture for PNP-VQA: build the side environment `.side/lavis` (torch 2.13.0, transformers 4.26.1,
salesforce-lavis 1.0.2) if it is missing, then run `pnp_driver.py` in it, which builds tiny seeded versions of LAVIS's
three PNP-VQA parts, runs LAVIS's own stages and writes `tests/fixtures/crosscheck/pnp/`.

Usage: python scripts/crosscheck/pnp.py [OUT]   (OUT: another folder for the fixture; LAVIS_VENV: another side environment)
"""
import os, sys
from pathlib import Path
from sideenv import LAVIS_PACKAGES, ROOT, run_driver, side_python

VENV = Path(os.environ.get("LAVIS_VENV", ROOT / ".side" / "lavis"))
OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "fixtures" / "crosscheck" / "pnp"

if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    run_driver(side_python(VENV, LAVIS_PACKAGES), "pnp_driver.py", str(OUT))
