"""Seconds of each piece of rule 12's most expensive verify shape on a GPU, and of a JIT compile
for a new specialisation key (VERIFICATION.md "Cost per candidate"; session 10, helper cost10).

    python3 bench/cost10_pieces.py [--out FILE] [--dry]

flip2d float32 at the 2^31-element shape (65537 x 32769) and the timing shape (32768 x 16384),
in the order :func:`kernelsynth.verify.protocol.verify` runs them for one derived trial: inputs,
the pristine copy, the allocator poisoning (first: with cudaMalloc; again: from the cache), the
candidate (v0, two passes), the audit checksum (session 9's formula and the current one), the
inputs-untouched check, the reference and the exact comparison; then v0's first call at a
(M, N) key no earlier call had (a Triton compile) against its second call. Trusted code only.
Prints one line per piece: seconds and GB moved / s where it applies.
"""

import importlib.util
import json
import os
import sys
import tempfile
import time

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="cost10-triton-"))

import torch  # noqa: E402

from kernelsynth.verify.comparison import _bits, check_inputs_untouched, compare, run_reference  # noqa: E402
from kernelsynth.verify.poison import poison_allocator  # noqa: E402
from kernelsynth.verify.transport import _PRIME, _checksum  # noqa: E402


def old_checksum(t):
    """Session 9's transport._checksum (weights from each element's flat index), for comparison."""
    flat = _bits(t.contiguous()).reshape(-1)
    sums = [0, 0]
    step = 1 << 24
    for start in range(0, flat.numel(), step):
        x = torch.remainder(flat[start:start + step].to(torch.int64), _PRIME)
        idx = torch.arange(start, start + x.numel(), device=x.device, dtype=torch.int64)
        for k, mult in enumerate((2654435761, 40503)):
            w = torch.remainder(idx * mult + k + 1, _PRIME) + 1
            sums[k] = (sums[k] + int(torch.remainder(x * w, _PRIME).sum())) % _PRIME
    return sums


#: flip2d float32's derived shapes on an H200 at seed 0 on main before session 10 (commit c8358f8)
SESSION9_PLAN = [{"M": 31, "N": 3566}, {"M": 906, "N": 279}, {"M": 5852, "N": 5540}, {"M": 90181, "N": 1},
                 {"M": 1, "N": 78681}, {"M": 280, "N": 272}, {"M": 304, "N": 352}, {"M": 288, "N": 320},
                 {"M": 320, "N": 384}, {"M": 384, "N": 1280}, {"M": 1280, "N": 512}, {"M": 512, "N": 1024},
                 {"M": 1024, "N": 1}, {"M": 65537, "N": 32769}]


def timed(rows, name, fn, nbytes=None):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = fn()
    torch.cuda.synchronize()
    s = time.perf_counter() - t0
    rows.append({"piece": name, "s": round(s, 4), "GB/s": round(nbytes / s / 1e9, 1) if nbytes else None})
    print(f"{name:<58} {s:8.4f} s" + (f"  {nbytes / s / 1e9:7.1f} GB/s" if nbytes else ""), flush=True)
    return out


