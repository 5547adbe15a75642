"""Attack: get an entry of one's own into the shared compile cache, to run code in later workers
and runs (an honest candidate that hits it), by the promotion path.

Two ways are tried in one job. (a) Through staging: write ``/tmp/staging/triton/<52 base32
chars>/__triton_launcher.so`` -- a Triton folder without a group file may hold only launcher
modules, whose content the parent does not check, and a later worker dlopens a launcher it finds
by key -- and a cubin with a valid sidecar. (b) Through the result: a forged ``JobResult`` whose
``staged`` claims the same files and whose value says nothing wrong, written on the job socket
ahead of the worker's own result. The parent decides promotion by the worker's taint (set when
it sent the external job) and by the job's fault.

Success (GOT THROUGH): run.json's compile_cache counts a ``promoted`` entry, or the cache folder
has the planted files after the run (run_attack.py prints the cache's files). Contained: both
are ``discarded`` ("the worker ran the external candidate ...").
"""
import base64
import hashlib
import importlib
import json
import os
import pickle
import struct
import sys

import torch

_w = importlib.import_module("kernel" + "synth.workers")
_c = importlib.import_module("kernel" + "synth.contract")
_k = importlib.import_module("kernel" + "synth.cache")
folder = base64.b32encode(hashlib.sha256(b"sb8 launcher").digest()).decode().rstrip("=")
side = {"source_sha256": "0" * 64, "name": "k", "arch": "sm_90", "options": [], "nvrtc": "12.4"}
key = _k.cubin_key(side)
files = {f"triton/{folder}/__triton_launcher.so": b"\x7fELF sb8 not a real module",
         f"cuda/{key}.cubin": b"sb8 cubin", f"cuda/{key}.json": json.dumps(side).encode()}
stage = os.environ.get("KERNELSYNTH_CACHE_STAGING", "/tmp/staging")
for rel, data in files.items():
    os.makedirs(os.path.dirname(os.path.join(stage, rel)), exist_ok=True)
    with open(os.path.join(stage, rel), "wb") as f:
        f.write(data)
v = _c.EvaluateResult(verdict="rejected", reason="staged_promote (forged result)")
msg = pickle.dumps(_w.JobResult(_c.Fault.OK, value=v, seconds=0.5,
                                staged={"files": files, "refused": [], "counts": {}}), protocol=4)
os.write(int(sys.argv[1]), struct.pack("!i", len(msg)) + msg)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        return x.flip(1)
