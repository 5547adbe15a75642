"""The whole-row kernels' long-row paths (session 26): layernorm v1/v2, rmsnorm_residual v1,
softmax_rows v1 and softmax_backward v1 hold a row in registers only up to a cap (16384 elements;
a 2^17-lane row took 40 s to compile with 4 warps on a GPU) and walk longer rows in chunks. On the
interpreter the cap is lowered so a 4099-element row takes the chunked path; its outputs must match
the float64 reference as closely as the one-tile path's do."""

import pytest
import torch

from conftest import ROOT
from kernelsynth.loading import import_file

SPECS = ROOT / "specs"


class _Spy:
    """Stands for a module's @triton.jit kernel and records the ONE_TILE of every launch."""

    def __init__(self, kernel, seen):
        self.kernel, self.seen = kernel, seen

    def __getitem__(self, grid):
        launch = self.kernel[grid]

        def run(*args, **kwargs):
            self.seen.append(kwargs["ONE_TILE"])
            return launch(*args, **kwargs)
        return run


def _kernel(task, version, monkeypatch, long_path, seen):
    mod = import_file(next((SPECS / task / "kernels").glob(f"{version}_*.py")))
    if long_path:
        for name, small in (("MAX_BLOCK_N", 1024), ("MAX_TILE", 1024), ("CHUNK", 512)):
            if hasattr(mod, name):
                monkeypatch.setattr(mod, name, small)
    for name in [n for n in vars(mod) if n.endswith("_kernel")]:
        monkeypatch.setattr(mod, name, _Spy(getattr(mod, name), seen))
    return mod


def _inputs(task, M, N, gen):
    ref = import_file(SPECS / task / "reference.py")
    return ref, list(ref.get_inputs({"M": M, "N": N}, torch.float32, "cpu", gen))


CASES = [("layernorm", "v1", {"N": None}), ("layernorm", "v2", {"N": None, "ROWS": 2}),
         ("rmsnorm_residual", "v1", {"N": None}), ("softmax_rows", "v1", {}), ("softmax_backward", "v1", {})]


@pytest.mark.parametrize("task,version,init", CASES, ids=[f"{t}-{v}" for t, v, _ in CASES])
def test_the_long_row_path_matches_the_reference(task, version, init, monkeypatch):
    M, N = 3, 4099  # next_power_of_2(N) = 8192 > the lowered cap: 9 chunks of 512, the last ragged
    gen = torch.Generator().manual_seed(7)
    ref_mod, inputs = _inputs(task, M, N, gen)
    kwargs = {k: (N if v is None else v) for k, v in init.items()}
    outs, seen = {}, []
    for long_path in (False, True):
        mod = _kernel(task, version, monkeypatch, long_path, seen)
        torch.manual_seed(0)  # the same parameters for both paths and the reference
        model = mod.ModelNew(**kwargs)
        torch.manual_seed(0)
        reference = ref_mod.Model(*([N] if "N" in init else [])).double()
        with torch.no_grad():
            outs[long_path] = model(*[x.clone() for x in inputs])
            want = reference(*[x.double() for x in inputs])
        err = (outs[long_path].double() - want).abs().max().item()
        assert err < 2e-5 * max(1.0, want.abs().max().item()), (long_path, err)
        monkeypatch.undo()
    assert seen == [True, False]  # the one-tile path, then the chunked one


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_softmax_long_path_handles_lanes_that_start_at_minus_infinity(monkeypatch, dtype):
    """A lane whose first values are -inf (rule 8's special values) must not turn the row into NaN
    (exp(-inf - -inf) is NaN with tl.exp, the 2-byte dtypes' path)."""
    seen = []
    mod = _kernel("softmax_rows", "v1", monkeypatch, True, seen)
    x = torch.randn(2, 4099).to(dtype)
    x[0, :700] = float("-inf")  # lanes 0-511 see -inf in their first chunk, 512-699 in the second's head
    x[0, 600] = float("-inf")
    x[1, 5:3000:7] = float("-inf")
    y = mod.ModelNew()(x.clone())
    want = torch.softmax(x.double(), dim=-1)
    assert seen == [False] and torch.isfinite(y).all()
    assert (y.double() - want).abs().max().item() < (1e-6 if dtype == torch.float32 else 4e-3)