def main(argv):
    out_file = argv[argv.index("--out") + 1] if "--out" in argv else None
    dry = "--dry" in argv  # a CPU rehearsal at small shapes (TRITON_INTERPRET=1): checks the script, not the numbers
    dev = torch.device("cpu" if dry else "cuda")
    if dry:
        torch.cuda.synchronize = lambda *a: None
    spec = importlib.util.spec_from_file_location("v0", "specs/flip2d/kernels/v0_two_pass.py")
    v0 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(v0)
    ref = importlib.util.spec_from_file_location("ref", "specs/flip2d/reference.py")
    refm = importlib.util.module_from_spec(ref)
    ref.loader.exec_module(refm)
    model, rmodel = v0.ModelNew(1, 1024, 4), refm.Model()
    rows = []
    model(torch.randn(37, 1001, device=dev))  # compile the (other, other) key
    model(torch.randn(32, 1024, device=dev))  # and (16, 16)
    for M, N in ((257, 129), (64, 32)) if dry else ((65537, 32769), (32768, 16384)):
        torch.cuda.empty_cache()
        b = M * N * 4
        tag = f"{M}x{N}"
        gen = torch.Generator(device=dev).manual_seed(0)
        x = timed(rows, f"{tag} inputs (randn)", lambda: refm.get_inputs({"M": M, "N": N}, torch.float32, dev, gen)[0], b)
        p = timed(rows, f"{tag} pristine clone", lambda: x.clone(), 2 * b)
        timed(rows, f"{tag} poison_allocator(2 x bytes), first (cudaMalloc)", lambda: poison_allocator(2 * b, dev), 2 * b)
        timed(rows, f"{tag} poison_allocator(2 x bytes), cached", lambda: poison_allocator(2 * b, dev), 2 * b)
        y = timed(rows, f"{tag} candidate v0 (two passes)", lambda: model(x), 4 * b)
        timed(rows, f"{tag} audit checksum, session 9 formula", lambda: old_checksum(y), b)
        timed(rows, f"{tag} audit checksum, current", lambda: _checksum(y), b)
        timed(rows, f"{tag} inputs untouched", lambda: check_inputs_untouched([x], [p], y), 2 * b)
        r = timed(rows, f"{tag} reference (clone + flip)", lambda: run_reference(rmodel, [p], "exact", torch.float32), 4 * b)
        timed(rows, f"{tag} exact comparison", lambda: compare(y, r, "exact", None), 2 * b)
        del x, p, y, r
    torch.cuda.empty_cache()
    for M, N, what in ((280, 272, "new key (other, 16)"), (281, 271, "known key (other, other)")):
        z = torch.randn(M, N, device=dev)
        timed(rows, f"v0 first call at {M}x{N}, {what}", lambda: model(z))
        timed(rows, f"v0 second call at {M}x{N}", lambda: model(z))
    # the whole derived group (one trial per shape, as jobs.evaluate runs it), session 9's plan with
    # its checksum against the current plan and checksum, each with a fresh v0 module and Triton cache
    # (its compiles count, as in a run's first job of a config)
    from kernelsynth.hardware import Hardware
    from kernelsynth.paths import SPECS_DIR
    from kernelsynth.spec import load_spec
    from kernelsynth.stages.exploration import Exploration
    from kernelsynth.verify import transport
    from kernelsynth.verify.protocol import VerifyPolicy, verify

    fspec = load_spec(SPECS_DIR / "flip2d" / "spec.yaml")
    hw = Hardware(target="h200", device_name="gpu", interpret=False, arch="sm_90", total_mem_bytes=139 * 2**30)
    job = next(j for j in Exploration(seed=0, baselines=False).plan(fspec, hw) if not j.request.candidate.trusted
               and j.request.dtype == "float32")
    plans = {"session 9": SESSION9_PLAN, "current": job.request.derived_shapes}
    current_checksum = transport._checksum
    for name, shapes in plans.items():
        if dry:
            shapes = [s for s in shapes if s["M"] * s["N"] <= 2**16]
        os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="cost10-ab-")
        fresh = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fresh)
        m = fresh.ModelNew(1, 1024, 4)
        m(torch.randn(37, 1001, device=dev))  # the listed shapes' keys, compiled before the group
        m(torch.randn(1, 1001, device=dev))
        m(torch.randn(37, 1, device=dev))
        m(torch.randn(1, 1, device=dev))
        m(torch.randn(32, 1024, device=dev))  # the timing shape's
        transport._checksum = old_checksum if name == "session 9" else current_checksum
        torch.cuda.empty_cache()
        policy = VerifyPolicy(dtype=torch.float32, device=dev, seed=0, comparison="exact", audit={}, census=set())
        timed(rows, f"derived group, {name} plan ({len(shapes)} shapes) and checksum",
              lambda: verify(m, rmodel, refm.get_inputs, shapes, policy, trials=1, determinism=False,
                             group="derived", settle=False))
    transport._checksum = current_checksum
    if out_file:
        with open(out_file, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
