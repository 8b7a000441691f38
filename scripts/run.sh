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
# One OpenMP thread unless asked otherwise: the run sets torch's threads itself (-p threads N); a pool of one thread per core
# created at import adds 50-100 MB of allocator arenas to the kernel's peak memory and buys nothing at threads 1.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# glibc's per-thread cache of freed small blocks off (unless GLIBC_TUNABLES already sets it): the blocks it holds sit between
# each batch's tensors, which then cannot merge when freed, and the heap crept by 120-260 MB over a measured run (nbs/03_inference.ipynb,
# "Memory"); about 10% slower answering. A tunable glibc reads at start: run.log's "malloc:" says what the run started with.
case "${GLIBC_TUNABLES:-}" in
  *glibc.malloc.tcache_count=*) ;;
  *) export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.malloc.tcache_count=0" ;;
esac
# pyarrow's memory pool on glibc's malloc (unless ARROW_DEFAULT_MEMORY_POOL is set): Parquet and pandas' string columns then
# allocate where malloc_trim returns freed pages, while pyarrow's own pool (mimalloc) keeps them: 26 MB less at the results'
# private peak, same time (scripts/bench_inference.py --results). run.log's "arrow pool:" says which pool the run had.
export ARROW_DEFAULT_MEMORY_POOL=${ARROW_DEFAULT_MEMORY_POOL:-system}
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
