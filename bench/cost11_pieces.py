"""Per-call seconds of the harness pieces cost11 trimmed (references/VERIFICATION.md, "Cost per
candidate"), in this process, on the CPU or (``--gpu``) on CUDA device 0:

    python bench/cost11_pieces.py [--gpu]

``check_integrity`` (the guard's pass after every trial, on an unchanged snapshot),
``constructing`` (the seeding before every module build: :func:`kernelsynth.jobs._constructing`),
``release_check`` (:func:`kernelsynth.verify.poison.check_outputs_released` with 60 outputs, one
held by garbage in a reference cycle, as a job leaves them), ``compare_allclose`` (a 256 x 256
float32 output against its float64 reference) and ``checksum`` (:func:`kernelsynth.verify.transport._checksum`
of 2^26 float32 elements: 4 chunks). Prints one line per piece: the median of its repeats, in ms.
Runs the same in any checkout (the A/B of VERIFICATION.md runs it in the commit before cost11 too).
"""

import statistics
import sys
import time


def _median_ms(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main(argv):
    import torch

    import kernelsynth.jobs as jobs
    from kernelsynth.verify import check_integrity, compare, integrity_snapshot
    from kernelsynth.verify import poison, transport

    device = torch.device("cuda" if "--gpu" in argv else "cpu")
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    snap = integrity_snapshot()
    print(f"check_integrity: {_median_ms(lambda: check_integrity(snap), 200):.3f} ms")

    def construct():
        with jobs._constructing(1234, None):
            pass
    print(f"constructing: {_median_ms(construct, 200):.3f} ms")

    class Node:
        pass

    def release():
        poison.reset_returned()
        keep = [torch.zeros(16) for _ in range(60)]
        for t in keep:
            poison.note_returned(t)
        del t
        a, b = Node(), Node()
        a.other, b.other, a.out = b, a, keep[-1]
        del a, b
        keep.clear()
        poison.check_outputs_released()
    print(f"release_check: {_median_ms(release, 10):.3f} ms")

    g = torch.Generator(device=device).manual_seed(0)
    ref = torch.randn(256, 256, device=device, generator=g, dtype=torch.float64)
    out = (ref + 1e-4).float()
    tol = {"atol": 5e-3, "rtol": 5e-3}

    def cmp():
        compare(out, ref, "allclose", tol, torch.float32)
        sync()
    print(f"compare_allclose: {_median_ms(cmp, 200):.3f} ms")
    big = torch.randn(1 << 26, device=device, generator=g)

    def checksum():
        transport._checksum(big)
        sync()
    print(f"checksum_2^26: {_median_ms(checksum, 5):.3f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
