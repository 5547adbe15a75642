"""The output-dtype rule and the precision rule (VERIFICATION.md rules 3 and 22;
kernelsynth/verify/precision.py), in the worker's and the parent's checks."""

import math

import pytest
import torch

from kernelsynth.audit import audit_problem
from kernelsynth.errors import SpecError
from kernelsynth.spec import load_spec
from kernelsynth.tolerance import default_policy
from kernelsynth.verify import VerificationFailure, compare, digest, run_reference
from kernelsynth.verify.precision import (ACCUMULATION, MARGIN, POLICIES, HonestReferences, PrecisionMeter,
                                          sq_error_sum, truncate_mantissa)

U_TF32, U_BF16 = POLICIES["tf32"][0], POLICIES["bf16"][0]


class Linear(torch.nn.Module):
    """y = x @ w.T + b: the rounding scale sqrt(f(x^2, p^2)) is exactly sqrt(sum_k t_k^2)."""

    def __init__(self, k=512, n=64):
        super().__init__()
        self.lin = torch.nn.Linear(k, n)

    def forward(self, x):
        return self.lin(x)


def _setup(k=512, m=96, dtype=torch.float32, policy="tf32"):
    torch.manual_seed(0)
    ref_model = Linear(k).to(dtype).eval()
    x = torch.randn(m, k).to(dtype)
    ref = run_reference(ref_model, [x], "allclose", dtype)
    return ref_model, x, ref, HonestReferences(policy, dtype).terms(ref_model, [x], ref)


def _stat(out, ref, terms):
    s, n = sq_error_sum(out, ref, terms["scale"])
    return math.sqrt(s / n)


def _linear(x, w, b):
    return (x.double() @ w.double().T + b.double()).float()


