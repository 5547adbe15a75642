"""The program Nsight Compute profiles (kernelsynth/profiling.py): ``python -m
kernelsynth.profile_driver REQUEST.pkl``.

It loads the pickled :class:`~kernelsynth.contract.ProfileRequest`, builds its candidate the way
the evaluate job does (:func:`kernelsynth.jobs._build`, the spec's seed), draws the timing shape's
inputs from the timing seed, calls the model ``warmup_calls`` times (JIT compilation, caches warm),
then exactly once between ``cudaProfilerStart`` and ``cudaProfilerStop``: the one call ncu
(``--profile-from-start off``) profiles. Nothing is timed or verified here; the observation being
profiled was verified and timed before, in its own worker.
"""

from __future__ import annotations

import pickle
import sys


def main(path: str) -> int:
    import torch

    from . import jobs
    from .backends import load_source as load_backend
    from .loading import import_file
    from .verify import trial_seed

    with open(path, "rb") as f:
        profile_request = pickle.load(f)
    req = profile_request.request
    device, dtype = torch.device(req.device), getattr(torch, req.dtype)
    cuda = device.type == "cuda"  # (a CPU request runs the same steps unprofiled: tests/test_profile.py)
    ref_mod = import_file(req.reference)
    backend = None if req.candidate.trusted else load_backend(req.backend_source)
    mod = None if backend is None else backend.load(req.candidate.file)
    shape = req.timing_shape
    model = jobs._build(req, backend, mod, ref_mod, jobs.init_inputs(ref_mod, shape), device, dtype)
    gen = torch.Generator(device=device).manual_seed(trial_seed(req.seed, "timing"))
    inputs = list(ref_mod.get_inputs(shape, dtype, device, gen))
    warmup = max(1, int(profile_request.warmup_calls))
    with torch.no_grad():
        for _ in range(warmup):
            model(*inputs)
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.profiler.start()  # cudaProfilerStart: the profiled range begins
        out = model(*inputs)
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
    print(f"kernelsynth.profile_driver: {req.candidate.version} {req.dtype} {req.candidate.config}: {warmup} warm-up "
          f"call(s), 1 profiled call, output {tuple(out.shape)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
