"""Input-range probes (VERIFICATION.md rule 24), the accumulation slack of the precision rule
(rule 23) and the tolerance-scale staleness change (rule 10), against the cheats of
tests/adversarial/redteam_s7 that got through on the CPU path, each with its honest counterparts.

In-process :func:`kernelsynth.verify.verify` on the Triton interpreter (the engine's end-to-end runs
are the README's commands): the candidate and the reference are built from the same seed, as the
worker builds them (kernelsynth/jobs.py), and the probe comes from the task's own spec."""

import dataclasses
import math
import re

import pytest
import torch

from conftest import ROOT
from kernelsynth.jobs import _constructing
from kernelsynth.loading import import_file
from kernelsynth.spec import SpecError, load_spec
from kernelsynth.verify import VerificationFailure, VerifyPolicy, verify
from kernelsynth.verify.inputs import apply_probe, plan_nudge, trial_inputs
from kernelsynth.verify.params import build_seed, probe_perturb
from kernelsynth.verify.precision import ACCUMULATION, HonestReferences, PrecisionMeter, accumulation_slack
from kernelsynth.verify.protocol import check_repeat_and_fresh

RT = ROOT / "tests" / "adversarial" / "redteam_s7"
CPU = torch.device("cpu")


def _spec(task):
    return load_spec(ROOT / "specs" / task / "spec.yaml")


def _run(task, cand_file, group="probe0", shapes=None, trials=1, dtype=torch.float32):
    """verify() of ``cand_file`` on ``task``'s interpreter shapes: the probe group (trial 0's
    inputs transformed by the spec's first probe) or, with ``group="listed"``, plain trials.
    Returns the report; raises VerificationFailure."""
    spec = _spec(task)
    ref_mod = import_file(spec.reference)
    cand_mod = import_file(cand_file)
    probes = spec.probes
    probe = probes[int(group[len("probe"):])] if group.startswith("probe") else None

    def models_for(shape, g, si, t):
        init = ref_mod.get_init_inputs(shape) if ref_mod.get_init_inputs.__code__.co_argcount else ref_mod.get_init_inputs()
        seed, perturb = build_seed(0, g, si, t)
        perturb = probe_perturb(probes, g) or perturb
        with _constructing(seed, perturb):
            cand = cand_mod.ModelNew(*init)
        with _constructing(seed, perturb):
            ref = ref_mod.Model(*init)
        return cand.to(dtype).eval(), ref.to(dtype).eval()

    shapes = shapes or spec.interpret_shapes
    policy = VerifyPolicy(dtype=dtype, device=CPU, seed=0, comparison="allclose", tol=spec.tolerance[str(dtype)[6:]],
                          precision=spec.policy(str(dtype)[6:]),
                          reduction=(lambda s: spec.reduction_length(s)) if spec.reduction else None)
    m, r = models_for(shapes[0], group, 0, 0)
    return verify(m, r, ref_mod.get_inputs, shapes, policy, trials=trials, determinism=False, models_for=models_for,
                  group=group, probe=probe, settle=False)


# ------------------------------------------------------------------ item 1, 3: range probes
@pytest.mark.parametrize("task, cheat, reason", [
    ("conv_relu_maxpool", "conv/p1_fp16_operands_under_tf32.py", r"outside atol=8.9e\+07|outside atol=85899345|NaN where the reference|Inf where the reference"),
    ("conv_relu_maxpool", "conv/p2_fp16_intermediate_dithered.py", r"outside atol=8.9e\+07|outside atol=85899345|NaN where the reference|Inf where the reference"),
    ("matmul_bias_gelu", "matmul/mp1_fp16_operands_under_tf32.py", r"outside atol=8.9e\+07|outside atol=85899345|NaN where the reference|Inf where the reference"),
    ("softmax_rows", "softmax/sr1_no_max_subtraction.py", r"NaN where the reference|Inf where the reference"),
    ("layernorm", "layernorm/lr1_one_pass_raw_moments.py", r"input-range probe: shift 1000\): outside atol=0\.001, rtol=0\.003"),
])
def test_range_probe_rejects_the_cheat_that_passes_the_unit_scale_trials(task, cheat, reason):
    """redteam_s7 p1, p2, mp1, sr1, lr1: accepted on the inputs of one scale (a plain trial
    passes here too), rejected by the spec's probe trial (2^17 scale: float16 overflows; row
    shift: exp without the max overflows, raw moments cancel)."""
    shapes = _spec(task).interpret_shapes[1:3]
    _run(task, RT / cheat, group="listed", shapes=shapes)  # passes at unit scale
    with pytest.raises(VerificationFailure, match=reason) as e:
        _run(task, RT / cheat, shapes=shapes)
    assert "(input-range probe: " in str(e.value)


