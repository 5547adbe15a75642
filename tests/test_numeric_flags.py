"""Process-wide numeric settings in the integrity guard (VERIFICATION.md rule 13, session 27): a
candidate that lowers the float32 matmul precision, switches TF32 or an SDPA backend, or flushes
subnormals, and leaves it so, changes how the harness's own reference at the job dtype and rule 23's
honest computations round (redteam_s10 mp3; red team s26 named the rest). Through the real harness
on the CPU plan; each test restores the settings it lets a candidate change."""

import pytest
import torch

from conftest import ROOT
from test_redteam_s10_holes import SPECS, _evaluate

RT10 = ROOT / "tests" / "adversarial" / "redteam_s10"
RT27 = ROOT / "tests" / "adversarial" / "redteam_s27"


def _save():
    """The settings these tests let candidates change, to put back with :func:`_restore`."""
    return (torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32,
            torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
            torch.backends.cuda.flash_sdp_enabled(), torch.is_autocast_enabled("cpu"))


def _restore(saved):
    precision, cuda_mm, cudnn, bf16_red, flash, autocast = saved
    torch.set_autocast_enabled("cpu", autocast)
    torch.set_float32_matmul_precision(precision)
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = cuda_mm, cudnn
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = bf16_red
    torch.backends.cuda.enable_flash_sdp(flash)
    torch.set_flush_denormal(False)


