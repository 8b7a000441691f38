# The environment scripts/run.sh runs a job in (sourced by it; tests/test_run.py checks each setting and that a value the user
# set is kept). run.log's "malloc:" and "arrow pool:" say what a run started with.
#
# One OpenMP thread unless asked otherwise: the run sets torch's threads itself (-p threads N); a pool of one thread per core
# created at import adds 50-100 MB of allocator arenas to the kernel's peak memory and buys nothing at threads 1.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# glibc's per-thread cache of freed small blocks off (unless GLIBC_TUNABLES already sets it): the blocks it holds sit between
# each batch's tensors, which then cannot merge when freed, and the heap crept by 120-260 MB over a measured run (nbs/03_inference.ipynb,
# "Memory"); about 10% slower answering. A tunable glibc reads at start.
case "${GLIBC_TUNABLES:-}" in
  *glibc.malloc.tcache_count=*) ;;
  *) export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.malloc.tcache_count=0" ;;
esac
# pyarrow's memory pool on glibc's malloc (unless ARROW_DEFAULT_MEMORY_POOL is set): Parquet and pandas' string columns then
# allocate where malloc_trim returns freed pages, while pyarrow's own pool (mimalloc) keeps them: 26 MB less at the results'
# private peak, same time (scripts/bench_inference.py --results).
export ARROW_DEFAULT_MEMORY_POOL=${ARROW_DEFAULT_MEMORY_POOL:-system}
