"""The ``inductor`` candidate source, worker side: TorchInductor's generated code for a task's
reference, made into a standalone candidate file (the parent side is :mod:`kernelsynth.inductor`).

Runs in a worker on the target device (:func:`kernelsynth.jobs.inductor`): on a GPU inductor
emits Triton, on the CPU (``hw=cpu``) C++/OpenMP compiled with the host's C++ compiler (its
Triton CPU path needs a Triton CPU driver, which the interpreter is not: ``0 active drivers``).

Shapes: the reference is compiled once, ``fullgraph=True, dynamic=True``, with duck sizing off
(two dims of equal example size stay two symbols) and its parameters and buffers passed as
inputs (``torch.func.functional_call``), so their sizes are symbolic too (a task whose dims set
the channel count). The generated ``call(args)`` then takes every size it needs as an integer
argument; the file computes each argument from the tensors at run time (the ``_ARGS`` table, from
dynamo's record of where each graph input came from), so one file serves every verify shape.
What inductor still specialises (a size of 0 or 1; a size its lowering needs as a constant, as
a convolution's weight sizes; a size the module holds as a Python int, as LayerNorm's
``normalized_shape``) is listed (:func:`static_sizes`) and checked by the file before ``call()``:
a shape that changes one is rejected with one line naming the tensor, dim and size, never a
wrong answer. Such a task gets no general candidate (decided: one file per listed shape would be
the specialisation rule 12's derived shapes exist to reject).

On the CPU, precompiled headers are off: a sandboxed worker's /tmp is its own, so a header
precompiled there would serve one compile only.

Nothing here writes the run directory: :func:`extract` returns the file's text and the parent
writes it.
"""

from __future__ import annotations

import ast
import re
import time
from typing import Any, Dict, List, Optional

import torch

from . import gpulock

#: What inductor's code imports from ctypes and, on this torch, never uses; the source screen
#: (kernelsynth/screen.py) rejects any ctypes import, so an unused one is dropped (and said so).
_CTYPES_LINE = re.compile(r"^from ctypes import [\w, ]+\n", re.M)

#: Module names a generated file must not define: the wrapper's own.
_WRAPPER_NAMES = ("ModelNew", "_STATE", "_inductor_call")


def _placeholder_sources(gm) -> List[str]:
    """Where each input of dynamo's graph comes from, as Python over ``L`` (the traced function's
    locals), e.g. ``L['flat'][0]`` or ``L['flat'][2].size()[1]``. Raises RuntimeError for an
    input dynamo recorded no source for."""
    out = []
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        arg = node.meta.get("grapharg")
        source = getattr(arg, "source", None)
        name = getattr(source, "name", None)
        name = name() if callable(name) else name
        if not isinstance(name, str):
            raise RuntimeError(f"graph input {node.name}: dynamo recorded no source")
        ast.parse(name, mode="eval")  # a SyntaxError here is a source this file cannot express
        out.append(name)
    return out


def _kernels(code: str) -> Dict[str, Any]:
    """Static counts of a generated module: its own kernels (``async_compile.triton`` /
    ``cpp_pybinding`` definitions), their launches in ``call`` and the library calls
    (``extern_kernels.<name>``) it makes."""
    own = re.findall(r"^(\w+) = async_compile\.(?:triton|cpp_pybinding|cpp)\(", code, re.M)
    extern = re.findall(r"extern_kernels\.(\w+)\(", code)
    launches = sum(len(re.findall(rf"\b{re.escape(k)}(?:\.run)?\(", code.split("def call(", 1)[-1])) for k in own)
    return {"n_kernels": len(own), "kernel_names": own, "launches": launches, "extern_calls": sorted(set(extern)),
            "n_extern_calls": len(extern)}


def _aten_ops(model, inputs) -> List[str]:
    """The arithmetic aten operators eager PyTorch dispatches for one call (the census's names,
    layout and allocation left out: :func:`kernelsynth.verify.census.library_calls`), one entry per
    dispatch, in order."""
    from torch.utils._python_dispatch import TorchDispatchMode

    from .verify.census import LAYOUT_OPS, op_name

    seen: List[str] = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(op_name(func))
            return func(*args, **(kwargs or {}))

    with torch.no_grad(), Record():
        model(*inputs)
    return [o for o in seen if o not in LAYOUT_OPS]