@pytest.mark.parametrize("task, honest", [
    ("conv_relu_maxpool", "conv/h1_direct_four_window_accumulators.py"),
    ("softmax_rows", "softmax/sh1_online_two_rows_per_program.py"),
    ("layernorm", "layernorm/lh1_chan_combined_chunks.py"),
])
def test_range_probe_accepts_honest_candidates_in_other_styles(task, honest):
    rep = _run(task, RT / honest)
    assert rep.trials == len(_spec(task).interpret_shapes)
    assert rep.precision["rms"] is None or rep.precision["rms"] <= rep.precision["bound"]


def test_probe_inputs_are_deterministic_and_transform_only_float_inputs():
    spec = _spec("layernorm")
    ref = import_file(spec.reference)
    shape = {"M": 3, "N": 37}
    a, _ = trial_inputs(ref.get_inputs, shape, 1, 0, 0, torch.float32, CPU, False, spec.probes[0])
    b, _ = trial_inputs(ref.get_inputs, shape, 1, 0, 0, torch.float32, CPU, False, spec.probes[0])
    plain, _ = trial_inputs(ref.get_inputs, shape, 1, 0, 0, torch.float32, CPU, False)
    assert torch.equal(a[0], b[0])  # the oracle rebuilds them bit for bit
    shift = (a[0].double() - plain[0].double()).mean(dim=1)
    assert ((shift > 999) & (shift < 2001)).all() and shift.unique().numel() == 3  # one offset per row
    gen = torch.Generator().manual_seed(0)
    x, idx = torch.randn(4, 5), torch.arange(4)
    y, j = apply_probe([x, idx], {"kind": "scale", "value": 2.0 ** 17}, gen)
    assert torch.equal(y, x * 2.0 ** 17) and j is idx


def test_probes_are_refused_on_an_exact_task(tmp_path):
    import shutil

    shutil.copytree(ROOT / "specs" / "flip2d", tmp_path / "flip2d")
    p = tmp_path / "flip2d" / "spec.yaml"
    p.write_text(p.read_text() + "\nprobes: [{scale: 4}]\n")
    with pytest.raises(SpecError, match="probes"):
        load_spec(p)


def test_a_probe_runs_only_in_its_declared_dtypes(tmp_path):
    # session 9 on the H200: layernorm's shift-1000 probe in bfloat16 left rows constant (unit
    # spacing 4-8 there), and every honest ladder version failed it; it now runs in float32 only
    import shutil

    from kernelsynth.hardware import Hardware
    from kernelsynth.stages.exploration import Exploration

    spec = _spec("layernorm")
    hw = Hardware(target="h200", device_name="NVIDIA H200", interpret=False)
    jobs = [j for j in Exploration(trials=1).plan(spec, hw, cache_dir=tmp_path) if j.row["role"] == "candidate"]
    kinds = {j.request.dtype: [p["kind"] for p in j.request.probes] for j in jobs}
    assert kinds == {"float32": ["shift", "constant", "scale"], "bfloat16": ["constant", "scale"]}  # zero rows, seeded scale: every dtype
    shutil.copytree(ROOT / "specs" / "layernorm", tmp_path / "ln")
    p = tmp_path / "ln" / "spec.yaml"
    p.write_text(p.read_text().replace("but eps\n    dtypes: [float32]", "but eps\n    dtypes: float32"))
    with pytest.raises(SpecError, match=r"probes\[0\]\.dtypes"):
        load_spec(p)


