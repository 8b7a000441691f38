"""Cross-check fixtures for the VLE reimplementation (nbs/02b_vle.ipynb) from iflytek/VLE's own code.

Builds a side environment with the versions VLE's README names (transformers 4.26.1, tokenizers 0.13.3; torch 2.13.0 CPU),
then runs `vle_driver.py` in it: the original `VLEForVQA`, imported unmodified from a checkout of iflytek/VLE, at tiny
seeded configurations. It writes, per configuration, a checkpoint folder in the published layout (original key names)
with the fixed inputs and the original's logits, and a provenance.json; tests/test_crosscheck_vle.py loads them through
the package's checkpoint loader and compares.

    python scripts/crosscheck/vle.py --vle-src .side/vle-src [--env .side/vle] [--out tests/fixtures/crosscheck/vle]

Get the checkout with `git clone https://github.com/iflytek/VLE .side/vle-src` (any copy of the repository will do).
"""
import argparse, json, subprocess, sys
from pathlib import Path
from sideenv import ROOT, run_driver, side_python

PACKAGES = ["torch==2.13.0", "transformers==4.26.1", "tokenizers==0.13.3", "sentencepiece", "numpy", "safetensors",
            "pillow", "matplotlib"]  # pillow, matplotlib: imported by models/VLE/__init__ (pipeline_vle.py)


def shown(path) -> str:
    "A path as given on the command line, relative to the repository root when inside it (no local paths in provenance)."
    path = Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def git(src: Path, *args) -> str:
    "Output of a git command in the checkout."
    return subprocess.run(["git", "-C", str(src), *args], check=True, capture_output=True, text=True).stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vle-src", required=True, help="a checkout of iflytek/VLE")
    parser.add_argument("--env", default=str(ROOT / ".side" / "vle"), help="side virtual environment (created if missing)")
    parser.add_argument("--out", default=str(ROOT / "tests" / "fixtures" / "crosscheck" / "vle"), help="fixture folder")
    args = parser.parse_args()
    src = Path(args.vle_src)
    if not (src / "models" / "VLE" / "modeling_vle.py").exists(): sys.exit(f"{src} is not a checkout of iflytek/VLE (no models/VLE/modeling_vle.py)")
    changed = git(src, "status", "--porcelain", "--", "models")
    if changed: sys.exit(f"{src}: models/ differs from the commit; the cross-check runs the original unmodified:\n{changed}")
    python = side_python(Path(args.env), [PACKAGES])
    command = ["python", "scripts/crosscheck/vle.py", "--vle-src", shown(src)]
    if Path(args.env).resolve() != (ROOT / ".side" / "vle").resolve(): command += ["--env", shown(args.env)]
    if Path(args.out).resolve() != (ROOT / "tests" / "fixtures" / "crosscheck" / "vle").resolve(): command += ["--out", shown(args.out)]
    provenance = dict(original="iflytek/VLE", commit=git(src, "rev-parse", "HEAD"), commit_date=git(src, "log", "-1", "--format=%cI"),
                      files_run=["models/VLE/__init__.py", "models/VLE/configuration_vle.py", "models/VLE/modeling_vle.py"],
                      command=" ".join(command),
                      how=("the original VLEForVQA built from VLEConfig(text_config=dict, vision_config=dict, ...) (no download), every "
                           "parameter then overwritten with seeded normal values (scripts/crosscheck/vle_driver.py: randomise), eval mode; "
                           "state_dict() saved unchanged under the original key names, the config by the original save_pretrained"))
    run_driver(python, "vle_driver.py", "--vle-src", str(src.resolve()), "--out", args.out, "--provenance", json.dumps(provenance))

if __name__ == "__main__": main()
