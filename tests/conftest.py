import pytest

def pytest_configure(config):
    config.addinivalue_line("markers", "slow: minutes long (side environments, live originals); run with scripts/test.py --flags slow")
    config.addinivalue_line("markers", "gpu: needs a CUDA device; run with scripts/test.py --flags gpu")

@pytest.hookimpl(trylast=True)  # after pytest's own teardown: the test's fixtures are finalised first, and their garbage collected here
def pytest_runtest_teardown(item, nextitem):
    """After each test, its garbage collected and what is left frozen (gc.freeze): a test process keeps torch, transformers,
    models and run results alive from test to test, and without this every later automatic collection walks them all again
    (a fifth of tests/test_run.py's CPU). Frozen objects are only left out of later collections: nothing else changes."""
    import gc
    gc.collect(); gc.freeze()

@pytest.fixture(scope="module")
def kernels_in_this_process():
    """Every corruption's numba kernels loaded once in this test process (`warm_corruptions`: about 1 CPU-second and 73 MB), for
    the test files whose runs fork data workers again and again: the workers inherit the kernels, as a Ray replica's do, instead of
    each importing numba and reading them from its cache (about 0.55 CPU-seconds a worker; tests/test_run.py and tests/test_served.py
    fork about 55 such workers). The kernels, and so the answers, are the same either way. The runs these files start as commands
    (the console script, papermill) and README command 1 still load them in their workers, as a user's run does."""
    from vqa_robust.corruptions import CORRUPTIONS, warm_corruptions
    warm_corruptions(CORRUPTIONS)
