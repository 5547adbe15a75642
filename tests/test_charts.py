"""kernelsynth/charts.py helpers (the charts themselves are drawn in the synthesis tests)."""


def test_labels_of_points_at_one_place_are_staggered():
    """Session 12's H200 roofline of conv_relu_maxpool: v0 (eager, 75.4 TFLOP/s) and the eager baseline
    (75.3) sat on one point and their labels overlapped; points apart keep their labels in place."""
    from kernelsynth.charts import _label_offsets

    got = _label_offsets([380.0] * 4 + [50.0], [236.8, 75.4, 75.3, 27.1, 75.35])
    assert got[0] == 0.0 and got[3] == 0.0 and got[4] == 0.0  # apart in y, or in x
    assert got[1] == 0.0 and got[2] == -8.0  # the lower of the pair moves down one step