# ------------------------------------------------------------------ item 2: accumulation slack
def _layernorm_case(n=4099, rows=8):
    spec = _spec("layernorm")
    ref_mod = import_file(spec.reference)
    torch.manual_seed(1)
    model = ref_mod.Model(*ref_mod.get_init_inputs({"M": rows, "N": n}) if ref_mod.get_init_inputs.__code__.co_argcount
                          else ref_mod.get_init_inputs()).float()
    gen = torch.Generator().manual_seed(2)
    (x,) = ref_mod.get_inputs({"M": rows, "N": n}, torch.float32, CPU, gen)
    honest = HonestReferences("fp32", torch.float32)
    ref64 = model.double()(x.double())
    model.float()
    terms = honest.terms(model, [x], ref64)
    return model, x, ref64, terms


def _ln(x, w, b, mean, var):
    return ((x - mean[:, None]) * torch.rsqrt(var + 1e-5)[:, None] * w + b).float()


def test_accumulation_slack_follows_the_reduction_length_and_rejects_a_17_bit_rstd():
    """redteam_s7 lp1 (fast inverse sqrt + two Newton steps, ~2^-17.7 relative) passed under the
    old constant 2^-16; with sqrt(n) u (n = 4099: 3.8e-6) it fails, while float32 layer norms in
    other summation orders (split halves, pairwise, Chan's chunk combination) pass."""
    assert accumulation_slack("fp32", 4099) == pytest.approx(math.sqrt(4099) * 2.0 ** -24)
    assert accumulation_slack("fp32", 2 ** 20) == ACCUMULATION  # capped: never more than the old constant
    assert accumulation_slack("fp64", 4) == pytest.approx(2 * 2.0 ** -53)
    model, x, ref64, terms = _layernorm_case()
    w, b = model.weight.detach(), model.bias.detach()
    n = x.shape[1]
    slack = accumulation_slack("fp32", n)

    def verdict(out):
        meter = PrecisionMeter("fp32")
        meter.add(out, ref64, terms, slack=slack)
        try:
            return meter.check("listed shapes")
        except VerificationFailure as e:
            return str(e)

    h = n // 2
    m_split = (x[:, :h].sum(1) + x[:, h:].sum(1)) / n
    v_split = (((x - m_split[:, None]) ** 2)[:, :h].sum(1) + ((x - m_split[:, None]) ** 2)[:, h:].sum(1)) / n
    chunks = [x[:, i:i + 512] for i in range(0, n, 512)]  # Chan et al.: (count, mean, M2) per chunk
    cnt, mean, m2 = torch.zeros(x.shape[0]), torch.zeros(x.shape[0]), torch.zeros(x.shape[0])
    for c in chunks:
        nb, mb = c.shape[1], c.mean(1)
        m2b = ((c - mb[:, None]) ** 2).sum(1)
        tot = cnt + nb
        delta = mb - mean
        mean, m2, cnt = mean + delta * nb / tot, m2 + m2b + delta * delta * cnt * nb / tot, tot
    honest = {"split": _ln(x, w, b, m_split, v_split), "pairwise": _ln(x, w, b, x.mean(1), x.var(1, unbiased=False)),
              "chan": _ln(x, w, b, mean, m2 / n)}
    for name, out in honest.items():
        st = verdict(out)
        assert isinstance(st, dict), (name, st)
        assert st["rms"] < st["bound"] / 2, (name, st)
    # lp1's rstd: ~17.7 correct bits (its relative error 2^-17.7 on every row's rstd)
    rstd = torch.rsqrt(x.var(1, unbiased=False) + 1e-5) * (1 + 2.0 ** -17.7 * torch.sign(torch.randn(x.shape[0])))
    cheat = ((x - x.mean(1)[:, None]) * rstd[:, None] * w + b).float()
    msg = verdict(cheat)
    assert isinstance(msg, str) and "precision below the declared policy fp32" in msg, msg
    old = PrecisionMeter("fp32")
    old.add(cheat, ref64, terms)  # the old constant slack 2^-16: its RMS was under that bound
    assert old.stats()["rms"] < old.stats()["bound"]


