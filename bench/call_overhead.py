"""The harness's fixed cost of one verified call, in this process (references/VERIFICATION.md,
"Cost per candidate"): :func:`kernelsynth.verify.poison.call_poisoned` with a full
:class:`~kernelsynth.verify.census.Census` (the poisoning dispatch mode, the host-door mode, the
numpy profile hook and the CPU-activity profiler window) around a candidate of three small
operators (``empty_like``, ``flip``, ``copy_``) on a 64 x 64 float32 tensor, so the kernels cost
nothing beside the harness:

    python bench/call_overhead.py [--gpu] [N]

Prints the mean milliseconds per call over ``N`` calls (default 300) after 20 warm-up calls.
Runs the same in any checkout (an A/B: run it in both)."""

import sys
import time


def main(argv):
    import torch

    import kernelsynth.jobs  # noqa: F401 - imports torch._dynamo first, as a worker does
    from kernelsynth.verify.census import Census
    from kernelsynth.verify.guard import thread_ids
    from kernelsynth.verify.poison import call_poisoned

    gpu = "--gpu" in argv
    argv = [a for a in argv if a != "--gpu"]
    n = int(argv[0]) if argv else 300
    device = torch.device("cuda" if gpu else "cpu")
    x = torch.randn(64, 64, device=device)

    class Flip(torch.nn.Module):
        def forward(self, x):
            y = torch.empty_like(x)
            y.copy_(x.flip(-1))
            return y

    model, threads = Flip(), thread_ids()

    def one():
        return call_poisoned(model, [x], device, True, threads, Census(movement=False))

    for _ in range(20):
        one()
    t = time.perf_counter()
    for _ in range(n):
        one()
    print(f"call_poisoned with a census: {(time.perf_counter() - t) / n * 1e3:.3f} ms per call ({device.type}, {n} calls)")


if __name__ == "__main__":
    main(sys.argv[1:])
