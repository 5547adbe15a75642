"""Selection and observation-level timing integrity rules, on hand-made observation rows."""

from kernelsynth.stages.exploration import timing_integrity


def test_latency_under_the_roofline_floor_is_rejected_with_slack():
    assert timing_integrity({"median_ms": 0.5, "floor_ms": 1.0, "synced_ms": 0.5}).startswith("0.5000 ms is below")
    assert timing_integrity({"median_ms": 0.99, "floor_ms": 1.0, "synced_ms": 0.99}) is None  # within 5%


def test_work_escaping_the_timed_stream_is_rejected():
    assert "escapes the timed stream" in timing_integrity({"median_ms": 0.01, "floor_ms": None, "synced_ms": 1.2})
    assert timing_integrity({"median_ms": 0.01, "floor_ms": None, "synced_ms": 0.2}) is None  # launch overhead
