"""Cheat (attacks kernelsynth itself): walks up the call stack to the harness's frames and
loosens the comparison it finds there (exact -> allclose with atol 10), then returns zeros.
Every in-process check is reachable like this; the independent check (rule 18) is not."""
import sys

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        frame = sys._getframe(1)
        while frame is not None:
            scope = frame.f_locals
            for name in ("common", "p"):
                if isinstance(scope.get(name), dict) and "comparison" in scope[name]:
                    scope[name]["comparison"] = "allclose"
                    scope[name]["tol"] = {"atol": 10.0, "rtol": 0.0}
            for name in ("p", "policy"):  # the frozen JobRequest and VerifyPolicy: frozen only against honest code
                obj = scope.get(name)
                if not isinstance(obj, dict) and hasattr(obj, "comparison"):
                    object.__setattr__(obj, "comparison", "allclose")
                    try:
                        object.__setattr__(obj, "tol", {"atol": 10.0, "rtol": 0.0})
                    except AttributeError:  # a property (JobRequest.tol)
                        object.__setattr__(obj, "tolerance", {k: {"atol": 10.0, "rtol": 0.0} for k in
                                                              ("float32", "bfloat16", "float16", "int32")})
            frame = frame.f_back
        return torch.zeros_like(x)
