def pytest_configure(config):
    config.addinivalue_line("markers", "slow: minutes long (side environments, live originals); run with scripts/test.py --flags slow")
    config.addinivalue_line("markers", "gpu: needs a CUDA device; run with scripts/test.py --flags gpu")
