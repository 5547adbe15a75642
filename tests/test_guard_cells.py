"""The integrity guard's closure-cell pass (``verify.guard._cells_unchanged``): one identity pass
over every recorded cell must answer exactly what the per-function comparison answers -- a cell
rebound, emptied or filled is a change; untouched cells are none."""

import types

from kernelsynth.verify import guard


def _namespace():
    def make():
        a, b = [1], {"k": 2}

        def inner():
            return a, b
        return inner
    fn = make()
    fn.__module__ = "kernelsynth.verify._test_cells"  # a harness function: its closure is guarded
    ns = types.SimpleNamespace(inner=fn)
    return fn, ns


def test_untouched_cells_are_unchanged():
    fn, ns = _namespace()
    saved = guard._internals([("kernelsynth.verify._test_cells", ns)])
    assert guard._cells_unchanged(saved)
    assert guard._internals_changed(saved) == []


def test_a_rebound_cell_is_a_change():
    fn, ns = _namespace()
    saved = guard._internals([("kernelsynth.verify._test_cells", ns)])
    fn.__closure__[1].cell_contents = {"k": 2}  # an equal object, not the same one
    assert not guard._cells_unchanged(saved)
    assert guard._internals_changed(saved) == [f"{fn.__module__}.{fn.__qualname__}"]


def test_an_emptied_cell_is_a_change_and_filling_it_back_is_none():
    fn, ns = _namespace()
    saved = guard._internals([("kernelsynth.verify._test_cells", ns)])
    was = fn.__closure__[0].cell_contents
    del fn.__closure__[0].cell_contents  # reading it raises ValueError now: the per-function comparison
    assert not guard._cells_unchanged(saved)
    assert guard._internals_changed(saved)
    fn.__closure__[0].cell_contents = was
    assert guard._cells_unchanged(saved)


def test_a_cell_empty_when_recorded_is_compared_by_its_marker():
    def make():
        def inner():
            return late
        cell_fn = inner
        late = None
        del late
        return cell_fn
    fn = make()
    fn.__module__ = "kernelsynth.verify._test_cells"
    ns = types.SimpleNamespace(inner=fn)
    saved = guard._internals([("kernelsynth.verify._test_cells", ns)])
    assert saved[4][0][1] == (guard._EMPTY_CELL,)
    assert guard._cells_unchanged(saved)  # still empty: unchanged
    fn.__closure__[0].cell_contents = 3
    assert not guard._cells_unchanged(saved)
