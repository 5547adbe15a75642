"""The ``cuda`` backend: raw ``__global__`` kernels in a ``.cu`` file, compiled at run time by NVRTC.
Needs a GPU (on the interpreter, CI compiles these sources with nvcc instead); the source is not
screened (it is C++: it cannot reach the harness's Python); spec candidates carry a ``launch``
block and the task declares its ``interface``.

A spec candidate with ``backend: cuda`` names a ``.cu`` file and a ``launch`` block::

    launch:
      kernel: conv_relu_maxpool_naive          # extern "C" __global__ function
      grid: ["cdiv(N * C_out * PH * PW, BLOCK)", 1, 1]
      block: [BLOCK, 1, 1]
      shared_bytes: 0                          # dynamic shared memory (formula), optional
      args: [x, conv.weight, conv.bias, out, N, C_in, H, W, C_out, PH, PW]
      arch_specific: false                     # true: compile for sm_90a, not sm_90 (optional)

and the task declares its ``interface``: the dims of every input, of the reference model's
parameters (by ``state_dict`` name) and of the output, plus derived dims. At each call the dims
are bound from the actual tensors, the grid/block formulas are evaluated over dims + tunables +
``SM_COUNT`` (the device's multiprocessor count, for persistent grids: 132 on an H200), and the
kernel is launched on PyTorch's current stream. ``args`` names inputs, parameters,
``out`` (allocated by ``torch.empty``, so the harness poisons it) or dims (passed as ``int``).

Compilation: NVIDIA's cuda-python (``cuda.core`` ``Program``, i.e. NVRTC) to a cubin for the
device's arch (its arch-specific target, ``sm_90a`` on an ``sm_90`` device, when the launch block
says ``arch_specific: true``: Hopper's ``wgmma`` and ``setmaxnreg`` exist only there, and such a
cubin loads only on that exact compute capability; :func:`kernel_arch`), with
``-DKS_T=<element type>`` and one ``-D<NAME>=<value>`` per tunable. Cubins
are cached on disk under ``<cache_dir>/cuda/<key>.cubin`` with a sidecar ``<key>.json`` of the
key's inputs (the source's SHA-256, kernel name, arch, options, NVRTC version), so a second run
compiles nothing; sandboxed workers stage new cubins and the parent validates and promotes them
(:mod:`kernelsynth.cache`, SECURITY.md "Compile caches"). Loading and launching go through the CUDA driver API
(``cuda.bindings.driver``). :meth:`RawKernelModel.compile_stats` reports registers, local memory
(spill) bytes, static shared memory and compile seconds per kernel, read from the driver
(``cuFuncGetAttribute``).

``torch.utils.cpp_extension.load_inline`` sources (host code + kernels, KernelBench style) need
nothing from this module: they are plain ``ModelNew`` files; the worker points
``TORCH_EXTENSIONS_DIR`` at ``<cache_dir>/torch_extensions`` (a private, empty folder per worker
in the sandbox, so their builds are reused within a worker only), and
:func:`extension_stats` reads their kernels' resources with ``cuobjdump``.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from ..spec import evaluate
from . import Backend, BuildContext

#: C++ element type for each torch dtype name a raw kernel may be compiled for.
CUDA_TYPES = {"float32": "float", "bfloat16": "__nv_bfloat16", "float16": "__half", "float64": "double",
              "int32": "int", "int64": "long long"}


class CudaCompileError(Exception):
    """NVRTC rejected a source; the message holds the compiler log. (Fault class compile_error.)"""


def defines(dtype: str, config: Dict[str, Any]) -> List[str]:
    """The ``-D`` macros a raw kernel is compiled with: ``KS_T`` (the element type of ``dtype``)
    and one per tunable (sorted). Raises KeyError for a dtype with no C++ type."""
    return [f"KS_T={CUDA_TYPES[dtype]}"] + [f"{k}={int(v)}" for k, v in sorted(config.items())]


def kernel_arch(arch: str, launch: Optional[Dict[str, Any]]) -> str:
    """The NVRTC target of a raw kernel on a device of ``arch`` (``"sm_90"``): ``arch`` itself, or
    its arch-specific variant (``"sm_90a"``) when the launch block sets ``arch_specific``; an arch
    that already names a variant is kept."""
    if (launch or {}).get("arch_specific") and not arch.endswith("a"):
        return arch + "a"
    return arch


def cache_dir() -> Path:
    """Where compiled kernels are kept when no cache is passed in (kernelsynth.paths.cache_dir)."""
    from ..paths import cache_dir as configured_cache_dir

    return configured_cache_dir()


def include_dirs() -> List[str]:
    """CUDA toolkit include folders (for cuda_bf16.h/cuda_fp16.h): $CUDA_HOME, nvcc's prefix,
    /usr/local/cuda, and the headers of the nvidia pip packages."""
    found = []
    cands = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        cands.append(str(Path(nvcc).resolve().parent.parent))
    cands += ["/usr/local/cuda"]
    for c in cands:
        if c and (Path(c) / "include" / "cuda_bf16.h").is_file():
            found.append(str(Path(c) / "include"))
    for p in sys.path:
        for sub in ("nvidia/cu13/include", "nvidia/cuda_runtime/include", "nvidia/cuda_nvrtc/include"):
            d = Path(p) / sub
            if (d / "cuda_bf16.h").is_file() or (d / "cuda_fp16.h").is_file():
                found.append(str(d))
    return list(dict.fromkeys(found))


def _core():
    try:
        import cuda.core as core  # cuda-python >= 0.4 exports Program at the top level
        if hasattr(core, "Program"):
            return core
    except ImportError:
        pass
    try:
        import cuda.core.experimental as core
        return core
    except ImportError as e:
        raise CudaCompileError("the CUDA backend needs NVIDIA's cuda-python (pip install cuda-python)") from e


def _driver():
    try:
        from cuda.bindings import driver
    except ImportError:  # cuda-python < 12.6
        from cuda import cuda as driver
    return driver


def _check(result):
    """Unpack a cuda.bindings call's (error, *values) tuple; raise RuntimeError on an error."""
    err, *vals = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        raise RuntimeError(f"CUDA error: {err!r}")
    return vals[0] if len(vals) == 1 else tuple(vals)


