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