def test_lp1_is_rejected_by_the_precision_rule_and_lh1_accepted():
    """The red team's files on layernorm's interpreter shapes (plain listed trials, 2 each)."""
    with pytest.raises(VerificationFailure, match=r"precision below the declared policy fp32"):
        _run("layernorm", RT / "layernorm/lp1_fast_inverse_sqrt_two_newton.py", group="listed", trials=2)
    rep = _run("layernorm", RT / "layernorm/lh1_chan_combined_chunks.py", group="listed", trials=2)
    assert rep.precision["rms"] < rep.precision["bound"] / 2


# ------------------------------------------------------------------ item 4: tolerance-scale staleness
class _SignKeyMemo(torch.nn.Module):
    """A memo keyed on the signs of the input (and its shape): passes the far, last-element and
    permutation changes of rule 10 (each flips or moves a sign), not a change inside the
    tolerance's scale that keeps every sign -- coarser than the tolerance."""

    def __init__(self, inner):
        super().__init__()
        self.inner, self.key, self.out = inner, None, None

    def forward(self, x):
        key = (tuple(x.shape), (x > 0).numpy().tobytes())
        if key != self.key:
            self.key, self.out = key, self.inner(x)
        return self.out.clone()


def test_tolerance_scale_change_catches_a_memo_on_a_key_coarser_than_the_tolerance():
    spec = _spec("conv_relu_maxpool")
    ref_mod = import_file(spec.reference)
    shape = spec.interpret_shapes[0]
    torch.manual_seed(3)
    ref = ref_mod.Model(*ref_mod.get_init_inputs(shape))
    tol = spec.tolerance["float32"]
    policy = VerifyPolicy(dtype=torch.float32, device=CPU, seed=0, comparison="allclose", tol=tol,
                          poison_empty=False, check_threads=False)
    gen = torch.Generator().manual_seed(4)
    (x,) = ref_mod.get_inputs(shape, torch.float32, CPU, gen)
    from kernelsynth.verify.comparison import run_reference

    def run(model):
        out = model(x.clone())
        r = run_reference(ref, [x.clone()], "allclose", torch.float32)
        return check_repeat_and_fresh(model, ref, ref_mod.get_inputs, shape, [x.clone()], out, r, gen, policy,
                                      out_dtype=torch.float32)

    import copy

    honest = copy.deepcopy(ref)  # run_reference turns ``ref`` float64 in place
    with pytest.raises(VerificationFailure, match=r"scaled in place by 1 \+ 4 rtol"):
        run(_SignKeyMemo(copy.deepcopy(honest)))
    run(honest)  # the honest module follows every change
    (y,) = [v for _, _, v in plan_nudge([x], tol)]
    assert torch.allclose(y.view_as(x), x * (1 + 4 * tol["rtol"])) and plan_nudge([x], None) == []


# ------------------------------------------------------------------ redteam_s8: new probe kinds, pooled precision
R8 = ROOT / "tests" / "adversarial" / "redteam_s8"


def _probe_index(task, kind):
    return next(k for k, p in enumerate(_spec(task).probes) if p["kind"] == kind)


