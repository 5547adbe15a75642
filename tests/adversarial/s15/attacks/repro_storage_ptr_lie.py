"""Rule 10 bypass (fa1 ring revived): poison._note_fresh / _held_storages read a storage's address
through Python attribute lookup on the storage object (`_UNTYPED(t).data_ptr()`, poison.py
_storage_ptr and _note_fresh). torch preserves a storage's PyObject, so an instance attribute
`data_ptr` on it answers those reads. A non-owning storage over a ring buffer the candidate keeps is
made to look 'allocated by the call' (`fresh`), so note_returned accepts it and takes a weak ref to
the throwaway non-owning storage, which dies with the output: check_outputs_released passes while
the candidate keeps (and later overwrites) every output's memory."""
import sys, torch
sys.path.insert(0, __import__("os").path.abspath(__file__ + "/../../../../.."))
from kernelsynth.verify.poison import call_poisoned, reset_returned, check_outputs_released
from kernelsynth.verify.census import Census
from kernelsynth.verify.guard import thread_ids

RING = torch.zeros(4, 64)     # kept by the candidate: outputs live here
SLOT = [0]
mk = getattr(torch._C, "_construct_storage_from_" + "data_pointer")   # (the screen is a tripwire only)

def candidate(x):
    row = RING[SLOT[0] % 4]; SLOT[0] += 1
    torch.mul(x, 2, out=row); row.add_(1)
    real = row.data_ptr()
    st = mk(real, x.device, row.numel() * row.element_size())
    calls = [0]
    def lie():
        calls[0] += 1
        return 8 if calls[0] == 1 else real        # 1st read (_held_storages of set_'s args): not held
    st.data_ptr = lie                              # 2nd read (_note_fresh of set_'s output): 'fresh' at real
    out = torch.empty(0).set_(st, 0, row.shape, row.stride())
    del st.data_ptr
    return out

reset_returned()
kept = []
for i in range(3):
    x = torch.randn(64)
    out = call_poisoned(candidate, [x], torch.device("cpu"), True, thread_ids(), Census(movement=False))
    assert torch.equal(out, x * 2 + 1)
    kept.append(out.data_ptr())
    del out
print("released check:", check_outputs_released(), "outputs 'released'; yet the ring still holds them:",
      [p in {RING[i].data_ptr() for i in range(4)} for p in kept])
