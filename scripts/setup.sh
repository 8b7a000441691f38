#!/usr/bin/env bash
# Set up vqa_robust in a virtual environment at .venv (idempotent; re-runs only when settings.ini changes).
#   TORCH_SPEC=...    torch requirement to install (default: torch==2.13.0, a CPU build);
#                     TORCH_SPEC=skip keeps a torch you installed yourself (e.g. a CUDA build).
#   PYTHON=...        interpreter for the venv (default: python3, >= 3.10).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
APT_PACKAGES="wordnet-base wordnet-sense-index"  # WordNet 3.0 and its sense index, read by nltk (vqa_robust.text)
OPTIONAL_APT_PACKAGES="libmagickwand-6.q16-6"  # ImageMagick, for the Wand reference path of snow (its tests skip without it)
DOCS_APT_PACKAGES="chromium fonts-dejavu-core"  # headless Chromium for the docs site's browser check (scripts/check_site.py)

if [ -n "$APT_PACKAGES" ]; then
  missing=$(for p in $APT_PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
  if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
    else echo "setup: vqa_robust needs these Debian packages; install them as root: apt-get install $missing" >&2; exit 1; fi
  fi
fi

# Packages the library runs without: installed as root, else named; a failure is reported, not fatal.
install_optional() {  # $1: what they are for, then the packages
  local why=$1; shift
  local missing; missing=$(for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing) >/dev/null 2>&1 \
      || echo "setup: could not install $(echo $missing) ($why)" >&2
  else echo "setup: $why: apt-get install $(echo $missing)" >&2; fi
}
install_optional "reference tests only" $OPTIONAL_APT_PACKAGES
install_optional "the docs' browser check, scripts/check_site.py" $DOCS_APT_PACKAGES

stamp=.venv/.vqa_robust_setup
want="$(cat settings.ini setup.py scripts/setup.sh | sha256sum | cut -c1-16) $TORCH_SPEC"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && .venv/bin/python -c "import vqa_robust" 2>/dev/null; then
  echo "setup: .venv is up to date"; exit 0
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
[ "$TORCH_SPEC" = skip ] || .venv/bin/python -m pip install -q "$TORCH_SPEC"
.venv/bin/python -m pip install -q -e ".[dev]"
# JupyterLab (a dev requirement: `.venv/bin/jupyter lab` opens nbs/) brings, through jupyter-events, jsonschema's optional
# IRI format check (rfc3987-syntax), which compiles a Lark grammar whenever jsonschema is imported: in every process that
# imports Ray (each worker, about 1.6 CPU-seconds more: `import ray` 2.1 s of CPU with it, 0.5 s without). jsonschema skips
# the iri formats without it, and no schema of JupyterLab's uses them: it is removed (`pip check` still passes).
.venv/bin/python -m pip uninstall -q -y rfc3987-syntax
# The ImageNet-C reference, for equivalence tests and benchmarks only; without its dependencies, since it asks for
# opencv-python, which would shadow opencv-python-headless (scripts/reference_corruptions.py shims it to import).
.venv/bin/python -m pip install -q --no-deps imagecorruptions==1.1.2
echo "$want" > "$stamp"
echo "setup: .venv ready ($(.venv/bin/python -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'))"
