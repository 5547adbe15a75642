"""Selection and observation-level timing integrity rules, on hand-made observation rows."""

from kernelsynth.stages.exploration import timing_integrity


def test_latency_under_the_roofline_floor_is_rejected_with_slack():
    assert timing_integrity({"median_ms": 0.5, "floor_ms": 1.0, "synced_ms": 0.5}).startswith("0.5000 ms is below")
    assert timing_integrity({"median_ms": 0.99, "floor_ms": 1.0, "synced_ms": 0.99}) is None  # within 5%


def test_work_escaping_the_timed_stream_is_rejected():
    assert "escapes the timed stream" in timing_integrity({"median_ms": 0.01, "floor_ms": None, "synced_ms": 1.2})
    assert timing_integrity({"median_ms": 0.01, "floor_ms": None, "synced_ms": 0.2}) is None  # launch overhead


def _host_timed(monkeypatch, call_ms):
    """kernelsynth.timing.time_ms with the device faked away (do_bench says 0.35 ms; no CUDA sync):
    ``call_ms`` gives each host-timed call's sleep in ms, in order."""
    import time

    import torch
    import triton.testing

    from kernelsynth import timing

    monkeypatch.setattr(triton.testing, "do_bench", lambda fn, warmup, rep, quantiles: [0.34, 0.35, 0.36])
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    sleeps = iter(call_ms)
    return timing.time_ms(lambda: time.sleep(next(sleeps) / 1e3), 1, 1)


def test_host_jitter_in_most_synced_calls_is_no_timing_integrity_failure(monkeypatch):
    """Session 20, H100: an honest CUDA v5 config was rejected (event-timed 0.346 ms, synced median
    0.859 ms) when three of the five host-timed calls were slow. synced_ms is the fastest call now."""
    t = _host_timed(monkeypatch, [0.9, 0.95, 0.4, 1.0, 0.45])
    assert 0.4 <= t["synced_ms"] < 0.6
    assert timing_integrity({"median_ms": t["median_ms"], "floor_ms": None, "synced_ms": t["synced_ms"]}) is None


def test_work_that_escapes_the_timed_stream_in_every_call_is_still_caught(monkeypatch):
    t = _host_timed(monkeypatch, [1.3, 1.2, 1.25, 1.4, 1.2])  # the real work, seen by every synced call
    assert t["synced_ms"] >= 1.2
    assert "escapes the timed stream" in timing_integrity({"median_ms": t["median_ms"], "floor_ms": None,
                                                           "synced_ms": t["synced_ms"]})
