"""Issue 10 items 3-6 at the unit level: the fallback census by what ran (rule 14), the
partial-staleness changes (rule 10), parameters as inputs (rule 21) and per-dim shape planning
(rule 12). The end-to-end halves are in tests/test_adversarial.py (CPU) and
tests/test_adversarial_gpu.py (the launched-kernel census, GPU)."""

import math

import pytest
import torch
import torch.nn.functional as F

from kernelsynth.shapes import LARGE_DIM_PLAN, derived_shapes, is_large_ragged, large_dim_shapes
from kernelsynth.verify.census import LAYOUT_OPS, aten_ops_of, kernel_base_name, library_calls, own_kernel_names
from kernelsynth.verify.inputs import apply_changes, plan_changes, plan_permutation, trial_inputs
from kernelsynth.verify.params import PerturbDraws, build_seed
from kernelsynth.verify.poison import call_poisoned

CPU = torch.device("cpu")
X = torch.randn(1, 3, 5, 7)
W = torch.randn(8, 3, 3, 3)
B = torch.randn(8)


@torch.library.custom_op("numcov_test::conv", mutates_args=())
def _custom_conv(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return F.conv2d(x, w, padding=1)


DOORS = {
    "F.conv2d": (lambda x: F.conv2d(x, W, B, padding=1), "convolution"),
    "channels-last F.conv2d": (lambda x: F.conv2d(x.contiguous(memory_format=torch.channels_last), W, padding=1),
                               "convolution"),
    "torch.ops.aten.convolution": (lambda x: torch.ops.aten.convolution(x, W, None, [1, 1], [1, 1], [1, 1], False,
                                                                        [0, 0], 1), "convolution"),
    "torch._C._nn.thnn_conv2d": (lambda x: torch._C._nn.thnn_conv2d(x, W, [3, 3], B, [1, 1], [1, 1]),
                                 "_slow_conv2d_forward"),
    "torch._C._nn.im2col": (lambda x: torch._C._nn.im2col(x, [3, 3], [1, 1], [1, 1], [1, 1]), "im2col"),
    "unfold + matmul": (lambda x: W.reshape(8, -1) @ F.unfold(x, 3, padding=1), "im2col"),
    "einsum over Tensor.unfold windows": (
        lambda x: torch.einsum("nchwij,kcij->nkhw", F.pad(x, (1, 1, 1, 1)).unfold(2, 3, 1).unfold(3, 3, 1), W), "bmm"),
    "custom op": (lambda x: _custom_conv(x, W), "numcov_test::conv"),
    "flip through index_select": (lambda x: torch.index_select(x, 3, torch.arange(6, -1, -1)), "index_select"),
    "flip through gather": (lambda x: torch.gather(x, 3, torch.arange(6, -1, -1).expand(1, 3, 5, 7)), "gather"),
    "flip through advanced indexing": (lambda x: x[..., torch.arange(6, -1, -1)], "index"),
    "bias add in torch": (lambda x: x + 1.0, "add"),
}


@pytest.mark.parametrize("door", sorted(DOORS))
def test_census_names_a_library_call_through_every_door(door):
    fn, op = DOORS[door]
    ops = aten_ops_of(fn, [X], CPU)
    assert op in library_calls(ops), (door, ops)


def test_census_sees_the_same_operators_inside_the_poisoned_verified_call():
    ops = set()
    call_poisoned(lambda x: F.max_pool2d(torch.relu(F.conv2d(x, W, padding=1)), 2), [X], CPU, True, None, ops)
    assert {"convolution", "relu", "max_pool2d_with_indices"} <= ops


def test_allocation_views_and_layout_copies_are_not_library_calls():
    def layout_only(x):
        y = torch.empty_like(x)
        z = torch.zeros((2, 3))
        x.permute(0, 2, 3, 1).contiguous().view(-1)
        x.contiguous(memory_format=torch.channels_last)
        x.reshape(3, -1).t().clone()
        x.to(torch.bfloat16)
        F.pad(x, (1, 1))
        torch.arange(5)
        y.copy_(x)
        return y, z, x[:, 1:].unsqueeze(0).expand(2, -1, -1, -1, -1)

    ops = aten_ops_of(layout_only, [X], CPU)
    assert ops and set(ops) <= LAYOUT_OPS, set(ops) - LAYOUT_OPS
    assert library_calls(ops) == []


def test_a_layout_operator_the_reference_uses_is_a_library_call():
    """A transpose task's reference is a copy: its own operator is never layout for it."""
    assert library_calls(["clone", "empty"], reference_ops=["clone"]) == ["clone"]


def test_kernel_names_are_matched_by_identifier(tmp_path):
    assert kernel_base_name("void at::native::vectorized_elementwise_kernel<4, float>(int, float*)") == \
        "vectorized_elementwise_kernel"
    assert kernel_base_name("_flip_cols_kernel") == "_flip_cols_kernel"
    lib = tmp_path / "ext.so"
    lib.write_bytes(b"\x00_Z15my_conv_kernelPKfPfi\x00")
    is_own = own_kernel_names(None, raw_kernel="conv_relu_maxpool_naive", libraries=[str(lib)])
    assert is_own("conv_relu_maxpool_naive")
    assert is_own("my_conv_kernel(float const*, float*, int)")
    assert not is_own("sm90_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.bool])
def test_partial_changes_touch_one_element_and_a_small_region(dtype):
    gen = torch.Generator().manual_seed(3)
    x = (torch.randn(40, 50) * 10).to(dtype)
    one, region = x.clone(), x.clone()
    apply_changes([one], plan_changes([one], gen, False))
    apply_changes([region], plan_changes([region], gen, True))
    assert int((one != x).sum()) == 1
    changed = (region != x).reshape(-1).nonzero().reshape(-1)
    assert len(changed) == 2000 // 64 and int(changed[-1] - changed[0]) == len(changed) - 1  # one run
    if dtype.is_floating_point:
        assert float((one.double() - x.double()).abs().max()) >= 3.0


def test_parameter_perturbation_is_the_same_for_two_modules_drawn_alike_and_keeps_fingerprints():
    def build(kind):
        torch.manual_seed(7)
        with PerturbDraws(7, kind) if kind else torch.no_grad():
            return torch.nn.Conv2d(3, 8, 3, padding=1)

    plain = build(None)
    for kind in ("swap", "inside"):
        a, b = build(kind), build(kind)
        assert torch.equal(a.bias, plain.bias)  # the first draw (the weight) only: other tensors as drawn
        for name in ("weight", "bias"):
            pa, pb, p0 = (getattr(m, name).detach() for m in (a, b, plain))
            assert torch.equal(pa, pb)  # reference and candidate get the same parameters
            if name == "bias":
                continue
            if kind == "swap":  # two elements trade places: sums, max and sorted values as drawn
                assert int((pa != p0).sum()) == 2
                assert torch.equal(pa.flatten().sort()[0], p0.flatten().sort()[0])
                assert abs(float(pa.double().sum() - p0.double().sum())) < 1e-12
                assert float(pa.abs().max()) == float(p0.abs().max())
            else:  # one element changed, strictly inside the range: the maximum stays
                assert int((pa != p0).sum()) == 1
                assert float(pa.abs().max()) == float(p0.abs().max())
    assert build_seed(0, "listed", 2, 1) == (build_seed(0, "listed", 2, 0)[0], "swap")
    assert build_seed(0, "listed", 2, 2) == (build_seed(0, "listed", 2, 0)[0], "inside")
    # trial 3: the weight as drawn, the bias moved (redteam_s7 k1: prepared weight and bias cached on
    # the weight's bytes alone answered trial 3 with trial 0's bias)
    assert build_seed(0, "listed", 2, 3) == (build_seed(0, "listed", 2, 0)[0], "rest")
    a, b = build("rest"), build("rest")
    assert torch.equal(a.weight, plain.weight) and torch.equal(a.bias, b.bias)
    assert int((a.bias != plain.bias).sum()) == 1 and float(a.bias.abs().max()) == float(plain.bias.abs().max())
    assert build_seed(0, "listed", 2, 4)[0] not in (build_seed(0, "listed", 2, 0)[0], build_seed(0, "listed", 2, 5)[0])
    assert build_seed(0, "derived", 0, 0) != build_seed(0, "listed", 0, 0)


def test_trial_one_reuses_trial_zero_inputs_with_other_parameters():
    """Rule 21: an output memo keyed on the input alone must meet one input under two parameter sets."""
    shape = {"M": 4, "N": 6}
    get = lambda s, dt, dev, g: [torch.randn(s["M"], s["N"], generator=g, dtype=dt, device=dev)]  # noqa: E731
    x0, x1, x2 = (trial_inputs(get, shape, 0, t, 5, torch.float32, torch.device("cpu"), False)[0][0]
                  for t in range(3))
    assert torch.equal(x0, x1) and not torch.equal(x0, x2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_permutation_change_keeps_sums_and_values_and_moves_no_version(dtype):
    """Rule 10: the permutation change keeps sums and the multiset (a memo keyed on them is stale)
    and, like every partial change, does not bump the version counter; ints stay in range."""
    gen = torch.Generator().manual_seed(4)
    x = {torch.float32: torch.randn(40, 50) * 10, torch.int64: torch.randint(0, 10, (40, 50)),
         torch.bool: torch.rand(40, 50) < 0.5}[dtype]
    y, v = x.clone(), x._version
    apply_changes([x], plan_permutation([x], gen))
    assert x._version == v
    assert int((x != y).sum()) >= 3
    assert torch.equal(x.flatten().sort()[0], y.flatten().sort()[0])
    z = torch.randint(0, 10, (40, 50))
    apply_changes([z], plan_changes([z], gen, True) + plan_changes([z], gen, False))
    assert z._version == 0 and 0 <= int(z.min()) and int(z.max()) < 10


CONV_LISTED = [dict(zip(("N", "C_in", "C_out", "H", "W"), v)) for v in
               [[1, 64, 128, 32, 32], [2, 3, 8, 17, 19], [1, 1, 1, 2, 2], [3, 5, 7, 9, 6], [1, 16, 40, 15, 33],
                [2, 64, 128, 31, 30]]]


@pytest.mark.parametrize("target", sorted(LARGE_DIM_PLAN))
def test_every_dim_reaches_a_large_ragged_value_within_the_budget(target):
    high, budget = LARGE_DIM_PLAN[target]
    for listed in (CONV_LISTED, [{"M": 3, "N": 5}, {"M": 4, "N": 67}], [{"M": 1, "N": 4097}, {"M": 4097, "N": 1}]):
        shapes = listed + derived_shapes(listed, seed=5)
        extra = large_dim_shapes(shapes, seed=5, high=high, budget=budget, pack=target == "gpu")
        for dim in listed[0]:
            assert any(is_large_ragged(s[dim]) for s in shapes + extra), (target, dim)
        for s in extra:
            assert math.prod(s.values()) <= budget and s not in shapes
            big = [d for d in s if is_large_ragged(s[d]) and not any(is_large_ragged(x[d]) for x in shapes)]
            assert big and all(257 <= s[d] <= high for d in big)
        # packed: fewer new shapes than dims that needed one (conv's five dims on a GPU: two)
        needed = [d for d in listed[0] if not any(is_large_ragged(s[d]) for s in shapes)]
        if target == "gpu":
            assert len(extra) <= max(1, len(needed) - 1) or len(needed) <= 1, (target, needed, extra)
        else:  # the interpreter compiles nothing: one shape per dim keeps its work small
            assert len(extra) == len(needed), (target, needed, extra)
    # dims the listed shapes already make large and ragged get nothing new (flip2d on a GPU)
    flip = [{"M": 1, "N": 4097}, {"M": 4097, "N": 1}]
    assert large_dim_shapes(flip, 0, high, budget) == []


def test_large_ragged_values_avoid_the_tile_moduli():
    assert is_large_ragged(257) and is_large_ragged(4097)
    assert not is_large_ragged(256) and not is_large_ragged(384) and not is_large_ragged(255)
    for seed in range(20):
        for s in large_dim_shapes([{"A": 1, "B": 2}], seed, 8192, 2**30):
            assert all(v % m for v in s.values() if v >= 257 for m in (8, 16, 32, 64, 128))


def test_derived_and_large_shapes_honour_the_spec_constraints():
    """The failing input seen on the H200: conv_relu_maxpool's derived shapes drew H = 1, and
    MaxPool2d(2) of a 1-row map has no output (the reference itself raised). With the spec's
    ``constraints: {H: {min: 2}, W: {min: 2}}`` no seed draws it; without them many do."""
    from kernelsynth.spec import load_spec
    from kernelsynth.paths import SPECS_DIR

    spec = load_spec(SPECS_DIR / "conv_relu_maxpool" / "spec.yaml")
    assert spec.constraints == {"H": {"min": 2}, "W": {"min": 2}}
    high, budget = LARGE_DIM_PLAN["gpu"]

    def too_small(constraints):
        n = 0
        for seed in range(50):
            for listed in (spec.verify_shapes, spec.interpret_shapes):
                d = derived_shapes(listed, seed, constraints=constraints)
                d += large_dim_shapes(listed + d, seed, high, budget, constraints=constraints)
                n += any(s["H"] < 2 or s["W"] < 2 for s in d)
        return n
    assert too_small(None) > 10 and too_small(spec.constraints) == 0
    # a multiple_of dim: every new value a multiple, its large value an odd multiple (ragged past it)
    rule = {"D": {"multiple_of": 8, "min": 16}}
    for seed in range(20):
        listed = [{"B": 3, "D": 16}, {"B": 5, "D": 64}]
        d = derived_shapes(listed, seed, constraints=rule)
        big = large_dim_shapes(listed + d, seed, 8192, 2**30, constraints=rule)
        assert all(s["D"] % 8 == 0 and s["D"] >= 16 for s in d + big)
        assert any(is_large_ragged(s["D"], multiple_of=8) and s["D"] % 16 for s in d + big), d + big


def test_a_dim_that_cannot_fit_the_budget_is_left_out():
    assert large_dim_shapes([{"A": 100, "B": 100}], 0, 512, budget=100 * 200) == []


def test_kernel_census_says_nothing_without_device_activity():
    """On a machine without CUDA the profiler records no kernels: the census returns the call's
    output and None (unknown), never an empty list that would read as 'no foreign kernel'."""
    from kernelsynth.verify.census import kernel_census

    x = torch.randn(5)
    out, foreign = kernel_census(torch.relu, [x], CPU, lambda name: False)
    assert torch.equal(out, torch.relu(x)) and foreign is None


def test_a_reference_failing_on_a_derived_shape_names_the_shape_and_the_constraints_field(tmp_path):
    """The H200 failure had no shape in its message ("the reference failed on the audited shapes
    ...: Output size is too small"). Now the oracle names the shape and the spec field to fix."""
    import dataclasses

    from kernelsynth.hardware import Hardware
    from kernelsynth.jobs import oracle
    from kernelsynth.paths import SPECS_DIR
    from kernelsynth.spec import load_spec
    from kernelsynth.stages.exploration import Exploration

    spec = load_spec(SPECS_DIR / "conv_relu_maxpool" / "spec.yaml")
    hw = Hardware(target="cpu", device_name="cpu", interpret=True)
    job = next(j for j in Exploration(trials=1).plan(spec, hw, cache_dir=tmp_path) if j.row["role"] == "candidate")
    bad = dict(spec.interpret_shapes[0], H=1)  # MaxPool2d(2) of one row: no output
    req = dataclasses.replace(job.request, derived_shapes=[bad])
    with pytest.raises(RuntimeError, match=r"on shape 1x3x8x1x7 \(derived shapes\).*Output size is too small"
                                           r".*constraints"):
        oracle(req)


def _gpu_and_interpreter_plans(task, seeds=range(2)):
    """{target: [derived shapes of each seed]} as exploration plans them (joint shapes included)."""
    from kernelsynth.paths import SPECS_DIR
    from kernelsynth.shapes import JOINT_PLAN, joint_shapes
    from kernelsynth.spec import load_spec
    from kernelsynth.stages.exploration import joint_fits

    spec = load_spec(SPECS_DIR / task / "spec.yaml")
    plans = {}
    for target in ("gpu", "interpret"):
        listed = spec.interpret_shapes if target == "interpret" else spec.verify_shapes
        high, budget = LARGE_DIM_PLAN[target]
        plans[target] = []
        for seed in seeds:
            d = derived_shapes(listed, seed, fresh=1 if target == "interpret" else 2, constraints=spec.constraints)
            j = joint_shapes(listed + d, seed, joint_fits(spec, listed, JOINT_PLAN[target]), high,
                             pairs=target == "gpu", constraints=spec.constraints, within_listed=target == "interpret")
            plans[target].append((listed, d, j, spec))
    return plans


def test_gpu_plan_has_dims_large_together_where_the_red_team_hid_bugs():
    """The red team's shape cheats (tests/adversarial/redteam_2026_12_01: s1 C_out > 256 with
    C_in >= 8, s2 H * W > 65536, fs1 N > 300 with M > 8, fs2 M > 4097 with N odd) passed every
    per-dim shape; the GPU plan's joint shapes reach each of them, for every seed, within the budget."""
    from kernelsynth.shapes import JOINT_PLAN

    for task, conds in (("conv_relu_maxpool", [lambda s: s["C_out"] > 256 and s["C_in"] >= 8,
                                               lambda s: s["H"] * s["W"] > 65536]),
                        ("flip2d", [lambda s: s["N"] > 300 and s["M"] > 8,
                                    lambda s: s["M"] > 4097 and s["N"] % 2 == 1])):
        for listed, d, j, spec in _gpu_and_interpreter_plans(task)["gpu"]:
            assert all(any(c(s) for s in j) for c in conds), (task, j)
            every = j[0]  # the all-dims shape: every dim odd, none a multiple of a tile
            assert all(v % 2 == 1 for v in every.values()), every
            for s in j:
                work = spec.work_model(s, "float32")
                assert math.prod(s.values()) <= JOINT_PLAN["gpu"][0] and work["bytes"] <= JOINT_PLAN["gpu"][1]
                assert work.get("flops", 0) <= JOINT_PLAN["gpu"][2]


def test_interpreter_plan_keeps_its_shape_count_and_cost():
    """On the interpreter the joint shape takes the place of one fresh random shape and costs no
    more than the largest listed shape (pairs of large dims are left to the GPU)."""
    for task in ("conv_relu_maxpool", "flip2d", "softmax_rows", "matmul_bias_gelu"):
        for listed, d, j, spec in _gpu_and_interpreter_plans(task)["interpret"]:
            assert len(j) == 1 and len(d) + len(j) == len(derived_shapes(listed, 0, constraints=spec.constraints))
            assert math.prod(j[0].values()) <= max(math.prod(s.values()) for s in listed)
            assert all(v <= max(s[n] for s in listed + d) for n, v in j[0].items())  # no dim above the listed
            assert all(v % 2 == 1 or v == min(s[n] for s in listed) for n, v in j[0].items()), j


def test_odd_multiple():
    from kernelsynth.shapes import odd_multiple

    assert [odd_multiple(v) for v in (1, 2, 8, 9, 300)] == [1, 1, 7, 9, 299]
    assert odd_multiple(64, 8) == 56 and odd_multiple(72, 8) == 72 and odd_multiple(7, 8) <= 0


def test_rolling_changes_give_every_timed_call_a_new_input_in_its_domain():
    """VERIFICATION.md rule 15: seen on the H200 (red team g1, session 6), a memo of the last input
    and output, compared on every byte, was a hit on every timed call but the probe: 0.15 ms
    against 1.43 ms for the same kernel computing. Before every timed call one element of every
    input now gets a new value, without a version bump, and integer inputs stay in their range."""
    import torch

    from kernelsynth.verify.inputs import apply_rolling, plan_rolling

    g = torch.Generator().manual_seed(3)
    x, ids = torch.randn(64, 33), torch.randint(5, 900, (4097,))
    plan = plan_rolling([x, ids], g)
    versions, states = (x._version, ids._version), set()
    for k in range(500):
        apply_rolling([x, ids], plan, k)
        states.add(x.numpy().tobytes())
    assert len(states) >= 495  # a value drawn from the tensor may equal the one it replaces
    assert (x._version, ids._version) == versions
    assert 5 <= int(ids.min()) and int(ids.max()) < 900


def test_host_doors_through_storage_bytes_dlpack_and_as_tensor_are_labelled():
    """tests/adversarial/redteam_s7 f1, ff1: numpy arithmetic reached through a CPU tensor's storage
    bytes and torch.as_tensor, or DLPack capsules through torch.utils.dlpack and torch._C, was not
    labelled (only Tensor.numpy/__array__/__dlpack__/tolist and torch.from_numpy/from_dlpack/frombuffer were)."""
    import numpy as np

    from kernelsynth.verify.census import install_watch

    install_watch()
    x = torch.randn(4, 6)

    def via_storage(x):
        a = np.frombuffer(bytes(x.untyped_storage()), dtype=np.float32).reshape(4, 6)[:, ::-1].copy()
        return torch.as_tensor(a)

    class Capsule:  # what numpy.from_dlpack takes: an object with __dlpack__
        def __init__(self, cap):
            self.cap = cap

        def __dlpack__(self, *a, **k):
            return self.cap

        def __dlpack_device__(self):
            return (1, 0)

    def via_capsule(x):
        a = np.from_dlpack(Capsule(torch.utils.dlpack.to_dlpack(x)))[:, ::-1].copy()
        return torch._C._from_dlpack(a.__dlpack__())

    from kernelsynth.verify.census import Census
    from kernelsynth.verify.poison import call_poisoned

    def doors_of(fn):
        census = Census()
        call_poisoned(fn, [x], CPU, ops=census)
        return {o for o in library_calls(census) if o.startswith("host:")}

    for fn, doors in ((via_storage, {"host:untyped_storage", "host:as_tensor"}),
                      (via_capsule, {"host:to_dlpack", "host:_from_dlpack"})):
        assert torch.equal(fn(x), x.flip(1))
        assert doors <= doors_of(fn), fn.__name__
    # honest calls, copies of an input included (the census's own storage checks are not doors)
    for fn in (lambda x: x * 2, lambda x: torch.tensor(2.0) * x, lambda x: x.clone() + 1, lambda x: x.flip(1)):
        assert doors_of(fn) == set()


def test_a_negative_bit_view_output_is_a_layout_failure():
    """tests/adversarial/redteam_s7 fd1: a torch._neg_view whose memory holds -y reads as y; it
    was rejected only by an exception inside the harness's bit view."""
    from kernelsynth.verify.comparison import compare
    from kernelsynth.verify.failures import VerificationFailure

    y = torch.randn(3, 5)
    with pytest.raises(VerificationFailure, match="negative-bit view"):
        compare(torch._neg_view(-y), y, "exact", None, torch.float32)


def test_an_inference_tensor_output_is_a_layout_failure():
    """tests/adversarial/redteam_s8 flip fd1: right bits, made under torch.inference_mode(); the
    same values made normally pass."""
    from kernelsynth.verify.comparison import compare
    from kernelsynth.verify.failures import VerificationFailure

    y = torch.randn(3, 5)
    with torch.inference_mode():
        out = y.flip(1).clone()
    with pytest.raises(VerificationFailure, match="inference tensor"):
        compare(out, y.flip(1), "exact", None, torch.float32)
    with pytest.raises(VerificationFailure, match="inference tensor"):
        compare(out, y.flip(1).double(), "allclose", {"atol": 1e-5, "rtol": 1e-5}, torch.float32)
    assert compare(y.flip(1).clone(), y.flip(1), "exact", None, torch.float32)["max_abs_err"] == 0.0


def test_elementwise_specs_get_a_reduction_of_one_term_and_reductions_keep_theirs():
    """redteam_s8 gelu gp1: an elementwise spec without ``reduction`` got the largest dim's sqrt(n) u
    of accumulation slack; now one term. A reduction spec without it keeps the largest dim."""
    from kernelsynth.paths import SPECS_DIR
    from kernelsynth.spec import load_spec
    from kernelsynth.verify.precision import accumulation_slack

    gelu = load_spec(SPECS_DIR / "gelu_tanh" / "spec.yaml")
    assert gelu.category == "elementwise" and gelu.reduction == "1"
    assert gelu.reduction_length({d: 4099 for d in gelu.dims}) == 1.0
    assert accumulation_slack("fp32", 1.0) < accumulation_slack("fp32", 4099.0) / 60
    assert load_spec(SPECS_DIR / "softmax_rows" / "spec.yaml").reduction == "N"  # declared
    col = load_spec(SPECS_DIR / "column_sum" / "spec.yaml")
    assert col.reduction is None and col.reduction_length({d: 300 for d in col.dims}) == 300.0


def test_a_memo_blind_to_the_input_tail_meets_the_last_element_change():
    """tests/adversarial/redteam_s7 fm1: a memo keyed on all but the last 1/16 of the input got
    through every staleness step (each also changed an element elsewhere). On every second
    listed shape the partial change is the last element alone."""
    from kernelsynth.verify.failures import VerificationFailure
    from kernelsynth.verify.inputs import apply_changes, plan_last
    from kernelsynth.verify.protocol import check_repeat_and_fresh
    from kernelsynth.verify.protocol import VerifyPolicy

    class Flip(torch.nn.Module):
        def forward(self, x):
            return x.flip(1)

    class TailBlind(torch.nn.Module):
        memo = {}

        def forward(self, x):
            key = x.reshape(-1)[: x.numel() * 15 // 16].clone().numpy().tobytes()
            if key not in self.memo:
                self.memo[key] = x.flip(1).clone()
            return self.memo[key].clone()

    x = torch.randn(8, 16)
    changed = x.clone()
    apply_changes([changed], plan_last([changed]))
    assert int((changed != x).sum()) == 1 and changed.reshape(-1)[-1] != x.reshape(-1)[-1]
    get = lambda s, dt, dev, g: [torch.randn(s["M"], s["N"], generator=g, dtype=dt, device=dev)]  # noqa: E731
    policy = VerifyPolicy(comparison="exact", dtype=torch.float32, device=CPU, seed=0)
    for last_only, caught in ((False, False), (True, True)):
        TailBlind.memo.clear()
        gen = torch.Generator().manual_seed(3)
        cand, ref = TailBlind(), Flip()
        out = cand(x.clone())
        try:
            check_repeat_and_fresh(cand, ref, get, {"M": 8, "N": 16}, [x.clone()], out, ref(x), gen, policy,
                                   last_only=last_only)
            got = False
        except VerificationFailure as e:
            got = "last element of the input alone" in str(e)
        assert got is caught, last_only


def test_a_memo_keyed_on_one_of_two_inputs_meets_a_change_of_the_other_alone():
    """tests/adversarial/redteam_s8 rm1: rmsnorm_residual memoised on x alone (every staleness step
    changed every input together, so its key always moved). The last-element step of every
    second listed shape changes one input alone, the inputs in turn (``which`` = shape index // 2)."""
    from kernelsynth.verify.failures import VerificationFailure
    from kernelsynth.verify.inputs import apply_changes, plan_last
    from kernelsynth.verify.protocol import VerifyPolicy, check_repeat_and_fresh

    class Add(torch.nn.Module):
        def forward(self, x, r):
            return x + r

    class KeyedOnX(torch.nn.Module):
        memo = {}

        def forward(self, x, r):
            key = x.clone().numpy().tobytes()
            if key not in self.memo:
                self.memo[key] = x + r
            return self.memo[key].clone()

    a, b = torch.randn(4, 8), torch.randn(4, 8)
    for which, moved in ((0, 0), (1, 1), (2, 0), (None, None)):
        ca, cb = a.clone(), b.clone()
        apply_changes([ca, cb], plan_last([ca, cb], which))
        assert [int((ca != a).sum()), int((cb != b).sum())] == ([1, 1] if moved is None else [int(moved == 0), int(moved == 1)])
    get = lambda s, dt, dev, g: [torch.randn(s["M"], s["N"], generator=g, dtype=dt, device=dev) for _ in range(2)]  # noqa: E731
    policy = VerifyPolicy(comparison="exact", dtype=torch.float32, device=CPU, seed=0)
    for which, caught in ((0, False), (1, True)):
        KeyedOnX.memo.clear()
        cand, ref = KeyedOnX(), Add()
        out = cand(a.clone(), b.clone())
        try:
            check_repeat_and_fresh(cand, ref, get, {"M": 4, "N": 8}, [a.clone(), b.clone()], out, ref(a, b),
                                   torch.Generator().manual_seed(3), policy, last_only=True, which=which)
            got = False
        except VerificationFailure as e:
            got = "input 1 of 2, the others unchanged" in str(e)
        assert got is caught, which
