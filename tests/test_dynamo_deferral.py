"""Workers do not import torch._dynamo up front (kernelsynth/verify/dynamo_deferral.py): the
harness's dispatch modes run their raw ``__torch_dispatch__`` until dynamo is imported, and torch's
``_disable_dynamo`` wrapper from then on; a candidate that removes the import hook is tampering.
Each case runs in a fresh interpreter (this one may have imported dynamo already), on the
interpreter path (``TRITON_INTERPRET=1``, as a CPU worker: a GPU worker imports dynamo up front,
kernelsynth/jobs.py)."""

import subprocess
import sys

import pytest

from conftest import ROOT

PRELUDE = """
import sys
import torch
import kernelsynth.jobs
from kernelsynth.verify import TamperingError, check_integrity, integrity_snapshot
from kernelsynth.verify.census import RecordAtenOps, aten_ops_of, profiled_ops
from kernelsynth.verify.poison import PoisonEmpty
from kernelsynth.verify.params import ScaleDraws
cpu = torch.device("cpu")
x = torch.randn(4, 6)
def verdict(before, *names):
    try:
        check_integrity(before)
        print("passed")
    except TamperingError as e:
        print("tampering" if all(n in str(e) for n in names) else str(e))
"""


def _run(code):
    p = subprocess.run([sys.executable, "-c", PRELUDE + code], capture_output=True, text=True, timeout=300,
                       cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "TRITON_INTERPRET": "1"})
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout.split()


def test_the_harness_census_runs_without_importing_dynamo():
    """The census's dispatch mode, its profiler call (torch.autograd.profiler: torch.profiler.profile's
    start imports torch._inductor), the poison mode and the parameter modes: no torch._dynamo."""
    out = _run("""
print(aten_ops_of(lambda a: torch.flip(a, [1]), [x], cpu) == ["flip"])
y, ops = profiled_ops(lambda a: torch.flip(a, [0]) @ a.T, [x], cpu)
print("flip" in ops and "mm" in ops and torch.equal(y, torch.flip(x, [0]) @ x.T))
with PoisonEmpty():
    e = torch.empty(3)
with ScaleDraws(2.0):
    lin = torch.nn.Linear(4, 4)
print(all(m.__dict__["__torch_dispatch__"].__name__ == "__torch_dispatch__" for m in (RecordAtenOps, PoisonEmpty)))
print("torch._dynamo" in sys.modules, "torch._inductor" in sys.modules)
""")
    assert out == ["True", "True", "True", "False", "False"]


def test_a_compile_under_the_census_gets_torchs_wrapper_back_and_is_recorded():
    """A candidate's torch.compile imports dynamo: from then on every deferred mode holds torch's
    own wrapper again (the import hook), the compiled call's operators still reach the census,
    and the integrity check passes."""
    out = _run("""
before = integrity_snapshot()
raw = RecordAtenOps.__dict__["__torch_dispatch__"]
print(hasattr(raw, "__wrapped__"))
f = torch.compile(lambda a: torch.sin(a) + 1, backend="aot_eager")
with RecordAtenOps() as rec:
    y = f(x)
print(torch.allclose(y, torch.sin(x) + 1), sorted(rec.ops))
now = RecordAtenOps.__dict__["__torch_dispatch__"]
print(now is not raw and now.__wrapped__ is raw)
check_integrity(before)
print("intact")
""")
    assert out == ["False", "True", "['add',", "'sin']", "True", "intact"]


def test_removing_the_import_hook_and_then_compiling_is_tampering():
    """A candidate that takes the hook out of sys.meta_path before dynamo's import leaves the census
    mode raw under torch.compile (dynamo could trace into it): the integrity check says so."""
    out = _run("""
from kernelsynth.verify import dynamo_deferral
before = integrity_snapshot()
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "_AfterDynamo"]
import torch._dynamo
verdict(before, "import hook", "RecordAtenOps")
""")
    assert out == ["tampering"]


def test_dynamos_own_library_kernels_do_not_change_the_process_fingerprint():
    """torch registers ~140 torch.library kernels while importing dynamo (or inductor, which
    imports it); left out of the fingerprint, a job whose reference or candidate imported dynamo
    does not get every later job a fresh worker -- a kernel the candidate registers still does."""
    out = _run("""
from kernelsynth.verify.guard import process_fingerprint
import torch.library
a = process_fingerprint()
n = len(torch.library._impls)
import torch._inductor
print(len(torch.library._impls) > n + 50, process_fingerprint() == a)
lib = torch.library.Library("ks_test", "DEF")
lib.define("twice(Tensor x) -> Tensor")
lib.impl("twice", lambda x: x * 2, "CPU")
print(process_fingerprint() == a)
""")
    assert out == ["True", "True", "False"]


