"""The per-trial integrity check's cost (kernelsynth.verify.guard.check_integrity) and its parts, in a
process set up as an evaluate job's worker is before the candidate's import (the census watch, the CUDA
and Triton backends, the conv_relu_maxpool reference guarded, the dispatch tables of its operators):

    python bench/integrity_cost.py

Prints the guarded namespaces, attributes and functions, then milliseconds per call (mean of 300)."""
import time, sys, importlib
import torch
import kernelsynth.jobs as jobs
from kernelsynth.verify import guard
from kernelsynth.verify.census import install_watch
import kernelsynth.backends.cuda, kernelsynth.backends.triton
import triton, triton.testing
install_watch()
ref_mod = jobs.import_file("specs/conv_relu_maxpool/reference.py")
guard.guard_also(reference=ref_mod, **{"reference.Model": ref_mod.Model})
snap = guard.integrity_snapshot()
snap.dispatch = guard.dispatch_tables({"convolution", "cudnn_convolution", "_convolution", "conv2d", "max_pool2d", "relu", "max_pool2d_with_indices"})
print("namespaces", len(snap.namespaces), "attrs", sum(len(q[0]) for q in snap.quick.values()), "internals", len(snap.internals[0]))
def t(fn, n=300):
    for _ in range(5): fn()
    s=time.perf_counter()
    for _ in range(n): fn()
    return (time.perf_counter()-s)/n*1e3
print("check_integrity ms %.3f" % t(lambda: guard.check_integrity(snap)))
print("  trace hooks %.3f" % t(guard.check_trace_hooks))
print("  dispatch %.3f" % t(lambda: guard.check_dispatch(snap.dispatch)))
from kernelsynth.verify import dynamo_deferral
print("  deferral %.3f" % t(lambda: dynamo_deferral.intact(snap.deferral)))
print("  internals %.3f" % t(lambda: guard._internals_changed(snap.internals)))
print("  numeric %.3f" % t(lambda: guard._check_numeric_against(snap.numeric)))
quick=snap.quick; resolved=snap.namespaces
print("  quick %.3f" % t(lambda: all(name in quick and guard._same(quick[name], ns) for name, ns in resolved)))