class CompiledKernel:
    """One loaded ``__global__`` function and what compiling it cost."""

    def __init__(self, cubin: bytes, name: str, compile_s: float, cached: bool):
        drv = _driver()
        self.name, self.compile_s, self.cached = name, compile_s, cached
        self._module = _check(drv.cuModuleLoadData(cubin))
        self.function = _check(drv.cuModuleGetFunction(self._module, name.encode()))
        attr = drv.CUfunction_attribute
        get = lambda a: int(_check(drv.cuFuncGetAttribute(a, self.function)))  # noqa: E731
        self.n_regs = get(attr.CU_FUNC_ATTRIBUTE_NUM_REGS)
        self.local_bytes = get(attr.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
        self.shared_bytes = get(attr.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
        self._dynamic_max = 48 * 1024  # dynamic shared memory a launch may use without opting in

    def launch(self, grid: Sequence[int], block: Sequence[int], shared_bytes: int, stream: int,
               args: Sequence[Any]) -> None:
        """Launch on ``stream`` (a CUstream handle as int); ``args`` are torch tensors (passed
        as device pointers) or ints (passed as 32-bit ``int``). More than 48 KiB of dynamic shared
        memory is opted into first (``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``; Hopper
        allows up to 227 KiB a block). Raises ValueError for a grid past CUDA's limits (gridDim.x
        at most 2^31 - 1, gridDim.y and gridDim.z at most 65535: CUDA C++ Programming Guide,
        "Technical Specifications per Compute Capability"), naming the dimension, and RuntimeError
        on a launch error."""
        import torch

        for axis, g, top in zip("xyz", grid, GRID_LIMITS):
            if not 1 <= int(g) <= top:
                raise ValueError(f"grid {list(map(int, grid))}: gridDim.{axis} = {int(g)} is outside CUDA's [1, {top}] "
                                 "(the launch block's grid formula; put large extents in gridDim.x, which goes to 2^31 - 1)")
        drv = _driver()
        if shared_bytes > 48 * 1024 and shared_bytes > self._dynamic_max:  # opt in above the 48 KiB default
            _check(drv.cuFuncSetAttribute(self.function,
                                          drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          int(shared_bytes)))
            self._dynamic_max = int(shared_bytes)
        vals, types = [], []
        for a in args:
            if isinstance(a, torch.Tensor):
                vals.append(a.data_ptr())
                types.append(ctypes.c_void_p)
            else:
                vals.append(int(a))
                types.append(ctypes.c_int)
        _check(drv.cuLaunchKernel(self.function, *[int(g) for g in grid], *[int(b) for b in block],
                                  int(shared_bytes), drv.CUstream(stream), (tuple(vals), tuple(types)), 0))


#: The largest gridDim.x, .y, .z of a launch (compute capability 3.0 and later).
GRID_LIMITS = (2 ** 31 - 1, 65535, 65535)

#: kernels loaded by this process, by cache key: a worker compiles or loads each source x options once
_LOADED: Dict[str, "CompiledKernel"] = {}
#: the same kernels by (source SHA-256, name, macros, arch, cache folder): what this process asked for
_BUILT: Dict[tuple, "CompiledKernel"] = {}


def nvrtc_version(core=None) -> str:
    """The NVRTC version (``nvrtcVersion``) and cuda.core's, as one string for the cache key."""
    parts = [f"cuda.core {getattr(core, '__version__', '')}"]
    try:
        from cuda.bindings import nvrtc

        err, major, minor = nvrtc.nvrtcVersion()
        if int(err) == 0:
            parts.append(f"nvrtc {major}.{minor}")
    except Exception:  # noqa: BLE001 - older cuda-python: cuda.core's version alone
        pass
    return ", ".join(parts)


def cached_cubin(sidecar: Dict[str, Any], compile_fn, cache: Optional[Path] = None):
    """The cubin of ``sidecar``'s inputs (kernelsynth.cache.SIDECAR_KEYS): from the shared cache
    (``<cache>/cuda/<key>.cubin``, ``key`` = :func:`kernelsynth.cache.cubin_key` of the sidecar),
    else from this worker's staging folder, else ``compile_fn()`` -- written with its sidecar
    (``<key>.json``) to staging when the worker has one (sandboxed: the parent validates and
    promotes it), else to the shared cache directly. Returns ``(key, cubin bytes, cached)``."""
    from ..cache import cubin_key, lookup, roots, write_atomic

    key = cubin_key(sidecar)
    env_shared, staging = roots("cuda")
    shared = Path(cache) / "cuda" if cache is not None else (env_shared or cache_dir() / "cuda")
    found = lookup([shared / f"{key}.cubin", staging / f"{key}.cubin" if staging else None], shared)
    if found is not None:
        return key, found.read_bytes(), True
    cubin = compile_fn()
    dest = (staging or shared) / f"{key}.cubin"
    write_atomic(dest.with_suffix(".json"), json.dumps(sidecar, sort_keys=True).encode())
    write_atomic(dest, cubin)  # atomic: concurrent workers never read half a cubin
    return key, cubin, False


def compile_kernel(source: str, name: str, macros: Sequence[str], arch: str,
                   cache: Optional[Path] = None) -> CompiledKernel:
    """Compile ``source`` with NVRTC for ``arch`` (e.g. ``"sm_90"``) and load ``name`` from it.

    The cubin is cached on disk (:func:`cached_cubin`), keyed by the SHA-256 of the source's
    SHA-256, the name, arch, options (macros, include folders) and the NVRTC version; a cache hit
    skips NVRTC (``compile_s`` is then the load time and ``cached`` True). Raises
    CudaCompileError with NVRTC's log when the source does not compile.
    """
    quick = (hashlib.sha256(source.encode()).hexdigest(), name, tuple(macros), arch, str(cache))
    if quick in _BUILT:  # a model is built per trial: skip the include scan and the key's hashing
        return _BUILT[quick]
    core = _core()
    incs = include_dirs()
    opts = ["-std=c++17", "-default-device", f"-arch={arch}"] + [f"-D{m}" for m in macros] + [f"-I{d}" for d in incs]
    sidecar = {"source_sha256": hashlib.sha256(source.encode()).hexdigest(), "name": name, "arch": arch,
               "options": opts, "nvrtc": nvrtc_version(core)}
    from ..cache import cubin_key

    key = cubin_key(sidecar)
    if key in _LOADED:  # this process already loaded it (models are built per shape)
        _BUILT[quick] = _LOADED[key]
        return _LOADED[key]

    def nvrtc_compile() -> bytes:
        options = core.ProgramOptions(arch=arch, std="c++17", define_macro=[tuple(m.split("=", 1)) for m in macros],
                                      include_path=incs or None)
        try:
            program = core.Program(source, code_type="c++", options=options)
            obj = program.compile("cubin")
        except Exception as e:  # noqa: BLE001 - NVRTC errors carry the log in the message
            raise CudaCompileError(f"NVRTC could not compile {name} ({' '.join(macros)}): {e}") from None
        return obj.code if isinstance(obj.code, bytes) else Path(obj.code).read_bytes()

    start = time.perf_counter()
    key, cubin, cached = cached_cubin(sidecar, nvrtc_compile, cache)
    _LOADED[key] = _BUILT[quick] = CompiledKernel(cubin, name, time.perf_counter() - start, cached=cached)
    return _LOADED[key]


def bind_dims(interface: Dict[str, Any], tensors: Dict[str, Any]) -> Dict[str, int]:
    """Bind the interface's dim names to the sizes of ``tensors`` (inputs and parameters by name),
    then add the derived dims. Raises ValueError when a tensor's rank or a repeated dim disagrees."""
    dims: Dict[str, int] = {}
    for group in ("inputs", "params"):
        for tname, names in (interface.get(group) or {}).items():
            t = tensors[tname]
            if len(names) != t.dim():
                raise ValueError(f"{tname} has {t.dim()} dims, the interface declares {names}")
            for d, size in zip(names, t.shape):
                if isinstance(d, int):
                    if d != size:
                        raise ValueError(f"{tname} has size {size} where the interface declares {d}")
                elif dims.setdefault(d, int(size)) != size:
                    raise ValueError(f"dim {d} is {dims[d]} in one tensor and {size} in {tname}")
    for d, expr in (interface.get("derived") or {}).items():
        dims[d] = int(evaluate(str(expr), dims))
    return dims


class RawKernelModel:
    """A ``ModelNew`` for a raw CUDA kernel (see module docstring). Built inside a worker from the
    reference model (whose parameters it takes, cast like the reference), the kernel source, the
    candidate's ``launch`` block, the task's ``interface``, the tunables ``config`` and the dtype.
    """

    def __init__(self, ref_model, source: str, launch: Dict[str, Any], interface: Dict[str, Any],
                 config: Dict[str, Any], dtype: str, arch: str, cache: Optional[Path] = None):
        import torch

        self.params = {k: v.detach().clone() for k, v in ref_model.state_dict().items()}
        self.source, self.launch_spec, self.interface, self.config = source, launch, interface, dict(config)
        self.dtype, self.arch, self.cache = dtype, kernel_arch(arch, launch), cache
        self.kernel = compile_kernel(source, launch["kernel"], defines(dtype, config), self.arch, cache)
        self._torch = torch

    def __call__(self, *inputs):
        torch = self._torch
        names = list(self.interface["inputs"])
        tensors = dict(self.params)
        tensors.update({n: x.contiguous() for n, x in zip(names, inputs)})
        dims = bind_dims(self.interface, tensors)
        env = dict(dims, **self.config, SM_COUNT=self._sm_count(inputs[0].device))
        out_shape = [int(evaluate(str(e), env)) for e in self.interface["output"]]
        out = torch.empty(out_shape, dtype=inputs[0].dtype, device=inputs[0].device)
        tensors["out"] = out
        if out.numel() == 0:
            return out
        grid = [int(evaluate(str(e), env)) for e in self.launch_spec["grid"]]
        block = [int(evaluate(str(e), env)) for e in self.launch_spec["block"]]
        shared = int(evaluate(str(self.launch_spec.get("shared_bytes", 0)), env))
        args = [tensors[a] if a in tensors else env[a] for a in self.launch_spec["args"]]
        self.kernel.launch(grid, block, shared, torch.cuda.current_stream(out.device).cuda_stream, args)
        return out

    def _sm_count(self, device) -> int:
        """The multiprocessor count of ``device`` (a formula's ``SM_COUNT``), read once per device."""
        counts = self.__dict__.setdefault("_sms", {})
        if device not in counts:
            counts[device] = int(self._torch.cuda.get_device_properties(device).multi_processor_count)
        return counts[device]

    def compile_stats(self) -> Dict[str, Any]:
        """``n_regs`` (per thread), ``n_spills`` (local memory bytes per thread / 4: spilled 32-bit
        registers and local arrays), ``local_bytes``, ``shared_bytes`` (static, per block),
        ``compile_s`` (NVRTC seconds; load seconds on a cache hit) and ``compile_cached``."""
        k = self.kernel
        return {"n_regs": k.n_regs, "n_spills": k.local_bytes // 4, "local_bytes": k.local_bytes,
                "shared_bytes": k.shared_bytes, "n_kernels": 1, "compile_s": k.compile_s,
                "compile_cached": k.cached}

    # nn.Module-like surface the harness uses
    def to(self, *args, **kwargs):
        return self

    def eval(self):
        return self


_RES = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")


def parse_res_usage(text: str) -> List[Dict[str, int]]:
    """Per-kernel resources from ``cuobjdump -res-usage`` output: ``[{"regs", "stack", "shared",
    "local"}]`` (registers per thread; bytes of stack, static shared memory per block, local memory
    per thread), one entry per ``Function ...: REG:.. STACK:.. SHARED:.. LOCAL:..`` line."""
    return [dict(zip(("regs", "stack", "shared", "local"), map(int, m.groups()))) for m in _RES.finditer(text)]


def extension_libraries(before: set, module=None) -> List[str]:
    """Shared libraries of torch extensions loaded since ``before`` (a set of ``sys.modules``
    names) or held by ``module``'s globals (``load_inline`` returns the extension without
    registering it in ``sys.modules``)."""
    from types import ModuleType

    mods = [m for n, m in list(sys.modules.items()) if n not in before]
    if module is not None:
        mods += [v for v in getattr(module, "__dict__", {}).values() if isinstance(v, ModuleType)]
    libs = []
    for m in mods:
        f = getattr(m, "__file__", None) or ""
        if f.endswith(".so") and "torch_extensions" in f and f not in libs:
            libs.append(f)
    return libs


def extension_stats(before: set, module=None) -> Dict[str, Any]:
    """Resources of the kernels in the torch extensions of :func:`extension_libraries`:
    ``n_regs`` (max), ``local_bytes`` (max) and ``n_spills`` (= local_bytes / 4), ``shared_bytes``
    (max) and ``n_kernels``, read with ``cuobjdump -res-usage``. Empty when there is no extension
    or no cuobjdump (it ships with the CUDA toolkit)."""
    libs = extension_libraries(before, module)
    tool = shutil.which("cuobjdump") or next((str(p) for p in (Path(d).parent / "bin" / "cuobjdump"
                                                               for d in include_dirs()) if p.is_file()), None)
    if not libs or not tool:
        return {}
    rows = []
    for lib in libs:
        try:
            out = subprocess.run([tool, "-res-usage", lib], capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        rows += parse_res_usage(out)
    if not rows:
        return {}
    local = max(r["local"] for r in rows)
    return {"n_regs": max(r["regs"] for r in rows), "local_bytes": local, "n_spills": local // 4,
            "shared_bytes": max(r["shared"] for r in rows), "n_kernels": len(rows)}


class CudaBackend(Backend):
    name = "cuda"
    needs_gpu = True
    screened = False
    language = "cuda"
    launch = True
    needs_interface = True

    def record_code(self, candidate) -> str:
        """The kernel file, then the launch declaration from the spec (the kernel's host side)."""
        code = Path(candidate.file).read_text()
        if candidate.launch:
            L = candidate.launch
            code += (f"\n// Launch (spec.yaml): {L['kernel']}<<<grid({', '.join(L['grid'])}), "
                     f"block({', '.join(L['block'])}), shared {L['shared_bytes']} B>>>({', '.join(L['args'])})\n"
                     "// compiled by NVRTC with -DKS_T=<element type> and -D<tunable>=<value>"
                     + (" for the arch-specific target (sm_90a)" if L.get("arch_specific") else "") + "\n")
        return code

    def load(self, file: str):
        return None  # nothing to import: the kernel is compiled when the model is built

    def build(self, ctx: BuildContext):
        c = ctx.candidate
        return RawKernelModel(ctx.reference(), Path(c.file).read_text(), c.launch, ctx.interface,
                              c.config, ctx.dtype, ctx.arch, Path(ctx.cache_dir) if ctx.cache_dir else None)

    def snapshot(self, module):
        return None

    def compile_stats(self, module, model, snapshot, modules_before) -> Dict[str, Any]:
        """:meth:`RawKernelModel.compile_stats`: registers, local memory, NVRTC seconds."""
        return model.compile_stats()

    def counts_launches(self, module, modules_before):
        """Its NVRTC launches are not counted by the census (they pass no Triton hook)."""
        return False

    def own_kernels(self, module, candidate, modules_before):
        """Its own kernel is the NVRTC kernel the launch block names (an ``extern "C"`` name)."""
        from ..verify.census import own_kernel_names

        return own_kernel_names(None, (candidate.launch or {}).get("kernel"))


BACKEND = CudaBackend()
