"""Cheat (attacks kernelsynth itself): loosens the harness's comparison through the call stack,
returns zeros on every trial but the last of each shape, and the right answer on the last one
(the only one the independent check used to see). (Red-team round 2.)"""
import sys

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        last = True
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
            if isinstance(scope.get("t"), int) and isinstance(scope.get("trials"), int):
                last = scope["t"] == scope["trials"] - 1
            frame = frame.f_back
        if last:
            return x[:, torch.arange(x.shape[1] - 1, -1, -1, device=x.device)]
        return torch.zeros_like(x)
