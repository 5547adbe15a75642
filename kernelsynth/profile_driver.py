"""The program Nsight Compute profiles (kernelsynth/profiling.py): ``python -m
kernelsynth.profile_driver REQUEST.pkl``.

It loads the pickled :class:`~kernelsynth.contract.ProfileRequest`, builds its candidate the way
the evaluate job does (:func:`kernelsynth.jobs._build`, the spec's seed), draws the timing shape's
inputs from the timing seed, calls the model ``warmup_calls`` times (JIT compilation, caches warm),
then exactly once between ``cudaProfilerStart`` and ``cudaProfilerStop``: the one call ncu
(``--profile-from-start off``) profiles. A batch (``ProfileRequest.batch``) does the same for each
candidate in turn, with a marker kernel launched inside each profiled range before the call. Nothing is timed or verified here; the observation being
profiled was verified and timed before, in its own worker.
"""

from __future__ import annotations

import pickle
import sys


def _marker():
    """A launch of :data:`kernelsynth.profiling.MARKER` (a one-thread Triton kernel): put before
    each profiled call of a batch, so that the report's rows can be split by call."""
    import triton
    import triton.language as tl

    @triton.jit
    def kernelsynth_profile_marker(p):
        tl.store(p, 1)

    def launch(buf):
        kernelsynth_profile_marker[(1,)](buf)

    return launch


def main(path: str) -> int:
    import torch

    from . import jobs
    from .backends import load_source as load_backend
    from .loading import import_file
    from .verify import trial_seed

    with open(path, "rb") as f:
        profile_request = pickle.load(f)
    requests = profile_request.requests
    warmup = max(1, int(profile_request.warmup_calls))
    marker = buf = None
    for req in requests:
        device, dtype = torch.device(req.device), getattr(torch, req.dtype)
        cuda = device.type == "cuda"  # (a CPU request runs the same steps unprofiled: tests/test_profile.py)
        if cuda and len(requests) > 1 and marker is None:
            marker, buf = _marker(), torch.zeros(1, dtype=torch.int32, device=device)
            marker(buf)  # compiled before any profiled range
        ref_mod = import_file(req.reference)
        backend = None if req.candidate.trusted else load_backend(req.backend_source)
        mod = None if backend is None else backend.load(req.candidate.file)
        shape = req.timing_shape
        model = jobs._build(req, backend, mod, ref_mod, jobs.init_inputs(ref_mod, shape), device, dtype)
        gen = torch.Generator(device=device).manual_seed(trial_seed(req.seed, "timing"))
        inputs = list(ref_mod.get_inputs(shape, dtype, device, gen))
        with torch.no_grad():
            for _ in range(warmup):
                model(*inputs)
            if cuda:
                torch.cuda.synchronize()
                torch.cuda.profiler.start()  # cudaProfilerStart: the profiled range begins
                if marker is not None:
                    marker(buf)
            out = model(*inputs)
            if cuda:
                torch.cuda.synchronize()
                torch.cuda.profiler.stop()
        print(f"kernelsynth.profile_driver: {req.candidate.version} {req.dtype} {req.candidate.config}: {warmup} "
              f"warm-up call(s), 1 profiled call, output {tuple(out.shape)}", flush=True)
        del model, inputs, out
        if cuda:
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