@pytest.mark.parametrize("task, cheat, kind, dtype, reason", [
    ("softmax_rows", "softmax/sr1_exp_without_range_reduction_clamp.py", "mask", torch.float32,
     r"input-range probe: mask -inf\): NaN where the reference has none"),
    ("layernorm", "layernorm/lr2_eps_first_order_rows_of_one_special_cased.py", "constant", torch.float32,
     r"input-range probe: constant 0\): NaN where the reference has none"),
    ("swiglu", "swiglu/sw1_float16_product.py", "scale", torch.bfloat16,
     r"input-range probe: scale 256\): Inf where the reference has none"),
])
def test_redteam_s8_range_cheats_meet_their_probe_kind(task, cheat, kind, dtype, reason):
    """redteam_s8 sr1 (exp without its range clamp), lr2 (eps as a first-order correction of
    rsqrt(var)), sw1 (a float16 product on swiglu, which declared no probe): each passes the plain
    trials and the spec's other probes, and fails the probe of its class -- a quarter of each row at
    -inf (mask), half the rows constant (zero variance), every input times 2^8 (scale)."""
    shapes = _spec(task).interpret_shapes[1:3]
    _run(task, R8 / cheat, group="listed", shapes=shapes, dtype=dtype)  # passes at unit scale
    with pytest.raises(VerificationFailure, match=reason):
        _run(task, R8 / cheat, group=f"probe{_probe_index(task, kind)}", shapes=shapes, dtype=dtype)


@pytest.mark.parametrize("task, honest, kind", [
    ("softmax_rows", RT / "softmax/sh1_online_two_rows_per_program.py", "mask"),
    ("layernorm", RT / "layernorm/lh1_chan_combined_chunks.py", "constant"),
    ("cross_entropy", R8 / "xent/ch1_two_rows_per_program_online.py", "mask"),
])
def test_new_probe_kinds_accept_honest_candidates_in_other_styles(task, honest, kind):
    """An online softmax whose running max starts at -inf, Chan's chunk combination on constant
    rows, a two-row online cross-entropy on rows with -inf logits (losses of inf where the target is
    masked, as the reference's): accepted, the precision rule within its bound."""
    rep = _run(task, honest, group=f"probe{_probe_index(task, kind)}")
    assert rep.trials == len(_spec(task).interpret_shapes)
    assert rep.precision["rms"] is None or rep.precision["rms"] <= rep.precision["bound"]
    if kind == "mask":  # compared only: -inf entries leave no rounding scale (the H200 recorded an RMS of 605)
        assert rep.meter.candidate[1] == 0 and rep.precision["rms"] is None


def test_mask_and_constant_probe_inputs():
    """mask: rows scattered (a quarter), suffix or prefix masked, never a whole row, one-entry rows
    kept; constant: the same rows (at least one) constant in every input of the same leading shape."""
    gen = torch.Generator().manual_seed(3)
    x, r, idx = torch.randn(64, 40), torch.randn(64, 40), torch.arange(64)
    (y, j) = apply_probe([x, idx], {"kind": "mask", "value": float("-inf")}, gen)
    masked = torch.isinf(y)
    assert j is idx and (~masked).any(dim=1).all() and 0.2 < masked.float().mean() < 0.6
    assert torch.equal(y[~masked], x[~masked])
    runs = [row for row in masked if row[:20].all() or row[20:].all()]  # whole masked blocks of 20
    assert len(runs) >= 8
    (one,) = apply_probe([torch.randn(5, 1)], {"kind": "mask", "value": float("-inf")}, gen)
    assert torch.isfinite(one).all()
    a, b = apply_probe([x, r], {"kind": "constant", "value": 0.0}, gen)
    rows = (a == 0).all(dim=1)
    assert torch.equal(rows, (b == 0).all(dim=1)) and 16 < int(rows.sum()) < 48
    assert torch.equal(a[~rows], x[~rows]) and torch.equal(b[~rows], r[~rows])
    (c,) = apply_probe([torch.randn(1, 7)], {"kind": "constant", "value": 1.5}, gen)
    assert (c == 1.5).all()  # a single row is always picked


