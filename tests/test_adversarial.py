"""Adversarial candidates (tests/adversarial/cpu) on the Triton interpreter.

For every rule of the protocol (references/VERIFICATION.md) a cheating candidate that the naive
harness of tests/adversarial/naive.py ACCEPTS and kernelsynth REJECTS, with a reason that names
the rule -- both halves asserted -- and honest candidates written differently from ours that
both accept. "Ours" is the real thing: one engine run per spec, in worker processes.
"""

import json
import re
import subprocess
import sys
import time

import pytest
import torch

from conftest import ROOT, compose
from kernelsynth import engine
from kernelsynth.loading import import_file

ADV = ROOT / "tests" / "adversarial"
sys.path.insert(0, str(ADV))
from naive import naive_accepts, naive_time_ms, restored_namespaces  # noqa: E402

FLIP = import_file(ROOT / "specs" / "flip2d" / "reference.py")
SOFTMAX = import_file(ADV / "references" / "softmax.py")
CONV = import_file(ROOT / "specs" / "conv_relu_maxpool" / "reference.py")
CONV_SHAPES = [{"N": 1, "C_in": 3, "C_out": 8, "H": 5, "W": 7}, {"N": 2, "C_in": 5, "C_out": 16, "H": 6, "W": 9}]  # conv.yaml
CONV_PRECISION_SHAPES = [{"N": 1, "C_in": 64, "C_out": 16, "H": 6, "W": 6},
                         {"N": 2, "C_in": 24, "C_out": 8, "H": 7, "W": 9}]  # conv_precision.yaml
FLIP_SHAPES = [{"M": 3, "N": 5}, {"M": 4, "N": 67}, {"M": 9, "N": 300}]  # cpu/spec.yaml
SOFTMAX_SHAPES = [{"M": 2, "N": 8000}, {"M": 3, "N": 6001}]  # cpu/softmax.yaml
RUN = ["hw=cpu", "exploration.trials=2", "exploration.progress=false", "exploration.workers=2",
       "exploration.fresh_worker=always",  # no cheat can spoil the next candidate's process
       "exploration.screen_sources=false"]  # the cheats must meet the layers behind the source screen

# version -> (file, fault, regex the first line of the reason must match: it names the rule)
FLIP_CASES = {
    "recycled_memory": ("recycled_memory/steal_reference_output.py", "wrong_output", r"not bit-exact"),
    "inputs": ("inputs/in_place.py", "wrong_output", r"input 0 was modified"),
    "caching": ("caching/weakref_cache.py", "wrong_output", r"stale answer"),
    "determinism": ("determinism/reused_buffer.py", "wrong_output", r"not deterministic \(bitwise\)"),
    "distribution": ("distribution/range_only.py", "wrong_output", r"trial 1: not bit-exact"),
    "integrity_flip": ("integrity/patch_flip.py", "tampering", r"replaced torch\.flip"),
    "integrity_allclose": ("integrity/patch_allclose.py", "tampering", r"replaced torch\.allclose"),
    "integrity_reference": ("integrity/patch_reference_inputs.py", "tampering", r"replaced reference\.get_inputs"),
    "integrity_module": ("integrity/patch_module_call.py", "tampering", r"replaced torch\.nn\.Module\.__call__"),
    # the patched clock also makes the job's own seconds a forgery: the envelope check may see it first
    "timer_host": ("timer/patch_perf_counter.py", "tampering",
                   r"replaced time\.perf_counter|JobResult has an error that is not a str or seconds"),
    # still alive after the call, or (when it has not run yet on a busy machine) counted as started in it
    "threads": ("threads/late_writer.py", "wrong_output",
                r"thread\(s\) started (by the candidate still running|during the call)"),
    "threads_raw": ("threads/raw_thread.py", "wrong_output",
                    r"thread\(s\) started (by the candidate still running|during the call)"),
    "lazy": ("lazy/lazy_subclass.py", "wrong_output", r"expected exactly torch\.Tensor"),
    "shapes_block": ("shapes/single_block.py", "wrong_output", r"shape \d+x4097, trial 0: not bit-exact"),
    "shapes_listed": ("shapes/listed_shapes_only.py", "wrong_output", r"not bit-exact"),
    "layout": ("layout/column_major.py", "wrong_output", r"not contiguous.*layout rule"),
    "buffer_per_shape": ("determinism/buffer_per_shape.py", "wrong_output",
                         r"trial 0: an earlier output changed or shares storage with a later one"),
    "canonical_nan": ("nan/canonical_nan.py", "wrong_output", r"trial 1: not bit-exact"),
    "buffer_after_warmup": ("determinism/buffer_after_warmup.py", "wrong_output",
                            r"trial [01]: an earlier output changed or shares storage with a later one"),
}
# Cheats that attack kernelsynth's own process (its frames, its guard, torch's dispatcher): no
# naive counterpart. The in-process checks are fooled; the independent check (rule 18) is not.
HARNESS_CASES = {
    # since session 24 the worker's own staleness check may see them first: the loosened tolerance they plant
    # (allclose, atol 10) turns on rule 10's absolute-tolerance change (4 atol on one element), and their
    # wrong outputs leave it; otherwise the independent check does
    "harness_loosen": ("audit|wrong_output", r"independent check: shape .*: not bit-exact|stale answer: after the "
                                             r"largest element of every float input moved"),
    # no trial runs; on the CPU path the census's profiled call (a call the payload does not
    # control) now catches its zeros in-process, else the independent check does
    "harness_skip": ("audit|wrong_output", r"independent check: shape .*: no output was recorded|"
                                           r"output of the profiled call \(census\): not bit-exact"),
    # caught by the guard in this order of events; by the independent check when the guard is fooled
    "harness_guard": ("audit|tampering", r"independent check: shape .*: not bit-exact|replaced kernelsynth\.verify"),
    # since session 11 the worker's guard of the reference's operators' kernels catches it first
    "dispatch_override": ("audit|tampering", r"independent check: shape .*: not bit-exact|registered a kernel for aten::flip"),
    "harness_shadow": ("tampering", r"replaced torch\.Tensor\.(any|numpy)"),
    "harness_early": ("audit|wrong_output", r"independent check: shape .*, trial 0: not bit-exact|stale answer: after "
                                            r"the largest element of every float input moved"),
}
SOFTMAX_CASES = {
    "partial": ("partial/skip_last_row.py", "wrong_output", r"outside atol=1e-05, rtol=3\.05e-05"),
    "tolerance": ("tolerance/zeros_tiny.py", "wrong_output", r"outside atol=1e-05, rtol=3\.05e-05"),
    "precision": ("precision/bf16_softmax.py", "wrong_output", r"outside atol=1e-05, rtol=3\.05e-05"),
    "nan": ("nan/nan_last_row.py", "wrong_output", r"NaN where the reference has none"),
    # the partial-staleness change (rule 10) plants values far from the others, where float16
    # logits leave the tolerance: it may see this one before the precision rule (rule 23) does,
    # which rejects it on its own (test_fp16_logits_fail_the_precision_rule_on_their_own)
    "precision_fp16": ("precision/fp16_logits.py", "wrong_output",
                       r"precision below the declared policy fp32|stale answer: after one element and a small "
                       r"region of the input changed in place, outside atol=1e-05, rtol=3\.05e-05"),
}
# (version, dtype) -> (fault, regex of the reason's first line): cpu/conv_precision.yaml, output dtype
# (rule 3) and precision (rule 23) cheats whose values are inside the task's tolerances
CONV_PRECISION_CASES = {
    ("dtype_half", "float32"): ("wrong_output", r"output dtype torch\.float16, expected torch\.float32"),
    ("dtype_float", "bfloat16"): ("wrong_output", r"output dtype torch\.float32, expected torch\.bfloat16"),
    # bfloat16 chunk sums leave the tolerance on one of rule 10's changed inputs first (the input
    # scaled by 1 + 4 rtol since session 8; since session 10's planted parameter block, seed 0: the
    # overwritten input, one element of 144), or fail rule 23
    ("precision_chunks", "float32"): ("wrong_output", r"precision below the declared policy tf32|"
                                      r"scaled in place by 1 \+ 4 rtol .* outside atol=0\.005|"
                                      r"stale answer: after the input was overwritten in place, outside atol=0\.005"),
    ("precision_chunks", "bfloat16"): ("wrong_output", r"precision below the declared policy bf16"),
    ("precision_9bit", "float32"): ("wrong_output", r"precision below the declared policy tf32"),
}
CONV_FILES = {"dtype_half": "dtype/half_output.py", "dtype_float": "dtype/float_output_on_bf16.py",
              "precision_chunks": "precision/chunked_bf16_accumulator.py",
              "precision_9bit": "precision/nine_bit_operands.py"}