def extract(payload: Dict[str, Any]) -> Dict[str, Any]:
    """Compile the reference with TorchInductor and return the standalone candidate.

    ``payload``: ``reference`` (the task's reference file), ``dtype`` (torch dtype name),
    ``device`` (``"cuda"`` or ``"cpu"``), ``shape`` (the dims the example inputs are drawn at),
    ``seed``, ``task``. Returns ``source`` (the file's text), ``torch`` (version),
    ``codegen`` (``"triton"`` or ``"cpp"``), ``compile_s``, the static counts of :func:`_kernels`
    and ``eager_ops`` (the arithmetic aten operators one eager call dispatches, in order).
    Raises RuntimeError when the reference does not compile to one graph, or when the file's
    ``ModelNew`` disagrees with the reference on the example inputs (beyond the float tolerance
    of a float64 comparison; an inductor bug), and whatever inductor raises."""
    import torch._dynamo
    import torch._inductor.config as icfg
    import torch.fx.experimental._config as fx_config
    from torch._inductor.compile_fx import compile_fx
    from torch._inductor.utils import run_and_get_code

    from .jobs import _reference, init_inputs
    from .loading import import_file

    device, dtype = torch.device(payload["device"]), getattr(torch, payload["dtype"])
    ref_mod = import_file(payload["reference"])
    shape = payload["shape"]
    # the GPU's lock is held around this job's GPU work only, not its compile (kernelsynth/gpulock.py)
    with gpulock.shared():
        model = _reference(ref_mod, init_inputs(ref_mod, shape), device, dtype)
        gen = torch.Generator(device=device).manual_seed(int(payload.get("seed", 0)))
        inputs = list(ref_mod.get_inputs(shape, dtype, device, gen))
        state = dict(model.named_parameters()) | dict(model.named_buffers())
    names = list(state)

    def forward(*flat):
        return torch.func.functional_call(model, dict(zip(names, flat[:len(names)])), tuple(flat[len(names):]))

    graphs: List[List[str]] = []

    def backend(gm, example_inputs):
        graphs.append(_placeholder_sources(gm))
        return gpu_locked(compile_fx(gm, example_inputs))  # compiled without the lock, run with it

    # copies: the same tensor objects would be traced as the module's attributes (static sizes)
    with gpulock.shared():
        flat = [state[n].detach().clone() for n in names] + inputs
    torch._dynamo.reset()
    start = time.perf_counter()
    # floats of the module (a scale) are constants of the task: specialised, not graph inputs; settings
    # a torch does not have are left out (the H200 runs another torch than this machine)
    settings = _known(icfg, fx_graph_cache=False, compile_threads=1, cpp_cache_precompile_headers=False)
    with torch.no_grad(), fx_config.patch(**_known(fx_config, use_duck_shape=False)), \
            torch._dynamo.config.patch(**_known(torch._dynamo.config, specialize_float=True)), icfg.patch(**settings):
        compiled = torch.compile(forward, backend=backend, fullgraph=True, dynamic=True)
        _, codes = run_and_get_code(compiled, *flat)
    compile_s = time.perf_counter() - start
    if len(graphs) != 1 or len(codes) != 1:
        raise RuntimeError(f"inductor produced {len(graphs)} graphs and {len(codes)} modules, not one")
    code = codes[0]
    if "def call(" not in code:
        raise RuntimeError("inductor's module defines no call(args)")
    for name in _WRAPPER_NAMES:
        if re.search(rf"^{name}\b", code, re.M):
            raise RuntimeError(f"inductor's module defines {name}, a name the wrapper uses")
    notes = []
    m = _CTYPES_LINE.search(code)
    if m:
        used = set(re.findall(r"\w+", m.group(0).removeprefix("from ctypes import ")))
        rest = code[:m.start()] + code[m.end():]
        if not any(re.search(rf"\b{u}\b", rest) for u in used):
            code = rest
            notes.append(f"the unused import `{m.group(0).strip()}` was removed (the source screen rejects ctypes)")
    counts = _kernels(code)
    with gpulock.shared():
        eager = _aten_ops(model, inputs)
    codegen = "triton" if device.type == "cuda" else "cpp"
    static = static_sizes(code, graphs[0], names)
    source = render(code, graphs[0], names, payload.get("task", ""), str(torch.__version__), codegen, shape, notes,
                    static)
    # the file must reproduce the reference here, where it was made (the harness verifies it for real)
    from .loading import import_file as _import
    import tempfile, os
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "inductor_candidate.py")
        with open(path, "w") as f:
            f.write(source)
        module = _import(path)  # its kernels compile here
        with gpulock.shared(), torch.no_grad():
            got, want = module.ModelNew(model)(*inputs), model(*inputs)
            _same(got, want)
    return {"source": source, "torch": str(torch.__version__), "codegen": codegen, "compile_s": compile_s,
            "eager_ops": eager, "notes": notes, "static_sizes": static, **counts}