def test_scalar_output_precision_is_judged_over_the_pool_of_small_groups(monkeypatch):
    """redteam_s8 cp1 (cross_entropy with a cubic exp: one loss per trial, so every shape group had
    fewer than MIN_ELEMENTS = 256 outputs and rule 23 never judged it): the real harness
    (kernelsynth.jobs.evaluate, CPU plan, one trial per shape) pools the small groups and rejects it
    by the RMS; the red team's honest ch1 is accepted, its pooled statistic recorded."""
    from kernelsynth.external import ExternalCandidate
    from kernelsynth.hardware import Hardware
    from kernelsynth.jobs import evaluate
    from kernelsynth.stages.exploration import Exploration

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    spec = _spec("cross_entropy")
    ext = [ExternalCandidate(f.stem, f) for f in (R8 / "xent/cp1_cubic_exp_scalar_output.py",
                                                 R8 / "xent/ch1_two_rows_per_program_online.py")]
    cpu = Hardware(target="cpu", device_name="cpu", interpret=True)
    jobs = [j for j in Exploration(trials=1, baselines=False, sources=["external"]).plan(spec, cpu, external=ext)
            if j.request.candidate.role == "external"]
    # the derived shapes of a few rows (the 286 x 1 ones cost a program per row and measure nothing:
    # a loss over one class is 0, its rounding scale too): 11 finite losses in the pool
    got = {j.request.candidate.name: evaluate(dataclasses.replace(j.request, derived_shapes=[
        s for s in j.request.derived_shapes if s["M"] <= 8])) for j in jobs}
    cp1, ch1 = got["cp1_cubic_exp_scalar_output"], got["ch1_two_rows_per_program_online"]
    assert cp1.verdict == "rejected" and "pooled small groups" in cp1.reason and "precision below" in cp1.reason, \
        cp1.reason
    rms, bound = map(float, re.search(r"scale ([0-9.e+-]+) > ([0-9.e+-]+)", cp1.reason).groups())
    # about 7.7e-6 > 3.9e-6 (9.1e-6 before session 10's {shift: -100} probe joined the pool: its
    # losses near -150 + log V have a larger honest rounding scale); 8.5e-6 > 4.6e-6 since session 24,
    # when the staleness check's first call joined the meter (rule 23: an input tensor seen before);
    # 7.8e-6 > 4.5e-6 since session 29, when its later calls joined too (red team s28 c3)
    assert rms > 1.6 * bound
    assert ch1.verdict == "accepted", ch1.reason
    assert ch1.precision_rms is not None and ch1.precision_rms <= ch1.precision_bound


def test_pooled_meter_judges_small_groups_together_with_their_element_weighted_slack():
    """PrecisionMeter.pooled (the worker's check_small_groups and the parent's audit both use it):
    groups under MIN_ELEMENTS of at most POOL_PER_TRIAL outputs a trial are added up and judged from
    POOLED_MIN_ELEMENTS; a group of long reductions lends its slack only in proportion to its
    elements; big groups and small groups of a task with ordinary outputs stay out."""
    from kernelsynth.verify.precision import MIN_ELEMENTS, POOLED_MIN_ELEMENTS

    def meter(n, rms, honest, slack, policy="fp32"):
        m = PrecisionMeter(policy)
        m.add_sums((rms ** 2 * n, n), [(honest ** 2 * n, n)], slack=slack)
        return m

    a, b, big = meter(6, 1e-5, 5e-8, 1e-6), meter(4, 1e-5, 5e-8, 4e-6), meter(MIN_ELEMENTS, 1.0, 1.0, 1.0)
    a.check("a"), b.check("b")  # alone: too few to judge
    pool = PrecisionMeter.pooled([a, b, big, None])
    assert pool.candidate[1] == 10 >= POOLED_MIN_ELEMENTS and pool.min_elements == POOLED_MIN_ELEMENTS
    assert math.isclose(pool.accumulation, math.sqrt((6 * 1e-12 + 4 * 16e-12) / 10))
    assert math.isclose(pool.margin, 1.4 * (1 + math.sqrt(2 / 10)))  # widened for 10 elements
    with pytest.raises(VerificationFailure, match="precision below the declared policy fp32"):
        pool.check("pooled")
    assert PrecisionMeter.pooled([big]) is None
    assert PrecisionMeter.pooled([meter(100, 1.0, 1e-3, 1e-7)]) is None  # 100 outputs a trial: not a few-output task
    fine = PrecisionMeter.pooled([meter(6, 5e-8, 5e-8, 1e-6), meter(4, 6e-8, 5e-8, 4e-6)])
    assert fine.check("pooled")["rms"] <= fine.check("pooled")["bound"]
    # bfloat16-like: no slack to hide in; 2.4x the honest RMS over 10 elements is inside the widened margin
    # times bf16's headroom of one more rounding (1.4 x (1 + sqrt(0.2)) x 1.25 = 2.53x; fp32's headroom for
    # approximate transcendentals, precision.HEADROOM, would hide 2.8x)
    assert math.isclose(PrecisionMeter.pooled([meter(10, 1.8e-3, 1e-3, 1e-7, "bf16")]).margin,
                        1.4 * (1 + math.sqrt(0.2)))
    bf = PrecisionMeter.pooled([meter(10, 2.4e-3, 1e-3, 1e-7, "bf16")])
    assert 2.5e-3 < bf.check("pooled")["bound"] < 2.6e-3
    with pytest.raises(VerificationFailure):
        PrecisionMeter.pooled([meter(10, 2.8e-3, 1e-3, 1e-7, "bf16")]).check("pooled")


