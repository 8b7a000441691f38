#!/usr/bin/env bash
# Set up (if needed), then run the robustness job nbs/run.ipynb with papermill.
# Extra arguments go to papermill, e.g.:  bash scripts/run.sh -p model blip -p n_images 200 -p out_dir runs/blip
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out=runs/default
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  if [ "${args[i]}" = "-p" ] && [ "${args[i+1]:-}" = "out_dir" ]; then out=${args[i+2]}; fi
done
mkdir -p "$out"
# One OpenMP thread, glibc's thread cache off and pyarrow's pool on glibc's malloc, each unless set already: scripts/run_env.sh says why.
source scripts/run_env.sh
# The executed notebook is written apart and moved into the folder only when the run finished: a run refused by the folder's
# lock (another run is writing it) or one that failed leaves the folder's run.ipynb as it was.
executed=$(mktemp -d)/run.ipynb
if ! .venv/bin/papermill nbs/run.ipynb "$executed" -k python3 -p out_dir "$out" "$@"; then
  echo "the run did not finish; its executed notebook is $executed ($out/run.ipynb is left as it was)" >&2
  exit 1
fi
mv "$executed" "$out/run.ipynb"
echo "run folder: $out"
ls "$out"