@pytest.fixture(autouse=True)
def _restore_numeric_settings(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    saved = _save()
    yield
    _restore(saved)


def _as_in_a_fresh_process():
    """The newer ``fp32_precision`` settings the legacy setters write through, back at "none" (not
    set), as a fresh worker has them: this process's earlier legacy writes (``_restore``) left "ieee"."""
    torch.backends.cuda.matmul.fp32_precision = "none"
    torch.backends.mkldnn.matmul.fp32_precision = "none"


def _verdicts(spec, files):
    """{stem: (verdict, reason)}, each file through the harness with the settings put back after it
    (in a run each external candidate gets a fresh worker): a TamperingError raised out of
    ``jobs.evaluate`` (before the first trial, as at the first integrity check) is what the worker
    turns into a "tampering" rejection (kernelsynth/workers.py: classify)."""
    from kernelsynth.verify.failures import TamperingError

    out = {}
    for f in files:
        saved = _save()
        try:
            out[f.stem] = _evaluate(spec, [f], shapes=1)[f.stem][:2]
        except TamperingError as e:
            out[f.stem] = ("tampering", str(e))
        finally:
            _restore(saved)
    return out


def _flip(tmp_path, name, body, top=""):
    f = tmp_path / f"{name}.py"
    f.write_text(f"import torch\n{top}\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n{body}")
    return f


def test_numeric_settings_left_changed_are_tampering_and_restored_ones_are_not(tmp_path):
    files = [
        _flip(tmp_path, "at_import", "        return torch.flip(x, dims=[1])\n",
              top="torch.set_float32_matmul_precision('medium')"),
        _flip(tmp_path, "flush_in_call", "        torch.set_flush_denormal(True)\n        return torch.flip(x, dims=[1])\n"),
        _flip(tmp_path, "sdp_in_call", "        torch.backends.cuda.enable_flash_sdp(False)\n"
                                       "        return torch.flip(x, dims=[1])\n"),
        _flip(tmp_path, "restored", "        old = torch.backends.cuda.matmul.allow_tf32\n"
                                    "        torch.backends.cuda.matmul.allow_tf32 = True\n"
                                    "        try:\n            return torch.flip(x, dims=[1])\n"
                                    "        finally:\n            torch.backends.cuda.matmul.allow_tf32 = old\n"),
    ]
    got = _verdicts(SPECS / "flip2d" / "spec.yaml", files)
    for name, what in (("at_import", "torch.get_float32_matmul_precision() 'highest' -> 'medium'"),
                       ("flush_in_call", "flush_denormal False -> True"),
                       ("sdp_in_call", "torch.backends.cuda.flash_sdp_enabled() True -> False")):
        verdict, reason = got[name]
        assert verdict in ("rejected", "tampering") and "process-wide numeric settings" in reason \
            and what in reason, (name, verdict, reason)
    assert got["restored"] == ("accepted", ""), got["restored"]


def test_redteam_s10_mp3_lowered_matmul_precision_is_refused_by_the_guard():
    """mp3 (bfloat16 operands in its GEMM, and the process's float32 matmul precision lowered at
    import so the honest computations would be bfloat16 too) was rejected by rule 23's tail on the
    CPU only; its setting is now refused as such, before any statistic."""
    got = _verdicts(SPECS / "matmul_bias_gelu" / "spec.yaml",
                    [RT10 / "matmul" / "mp3_bf16_operands_with_the_process_matmul_precision_lowered.py"])
    verdict, reason = got["mp3_bf16_operands_with_the_process_matmul_precision_lowered"]
    assert verdict == "tampering" and "process-wide numeric settings" in reason, reason
    assert "'highest' -> 'medium'" in reason, reason


def test_the_process_fingerprint_sees_a_numeric_setting():
    """A rejected job's changed setting would carry over to the next job in the worker: the
    fingerprint compared between jobs (rule 19) includes the settings, so that job gets a fresh worker."""
    from kernelsynth.verify.guard import process_fingerprint

    before = process_fingerprint()
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    assert process_fingerprint() != before
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True
    assert process_fingerprint() == before


def test_the_harness_tf32_switch_restores_every_setting_it_touches():
    """precision.tf32 (the honest computations of rule 23 under a tf32 policy) sets the legacy
    ``allow_tf32`` switches, which write through to the newer ``fp32_precision`` ones; setting them
    back leaves ``torch.backends.cuda.matmul.fp32_precision`` at "ieee" where it was "none", which the
    guard would call tampering on every tf32 task on a GPU unless it resolves "none" to the "ieee" it
    inherits (it does)."""
    from kernelsynth.verify.guard import numeric_changes, numeric_flags
    from kernelsynth.verify.precision import tf32

    _as_in_a_fresh_process()
    before = numeric_flags()
    for allowed in (True, False):
        with tf32(allowed):
            assert torch.backends.cuda.matmul.allow_tf32 is allowed
        assert numeric_changes(before) == [], allowed


def test_cudnn_algorithm_switches_and_deterministic_algorithms_are_settings_too():
    """cuDNN's autotuner and determinism switches choose the algorithms of the harness's own
    convolutions (the reference at the job dtype, the honest computations)."""
    from kernelsynth.verify.guard import numeric_changes, numeric_flags

    before = numeric_flags()
    torch.backends.cudnn.benchmark = True
    torch.use_deterministic_algorithms(True)
    try:
        changed = numeric_changes(before)
    finally:
        torch.backends.cudnn.benchmark = False
        torch.use_deterministic_algorithms(False)
    assert "torch.backends.cudnn.benchmark False -> True" in changed, changed
    assert "torch.are_deterministic_algorithms_enabled() False -> True" in changed, changed
    assert numeric_changes(before) == []




def test_redteam_s27_autocast_and_a_setting_left_between_calls_are_refused():
    """Red team s27: ma1/ma2 turned CPU autocast on at import (bfloat16 GEMM operands in the
    harness's own honest computations too, so rule 23's bound widened: ma2 was accepted by the
    worker and the audit); mm1 left the float32 matmul precision lowered between two calls of one
    trial and put it back before the trial's integrity check (the honest computations ran under
    it). Autocast is a numeric setting now, and the settings are compared after every call."""
    got = _verdicts(SPECS / "matmul_bias_gelu" / "spec.yaml",
                    [RT27 / "matmul_bias_gelu" / f"{n}.py" for n in (
                        "ma1_autocast_bf16_every_call", "ma2_autocast_bf16_on_seen_tensor",
                        "mm1_precision_lowered_between_calls")])
    for name in ("ma1_autocast_bf16_every_call", "ma2_autocast_bf16_on_seen_tensor"):
        verdict, reason = got[name]
        assert verdict in ("rejected", "tampering") and "autocast cpu (False" in reason, (name, verdict, reason)
    verdict, reason = got["mm1_precision_lowered_between_calls"]
    assert verdict in ("rejected", "tampering") and "process-wide numeric settings" in reason, (verdict, reason)


def test_redteam_s27_h1_an_honest_set_and_restore_of_the_precision_is_accepted():
    """h1 saves get_float32_matmul_precision(), sets 'high' and restores the old value: the restore
    writes "ieee" where "none" (inherited, meaning "ieee") was. Rejected as tampering before the
    fp32_precision values were resolved through their hierarchy."""
    _as_in_a_fresh_process()
    got = _verdicts(SPECS / "flip2d" / "spec.yaml", [RT27 / "flip2d" / "h1_honest_precision_set_and_restored.py"])
    assert got["h1_honest_precision_set_and_restored"] == ("accepted", ""), got