def test_a_gpu_worker_imports_dynamo_up_front():
    """Without TRITON_INTERPRET (a GPU worker), kernelsynth.jobs imports dynamo at once: the kernel
    census's torch.profiler would import it in the first job's verify time otherwise."""
    p = subprocess.run([sys.executable, "-c", "import sys, kernelsynth.jobs; print('torch._dynamo' in sys.modules)"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0 and p.stdout.split() == ["True"], p.stderr[-2000:]


@pytest.mark.parametrize("attack", [
    "dynamo_deferral._DEFERRED.clear()",  # the hook restores nothing
    "dynamo_deferral._Loader.exec_module = lambda self, m: self._loader.exec_module(m)",
])
def test_keeping_the_hook_from_restoring_is_tampering(attack):
    """The check does not trust the hook's own (mutable) state: it looks at the modes themselves."""
    out = _run(f"""
from kernelsynth.verify import dynamo_deferral
before = integrity_snapshot()
{attack}
import torch._dynamo
verdict(before, "RecordAtenOps")
""")
    assert out == ["tampering"]


def test_replacing_a_harness_modes_method_is_tampering():
    """The modes' class dicts are guarded (rule 13): a census that records nothing is caught."""
    out = _run("""
before = integrity_snapshot()
RecordAtenOps.__torch_dispatch__ = lambda self, func, types, args=(), kwargs=None: func(*args, **(kwargs or {}))
verdict(before, "RecordAtenOps.__torch_dispatch__")
""")
    assert out == ["tampering"]


def test_a_forged_wrapper_around_another_function_is_tampering():
    """Session 20's attack a4 (helper review): a function with torch's wrapper code and
    ``__wrapped__`` set to the raw method, but whose closure holds a census that records nothing;
    only the very wrapper object recorded before the candidate ran is an allowed restore."""
    out = _run("""
import types, torch._compile
before = integrity_snapshot()
import torch._dynamo
raw = RecordAtenOps.__dict__["__torch_dispatch__"].__wrapped__
def evil(self, func, t, args=(), kwargs=None):
    return func(*args, **(kwargs or {}))
setattr(evil, "__dynamo_disable", evil)
tmp = torch._compile._disable_dynamo(evil)
fake = types.FunctionType(tmp.__code__, tmp.__globals__, "__torch_dispatch__", None, tmp.__closure__)
fake.__wrapped__ = raw
RecordAtenOps.__torch_dispatch__ = fake
verdict(before, "RecordAtenOps.__torch_dispatch__")
""")
    assert out == ["tampering"]


def test_a_hidden_dynamo_import_and_a_forged_dynamo_disable_are_tampering():
    """Session 20's open attacks, closed in session 21. a1/a6: take the hook out of sys.meta_path,
    import dynamo (the modes stay raw), then drop it from sys.modules -- the check looked only at
    sys.modules; now a raw mode without its hook is tampering, whatever sys.modules says. a2: set
    the raw method's ``__dynamo_disable`` (what torch's wrapper calls instead of it) to another
    function; now only ``torch._dynamo.disable`` of that very method is accepted there, as torch's
    own first call leaves it (the last line: an honest compile after the forged value is removed)."""
    out = _run("""
from kernelsynth.verify import dynamo_deferral
before = integrity_snapshot()
hook = dynamo_deferral._HOOK
sys.meta_path.remove(hook)
import torch._dynamo
saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k.startswith("torch._dynamo")}
verdict(before, "RecordAtenOps", "import hook")
sys.modules.update(saved)
sys.meta_path.insert(0, hook)
dynamo_deferral._restore()
check_integrity(before)
raw = PoisonEmpty.__dict__["__torch_dispatch__"].__wrapped__
raw.__dynamo_disable = lambda *a, **k: a[2][0](*a[3], **(a[4] or {}))
verdict(before, "PoisonEmpty", "__dynamo_disable")
del raw.__dynamo_disable
with PoisonEmpty():
    torch.empty(2)
print(type(raw.__dict__.get("__dynamo_disable")).__name__)
verdict(before)
""")
    assert out == ["tampering", "tampering", "function", "passed"]


def test_a_swapped_closure_cell_of_torchs_wrapper_is_tampering():
    """Session 20's attack a3: after dynamo's import the modes hold torch's ``_disable_dynamo``
    wrapper, whose closure cell holds the raw method; pointing that cell at another function kept
    every guarded identity. The guard records the modes' methods' closure contents (session 21)."""
    out = _run("""
import torch._dynamo
before = integrity_snapshot()
w = RecordAtenOps.__dict__["__torch_dispatch__"]
cell = next(c for c in w.__closure__ if callable(c.cell_contents))
raw = cell.cell_contents
cell.cell_contents = lambda self, func, types, args=(), kwargs=None: func(*args, **(kwargs or {}))
verdict(before, "RecordAtenOps")
cell.cell_contents = raw
verdict(before)
""")
    assert out == ["tampering", "passed"]


def test_the_tests_in_process_cheat_runner_leaves_the_modes_as_the_hook_set_them():
    """tests/adversarial/naive.py's ``restored_namespaces`` puts back what an in-process cheat
    replaced in the guarded namespaces. Session 22: a cheat that imported torch._dynamo inside it had
    the modes switched to torch's wrapper by the import hook, the helper put their raw methods back,
    and every later in-process check of that pytest process (16 tests, order-dependent) reported
    tampering. After the helper, the modes hold torch's wrappers and an honest check passes."""
    out = _run("""
sys.path.insert(0, "tests")
from adversarial.naive import restored_namespaces
from kernelsynth.verify import dynamo_deferral
print("torch._dynamo" in sys.modules)
with restored_namespaces():
    import torch._dynamo
print(dynamo_deferral.intact() == {})
verdict(integrity_snapshot())
""")
    assert out == ["False", "True", "passed"]