def _split_top(text: str) -> List[str]:
    """``text`` split at the commas outside parentheses (a size tuple's entries)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def static_sizes(code: str, sources: List[str], names: List[str]) -> List[Dict[str, Any]]:
    """The sizes inductor kept constant in the inputs of its ``call()``: every integer literal of an
    ``assert_size_stride(<input>, (sizes), ...)`` on an argument of ``call`` (dynamic shapes make
    the others symbols). One entry per such size: ``arg`` (its position among ``call``'s
    arguments, as in ``sources``), ``tensor`` (a parameter or buffer's name from ``names``, or
    ``input <i>``), ``dim`` and ``size``. Inductor keeps a size constant when its lowering needs
    it as one (e.g. a convolution's weight sizes: ``guard_int_seq`` in
    torch/_inductor/kernel/conv.py) or when the module holds it as a Python int (LayerNorm's
    ``normalized_shape``); the file then serves only shapes with that size."""
    body = code.split("def call(", 1)[-1]
    m = re.search(r"^\s*((?:\w+, )*\w+),? = args\s*$", body, re.M)
    if not m:
        return []
    args = [a.strip() for a in m.group(1).split(",")]
    out = []
    for a in re.finditer(r"assert_size_stride\((\w+), \(([^)]*(?:\([^)]*\)[^)]*)*)\)", body):
        if a.group(1) not in args:
            continue
        pos = args.index(a.group(1))
        src = sources[pos] if pos < len(sources) else ""
        k = re.fullmatch(r"L\['flat'\]\[(\d+)\]", src)
        if k is None:
            continue
        i = int(k.group(1))
        label = names[i] if i < len(names) else f"input {i - len(names)}"
        for d, size in enumerate(_split_top(a.group(2))):
            if re.fullmatch(r"\d+", size):
                out.append({"arg": pos, "tensor": label, "dim": d, "size": int(size)})
    return out


def gpu_locked(fn):
    """``fn`` (inductor's compiled callable) whose calls, and its kernels' autotuning at the first
    one, hold the GPU's lock shared (:func:`kernelsynth.gpulock.shared`); ``_boxed_call`` (how
    dynamo calls it: one list, or unpacked arguments) is kept."""
    def run(*args):
        with gpulock.shared():
            return fn(*args)
    run._boxed_call = getattr(fn, "_boxed_call", False)
    return run


def _known(config, **settings) -> Dict[str, Any]:
    """The ``settings`` that ``config`` (a torch config module) has."""
    return {k: v for k, v in settings.items() if hasattr(config, k)}


def _same(got, want) -> None:
    """Raise RuntimeError unless ``got`` has ``want``'s structure, shapes and dtypes and, for 32- and
    64-bit floats and integers, close (equal) values: a check that the arguments of ``call()`` were
    mapped right, not the verification (the harness does that, on every shape)."""
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor) or got.shape != want.shape or got.dtype != want.dtype:
            raise RuntimeError(f"the generated module returned {type(got).__name__} "
                               f"{getattr(got, 'shape', '')} {getattr(got, 'dtype', '')}, the reference "
                               f"{tuple(want.shape)} {want.dtype}")
        if want.dtype in (torch.bfloat16, torch.float16):
            ok = True  # structure only: the harness judges low-precision values with the spec's tolerance
        elif want.dtype.is_floating_point:
            ok = torch.allclose(got.double(), want.double(), atol=1e-2, rtol=1e-2, equal_nan=True)
        else:
            ok = torch.equal(got, want)
        if not ok:
            raise RuntimeError("the generated module's output differs from the reference's on the example inputs")
        return
    if not isinstance(got, (tuple, list)) or len(got) != len(want):
        raise RuntimeError(f"the generated module returned {type(got).__name__}, the reference {type(want).__name__}")
    for g, w in zip(got, want):
        _same(g, w)


def render(code: str, sources: List[str], names: List[str], task: str, version: str, codegen: str,
           shape: Dict[str, int], notes: List[str], static: Optional[List[Dict[str, Any]]] = None) -> str:
    """The candidate file: a header that says what generated it, inductor's module as it wrote it
    (less ``notes``), and ``ModelNew(reference)``, which reads the reference module's parameters
    and buffers (``names``, in the order of the traced function's ``flat`` arguments) and its other
    attributes (``L['model']``, the module itself), computes
    each argument of ``call`` from ``sources`` and returns the output in the reference's
    structure (one tensor, or a tuple). ``static``: :func:`static_sizes`; a call whose tensors
    differ from one of them raises a one-line RuntimeError naming the size (instead of inductor's
    ``assert_size_stride`` AssertionError)."""
    args = ", ".join(sources)
    header = (
        f"# Generated by TorchInductor (torch {version}, {codegen} code) from the reference of task {task!r},\n"
        f"# extracted by kernelsynth (kernelsynth/inductor_extract.py). Compiled once with dynamic=True at\n"
        f"# {shape}: sizes are arguments of call(), computed from the tensors below, so one file serves\n"
        "# every shape inductor's guards allow (its assert_size_stride rejects the others).\n"
        "# ModelNew(reference) takes the task's reference module only for its parameters and buffers;\n"
        "# the reference's forward is never called: the work is done by call(). Its output buffers are\n"
        "# allocated through torch.empty_strided (the wrapper rebinds inductor's empty_strided_cpu/cuda).\n"
        + "".join(f"# Changed: {n}.\n" for n in notes))
    wrapper = f'''

# ----------------------------------------------------------------------------------------------
# kernelsynth wrapper: the KernelBench-style module around inductor's call()
_inductor_call = call
#: the reference's parameters and buffers, in the order inductor's graph takes them
_STATE = {names!r}
#: sizes inductor kept constant (argument of call(), tensor, dim, size), and the shape compiled at
_STATIC = {[(e["arg"], e["tensor"], e["dim"], e["size"]) for e in (static or [])]!r}
_COMPILED_AT = {dict(shape)!r}


def _check_static(args):
    for pos, tensor, dim, size in _STATIC:
        got = args[pos].shape[dim]
        if got != size:
            raise RuntimeError(
                f"TorchInductor specialised this code to {{tensor}} of size {{size}} at dim {{dim}} (compiled at "
                f"{{_COMPILED_AT}}); this call has {{got}}: no general candidate, inductor keeps that size a constant")


# Output buffers through the dispatcher (torch.empty_strided), not inductor's C++ fast path, so
# the harness's poisoning and census see every allocation, as they do for any candidate.
def empty_strided_cpu(size, stride, dtype):
    return torch.empty_strided(size, stride, dtype=dtype, device="cpu")


def empty_strided_cuda(size, stride, dtype):
    return torch.empty_strided(size, stride, dtype=dtype, device="cuda")


class ModelNew(torch.nn.Module):
    def __init__(self, reference):
        super().__init__()
        self.reference = reference
        state = dict(reference.named_parameters()) | dict(reference.named_buffers())
        self._state = [state[n] for n in _STATE]  # the same tensor objects: .to() keeps them

    def forward(self, *inputs):
        # the traced function's locals: its arguments, and the module (attributes that are not
        # parameters or buffers, e.g. a plain tensor, are read from it as the reference reads them)
        L = {{"flat": self._state + list(inputs), "model": self.reference}}
        args = [{args}]
        _check_static(args)
        with torch.no_grad():
            outs = _inductor_call(args)
        return outs[0] if len(outs) == 1 else tuple(outs)
'''
    return header + code.rstrip() + "\n" + wrapper
