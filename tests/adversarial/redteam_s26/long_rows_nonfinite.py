"""The whole-row kernels' chunked long-row path (session 26) on rows holding NaN / +-Inf, on the
interpreter, against the float64 torch reference and against the same kernel's one-tile path.

    TRITON_INTERPRET=1 PYTHONPATH=$PWD python tests/adversarial/redteam_s26/long_rows_nonfinite.py

Caps lowered as tests/test_long_rows.py does (MAX_BLOCK_N / MAX_TILE 1024, CHUNK 512) so N = 4099
takes the chunked path; N = 16411 is also run at the real caps (16384 / the module's CHUNK).
Row plan (first float input of the task; every other input standard): 0 NaN at col 5; 1 +Inf at
col 3000; 2 -Inf at col 1; 3 every element -Inf; 4 +Inf at col 7 and -Inf at col 8; 5 NaN in the
last (ragged) chunk; 6 +Inf in the first and the last element; 7 finite. Rule 6: non-finite exactly
where the reference is (NaN and Inf interchangeable there, same sign for two infinities), finite
elements within 1e-5 x max(1, |ref|)."""
import sys

import torch

sys.path.insert(0, "tests")
from kernelsynth.loading import import_file  # noqa: E402
from pathlib import Path  # noqa: E402

SPECS = Path("specs")
CASES = [("layernorm", "v1", {"N": None}), ("layernorm", "v2", {"N": None, "ROWS": 2}),
         ("rmsnorm_residual", "v1", {"N": None}), ("softmax_rows", "v1", {}), ("softmax_backward", "v1", {})]


def plant(x):
    N = x.shape[1]
    x[0, 5] = float("nan"); x[1, min(3000, N - 1)] = float("inf"); x[2, 1] = float("-inf")
    x[3, :] = float("-inf"); x[4, 7] = float("inf"); x[4, 8] = float("-inf"); x[5, N - 2] = float("nan")
    x[6, 0] = float("inf"); x[6, N - 1] = float("inf")
    return x


def verdict(out, ref):
    o, r = out.double(), ref.double()
    rf, of = torch.isfinite(r), torch.isfinite(o)
    bad = []
    if not torch.equal(rf, of):
        rows = sorted(set(torch.nonzero(rf != of)[:, 0].tolist()))
        bad.append(f"finite-mask differs in rows {rows}")
    both_inf = torch.isinf(r) & torch.isinf(o)
    if (both_inf & (torch.sign(r) != torch.sign(o))).any():
        bad.append("infinity of the wrong sign")
    fin = rf & of
    err = ((o - r).abs() / r.abs().clamp(min=1))[fin]
    if err.numel() and err.max().item() > 1e-5:
        rows = sorted(set(torch.nonzero(fin & ((o - r).abs() / r.abs().clamp(min=1) > 1e-5))[:, 0].tolist()))
        bad.append(f"finite error {err.max().item():.2e} in rows {rows}")
    return "; ".join(bad) or "ok"


def run(task, version, init, N, lowered):
    mod = import_file(next((SPECS / task / "kernels").glob(f"{version}_*.py")))
    saved = {}
    if lowered:
        for name, small in (("MAX_BLOCK_N", 1024), ("MAX_TILE", 1024), ("CHUNK", 512)):
            if hasattr(mod, name):
                saved[name] = getattr(mod, name); setattr(mod, name, small)
    ref_mod = import_file(SPECS / task / "reference.py")
    gen = torch.Generator().manual_seed(3)
    inputs = list(ref_mod.get_inputs({"M": 8, "N": N}, torch.float32, "cpu", gen))
    inputs[0] = plant(inputs[0])
    kwargs = {k: (N if v is None else v) for k, v in init.items()}
    torch.manual_seed(0); model = mod.ModelNew(**kwargs)
    torch.manual_seed(0); reference = ref_mod.Model(*([N] if "N" in init else [])).double()
    with torch.no_grad():
        out = model(*[x.clone() for x in inputs])
        want = reference(*[x.double() if x.is_floating_point() else x for x in inputs])
    for name, v in saved.items():
        setattr(mod, name, v)
    return out, want


if __name__ == "__main__":
    for task, version, init in CASES:
        for N, lowered in ((4099, True), (16411, False)):
            long_out, want = run(task, version, init, N, lowered)
            line = f"{task} {version} N={N} {'caps lowered' if lowered else 'real caps'}: chunked vs float64: {verdict(long_out, want)}"
            if lowered:  # the one-tile path on the same rows, for comparison
                tile_out, _ = run(task, version, init, N, False)
                line += f" | one-tile vs float64: {verdict(tile_out, want)}"
                same = torch.equal(torch.isnan(tile_out), torch.isnan(long_out)) and \
                    torch.equal(torch.isinf(tile_out), torch.isinf(long_out))
                line += f" | same non-finite mask as one-tile: {same}"
            print(line, flush=True)