def test_statistic_is_a_multiple_of_the_unit_roundoff_independent_of_the_reduction_length():
    """Operands rounded to nearest at 10 bits give about 0.6 u, truncated ones about 1.9 u, bfloat16
    about 0.6 u_bf16 = 4.5 u_tf32, for a 64- and a 2048-term reduction alike."""
    for k in (64, 2048):
        model, x, ref, terms = _setup(k)
        w, b = model.lin.weight.detach().float(), model.lin.bias.detach().float()  # the model is float64 now
        rn = lambda t: ((t.view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32)  # noqa: E731
        assert 0.4 * U_TF32 < _stat(_linear(rn(x), rn(w), b), ref, terms) < 0.8 * U_TF32
        tr = _stat(_linear(truncate_mantissa(x, 10), truncate_mantissa(w, 10), b), ref, terms)
        assert 1.4 * U_TF32 < tr < 2.4 * U_TF32
        assert 0.4 * U_BF16 < _stat(_linear(x.bfloat16(), w.bfloat16(), b), ref, terms) < 0.8 * U_BF16


def test_tf32_policy_accepts_tf32_and_float32_and_rejects_bfloat16_operands_and_outputs():
    model, x, ref, terms = _setup()
    w, b = model.lin.weight.detach().float(), model.lin.bias.detach().float()  # the model is float64 now

    def verdict(out):
        meter = PrecisionMeter("tf32")
        meter.add(out, ref, terms)
        try:
            return meter.check("listed shapes")
        except VerificationFailure as e:
            return str(e)

    honest = verdict(_linear(truncate_mantissa(x, 10), truncate_mantissa(w, 10), b))
    assert isinstance(honest, dict) and honest["rms"] < honest["bound"] / 1.3  # margin for honest TF32
    assert honest["bound"] == pytest.approx(MARGIN * honest["honest_rms"] + ACCUMULATION)
    assert verdict(model.double()(x.double()).float())["rms"] < 1e-6  # float32 is more than TF32
    for cheat in (_linear(x.bfloat16(), w.bfloat16(), b), _linear(x, w, b).bfloat16().float(),
                  _linear(truncate_mantissa(x, 9), truncate_mantissa(w, 9), b)):
        msg = verdict(cheat)
        assert isinstance(msg, str) and "precision below the declared policy tf32" in msg
        st = PrecisionMeter("tf32")
        st.add(cheat, ref, terms)
        assert st.stats()["rms"] > 1.3 * st.stats()["bound"]  # margin for the cheats


def test_fp32_policy_rejects_tf32():
    model, x, ref, terms = _setup(policy="fp32")
    w, b = model.lin.weight.detach().float(), model.lin.bias.detach().float()  # the model is float64 now
    meter = PrecisionMeter("fp32")
    meter.add(_linear(truncate_mantissa(x, 10), truncate_mantissa(w, 10), b), ref, terms)
    with pytest.raises(VerificationFailure, match="policy fp32"):
        meter.check("listed shapes")
    split = (x[:, :256] @ w[:, :256].T + x[:, 256:] @ w[:, 256:].T) + b  # split-K in float32
    ok = PrecisionMeter("fp32")
    ok.add(split, ref, terms)
    assert ok.check("listed shapes")["rms"] < ok.stats()["bound"] / 10


def test_bf16_policy_honest_is_one_rounding_of_the_float32_result():
    model, x, ref, terms = _setup(dtype=torch.bfloat16, policy="bf16")
    assert terms["dtype"] == torch.bfloat16
    meter = PrecisionMeter("bf16")
    meter.add(ref.to(torch.bfloat16), ref, terms)
    st = meter.check("listed shapes")
    assert st["rms"] <= st["honest_rms"] * 1.0001


def test_bf16_policy_admits_one_more_rounding_and_rejects_a_bfloat16_accumulator():
    """HEADROOM["bf16"] (session 21: TorchInductor's depthwise_conv2d in bfloat16 on the H200, the
    convolution rounded to bfloat16 and the bias added and rounded again, measured 1.42x the honest
    RMS and was rejected at 1.4x): the product rounded, then the bias added and rounded again, is
    honest; a bfloat16 accumulator over 8 chunks of the reduction is not."""
    model, x, ref, terms = _setup(dtype=torch.bfloat16, policy="bf16")
    w, b = model.lin.weight.double(), model.lin.bias.double()
    xd = x.double()

    def stats(out):
        meter = PrecisionMeter("bf16")
        meter.add(out, ref, terms)
        return meter.stats()

    twice = ((xd @ w.T).bfloat16().double() + b).bfloat16()  # an intermediate in the dtype under test
    st = stats(twice)
    assert 1.3 * st["honest_rms"] < st["rms"] < st["bound"] / 1.1  # past the plain margin, inside the headroom
    acc = torch.zeros_like(ref).bfloat16()
    for k in range(0, xd.shape[1], xd.shape[1] // 8):  # bfloat16 partial sums, 8 chunks
        acc = (acc.double() + xd[:, k:k + xd.shape[1] // 8] @ w[:, k:k + xd.shape[1] // 8].T).bfloat16()
    st = stats((acc.double() + b).bfloat16())
    assert st["rms"] > 1.2 * st["bound"]


def test_allclose_compare_requires_and_checks_the_expected_dtype():
    ref = torch.randn(4, 6, dtype=torch.float64)
    tol = {"atol": 1e-2, "rtol": 1e-2}
    with pytest.raises(ValueError, match="expected output dtype"):
        compare(ref.float(), ref, "allclose", tol)
    with pytest.raises(VerificationFailure, match="output dtype torch.bfloat16, expected torch.float32"):
        compare(ref.bfloat16(), ref, "allclose", tol, torch.float32)
    assert compare(ref.float(), ref, "allclose", tol, torch.float32)["max_abs_err"] < 1e-6


def _oracle_entry(ref, terms):
    return {"where": "shape 96x512, trial 0", "digest": digest(ref, "allclose"), "dtype": str(terms["dtype"]),
            "scale": digest(terms["scale"], "allclose"),
            "honest": [sq_error_sum(h, ref, terms["scale"]) for h in terms["honest"]]}


def test_parent_audit_checks_the_dtype_and_the_precision_independently():
    model, x, ref, terms = _setup()
    refs = {"listed:0:0": _oracle_entry(ref, terms)}
    tol = {"atol": 5e-3, "rtol": 5e-3}
    w, b = model.lin.weight.detach().float(), model.lin.bias.detach().float()  # the model is float64 now
    good = _linear(x, w, b)
    assert audit_problem({"listed:0:0": digest(good, "allclose")}, refs, "allclose", tol, "tf32") is None
    msg = audit_problem({"listed:0:0": digest(good.half(), "allclose")}, refs, "allclose", tol, "tf32")
    assert "output dtype torch.float16, expected torch.float32" in msg
    cheat = _linear(x.bfloat16(), w.bfloat16(), b)  # inside 5e-3, below TF32
    assert compare(cheat, ref, "allclose", tol, torch.float32)
    msg = audit_problem({"listed:0:0": digest(cheat, "allclose")}, refs, "allclose", tol, "tf32")
    assert msg and "precision below the declared policy tf32" in msg


def test_spec_precision_policy_and_defaults(flip2d_copy):
    conv = load_spec("specs/conv_relu_maxpool/spec.yaml")
    assert (conv.policy("float32"), conv.policy("bfloat16")) == ("tf32", "bf16")
    assert load_spec(flip2d_copy / "spec.yaml").policy("float32") is None  # exact: no precision rule
    assert default_policy("matmul", "float32") == "tf32" and default_policy("softmax", "float32") == "fp32"
    assert default_policy("reduction", "bfloat16") == "bf16"
    text = (flip2d_copy / "spec.yaml").read_text()
    (flip2d_copy / "spec.yaml").write_text(text + "\nprecision_policy: {float32: fp8}\n")
    with pytest.raises(SpecError, match="precision_policy"):
        load_spec(flip2d_copy / "spec.yaml")


def test_small_groups_are_recorded_but_not_judged():
    model, x, ref, terms = _setup(m=3)  # 3 x 64 = 192 output elements < MIN_ELEMENTS
    w, b = model.lin.weight.detach().float(), model.lin.bias.detach().float()
    cheat = _linear(x.bfloat16(), w.bfloat16(), b)
    meter = PrecisionMeter("tf32")
    meter.add(cheat, ref, terms)
    st = meter.check("derived shapes")
    assert st["rms"] > st["bound"]  # measured and recorded, not judged
    meter.add(cheat, ref, terms)  # 384 elements: judged
    with pytest.raises(VerificationFailure, match="precision below"):
        meter.check("derived shapes")


def _meter_verdict(out, ref, terms, policy="tf32"):
    meter = PrecisionMeter(policy)
    meter.add(out, ref, terms)
    try:
        return meter.check("listed shapes")
    except VerificationFailure as e:
        return str(e)


def test_bfloat16_on_an_eighth_of_the_outputs_is_not_diluted_by_the_tail_statistic():
    """bfloat16 operands on 1/8 of the output columns, fp32 elsewhere: the pooled RMS stays under
    its bound (the red team's p1/p5 got through that way); the tail fraction does not."""
    model, x, ref, terms = _setup()
    w, b = model.lin.weight.detach().float(), model.lin.bias.detach().float()
    exact, low = _linear(x, w, b), _linear(x.bfloat16(), w.bfloat16(), b)
    diluted = exact.clone()
    diluted[:, 7::8] = low[:, 7::8]  # every 8th output column
    block = exact.clone()
    block[:12] = low[:12]  # a contiguous block of 1/8 of the rows
    for cheat in (diluted, block):
        meter = PrecisionMeter("tf32")
        meter.add(cheat, ref, terms)
        st = meter.stats()
        assert st["rms"] < st["bound"]  # the RMS alone accepts it
        msg = _meter_verdict(cheat, ref, terms)
        assert isinstance(msg, str) and "(precision rule, tail)" in msg, msg
    honest = _meter_verdict(_linear(truncate_mantissa(x, 10), truncate_mantissa(w, 10), b), ref, terms)
    assert isinstance(honest, dict) and honest["tail"] <= honest["tail_bound"] / 4


def test_output_rounded_to_float16_or_bfloat16_is_seen_in_the_bits():
    """One float16 rounding of a float32 output is below every error bound; its mantissa shows it.
    Outputs that are exactly inputs (the reference's have the same bits) pass."""
    model, x, ref, terms = _setup()
    w, b = model.lin.weight.detach().float(), model.lin.bias.detach().float()
    good = _linear(x, w, b)
    for cheat in (good.half().float(), good.bfloat16().float()):
        meter = PrecisionMeter("tf32")
        meter.add(cheat, ref, terms)
        st = meter.stats()
        # every output but the few the honest emulation has in float16's mantissa by chance (2^-13 each)
        assert st["low"] > 0.99 and st["low"] > st["low_bound"]
    fp16 = good.half().float()
    meter = PrecisionMeter("tf32")
    meter.add(fp16, ref, terms)
    st = meter.stats()
    assert st["rms"] < st["bound"] and st["tail"] <= st["tail_bound"]  # no error statistic sees it
    msg = _meter_verdict(fp16, ref, terms)
    assert isinstance(msg, str) and "output rounded to a lower format" in msg, msg
    half = good.clone()
    half[:, ::2] = half[:, ::2].half().float()  # half of the outputs through float16
    assert "lower format" in _meter_verdict(half, ref, terms)
    ok = _meter_verdict(good, ref, terms)
    assert ok["low"] < 2 ** -10 and ok["low_bound"] == pytest.approx(ok["ref_low"] + 2 ** -6)
    # a task whose outputs are its (float16-valued) inputs: the reference has the same fraction
    xs = torch.randn(96, 512).half().float()
    ident = torch.nn.Identity()
    ref_i = run_reference(ident, [xs], "allclose", torch.float32)
    t_i = HonestReferences("fp32", torch.float32).terms(ident, [xs], ref_i)
    st = _meter_verdict(xs.clone(), ref_i, t_i, "fp32")
    assert isinstance(st, dict) and st["low"] == 0.0 and st["ref_low"] == 1.0  # each is an honest output's too


def test_parent_audit_applies_the_tail_and_lower_format_statistics():
    from kernelsynth.verify.precision import trial_sums

    model, x, ref, terms = _setup()
    sums = trial_sums(ref.float(), ref, terms["scale"], terms["honest"])
    entry = dict(_oracle_entry(ref, terms), **{k: sums[k] for k in ("honest_tail", "ref_low", "threshold")})
    refs = {"listed:0:0": entry}
    tol = {"atol": 5e-3, "rtol": 5e-3}
    w, b = model.lin.weight.detach().float(), model.lin.bias.detach().float()
    good = _linear(x, w, b)
    assert audit_problem({"listed:0:0": digest(good, "allclose")}, refs, "allclose", tol, "tf32") is None
    msg = audit_problem({"listed:0:0": digest(good.half().float(), "allclose")}, refs, "allclose", tol, "tf32")
    assert msg and "output rounded to a lower format" in msg
    diluted = good.clone()
    diluted[:, 7::8] = _linear(x.bfloat16(), w.bfloat16(), b)[:, 7::8]
    msg = audit_problem({"listed:0:0": digest(diluted, "allclose")}, refs, "allclose", tol, "tf32")
    assert msg and "(precision rule, tail)" in msg


def test_an_honest_sequential_float32_scan_of_same_sign_terms_passes_and_bfloat16_does_not():
    """H200, session 10: TorchInductor's float32 cumsum of kb_l1_8_cumsum (torch.rand rows, a
    blocked scan, carries added one block at a time) was rejected by rule 23 at RMS 4.2e-5 against
    a bound of 2.4e-5: a false rejection. The failing input here: an honest scan adding one term at
    a time in float32 over rows of 4097 (RMS 2.7e-5). The reference is linear, so the slack is
    widened by |ref| / s; a scan accumulated in bfloat16 is still rejected."""
    from kernelsynth.verify.precision import HonestReferences, PrecisionMeter, accumulation_slack, magnitude

    class Scan(torch.nn.Module):
        def forward(self, x):
            return torch.cumsum(x, dim=1)

    x = torch.rand(37, 4097, generator=torch.Generator().manual_seed(0))
    ref64 = x.double().cumsum(1)
    honest = HonestReferences("fp32", torch.float32)
    terms = honest.terms(Scan(), [x], ref64)
    assert terms["linear"] is True
    assert 30 < magnitude(ref64, terms["scale"]) < 50

    def scan(dtype):
        out, acc = torch.empty_like(x), torch.zeros(37, dtype=dtype)
        for j in range(x.shape[1]):
            acc = acc + x[:, j].to(dtype)
            out[:, j] = acc.float()
        return out

    slack = accumulation_slack("fp32", 4097)
    for out, ok in ((scan(torch.float32), True), (scan(torch.bfloat16), False)):
        meter = PrecisionMeter("fp32")
        meter.add(out, ref64, terms, slack=slack)
        st = meter.stats()
        assert (st["rms"] <= st["bound"]) is ok, st
    old = PrecisionMeter("fp32")  # without the factor (a reference not known linear) the honest scan fails
    old.add(scan(torch.float32), ref64, dict(terms, linear=False), slack=slack)
    assert old.stats()["rms"] > old.stats()["bound"]
    # a nonlinear reference (LayerNorm) is not widened: redteam_s7 lp1's bound stays what it was
    ln = torch.nn.LayerNorm(64)
    y = torch.randn(9, 64)
    assert HonestReferences("fp32", torch.float32).terms(ln, [y], ln.double()(y.double()))["linear"] is False


def test_an_honest_sequential_float32_column_sum_passes_the_relative_tail_and_bfloat16_does_not():
    """Session 24, on an H100: column_sum's own v0 (a column walk) and v1 (row tiles added one after
    another) were rejected at the timing shape 16384x8192: 0.20 % of the outputs had a relative error
    above 2^11 ulps + the accumulation slack, PyTorch's pairwise sum about none. A column sum near zero
    has partial sums of the size of the rounding scale s, not of its result: for a linear map the
    relative tail's slack is taken against max(s_i, |ref_i|). The failing input: a sequential float32
    sum of 16384 rows of column_sum's inputs (randn / sqrt(M)); one in bfloat16 still fails."""
    from kernelsynth.verify.precision import accumulation_slack

    class ColumnSum(torch.nn.Module):
        def forward(self, x):
            return x.sum(dim=0)

    m, n = 16384, 2048
    x = torch.randn(m, n, generator=torch.Generator().manual_seed(0)) / math.sqrt(m)
    ref64 = x.double().sum(0)
    terms = HonestReferences("fp32", torch.float32).terms(ColumnSum(), [x], ref64)
    assert terms["linear"] is True

    def walk(dtype):
        acc = torch.zeros(n, dtype=dtype)
        for i in range(m):
            acc = acc + x[i].to(dtype)
        return acc.float()

    slack = accumulation_slack("fp32", m)
    for out, ok in ((walk(torch.float32), True), (truncate_mantissa(walk(torch.float32), 7), False)):
        meter = PrecisionMeter("fp32")
        meter.add(out, ref64, terms, slack=slack)
        if ok:
            meter.check("sequential float32")
            assert meter.stats()["rel"] == 0.0, meter.stats()
        else:
            with pytest.raises(VerificationFailure, match="precision below the declared policy"):
                meter.check("bfloat16")
    old = PrecisionMeter("fp32")  # the slack against |ref_i| (a reference not known linear): rejected, as on the H100
    old.add(walk(torch.float32), ref64, dict(terms, linear=False), slack=slack)
    with pytest.raises(VerificationFailure, match="relative tail"):
        old.check("sequential float32, slack against |ref|")


def test_fp32_headroom_admits_a_gpu_style_approximate_exp_and_rejects_lower_formats():
    """Session 10 on the H200: an honest Triton softmax in float32 (``tl.exp`` -> ``ex2.approx``)
    measured 1.41x PyTorch's RMS, past the plain margin 1.4. The fp32 policy's headroom
    (precision.HEADROOM) admits float32 with an exp as far off as CUDA's ``__expf`` may be
    (2 + floor(|1.173 x|) ulp, CUDA C++ Programming Guide), and still rejects an exp rounded to
    TF32's or bfloat16's mantissa."""
    from kernelsynth.verify.precision import HEADROOM

    class Softmax(torch.nn.Module):
        def forward(self, x):
            return torch.softmax(x, dim=-1)

    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 1024, generator=g) * 2
    model = Softmax()
    ref = run_reference(model, [x], "allclose", torch.float32)
    terms = HonestReferences("fp32", torch.float32).terms(model, [x], ref)

    def softmax_with(exp):
        z = x - x.amax(-1, keepdim=True)
        e = exp(z)
        return e / e.sum(-1, keepdim=True)

    def approx_exp(z):  # exp2(fl(z * log2 e)), the power of two off by up to 2 ulp
        t = z * torch.tensor(1.4426950408889634, dtype=torch.float32)
        noise = (torch.rand(z.shape, generator=g, dtype=torch.float64) * 2 - 1) * 2.0 ** -22
        return (torch.exp2(t.double()) * (1 + noise)).float()

    def stats(out):
        m = PrecisionMeter("fp32")
        m.add(out, ref, terms)
        return m

    honest = stats(softmax_with(approx_exp))
    st = honest.check("listed shapes")
    plain = MARGIN * st["honest_rms"] + honest.accumulation
    assert st["rms"] > plain  # the plain margin would reject it, as on the H200
    assert st["rms"] < st["bound"] / 1.5 and HEADROOM["fp32"] == 8.0
    for bits in (10, 7):  # TF32's and bfloat16's mantissa on the exponentials
        cheat = stats(softmax_with(lambda z: truncate_mantissa(torch.exp(z), bits)))
        with pytest.raises(VerificationFailure, match="precision below the declared policy fp32"):
            cheat.check("listed shapes")
        assert cheat.stats()["rms"] > 3 * cheat.stats()["bound"]


def test_the_tail_measures_errors_against_the_output_where_the_scale_is_below_it():
    """redteam_s12 s3 (an honest online softmax) was rejected on the H200 under softmax_rows' shift
    -100 probe: sqrt(softmax(x^2)) is near 0 on most of a row, and a few-ulp relative error per row
    (its rescaled running sums, Triton's approximate exp and division) put 0.74 % of its outputs in
    the tail, PyTorch's 0 %. The tail now takes each error against max(scale, |ref|), honest RMS
    included: that candidate passes, bfloat16 on every eighth row is still in the tail."""
    from kernelsynth.verify.precision import headroom, trial_sums

    g = torch.Generator().manual_seed(0)
    x = torch.randn(300, 2053, generator=g) - 100
    ref64 = torch.softmax(x.double(), -1)
    scale = torch.softmax(x * x, -1).abs().sqrt()
    honest = torch.softmax(x, -1)
    per_row = torch.randint(-8, 9, (300, 1), generator=g).double() * 2.0 ** -24  # up to 8 ulp, one per row
    online = (honest.double() * (1 + per_row)).float()
    low = honest.clone()
    low[::8] = low[::8].bfloat16().float()
    got = {name: trial_sums(o, ref64, scale, [honest], room=headroom("fp32"))
           for name, o in [("honest", honest), ("online", online), ("low", low)]}
    assert got["honest"]["tail"][0] == got["online"]["tail"][0] == 0, got
    assert got["low"]["tail"][0] >= 10 and got["low"]["honest_tail"][0][0] == 0, got["low"]


def test_the_relative_tail_sees_bfloat16_where_the_rounding_scale_hides_it():
    """redteam_s13 sm_p2 / sm_p1: a float32 softmax with bfloat16 numerators wherever the
    probability is small passed rule 23, because ``sqrt(softmax(x^2))`` is either below 2^-30 of
    its row's largest (left out of the scaled statistics) or far above the output (the error
    scaled to ~1 u). The relative tail (precision.relative_threshold: 2^8 x the headroom ulps)
    rejects both; an honest softmax with a GPU-style exp (a few ulps) and a per-row rescaling
    error passes, and so does the exact float32 rounding."""
    from kernelsynth.verify.precision import relative_threshold

    class Softmax(torch.nn.Module):
        def forward(self, x):
            return torch.softmax(x, dim=-1)

    g = torch.Generator().manual_seed(1)
    x = torch.randn(48, 4099, generator=g) * 2
    model = Softmax()
    ref = run_reference(model, [x], "allclose", torch.float32)
    terms = HonestReferences("fp32", torch.float32).terms(model, [x], ref)
    assert relative_threshold("fp32", torch.float32) == 2.0 ** -13  # 2^8 x 8 ulps of float32
    assert relative_threshold("tf32", torch.float32) is None and relative_threshold("fp32", torch.bfloat16) is None
    exact = ref.float()
    # a bfloat16 numerator divided in float32: a relative error of bfloat16's size, float32 bits
    bf16_err = (exact.double() * (1 + (torch.rand(x.shape, generator=g, dtype=torch.float64) * 2 - 1) * 2.0 ** -9)).float()
    p2 = exact.clone()  # sm_p2: wherever x^2 is 42 below the row's largest and p < 2e-3
    hidden = (x * x < (x * x).amax(-1, keepdim=True) - 42.3) & (exact < 2e-3)
    p2[hidden] = bf16_err[hidden]
    p1 = exact.clone()  # sm_p1: where p < s / 8192 (s the rounding scale)
    where = exact < terms["scale"] / 8192
    p1[where] = bf16_err[where]
    noise = (torch.rand(x.shape, generator=g, dtype=torch.float64) * 2 - 1) * 6 * 2.0 ** -24  # 6 ulp exp error
    per_row = torch.randint(-8, 9, (48, 1), generator=g).double() * 2.0 ** -24
    approx = (exact.double() * (1 + noise) * (1 + per_row)).float()
    assert compare(p2, ref, "allclose", {"atol": 1e-5, "rtol": 3.05e-5}, torch.float32)  # inside the tolerance
    for name, out in (("exact", exact), ("approx", approx)):
        st = PrecisionMeter("fp32")
        st.add(out, ref, terms)
        got = st.check("listed shapes")
        assert got["rel"] < got["rel_bound"] / 2, (name, got)
    for name, out in (("p2", p2), ("p1", p1)):
        assert int(hidden.sum() if name == "p2" else where.sum()) > 100
        verdict = _meter_verdict(out, ref, terms, policy="fp32")
        assert isinstance(verdict, str) and "relative tail" in verdict, (name, verdict)


def test_rmsnorm_residual_tolerance_admits_eager_bfloat16_on_a_long_thin_shape():
    """Session 24, on an H100: rmsnorm_residual's own v0 (eager PyTorch in bfloat16, every intermediate
    rounded) was rejected on the derived shape 103813 x 2 at rtol 1.6e-2 (1 of 207626 elements at 1.75 %).
    The failing input, on the CPU: eager bfloat16 at 103813 x 2 exceeds the old bound and is inside the
    spec's tolerance now; an output 6 % off is not."""
    import importlib.util

    from conftest import ROOT

    folder = ROOT / "specs" / "rmsnorm_residual"
    mod_spec = importlib.util.spec_from_file_location("rmsnorm_reference", folder / "reference.py")
    ref = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(ref)
    tol = load_spec(folder / "spec.yaml", task_folder=True).tolerance["bfloat16"]
    shape = {"M": 103813, "N": 2}
    torch.manual_seed(0)
    model = ref.Model(shape["N"])
    x, r = ref.get_inputs(shape, torch.bfloat16, torch.device("cpu"), torch.Generator().manual_seed(0))
    y64 = run_reference(model, [x, r], "allclose", torch.bfloat16)
    with torch.no_grad():
        eager = model.to(torch.bfloat16)(x, r)
    over_old = ((eager.double() - y64).abs() > 1e-5 + 1.6e-2 * y64.abs()).sum().item()
    assert over_old >= 1, "the failing input no longer fails the old bound"
    compare(eager, y64, "allclose", tol, torch.bfloat16)
    with pytest.raises(VerificationFailure):  # a weight or statistic 6 % off still fails
        compare((y64 * (1 + 2.0 ** -4)).to(torch.bfloat16), y64, "allclose", tol, torch.bfloat16)


def test_lower_format_admits_outputs_the_honest_tf32_emulation_shares():
    """Session 26 (H100): the honest TF32 flash kernels of causal_attention were rejected by the
    lower-format statistic on the GPU plan's one-key shapes (S = 1): each output is v rounded to
    TF32, whose mantissa is float16's, where the float64 reference's outputs are v itself. Elements
    the honest TF32 emulation also gives in the lower format are not counted. Red team s26's ca_l2
    (exact one-key rows, float16 stores on the others, pooled in one group with them) fails: a bound
    raised to the group's honest fraction had let it through."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "specs" / "causal_attention" / "reference.py"
    mod_spec = importlib.util.spec_from_file_location("_ca_reference", path)
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    model = mod.Model().eval()
    gen = torch.Generator().manual_seed(3)
    one = mod.get_inputs({"B": 16, "H": 8, "S": 1}, torch.float32, "cpu", gen)
    ref1 = run_reference(model, [x.clone() for x in one], "allclose", torch.float32)
    terms1 = HonestReferences("tf32", torch.float32).terms(model, one, ref1)
    st = _meter_verdict(truncate_mantissa(one[2], 10), ref1, terms1)  # what a TF32 p @ v gives for p = 1
    assert isinstance(st, dict), st
    assert st["low"] == 0.0 and st["ref_low"] < 2 ** -8  # every float16-valued output is one the emulation has too
    # a long causal row: outputs mix many keys, and float16 stores show
    rows = mod.get_inputs({"B": 1, "H": 2, "S": 64}, torch.float32, "cpu", gen)
    ref64 = run_reference(model, [x.clone() for x in rows], "allclose", torch.float32)
    terms64 = HonestReferences("tf32", torch.float32).terms(model, rows, ref64)
    ok = _meter_verdict(ref64.float(), ref64, terms64)
    assert isinstance(ok, dict) and ok["low"] < 0.05, ok
    msg = _meter_verdict(ref64.half().float(), ref64, terms64)
    assert isinstance(msg, str) and "output rounded to a lower format" in msg, msg
    # ca_l2's mix in one group: exact one-key rows (float32 v: not low), float16 stores elsewhere
    meter = PrecisionMeter("tf32")
    meter.add(one[2].clone(), ref1, terms1)
    meter.add(ref64.half().float(), ref64, terms64)
    with pytest.raises(VerificationFailure, match="output rounded to a lower format"):
        meter.check("derived shapes")