HONEST_CONV = ["honest_tf32", "honest_split_k", "honest_prepacked", "honest_v3"]
HONEST_FLIP = ["honest_index", "honest_gather", "honest_gather_kernel", "honest_flat_tiles"]
HONEST_FILES = {"honest_index": ("honest/index.py", {}), "honest_gather": ("honest/gather.py", {}),
                "honest_gather_kernel": ("honest/gather_index_kernel.py", {"BLOCK": 64}),
                "honest_flat_tiles": ("honest/flat_tiles.py", {"BLOCK": 512})}


def _ours(tmp_path_factory, spec, extra=()):
    """Observations of one engine run of tests/adversarial/cpu/``spec``: ({version: observation},
    its trajectories); a conv_precision spec's are keyed by (version, dtype)."""
    run_dir = tmp_path_factory.mktemp(spec.split(".")[0])
    res = engine.run(compose(RUN + list(extra) + [f"task.spec={ADV / 'cpu' / spec}"]), run_dir)
    if spec.startswith("conv_precision"):
        return {(o["version"], o["dtype"]): o for o in res.observations}, res.trajectories
    return {o["version"]: o for o in res.observations}, res.trajectories


# One module fixture per spec, each its own xdist group (tests/conftest.py): the two processes of
# the suite share the five runs instead of one process running all of them.
@pytest.fixture(scope="module")
def ours_flip(tmp_path_factory):
    return _ours(tmp_path_factory, "spec.yaml")


#: For the specs whose candidates neither tamper nor leave state (numeric, dtype and precision
#: cheats, honest kernels): they share workers, as a run does by default. A fresh worker per job
#: costs its start-up (torch and triton imports) for every job; the observations are the same
#: (conv_precision.yaml: the same verdicts, faults and reasons both ways, 260 s instead of 333 s).
SHARED_WORKERS = ["exploration.fresh_worker=external"]


@pytest.fixture(scope="module")
def ours_softmax(tmp_path_factory):
    return _ours(tmp_path_factory, "softmax.yaml", SHARED_WORKERS)


@pytest.fixture(scope="module")
def ours_conv(tmp_path_factory):
    return _ours(tmp_path_factory, "conv.yaml")


@pytest.fixture(scope="module")
def ours_conv_precision(tmp_path_factory):
    return _ours(tmp_path_factory, "conv_precision.yaml", SHARED_WORKERS)


