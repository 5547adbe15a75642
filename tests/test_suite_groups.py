"""The suite's own scheduling (tests/conftest.py): under pytest-xdist's ``--dist loadgroup`` a
grouped test carries its group in its node id, which is what sends a group to one process. With
pytest 9.2 it did not (pytest-dev/pytest-xdist#1386): CI scheduled every test alone, unnoticed."""

import re
import warnings
from types import SimpleNamespace

import pytest

from conftest import GroupCheck

pytestmark = pytest.mark.xdist_group("suite_groups")


def test_a_grouped_test_runs_with_its_group_in_its_node_id(request):
    if not (hasattr(request.config, "workerinput") and request.config.getvalue("loadgroup")):
        pytest.skip("one process (-n 0 or a command naming tests): no groups are scheduled")
    assert request.node.nodeid.endswith("test_a_grouped_test_runs_with_its_group_in_its_node_id@suite_groups")


def _item(nodeid, group):
    marker = pytest.mark.xdist_group(group).mark if group else None
    return SimpleNamespace(nodeid=nodeid, get_closest_marker=lambda name: marker if name == "xdist_group" else None)


def test_a_grouped_test_without_its_group_in_its_node_id_is_warned_of_once():
    items = [_item("tests/a.py::t1@g", "g"), _item("tests/a.py::t2", None), _item("tests/b.py::t3", "g")]
    with pytest.warns(pytest.PytestWarning, match=r"did not take: 1 grouped test\(s\) .*\(e\.g\. tests/b\.py::t3\)") as seen:
        GroupCheck().pytest_collection_modifyitems(None, items)
    assert len(seen) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GroupCheck().pytest_collection_modifyitems(None, items[:2])  # every group in place: silent


def test_a_crashed_process_ends_the_run_with_its_test_failed(tmp_path):
    """pyproject.toml's addopts on a suite whose grouped test aborts its process: the run ends, the
    test named as failed. With xdist's default worker restarts it waited for good (pytest-xdist#1378;
    CI's run of session 32 until its limit, after tests/test_redteam_s10_census.py aborted a worker)."""
    import subprocess
    import sys
    import tomllib

    from conftest import ROOT

    addopts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    (tmp_path / "pytest.ini").write_text(f"[pytest]\naddopts = {addopts}\n")
    (tmp_path / "test_grouped.py").write_text(
        "import os\nimport pytest\n\npytestmark = pytest.mark.xdist_group('g')\n\n"
        "def test_before():\n    pass\n\ndef test_aborts():\n    os.abort()\n\ndef test_after():\n    pass\n")
    for i in range(4):
        (tmp_path / f"test_alone_{i}.py").write_text("def test_alone():\n    pass\n")
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=180)
    assert p.returncode == 1, (p.returncode, p.stdout[-2000:])
    assert "FAILED test_grouped.py::test_aborts@g - worker 'gw" in p.stdout and "crashed while running" in p.stdout
    # the tests the dead process still had queued are not run (it is not replaced): one failure, no hang
    assert re.search(r"\n1 failed, [1-6] passed in ", p.stdout), p.stdout[-800:]
