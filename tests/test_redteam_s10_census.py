"""The fallback census against the session-10 red team's doors (tests/adversarial/redteam_s10, README
"Why they got through"; VERIFICATION.md rules 13, 14, 20): host arithmetic through the C methods of
``torch._C.TensorBase`` (lt1, xn1), a library call hidden from the dispatch mode and a recognisable
profiled call (mh1), the census's record and the profiler edited from inside the call (mi1). Each
class is tested on the red team's candidate through the real harness and on other doors of the same
class through :func:`kernelsynth.verify.poison.call_poisoned` (the wrapper of every verified call)."""

from pathlib import Path

import pytest
import torch

from conftest import ROOT
from kernelsynth.screen import screen_source
from kernelsynth.verify.census import Census, install_watch, profiled_of
from kernelsynth.verify.failures import TamperingError, VerificationFailure
from kernelsynth.verify.poison import call_poisoned
from test_redteam_s8_holes import SPECS, _evaluate

RT10 = ROOT / "tests" / "adversarial" / "redteam_s10"
CPU = torch.device("cpu")


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def _census_of(fn, *inputs):
    """(census names, profiled names) of one verified call of ``fn`` on a fresh Census."""
    install_watch()
    census = Census()
    call_poisoned(fn, list(inputs), CPU, True, None, census)
    return set(census), set(profiled_of(census))


# ------------------------------------------------------------------- lt1, xn1: TensorBase host doors
def test_host_arithmetic_through_tensorbase_doors_is_labelled():
    ln = _evaluate(SPECS / "layernorm" / "spec.yaml",
                   [RT10 / "layernorm" / "lt1_python_arithmetic_through_tensorbase_tolist.py"], shapes=1)
    assert ln["lt1_python_arithmetic_through_tensorbase_tolist"] == ("accepted", "", "host:tolist"), ln
    xent = _evaluate(SPECS / "cross_entropy" / "spec.yaml", [RT10 / "xent" / "xn1_numpy_through_tensorbase_numpy.py"],
                     shapes=1)
    assert xent["xn1_numpy_through_tensorbase_numpy"] == ("accepted", "", "host:numpy"), xent


def test_every_door_to_the_host_methods_is_seen_whatever_the_owner():
    tb = torch._C.TensorBase
    x = torch.randn(40)

    def via_map(x):  # a C-to-C call (map): no Python-level wrapper or profile hook sees it
        return torch.tensor(list(map(tb.numpy, [x]))[0] * 2)

    cases = {
        "tolist": lambda x: torch.tensor(tb.tolist(x)),
        "numpy": via_map,
        "untyped_storage": lambda x: torch.frombuffer(bytearray(bytes(tb.untyped_storage(x))), dtype=torch.float32),
        "apply_": lambda x: x.clone().apply_(lambda v: 2 * v),
        "item": lambda x: torch.tensor([2 * float(v) for v in x]),  # 40 scalar reads > SCALAR_READS_MAX
    }
    for door, fn in cases.items():
        names, _ = _census_of(fn, x)
        assert f"host:{door}" in names, (door, names)
    names, _ = _census_of(lambda x: torch.tensor([x[0].item(), x[1].item()]), x)  # two scalars: not a door
    assert not any(n.startswith("host:") for n in names), names


# ------------------------------------------------------------- mh1: the mode switched off, the tell
def test_a_library_call_hidden_from_the_dispatch_mode_is_seen_by_the_per_call_profiler():
    mm = _evaluate(SPECS / "matmul_bias_gelu" / "spec.yaml",
                   [RT10 / "matmul" / "mh1_addmm_hidden_from_the_mode_unless_profiled.py",
                    RT10 / "matmul" / "mh2_split_k_partials_then_epilogue.py"], shapes=1)
    assert mm["mh1_addmm_hidden_from_the_mode_unless_profiled"] == ("accepted", "", "addmm"), mm
    assert mm["mh2_split_k_partials_then_epilogue"] == ("accepted", "", None), mm
    x = torch.randn(5, 7)
    disable = getattr(torch._C, "_Disable" + "TorchDispatch")  # a name built at run time passes the screen

    def hidden(x):
        with disable():
            return torch.addmm(x, x, torch.eye(7))

    def excluded(x):
        with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.Python)):
            return torch.mm(x, torch.eye(7))

    for fn, op in ((hidden, "addmm"), (excluded, "mm")):
        names, profiled = _census_of(fn, x)
        assert op not in names and op in profiled, (op, names, profiled)
    seen = []
    _census_of(lambda x: seen.append((torch.autograd._profiler_enabled(), torch._C._autograd._profiler_type()))
               or x.clone(), x)
    assert seen == [(False, torch._C._profiler.ActiveProfilerType.NONE)]  # as in an unprofiled (timed) call


def test_switching_the_profiler_or_record_function_off_in_a_call_is_seen():
    x = torch.randn(4)

    def ended(stop):
        def call(x):
            try:
                stop()
            except RuntimeError:  # the Kineto stop of the CPU-profiler session raises, after ending it
                pass
            return x.clone()
        return call

    # the per-call session is the CPU profiler's (session 30): ended by either stop, its own or Kineto's
    for stop in (torch.autograd._disable_profiler, torch._C._autograd._disable_profiler_legacy):
        with pytest.raises(VerificationFailure, match="profiler session was ended"):
            _census_of(ended(stop), x)
        assert not torch.autograd._profiler_enabled()
    names, _ = _census_of(lambda x: x * 2, x)  # and the next call has its own session again
    assert "mul" in names

    # ended, then a Kineto session of the candidate's own in its place: in a process of its own, 40 calls
    # (test_a_replaced_profiler_session_is_rejected_call_after_call_without_crashing_the_process)

    def record_off(x):
        torch.autograd._enable_record_function(False)
        try:
            return x * 2
        finally:
            torch.autograd._enable_record_function(True)

    names, _ = _census_of(record_off, x)
    assert "census:_enable_record_function" in names, names