def test_a_downward_shift_probe_rejects_a_softmax_without_its_max_subtraction():
    # redteam_s9 sn1: exp(x) / sum exp(x), redone with the max subtracted only for rows whose max
    # passes 80 -- the upward shift and the mask probes pass it (a row always keeps an entry near
    # its max); rows shifted to [-200, -100) underflow to 0 / 0
    idx = next(k for k, p in enumerate(_spec("softmax_rows").probes) if p["kind"] == "shift" and p["value"] < 0)
    cheat = ROOT / "tests" / "adversarial" / "redteam_s9" / "softmax" / "sn1_no_max_subtraction_overflow_guarded.py"
    _run("softmax_rows", cheat, group="listed")  # the plain trials pass
    with pytest.raises(VerificationFailure, match=r"input-range probe: shift -100\): NaN where the reference has none"):
        _run("softmax_rows", cheat, group=f"probe{idx}")
    honest = ROOT / "specs" / "softmax_rows" / "kernels"
    for f in sorted(honest.glob("v[01]_*.py")):  # the Triton ladder (v2 is CUDA)
        _run("softmax_rows", f, group=f"probe{idx}")


def test_a_downward_shift_probe_rejects_a_cross_entropy_without_its_max_subtraction():
    # session 10: sn1's class on cross_entropy (tests/adversarial/s10 xn: sum exp(x) without the
    # max, redone with it only for rows whose max passes 80); the loss is shift invariant per row
    # and max - x[target] stays exact, so the float64 reference and the honest ladder stay put
    idx = next(k for k, p in enumerate(_spec("cross_entropy").probes) if p["kind"] == "shift" and p["value"] < 0)
    up = next(k for k, p in enumerate(_spec("cross_entropy").probes) if p["kind"] == "shift" and p["value"] > 0)
    cheat = ROOT / "tests" / "adversarial" / "s10" / "xn_logsumexp_without_max_overflow_guarded.py"
    _run("cross_entropy", cheat, group="listed")  # the plain trials pass, and so does the upward shift
    _run("cross_entropy", cheat, group=f"probe{up}")
    with pytest.raises(VerificationFailure, match=r"input-range probe: shift -100\): (NaN|Inf)"):
        _run("cross_entropy", cheat, group=f"probe{idx}")
    for f in sorted((ROOT / "specs" / "cross_entropy" / "kernels").glob("v[1-9]_*.py")):  # the Triton ladder (v1-v3)
        for dtype in (torch.float32, torch.bfloat16):
            _run("cross_entropy", f, group=f"probe{idx}", dtype=dtype)
