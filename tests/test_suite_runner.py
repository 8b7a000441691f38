"The suite's own checks (scripts/test.py): the leak check looks only at the processes this suite started, so that two suites on one machine do not fail each other."
import importlib.util, os, subprocess, sys, time
from pathlib import Path

root = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("suite_runner", root / "scripts" / "test.py")
runner = importlib.util.module_from_spec(spec); spec.loader.exec_module(runner)

def sleeper(env: dict) -> subprocess.Popen:
    "A process that looks like a server to the leak check ('vllm serve' in its command line) and sleeps."
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "vllm serve"], env=env)

def test_leak_check_sees_only_its_own_suite():
    mark = f"probe-{os.getpid()}-{time.time_ns()}"
    ours = sleeper({**os.environ, runner.SUITE_MARK: mark})
    theirs = sleeper({k: v for k, v in os.environ.items() if k != runner.SUITE_MARK})  # another suite's, or a developer's
    other_suite = sleeper({**os.environ, runner.SUITE_MARK: mark + "-other"})
    try:
        time.sleep(0.5)  # each has its command line and environment in place
        found = runner.servers_running(mark)
        assert ours.pid in found
        assert "vllm serve" in found[ours.pid]
        assert theirs.pid not in found
        assert other_suite.pid not in found
        assert runner.left_running(mark + "-nobody", grace=0.1) == {}
    finally:
        for p in (ours, theirs, other_suite): p.kill(); p.wait()
    assert runner.servers_running(mark) == {}  # stopped: nothing left

def test_leak_check_sees_ray_agents_by_their_session_files(tmp_path):
    "Ray starts its agents with an environment of their own (no mark): the suite knows them by the files they hold in its Ray folder."
    ray_root = tmp_path / "ray"; (ray_root / "session").mkdir(parents=True)
    log = ray_root / "session" / "agent.log"; log.write_text("")
    env = {k: v for k, v in os.environ.items() if k != runner.SUITE_MARK}  # unmarked, as Ray's agents are
    agent = subprocess.Popen([sys.executable, "-c", "import sys, time; f = open(sys.argv[1]); time.sleep(60)", str(log), "ray::DashboardAgent"], env=env)
    elsewhere = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "ray::DashboardAgent"], env=env)
    try:
        time.sleep(0.5)
        found = runner.servers_running("no-such-mark", ray_root)
        assert agent.pid in found  # holds a file under this suite's Ray folder
        assert elsewhere.pid not in found  # another suite's agent
        assert runner.holds_files_under(agent.pid, ray_root)
        assert not runner.holds_files_under(agent.pid, tmp_path / "rayx")  # a folder whose name merely starts alike
    finally:
        for p in (agent, elsewhere): p.kill(); p.wait()
