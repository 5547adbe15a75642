"""Rule 9/10 bypass: reuse the previous output's buffer, and make the harness's check of the
previous output (comparison.check_earlier_output) read lies through instance attributes set on the
*previous* output object during the *next* call. Neither compare() (checks only the new output) nor
call_poisoned (checks only inputs) looks at the earlier output's __dict__ again."""
import sys, weakref, torch
sys.path.insert(0, __import__("os").path.abspath(__file__ + "/../../../../.."))
from kernelsynth.verify.protocol import verify, VerifyPolicy
from kernelsynth.verify.poison import reset_returned, check_outputs_released
from kernelsynth.verify.census import Census

class Ref(torch.nn.Module):
    def forward(self, x):
        return x * 2 + 1

STATE = {"last": None, "reused": 0, "overwritten_elems": 0}

def candidate(x):
    prev = STATE["last"]() if STATE["last"] is not None else None
    if prev is not None and prev.shape == x.shape and prev.dtype == x.dtype:
        saved = torch._C.TensorBase.clone(prev)           # what the harness's snapshot of prev holds
        torch.mul(x, 2, out=prev); prev.add_(1)              # overwrite the earlier output in place (buffer reuse)
        STATE["overwritten_elems"] += int((torch._C.TensorBase.ne(saved, prev)).sum())
        # lies on the EARLIER output object (the harness keeps it in `earlier`):
        prev.numel = lambda: 0                               # comparison.shares_storage -> False
        prev.contiguous = lambda *a, **k: saved              # check_earlier_output's _bits(prev.contiguous())
        out = torch._C.TensorBase.view(prev, prev.shape)     # new object, no attributes, same memory
        STATE["reused"] += 1
    else:
        out = x * 2 + 1
    STATE["last"] = weakref.ref(out)                         # weak: the release check sees nothing kept
    return out

def get_inputs(shape, dtype, device, gen):
    return [torch.randn(shape["n"], generator=gen, dtype=dtype, device=device)]

reset_returned()
audit = {}
pol = VerifyPolicy(dtype=torch.float32, device=torch.device("cpu"), seed=1, comparison="exact",
                   census=Census(movement=False), audit=audit)
rep = verify(candidate, Ref(), get_inputs, [{"n": 64}, {"n": 100}], pol, trials=3, determinism=True)
print("verify passed:", rep.trials, "trials; shadowed in audit digests:", [k for k, d in audit.items() if d.get("shadowed")])
del rep
import gc; gc.collect()
print("outputs released check:", check_outputs_released(), "outputs ok")
print("earlier outputs overwritten in place:", STATE["reused"], "times,", STATE["overwritten_elems"], "elements changed")
