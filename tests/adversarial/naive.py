"""A naive harness, the yardstick for tests/adversarial: what many kernel benchmarks do.

Per shape and trial: fresh inputs; the reference runs FIRST and its output is copied to the host;
then the candidate runs on the same inputs; ``torch.allclose(out, expected, atol=1e-2,
rtol=1e-2)`` (KernelBench's bounds). No type, dtype, layout, input, aliasing, determinism,
staleness, thread, integrity or signal checks; timing is CUDA events (or the host clock) around
back-to-back calls. A cheat in tests/adversarial passes this and fails kernelsynth's protocol.
"""

from __future__ import annotations

import contextlib
import time

import torch


def naive_accepts(model, ref_model, get_inputs, shapes, dtype=torch.float32, device="cpu", trials=2, seed=0,
                  atol=1e-2, rtol=1e-2, check="allclose") -> bool:
    """True if the naive harness accepts ``model``.

    ``shapes``: dicts of named dims for ``get_inputs(shape, dtype, device, generator)``.
    ``check``: ``"allclose"`` (``torch.allclose``) or ``"count"`` (no element with
    ``|out - ref| > atol + rtol * |ref|``, a hand-written check in which NaN never counts).
    An exception while comparing is a rejection; one raised by the candidate propagates.
    """
    device = torch.device(device)
    gen = torch.Generator(device=device).manual_seed(seed)
    with torch.no_grad():
        for shape in shapes:
            for _ in range(trials):
                inputs = get_inputs(shape, dtype, device, gen)
                expected = ref_model(*inputs).cpu()  # reference first; on a GPU its memory is freed here
                out = model(*inputs)
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                try:
                    out = out.cpu()
                    if check == "allclose":
                        ok = torch.allclose(out, expected, atol=atol, rtol=rtol)
                    else:
                        ok = int(((out - expected).abs() > atol + rtol * expected.abs()).sum()) == 0
                except (RuntimeError, TypeError):
                    return False
                if not ok:
                    return False
    return True


def naive_time_ms(fn, n=20) -> float:
    """Mean ms per call of ``n`` back-to-back calls: CUDA events on the current stream when CUDA is
    available, else ``time.perf_counter``. No L2 flush, no device-wide synchronisation."""
    fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(n):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / n
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) * 1e3 / n


@contextlib.contextmanager
def restored_namespaces():
    """Run a cheat in this process and put back every attribute it replaced in the harness's
    guarded namespaces (kernelsynth.verify.GUARDED) and in the task references' modules and
    ``Model`` classes, on exit."""
    import sys

    from kernelsynth.verify import GUARDED, _namespace

    spaces = [_namespace(n) for n in GUARDED]
    for name, mod in list(sys.modules.items()):  # task references imported by the tests
        if name.startswith("ks_reference_"):
            spaces += [mod] + ([mod.Model] if hasattr(mod, "Model") else [])
    saved = [(ns, dict(vars(ns))) for ns in spaces if ns is not None]
    try:
        yield
    finally:
        for ns, attrs in saved:
            for k, v in attrs.items():
                if vars(ns).get(k, object()) is not v:
                    setattr(ns, k, v)
        # The harness's dispatch modes hold their raw __torch_dispatch__ until torch._dynamo is imported
        # (kernelsynth/verify/dynamo_deferral.py). A cheat that imported dynamo here had them switched to
        # torch's wrapper, and the loop above put the raw method back: every later in-process check in this
        # process then reported tampering (session 22's order-dependent failures). Put the wrappers back.
        from kernelsynth.verify import dynamo_deferral

        if "torch._dynamo" in sys.modules:
            dynamo_deferral._restore()