@pytest.fixture(scope="module")
def ours_conv_precision_f32(tmp_path_factory):
    # precision-only cheats: shared workers, one trial (768 outputs a group, over MIN_ELEMENTS)
    return _ours(tmp_path_factory, "conv_precision_f32.yaml", SHARED_WORKERS + ["exploration.trials=1"])


def _model(rel, **config):
    return import_file(ADV / "cpu" / rel).ModelNew(**config)


def _fresh_model(rel, **config):
    """Like _model, but the file is executed again (its import-time patches happen again)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"fresh_{time.monotonic_ns()}", ADV / "cpu" / rel)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.ModelNew(**config)


def _first_line(o):
    return (o["reason"] or "").splitlines()[0] if o["reason"] else ""


@pytest.mark.parametrize("version", sorted(FLIP_CASES))
def test_flip_cheat_passes_the_naive_harness_and_fails_ours(version, ours_flip):
    rel, fault, reason = FLIP_CASES[version]
    with restored_namespaces():
        assert naive_accepts(_model(rel), FLIP.Model(), FLIP.get_inputs, FLIP_SHAPES), "naive harness rejected it"
    o = ours_flip[0][version]
    assert o["verdict"] == "rejected" and o["fault"] == fault, (o["fault"], _first_line(o))
    assert re.search(reason, _first_line(o)), _first_line(o)


@pytest.mark.parametrize("version", sorted(HARNESS_CASES))
def test_cheat_that_attacks_the_harness_process_fails_the_independent_check(version, ours_flip):
    fault, reason = HARNESS_CASES[version]
    o = ours_flip[0][version]
    assert o["verdict"] == "rejected" and re.fullmatch(fault, o["fault"]), (o["fault"], _first_line(o))
    assert re.search(reason, _first_line(o)), _first_line(o)


@pytest.mark.parametrize("version", sorted(SOFTMAX_CASES))
def test_softmax_cheat_passes_the_naive_harness_and_fails_ours(version, ours_softmax):
    rel, fault, reason = SOFTMAX_CASES[version]
    check = "count" if version == "nan" else "allclose"  # allclose itself never lets NaN through
    assert naive_accepts(_model(rel), SOFTMAX.Model(), SOFTMAX.get_inputs, SOFTMAX_SHAPES, check=check)
    o = ours_softmax[0][version]
    assert o["verdict"] == "rejected" and o["fault"] == fault, (o["fault"], _first_line(o))
    assert re.search(reason, _first_line(o)), _first_line(o)


def test_fp16_logits_fail_the_precision_rule_on_their_own():
    """Rule 23 alone (no determinism or staleness calls): float16 logits are inside the max-error
    tolerance on the listed inputs, and below the declared fp32 policy."""
    from kernelsynth.verify import VerificationFailure, VerifyPolicy, verify

    policy = VerifyPolicy(dtype=torch.float32, device=torch.device("cpu"), seed=0, comparison="allclose",
                          tol={"atol": 1e-5, "rtol": 3.05e-5}, precision="fp32")
    with pytest.raises(VerificationFailure, match="precision below the declared policy fp32"):
        verify(_model("precision/fp16_logits.py"), SOFTMAX.Model(), SOFTMAX.get_inputs, SOFTMAX_SHAPES, policy,
               trials=2, determinism=False)
    verify(_model("honest/softmax_online.py", BLOCK=1024), SOFTMAX.Model(), SOFTMAX.get_inputs, SOFTMAX_SHAPES, policy,
           trials=2, determinism=False)  # an honest float32 softmax passes the same rule


def test_shape_specialised_cheat_is_caught_on_a_harness_shape_not_a_listed_one(ours_flip):
    o = ours_flip[0]["shapes_listed"]
    listed = {f"{s['M']}x{s['N']}" for s in FLIP_SHAPES}
    shape = re.search(r"shape (\d+x\d+)", _first_line(o)).group(1)
    assert shape not in listed


def test_timer_patch_fools_a_naive_host_timer_and_is_tampering_for_ours(ours_flip):
    x = torch.randn(64, 64)
    honest = _model("honest/index.py")
    # 50 calls take about 0.5 ms, so one preemption of the process inside a measurement can outweigh the
    # patch's 100x (a fresh-clone suite, session 31: 0.0041 against 0.0102 ms): the best of 7 each
    with restored_namespaces():
        before = min(naive_time_ms(lambda: honest(x), n=50) for _ in range(7))
        cheat = _fresh_model("timer/patch_perf_counter.py")
        after = min(naive_time_ms(lambda: cheat(x), n=50) for _ in range(7))
    assert after < before / 10  # the same work, "100x faster" on the patched clock
    assert ours_flip[0]["timer_events"]["fault"] == "tampering"
    assert "torch.cuda.Event.elapsed_time" in _first_line(ours_flip[0]["timer_events"])
    assert ours_flip[0]["integrity_verifier"]["fault"] == "tampering"
    assert "kernelsynth.verify.compare" in _first_line(ours_flip[0]["integrity_verifier"])


def test_kill_parent_kills_a_naive_harness_parent_and_is_refused_by_ours(ours_flip, tmp_path):
    """Naive: the harness runs the candidate in a child of a sacrificial shell, which dies."""
    script = tmp_path / "naive_run.py"
    script.write_text(
        "import sys, torch\n"
        f"sys.path.insert(0, {str(ADV)!r})\n"
        "from kernelsynth.loading import import_file\n"
        f"m = import_file({str(ADV / 'cpu' / 'process' / 'kill_parent.py')!r}).ModelNew()\n"
        "m(torch.randn(3, 5))\n"
        "import time; time.sleep(2)\n")
    p = subprocess.run(["sh", "-c", f'"{sys.executable}" "{script}"; echo parent-survived'],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == -15 and "parent-survived" not in p.stdout  # the shell got SIGTERM
    o = ours_flip[0]["process"]
    assert o["fault"] == "exception" and "PermissionError" in _first_line(o) and "refused" in _first_line(o)


def test_pytorch_fallback_passes_both_harnesses_but_is_labelled_and_never_a_record(ours_flip):
    with restored_namespaces():
        assert naive_accepts(_model("fallback/torch_flip.py"), FLIP.Model(), FLIP.get_inputs, FLIP_SHAPES)
    o = ours_flip[0]["fallback"]
    assert o["verdict"] == "accepted" and o["reference_ops_used"] == "flip"
    assert "flip" in o["library_calls"].split(",")
    (traj,) = [t for t in ours_flip[1] if t["task"] == "adversarial_flip"]
    assert not traj["accepted"]
    assert "fallback: calls the reference's own operator(s) flip: a PyTorch fallback, not a kernel record" \
        in traj["reasons"]


@pytest.mark.parametrize("version", HONEST_FLIP)
def test_honest_flip_written_differently_is_accepted_by_both(version, ours_flip):
    rel, cfg = HONEST_FILES[version]
    assert naive_accepts(_model(rel, **cfg), FLIP.Model(), FLIP.get_inputs, FLIP_SHAPES)
    o = ours_flip[0][version]
    assert (o["verdict"], o["fault"], o["reason"]) == ("accepted", "ok", "")
    assert o["reference_ops_used"] is None
    # 2 trials per listed shape, 1 on each derived one: 3x4097, two fresh ones, M large and ragged,
    # two of one large dim that give M and N each 2 of the 3 residues (odd, 2 mod 4, 4 mod 8) above
    # the listed (the interpreter's plan, shapes.RESIDUE_PLAN: odd and one other; seed 0: M 2 mod 4, N 4 mod 8),
    # the even shape (every dim 2 mod 4 and at least 18) and the aligned one (powers of 2, at least 16:
    # shapes.even_shape, session 25)
    derived = [s for s in json.loads(o["verify_shapes"]) if s not in FLIP_SHAPES]
    even = [s for s in derived if all(v % 4 == 2 and v >= 18 for v in s.values())
            or all(v & (v - 1) == 0 and v >= 16 for v in s.values())]
    assert len(derived) == 8 and len(even) == 2 and {"M": 3, "N": 4097} in derived
    assert any(s["M"] >= 257 for s in derived)
    assert {(n, s[n] & -s[n]) for s in derived if s not in even for n in s
            if s[n] > max(x[n] for x in FLIP_SHAPES)} == {("M", 1), ("M", 2), ("N", 1), ("N", 4)}
    assert o["trials"] == 2 * len(FLIP_SHAPES) + len(derived)


def test_honest_softmax_written_differently_is_accepted_by_both(ours_softmax):
    assert naive_accepts(_model("honest/softmax_online.py", BLOCK=1024), SOFTMAX.Model(), SOFTMAX.get_inputs,
                         SOFTMAX_SHAPES)
    o = ours_softmax[0]["honest_online"]
    assert (o["verdict"], o["fault"]) == ("accepted", "ok"), _first_line(o)
    assert 0 < o["max_rel_err"] < 1e-5  # float32 against the float64 reference


def _conv_models(rel, dtype, shape):
    init = CONV.get_init_inputs(shape)
    torch.manual_seed(42)
    model = import_file(ADV / "cpu" / rel).ModelNew(*init).to(dtype)
    torch.manual_seed(42)
    return model, CONV.Model(*init).to(dtype)


@pytest.mark.parametrize("case", sorted(CONV_PRECISION_CASES))
def test_conv_dtype_and_precision_cheats_stay_inside_the_tolerance_and_fail_ours(case, ours_conv_precision):
    """Inside the task's max-error tolerance (so the old rules accepted them; the naive harness
    accepts the precision cheats and catches the dtype ones, as the issue says); ours rejects them
    by the output-dtype or the precision rule."""
    version, dtype_name = case
    dtype = getattr(torch, dtype_name)
    tol = {"float32": 5e-3, "bfloat16": 1e-2}[dtype_name]
    gen = torch.Generator().manual_seed(3)
    for shape in CONV_PRECISION_SHAPES:
        model, ref_model = _conv_models(CONV_FILES[version], dtype, shape)
        (x,) = CONV.get_inputs(shape, dtype, "cpu", gen)
        with torch.no_grad():
            out, ref = model(x), ref_model.double()(x.double())
        assert torch.allclose(out.double(), ref, atol=tol, rtol=tol)
    if version.startswith("precision"):
        models = [_conv_models(CONV_FILES[version], dtype, s) for s in CONV_PRECISION_SHAPES]
        assert all(naive_accepts(m, r, CONV.get_inputs, [s], dtype=dtype)
                   for (m, r), s in zip(models, CONV_PRECISION_SHAPES))
    fault, reason = CONV_PRECISION_CASES[case]
    o = ours_conv_precision[0][case]
    assert o["verdict"] == "rejected" and o["fault"] == fault, (o["fault"], _first_line(o))
    assert re.search(reason, _first_line(o)), _first_line(o)


# version of cpu/conv_precision_f32.yaml (float32) -> regex of the reason's first line: precision
# cheats that a pooled RMS misses (the red team's p1, p5, p2 and ours), rule 23's tail and
# lower-format statistics
DILUTED_CASES = {
    "rt_p1": r"precision below the declared policy tf32: .* \(precision rule, tail\)",
    "rt_p5": r"precision below the declared policy tf32: .* \(precision rule, tail\)",
    # bfloat16 on a block of rows: the tail statistic, or (the shapes of the run since the census
    # and parameter changes of session 6) the pooled RMS itself
    "dilute_rows": r"precision below the declared policy tf32: .* \(precision rule(, tail)?\)",
    "dilute_heavy": r"precision below the declared policy tf32: .* \(precision rule, tail\)",
    # every output but those an honest computation also has in float16's mantissa (session 26: 99.86 %)
    "rt_p2": r"output rounded to a lower format: (99\.[5-9]\d|100\.00)% .*\(precision rule, lower format\)",
    "low_even": r"output rounded to a lower format: .*\(precision rule, lower format\)",
    "low_large": r"output rounded to a lower format: .*\(precision rule, lower format\)",
}


@pytest.mark.parametrize("version", sorted(DILUTED_CASES))
def test_precision_cheats_on_part_of_the_output_or_in_the_bits_fail_ours(version, ours_conv_precision_f32):
    """Inside the tolerance and under the pooled RMS bound (the red team's p1, p5, p2 were
    accepted that way), rejected by the tail or the lower-format statistic."""
    o = ours_conv_precision_f32[0][(version, "float32")]
    assert o["verdict"] == "rejected" and o["fault"] == "wrong_output", (o["fault"], _first_line(o))
    assert re.search(DILUTED_CASES[version], _first_line(o)), _first_line(o)


def test_honest_tf32_rounded_to_nearest_is_accepted_with_its_statistics_recorded(ours_conv_precision_f32):
    o = ours_conv_precision_f32[0][("honest_rna", "float32")]
    assert (o["verdict"], o["fault"]) == ("accepted", "ok"), _first_line(o)
    assert 0 < o["precision_rms"] <= o["precision_bound"] / 2  # RN: about a third of truncation's
    assert 0 <= o["precision_tail"] <= o["precision_tail_bound"] / 2
    assert 0 <= o["precision_low"] <= o["precision_low_bound"] / 2


@pytest.mark.parametrize("version", HONEST_CONV)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_honest_conv_in_other_styles_is_accepted_with_its_precision_recorded(version, dtype, ours_conv_precision):
    o = ours_conv_precision[0][(version, dtype)]
    assert (o["verdict"], o["fault"]) == ("accepted", "ok"), _first_line(o)
    assert o["precision_policy"] == {"float32": "tf32", "bfloat16": "bf16"}[dtype]
    assert 0 < o["precision_rms"] <= o["precision_bound"] / 1.3  # accepted with margin
    if (version, dtype) == ("honest_tf32", "float32"):  # TF32-level error, far above float32's
        assert o["precision_rms"] > 1e3 * 2.0 ** -24


def test_precision_rule_is_about_precision_not_code(ours_conv_precision):
    """Truncating operands to 9 mantissa bits loses nothing from bfloat16 values (7 bits): the same
    file that fails the TF32 policy in float32 passes the bfloat16 policy."""
    assert ours_conv_precision[0][("precision_9bit", "bfloat16")]["verdict"] == "accepted"
    assert ours_conv_precision[0][("dtype_half", "bfloat16")]["verdict"] == "accepted"  # returns the input dtype there


def test_every_fixture_file_is_in_a_spec():
    """A cheat added to tests/adversarial/cpu without a spec entry would never run."""
    listed = set()
    for spec in ("spec.yaml", "softmax.yaml", "conv.yaml", "conv_precision.yaml", "conv_precision_f32.yaml"):
        listed |= set(re.findall(r"file: ([\w/]+\.py)", (ADV / "cpu" / spec).read_text()))
    files = {str(p.relative_to(ADV / "cpu")) for p in (ADV / "cpu").rglob("*.py")
             if not p.name.startswith("_")}  # _redteam_kernel.py: a module the precision cheats import
    assert files == listed


def test_source_screen_rejects_harness_attacks_before_they_run(tmp_path):
    """Rule 20: with the screen on (the default), candidates that reach frames, the heap or the
    harness are rejected without being imported; honest ones run as usual."""
    cpu = ADV / "cpu"
    extra = [cpu / "harness" / "frame_walk_loosen.py", cpu / "harness" / "patch_guard_and_compare.py",
             ROOT / "tests" / "fixtures" / "process_faults" / "kernels" / "forged_result_header.py",
             cpu / "honest" / "index.py"]
    cfg = compose(["hw=cpu", "exploration.trials=2", "exploration.progress=false", "task.dtypes=[float32]",
                   f"exploration.extra_candidates=[{','.join(map(str, extra))}]"])
    obs = {o["version"]: o for o in engine.run(cfg, tmp_path).observations if o["role"] == "external"}
    assert {k: o["fault"] for k, o in obs.items()} == {
        "frame_walk_loosen": "screened", "patch_guard_and_compare": "screened", "forged_result_header": "screened",
        "index": "ok"}
    assert "uses ._getframe" in obs["frame_walk_loosen"]["reason"]
    assert "uses sys.modules" in obs["patch_guard_and_compare"]["reason"]
    assert "imports gc" in obs["forged_result_header"]["reason"]


# ---------------------------------------------------------------- issue 10, classes 3-6 (numcov)

def _naive_conv(rel, **config):
    """The naive harness on conv: per listed shape, the candidate and the reference built from one
    seed (KernelBench's convention), the same instances for every trial."""
    for shape in CONV_SHAPES:
        init = CONV.get_init_inputs(shape)
        torch.manual_seed(0)
        ref = CONV.Model(*init)
        torch.manual_seed(0)
        model = import_file(ADV / "cpu" / rel).ModelNew(*init, **config)
        if not naive_accepts(model, ref, CONV.get_inputs, [shape]):
            return False
    return True


# version -> (file, library operators the census must name)
LIBRARY_DOORS = {
    "fallback_unfold": ("fallback/unfold_matmul.py", {"im2col", "mm"}),
    "fallback_private": ("fallback/private_slow_conv.py", {"_slow_conv2d_forward"}),
    "fallback_custom_op": ("fallback/custom_op_conv.py", {"numcov_cheat::conv3x3"}),
    "fallback_index_select": ("fallback/index_select_flip.py", {"index_select"}),
}


def _library_door(version, ours):
    """Rule 14: a census by what ran. None of these names one of the spec's reference_ops (the
    census by names let them through as kernels); all are correct, so both harnesses accept them,
    and ours labels them library calls and keeps them out of the kernel records. Returns (the
    naive harness's verdict, our observation, the library ops expected, our trajectory's reasons,
    whether our trajectory was accepted)."""
    rel, ops = LIBRARY_DOORS[version]
    with restored_namespaces():
        if version == "fallback_index_select":
            naive = naive_accepts(_model(rel), FLIP.Model(), FLIP.get_inputs, FLIP_SHAPES)
        else:
            naive = _naive_conv(rel)
    task = "adversarial_flip" if version == "fallback_index_select" else "adversarial_conv"
    (traj,) = [t for t in ours[1] if t["task"] == task]
    return naive, ours[0][version], ops, traj["reasons"], traj["accepted"]


def _labelled_not_a_record(version, reasons):
    return any(r.startswith(f"{version}: library calls (operator(s) ") and "not a kernel record" in r for r in reasons)


# one test per spec's run (each its own fixture and xdist group), the same checks
@pytest.mark.parametrize("version", sorted(set(LIBRARY_DOORS) - {"fallback_index_select"}))
def test_library_call_through_another_door_is_labelled_and_never_a_record(version, ours_conv):
    naive, o, ops, reasons, accepted = _library_door(version, ours_conv)
    assert naive
    assert (o["verdict"], o["fault"]) == ("accepted", "ok"), _first_line(o)
    assert o["reference_ops_used"] is None and ops <= set(o["library_calls"].split(",")), o["library_calls"]
    assert not accepted and _labelled_not_a_record(version, reasons), reasons


def test_library_call_through_index_select_is_labelled_and_never_a_record(ours_flip):
    naive, o, ops, reasons, accepted = _library_door("fallback_index_select", ours_flip)
    assert naive
    assert (o["verdict"], o["fault"]) == ("accepted", "ok"), _first_line(o)
    assert o["reference_ops_used"] is None and ops <= set(o["library_calls"].split(",")), o["library_calls"]
    assert not accepted and _labelled_not_a_record("fallback_index_select", reasons), reasons


# version -> (file, regex of the first line of the reason)
CONV_CASES = {
    # rule 21: trial 1 rebuilds both modules from trial 0's seed with one element of every random
    # draw changed; a cache keyed on shapes, on the class or on four sampled weights is stale there
    "params_shape": ("params/packed_by_shape.py", r"trial 1: outside atol=0\.005"),
    "params_class": ("params/class_cache.py", r"trial 1: outside atol=0\.005"),
    "params_sampled": ("params/sampled_weights.py", r"trial 1: outside atol=0\.005"),
    # rule 12: every dim large and ragged in some derived shape (here H)
    "shapes_h": ("shapes/large_ragged_h.py", r"shape \d+x\d+x\d+x(\d+)x\d+, trial 0: outside atol"),
    # rule 10: one element and a small region changed in place
    "memo_conv": ("caching/sampled_memo_conv.py", r"stale answer: after one element and a small region"),
}


@pytest.mark.parametrize("version", sorted(CONV_CASES))
def test_conv_cheat_passes_the_naive_harness_and_fails_ours(version, ours_conv):
    rel, reason = CONV_CASES[version]
    with restored_namespaces():
        assert _naive_conv(rel), "naive harness rejected it"
    o = ours_conv[0][version]
    assert (o["verdict"], o["fault"]) == ("rejected", "wrong_output"), (o["fault"], _first_line(o))
    m = re.search(reason, _first_line(o))
    assert m, _first_line(o)
    if version == "shapes_h":  # a derived shape, H large and ragged (odd, 2 mod 4 or 4 mod 8: rule 12's
        # residues), none of the listed ones
        from kernelsynth.shapes import is_large_ragged

        assert is_large_ragged(int(m.group(1))), m.group(1)


FLIP_NUMERIC_CASES = {
    "shapes_m": ("shapes/large_ragged_m.py", r"shape (\d+)x\d+, trial 0: not bit-exact"),
    # caught on shape 4x67 by the last-element change since session 7 (rule 10), else by the element and region
    "memo_sampled": ("caching/sampled_memo.py",
                     r"stale answer: after (one element and a small region|the last element of the input alone)"),
}


@pytest.mark.parametrize("version", sorted(FLIP_NUMERIC_CASES))
def test_flip_shape_and_partial_staleness_cheats_fail_ours(version, ours_flip):
    rel, reason = FLIP_NUMERIC_CASES[version]
    with restored_namespaces():
        assert naive_accepts(_model(rel), FLIP.Model(), FLIP.get_inputs, FLIP_SHAPES), "naive harness rejected it"
    o = ours_flip[0][version]
    assert (o["verdict"], o["fault"]) == ("rejected", "wrong_output"), (o["fault"], _first_line(o))
    m = re.search(reason, _first_line(o))
    assert m, _first_line(o)
    if version == "shapes_m":
        assert int(m.group(1)) >= 257


def test_honest_conv_with_weights_packed_at_construction_is_accepted_by_both(ours_conv):
    """Preparing weights once at construction stays legitimate with fresh parameters per trial;
    allocation and layout calls around a Triton kernel are not library calls."""
    cfg = {"BLOCK_P": 64, "BLOCK_R": 128, "BLOCK_K": 128}
    assert _naive_conv("honest/conv_packed_direct.py", **cfg)
    o = ours_conv[0]["honest_conv"]
    assert (o["verdict"], o["fault"], o["reason"]) == ("accepted", "ok", ""), _first_line(o)
    assert o["library_calls"] is None and o["reference_ops_used"] is None
    assert o["max_abs_err"] < 1e-4  # float32 arithmetic against the float64 reference
    shapes = json.loads(o["verify_shapes"])
    for dim in ("N", "C_in", "C_out", "H", "W"):  # every dim large and ragged somewhere
        assert any(s[dim] >= 257 and s[dim] % 2 for s in shapes), dim


def test_honest_flip_through_permuted_views_is_accepted_and_no_library_call(ours_flip):
    assert naive_accepts(_model("honest/flip_permuted.py", BLOCK=64), FLIP.Model(), FLIP.get_inputs, FLIP_SHAPES)
    o = ours_flip[0]["honest_permuted"]
    assert (o["verdict"], o["fault"], o["reason"]) == ("accepted", "ok", ""), _first_line(o)
    assert o["library_calls"] is None
    assert {"empty", "permute"} <= set(o["aten_ops"].split(","))


# ------------------------------------------------- issue 10, classes 3, 4 and 6 (numcensus, session 6)

RT = "../redteam_2026_12_01/"  # the red team's files, run from the spec's folder (tests/adversarial/cpu)
# version -> (file, library_calls the census must name, names it must not)
CENSUS_LABELLED = {
    "census_tolist": ("census/tolist_flip.py", {"host:tolist"}, set()),
    "census_copies": ("census/launch_then_copies.py", {"copy_(input)"}, {"(no kernel of its own)"}),
    "census_excluded": ("census/excluded_key_index.py", {"index_select"}, set()),
    "rt_ff1": (RT + "flip/ff1_flip_by_column_copies.py", {"copy_(input)", "(no kernel of its own)"}, set()),
    "rt_ff2": (RT + "flip/ff2_numpy_flip.py", {"host:numpy", "host:from_numpy"}, set()),
}


@pytest.mark.parametrize("version", sorted(CENSUS_LABELLED))
def test_library_door_the_dispatch_mode_misses_is_labelled_and_never_a_record(version, ours_flip):
    """Rule 14, doors the operator census's dispatch mode cannot see: the host (tolist, numpy),
    copies of the input on a data-movement task (with or without one launch of its own), the
    Python key excluded (the profiled call sees it). Correct, so both harnesses accept; ours labels."""
    rel, must, must_not = CENSUS_LABELLED[version]
    with restored_namespaces():
        assert naive_accepts(_model(rel), FLIP.Model(), FLIP.get_inputs, FLIP_SHAPES)
    o = ours_flip[0][version]
    assert (o["verdict"], o["fault"]) == ("accepted", "ok"), _first_line(o)
    calls = set((o["library_calls"] or "").split(","))
    assert must <= calls and not must_not & calls, o["library_calls"]
    (traj,) = [t for t in ours_flip[1] if t["task"] == "adversarial_flip"]
    assert any(r.startswith(f"{version}: library calls (operator(s) ") for r in traj["reasons"]), traj["reasons"]


# version -> (file, regex of the reason's first line)
NUMCENSUS_FLIP_REJECTED = {
    # rule 11: a thread started and joined inside forward (the dispatch mode is thread-local)
    "census_pool": ("census/pool_flip.py", r"shape 3x5, trial 0: 1 thread\(s\) started during the call"),
    # rule 10: memos on fingerprints that a change of values keeps; writes that keep x._version
    "memo_multiset": ("caching/multiset_memo.py", r"trial 0: stale answer: after values of the input were moved"),
    "memo_version_extrema": ("caching/version_extrema_memo.py",
                             r"trial 0: stale answer: after values of the input were moved"),
    "rt_fm1": (RT + "flip/fm1_memo_on_version.py", r"trial 0: stale answer: after one element and a small region"),
    "rt_fm3": (RT + "flip2/fm3_memo_on_sums.py", r"trial 0: stale answer: after values of the input were moved"),
}


@pytest.mark.parametrize("version", sorted(NUMCENSUS_FLIP_REJECTED))
def test_joined_thread_and_fingerprint_memo_pass_the_naive_harness_and_fail_ours(version, ours_flip):
    rel, reason = NUMCENSUS_FLIP_REJECTED[version]
    with restored_namespaces():
        assert naive_accepts(_model(rel), FLIP.Model(), FLIP.get_inputs, FLIP_SHAPES), "naive harness rejected it"
    o = ours_flip[0][version]
    assert (o["verdict"], o["fault"]) == ("rejected", "wrong_output"), (o["fault"], _first_line(o))
    assert re.search(reason, _first_line(o)), _first_line(o)


NUMCENSUS_CONV_REJECTED = {
    # rule 21: trial 1 = trial 0's input and seed with two weights swapped (sums, histogram, sorted
    # values and maximum kept); caches keyed on those, or on the input alone, are stale there
    "params_histogram": ("params/histogram_weights.py", r"shape 1x3x8x5x7, trial 1: outside atol=0\.005"),
    "params_sorted": ("params/sorted_weights.py", r"shape 1x3x8x5x7, trial 1: outside atol=0\.005"),
    "params_input_memo": ("params/input_memo_weight_sum.py", r"shape 1x3x8x5x7, trial 1: outside atol=0\.005"),
    "rt_k1": (RT + "conv/k1_output_memo_ignores_weights.py", r"shape 1x3x8x5x7, trial 1: outside atol=0\.005"),
    "rt_k2": (RT + "conv/k2_packed_weights_by_symmetric_fingerprint.py",
              r"shape 1x3x8x5x7, trial 1: outside atol=0\.005"),
    "rt_k3": (RT + "conv/k3_packed_weights_by_sample_and_max.py", r"shape 1x3x8x5x7, trial 1: outside atol=0\.005"),
    # rule 10
    "rt_m1": (RT + "conv/m1_memo_on_version_counter.py", r"trial 0: stale answer: after one element and a small"),
    "rt_m3": (RT + "conv2/m3_memo_on_sums.py", r"trial 0: stale answer: after values of the input were moved"),
    # rule 11
    "rt_f1": (RT + "conv/f1_conv_in_joined_thread.py", r"trial 0: 1 thread\(s\) started during the call"),
}


@pytest.mark.parametrize("version", sorted(NUMCENSUS_CONV_REJECTED))
def test_parameter_memo_fingerprint_memo_and_thread_conv_cheats_fail_ours(version, ours_conv):
    rel, reason = NUMCENSUS_CONV_REJECTED[version]
    with restored_namespaces():
        assert _naive_conv(rel), "naive harness rejected it"
    o = ours_conv[0][version]
    assert (o["verdict"], o["fault"]) == ("rejected", "wrong_output"), (o["fault"], _first_line(o))
    assert re.search(reason, _first_line(o)), _first_line(o)


def test_honest_persistent_kernel_into_a_pitched_buffer_is_accepted_without_labels(ours_flip):
    """A copy of its own buffer (not of the input) and empty_strided are layout, on a data-movement task."""
    assert naive_accepts(_model("honest/persistent_pitched.py", BLOCK=64, PROGRAMS=4), FLIP.Model(), FLIP.get_inputs,
                         FLIP_SHAPES)
    o = ours_flip[0]["honest_pitched"]
    assert (o["verdict"], o["fault"], o["reason"]) == ("accepted", "ok", ""), _first_line(o)
    assert o["library_calls"] is None, o["library_calls"]


def _redteam_conv(name):
    torch.manual_seed(0)
    return import_file(ADV / "redteam_2026_12_01" / "conv" / name).ModelNew(3, 4)


def test_profiled_call_sees_a_convolution_under_an_excluded_python_key_and_numpy_is_a_host_door():
    """The red team's f2 (aten.convolution with the Python key excluded: invisible to every dispatch
    mode) and f3 (numpy einsum via x.numpy()) on one tiny shape, in-process: the mode's census
    misses both; the profiled call names the convolution, the host doors name numpy."""
    from kernelsynth.verify import Census, call_poisoned, install_watch, library_calls, profiled_library_calls, \
        profiled_ops

    install_watch()
    cpu = torch.device("cpu")
    x = torch.randn(1, 3, 6, 6)
    f2, f3 = _redteam_conv("f2_conv_under_excluded_python_key.py"), _redteam_conv("f3_numpy_conv.py")
    mode = Census()
    call_poisoned(f2, [x], cpu, ops=mode)
    assert not {"convolution", "_convolution"} & set(library_calls(mode))  # the mode is blind to it
    _, ops = profiled_ops(f2, [x], cpu)
    assert "convolution" in profiled_library_calls(ops)
    census = Census()
    call_poisoned(f3, [x], cpu, ops=census)
    assert "host:numpy" in library_calls(census)


def test_own_triton_kernels_are_matched_by_launch_count_not_by_name():
    """GPU kernel census identity (issue 10): a profiled kernel named after one of the candidate's
    @triton.jit functions counts as its own only as often as that function launched (the red team's
    g2 names placeholder functions after cuDNN's kernels). The launch counter also counts the
    interpreter's launches, under the function's name."""
    import triton
    import triton.language as tl

    from kernelsynth.verify import install_watch, triton_launches, unlaunched_kernels

    cudnn = "void sm90_xmma_fprop_implicit_gemm_tf32f32_kernel<float>(Params)"
    assert unlaunched_kernels([cudnn, "_relu_pool"], {"sm90_xmma_fprop_implicit_gemm_tf32f32_kernel", "_relu_pool"},
                              {"_relu_pool": 1}) == [
        "sm90_xmma_fprop_implicit_gemm_tf32f32_kernel (ran 1x, launched 0x by the candidate's Triton code)"]
    assert unlaunched_kernels(["_relu_pool", "_relu_pool"], {"_relu_pool"}, {"_relu_pool": 2}) == []

    @triton.jit
    def _numcensus_probe(P):
        tl.store(P, 1.0)

    install_watch()
    before = triton_launches().get("_numcensus_probe", 0)
    _numcensus_probe[(1,)](torch.zeros(1))
    assert triton_launches()["_numcensus_probe"] == before + 1