REPLACED_SESSION_CALLS = """
import sys
import torch
import triton
import triton.language as tl
from kernelsynth.verify.census import Census, install_watch
from kernelsynth.verify.failures import VerificationFailure
from kernelsynth.verify.poison import call_poisoned

def replace():  # the harness's CPU-profiler session ended, a Kineto session of the candidate's own in its place
    torch._C._autograd._disable_profiler_legacy()
    torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]).__enter__()

@triton.jit
def _flip(X, Y, N, BLOCK: tl.constexpr):
    c = tl.arange(0, BLOCK)
    tl.store(Y + tl.program_id(0) * N + c, tl.load(X + tl.program_id(0) * N + (N - 1 - c)))

def in_the_call(x):
    replace()
    return x.flip(1)

def in_a_grid_callable(x):  # inside the launch: its launch and candidate marks are open
    y = torch.empty_like(x)
    _flip[lambda meta: (replace(), (x.shape[0],))[1]](x, y, x.shape[1], BLOCK=x.shape[1])
    return y

install_watch()
x = torch.randn(4, 8)
fn = {"call": in_the_call, "grid": in_a_grid_callable}[sys.argv[2]]
for i in range(int(sys.argv[1])):
    try:
        call_poisoned(fn, [x], torch.device("cpu"), True, None, Census())
        sys.exit(f"call {i}: accepted")
    except VerificationFailure as e:
        assert "profiler session was ended" in str(e), e
    assert not torch.autograd._profiler_enabled()  # the harness ended the replacement too
print("rejected", int(sys.argv[1]))
"""


@pytest.mark.parametrize("where", ["call", "grid"])
def test_a_replaced_profiler_session_is_rejected_call_after_call_without_crashing_the_process(where):
    """The harness exited its call mark under the candidate's Kineto session: the process aborted
    in glibc (``pthread_mutex_lock``: a robust mutex whose owner was gone) or hung, within 40 such
    calls in 5 of 5 runs before the fix (session 33; a hang there held CI's run of session 32 until
    its limit). Replaced inside a launch's grid callable, the launch's open marks, freed under the
    Kineto session, did the same in 10 runs of 10 (red team s33). Its own process, so that a
    regression fails this test instead of the suite's worker."""
    import os
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-c", REPLACED_SESSION_CALLS, "40", where], capture_output=True, text=True,
                       cwd=ROOT, timeout=120, env={**os.environ, "TRITON_INTERPRET": "1"})
    assert p.returncode == 0 and p.stdout.strip() == "rejected 40", (p.returncode, p.stdout[-500:], p.stderr[-1500:])


# ------------------------------------------------------------------ mi1: the census edited in a call
def test_the_census_scrubbed_from_inside_the_call_is_tampering_or_seen():
    with pytest.raises(TamperingError, match="torch.profiler.profile.events"):
        _evaluate(SPECS / "matmul_bias_gelu" / "spec.yaml",
                  [RT10 / "matmul" / "mi1_census_scrubbed_from_inside_the_call.py"], shapes=1)
    current = getattr(torch.utils._python_dispatch, "_get_current_" + "dispatch_mode")
    x = torch.randn(3, 3)

    def scrub(x):  # the mode's record of this call
        y = torch.mm(x, x)
        current().ops.discard("mm")
        return y

    names, profiled = _census_of(scrub, x)
    assert "mm" not in names and "mm" in profiled
    install_watch()
    census = Census()
    call_poisoned(lambda x: torch.mm(x, x), [x], CPU, True, None, census)
    with pytest.raises(TamperingError, match="lost"):  # an earlier call's record
        call_poisoned(lambda x: current().ops.discard("mm") or x.clone(), [x], CPU, True, None, census)


def test_the_screen_refuses_the_names_that_switch_the_census_off_and_passes_the_honest_set():
    for rel in ("matmul/mh1_addmm_hidden_from_the_mode_unless_profiled.py",
                "matmul/mi1_census_scrubbed_from_inside_the_call.py"):
        assert any("rule 14" in f for f in screen_source((RT10 / rel).read_text())), rel
    for src in ('getattr(torch._C, "_DisableTorchDispatch")', "from torch.utils._python_dispatch import "
                "_disable_current_modes", "torch._C.DisableTorchFunction()", "torch.autograd._profiler_enabled()"):
        assert screen_source(src), src
    for rel in ("layernorm/lh4_per_lane_welford_then_chan_combine.py", "matmul/mh2_split_k_partials_then_epilogue.py",
                "rmsnorm/rh3_strip_partials_two_launches.py", "softmax/sg1_cuda_graph_replay_per_shape.py"):
        assert screen_source((RT10 / rel).read_text()) == [], rel
    for ladder in sorted(Path(SPECS).glob("*/kernels/*.py")):
        assert not [f for f in screen_source(ladder.read_text()) if "rule 14" in f], ladder
