"""The suite's own scheduling (tests/conftest.py): under pytest-xdist's ``--dist loadgroup`` a
grouped test carries its group in its node id, which is what sends a group to one process. With
pytest 9.2 it did not (pytest-dev/pytest-xdist#1386): CI scheduled every test alone, unnoticed."""

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
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GroupCheck().pytest_collection_modifyitems(None, items[:2])  # every group in place: silent
