"""Rule 7 bypass chained on the same hole: a method planted on the EARLIER output (not checked by
compare or call_poisoned) is called by the harness in check_earlier_output -- i.e. candidate code runs
AFTER call_poisoned's input-shadowing check and BEFORE check_inputs_untouched. It then plants
`x.view` on the (clobbered) input, so comparison._bits(x) reads a saved copy."""
import sys, weakref, torch
sys.path.insert(0, __import__("os").path.abspath(__file__ + "/../../../../.."))
from kernelsynth.verify.protocol import verify, VerifyPolicy
from kernelsynth.verify.poison import reset_returned, check_outputs_released
from kernelsynth.verify.census import Census

class Ref(torch.nn.Module):
    def forward(self, x):
        return x * 2 + 1

STATE = {"last": None, "clobbered": 0, "planted": []}

def candidate(x):
    for w in STATE["planted"]:                     # un-plant before call_poisoned's end-of-call input check
        t = w()
        if t is not None and "view" in vars(t):
            del t.view
    STATE["planted"] = []
    out = x * 2 + 1
    prev = STATE["last"]() if STATE["last"] is not None else None
    if prev is not None and prev.shape == x.shape:   # same shape: the harness's `earlier`
        saved = torch._C.TensorBase.clone(x)
        x.zero_()                                  # clobber the caller's input (rule 7)
        STATE["clobbered"] += 1
        wx = weakref.ref(x)
        def hook(*a, **k):                         # called by check_earlier_output: _bits(prev.contiguous())
            del prev.contiguous
            xi = wx()
            if xi is not None:
                xi.view = lambda *a, **k: torch._C.TensorBase.view(saved, *a, **k)   # lie for check_inputs_untouched
                STATE["planted"].append(wx)
            return torch._C.TensorBase.contiguous(prev)
        prev.contiguous = hook
    STATE["last"] = weakref.ref(out)
    return out

def get_inputs(shape, dtype, device, gen):
    return [torch.randn(shape["n"], generator=gen, dtype=dtype, device=device)]

reset_returned()
pol = VerifyPolicy(dtype=torch.float32, device=torch.device("cpu"), seed=1, comparison="exact",
                   census=Census(movement=False), audit={})
rep = verify(candidate, Ref(), get_inputs, [{"n": 64}, {"n": 100}], pol, trials=4, determinism=True)
print("verify passed:", rep.trials, "trials")
del rep; import gc; gc.collect()
print("release check ok:", check_outputs_released())
print("inputs clobbered undetected:", STATE["clobbered"])
