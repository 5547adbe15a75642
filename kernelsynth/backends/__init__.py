"""Backends: how a candidate of one kind is built, measured and recorded, registered by name.

A spec candidate names its backend (``backend: triton``, the default; ``torch``,
``torch_extension``, ``cuda``); external candidates have ``external``, TorchInductor's generated
code ``inductor``. Each backend is one
module holding one :class:`Backend` (its ``BACKEND``). What the parent reads of it -- whether it
needs a GPU, whether its source is screened, whether spec candidates carry a ``launch`` block,
what code goes into the record -- imports no torch; :meth:`Backend.load`, :meth:`Backend.build`
and :meth:`Backend.compile_stats` run in a worker.

Where backends come from, in this order: :data:`BUILTIN`; those given to :func:`register` in
this process; the Python files or module names listed in ``$KERNELSYNTH_BACKENDS``
(``os.pathsep``-separated), each defining ``BACKEND``; the ``kernelsynth.backends`` entry-point
group (``name = "module"``, a module defining ``BACKEND``). The parent sends the backend's :func:`source` with each job
(:class:`kernelsynth.contract.JobRequest`), so a worker loads the same module whatever its
environment.
"""

from __future__ import annotations

import functools
import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

#: The backends kernelsynth ships: name -> module.
BUILTIN = {"triton": "kernelsynth.backends.triton", "torch": "kernelsynth.backends.pytorch",
           "torch_extension": "kernelsynth.backends.torch_extension", "cuda": "kernelsynth.backends.cuda",
           "external": "kernelsynth.backends.external", "inductor": "kernelsynth.backends.inductor"}


@dataclass
class BuildContext:
    """What :meth:`Backend.build` gets in the worker, for one shape's constructor arguments.

    ``module``: what :meth:`Backend.load` returned. ``init``: the reference's constructor
    arguments. ``candidate``: the request's :class:`kernelsynth.contract.CandidateRef` (``file``,
    ``config``, ``launch``).
    ``dtype``: torch dtype name; ``arch``: ``"sm_90"`` (None on the interpreter);
    ``interface``: the task's tensor interface ({} when none). ``cache_dir``: where compiled
    kernels are cached. ``reference()``: a fresh reference model from the trial's parameter seed
    (VERIFICATION.md rule 21), on the job's device and dtype. ``seeded(make)``: ``make()`` called
    after seeding torch the same way (and under the same parameter perturbation), moved and cast
    the same way."""

    module: Any
    init: List[Any]
    candidate: Any
    dtype: str
    arch: Optional[str]
    interface: Dict[str, Any]
    cache_dir: Optional[str]
    reference: Callable[[], Any]
    seeded: Callable[[Callable[[], Any]], Any]


class Backend:
    """One kind of candidate. Subclasses set the attributes and override what differs."""

    #: the name specs and observation rows use
    name: str = ""
    #: True: its candidates cannot run on the Triton interpreter (skipped there, and left out of
    #: the ladder selection judges)
    needs_gpu: bool = False
    #: its Python source goes through kernelsynth/screen.py before a worker imports it
    screened: bool = True
    #: the language of the record's code block
    language: str = "python"
    #: what runs its candidates on hw=cpu, as an untimed record says it ("verified with ...")
    cpu_run: str = "the Triton interpreter"
    #: spec candidates carry a ``launch`` block (kernel, grid, block, args), validated by the spec loader
    launch: bool = False
    #: the task must declare its ``interface`` (the dims of every tensor) for these candidates
    needs_interface: bool = False
    #: spec candidates may name it (False: only candidates from outside the spec have it)
    in_specs: bool = True

    def record_code(self, candidate) -> str:
        """The source a version is recorded with (``candidate``: a spec.CandidateSpec): its file."""
        return Path(candidate.file).read_text()

    # --------------------------------------------------------------- worker side
    def load(self, file: str):
        """The candidate's module, imported in the worker (a ``ModelNew`` class). Raises
        AttributeError when the file defines no ``ModelNew``, or whatever importing it raises."""
        from ..loading import import_file

        mod = import_file(file)
        if not hasattr(mod, "ModelNew"):
            raise AttributeError(f"{file} defines no class ModelNew(torch.nn.Module)")
        return mod

    def build(self, ctx: BuildContext):
        """The callable model: ``ModelNew(*init, **config)``, seeded, on the device and dtype."""
        return ctx.seeded(lambda: ctx.module.ModelNew(*ctx.init, **ctx.candidate.config))

    def snapshot(self, module) -> Any:
        """State before the job's first call that :meth:`compile_stats` compares against (here:
        the ids of the Triton kernels the module has compiled so far)."""
        from .triton import kernel_ids

        return kernel_ids(module)

    def compile_stats(self, module, model, snapshot: Any, modules_before: set) -> Dict[str, Any]:
        """Compile statistics of this job: ``n_regs``, ``n_spills``, ``shared_bytes``, ``n_kernels``
        and, where known, ``local_bytes``, ``compile_s``. A Python module's Triton kernels
        (:func:`kernelsynth.backends.triton.compile_stats`) and then its torch extensions
        (:func:`kernelsynth.backends.cuda.extension_stats`; ``modules_before``: the
        ``sys.modules`` names before the candidate's import), which override them when present."""
        from .cuda import extension_stats
        from .triton import compile_stats

        return compile_stats(module, exclude=snapshot) | extension_stats(modules_before, module)

    def own_kernels(self, module, candidate, modules_before: set):
        """A predicate on profiled kernel names: is it one of this candidate's own kernels
        (:func:`kernelsynth.verify.census.own_kernel_names`)? Here: the ``@triton.jit`` functions
        of ``module`` and the kernels of the torch extensions it built since ``modules_before``.
        Used by the launched-kernel census on a GPU (VERIFICATION.md rule 14)."""
        from ..verify.census import own_kernel_names
        from .cuda import extension_libraries

        return own_kernel_names(module, None, extension_libraries(modules_before, module))

    def counts_launches(self, module, modules_before: set) -> bool:
        """Are all of this candidate's kernel launches counted by the census
        (:func:`kernelsynth.verify.census.install_watch`: Triton launches)? Then a verified call
        that launched none computed its answer with library operators (VERIFICATION.md rule 14).
        Here: True unless a torch extension is loaded in the process (the candidate's, or an
        earlier job's that it may reuse: their launches are not counted); ``modules_before`` is
        not needed for that."""
        from .cuda import extension_libraries

        return not extension_libraries(set(), module)


_REGISTERED: Dict[str, Backend] = {}
_SOURCES: Dict[str, str] = {}


def register(backend: Backend, source: Optional[str] = None) -> Backend:
    """Add ``backend`` under its name (replacing one registered before; a built-in name is
    refused with ValueError). ``source``: the module name or Python file that defines it as
    ``BACKEND``, so workers can load it (default: the module of its class)."""
    if backend.name in BUILTIN:
        raise ValueError(f"backend {backend.name!r} is built in")
    if not backend.name:
        raise ValueError("a backend needs a name")
    _REGISTERED[backend.name] = backend
    _SOURCES[backend.name] = source or type(backend).__module__
    return backend


def load_source(source: str) -> Backend:
    """The ``BACKEND`` of a module name or a Python file path. Raises ImportError or
    AttributeError naming the source."""
    if source.endswith(".py"):
        from ..loading import import_file

        mod = import_file(source)
    else:
        mod = importlib.import_module(source)
    backend = getattr(mod, "BACKEND", None)
    if not isinstance(backend, Backend):
        raise AttributeError(f"{source} defines no BACKEND (a kernelsynth.backends.Backend)")
    return backend


def _discovered() -> Dict[str, str]:
    """name -> source of the backends in $KERNELSYNTH_BACKENDS and the entry-point group."""
    found: Dict[str, str] = {}
    for src in filter(None, os.environ.get("KERNELSYNTH_BACKENDS", "").split(os.pathsep)):
        src = str(Path(src).expanduser().resolve()) if src.endswith(".py") else src
        found.setdefault(load_source(src).name, src)
    for name, src in _entry_point_backends():
        found.setdefault(name, src)
    return found


@functools.lru_cache(maxsize=None)
def _entry_point_backends() -> Tuple[Tuple[str, str], ...]:
    """(name, module) of the ``kernelsynth.backends`` entry points of the installed packages, read
    once per process: the scan reads every installed distribution's metadata (about 70 ms with
    ~180 packages), and load_spec asks for the backend names several times per spec."""
    try:
        from importlib.metadata import entry_points

        return tuple((ep.name, ep.value.split(":")[0]) for ep in entry_points(group="kernelsynth.backends"))
    except Exception:  # noqa: BLE001 - broken metadata of another package must not stop a run
        return ()


def source(name: str) -> str:
    """Where a worker loads backend ``name`` from (:func:`load_source`). Raises KeyError when
    no backend has that name."""
    if name in BUILTIN:
        return BUILTIN[name]
    if name in _SOURCES:
        return _SOURCES[name]
    found = _discovered()
    if name in found:
        return found[name]
    raise KeyError(f"no backend named {name!r} (known: {', '.join(names())})")


def get(name: str) -> Backend:
    """The backend called ``name``. Raises KeyError when there is none."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    return load_source(source(name))


def names() -> List[str]:
    """Every backend name known in this process, built-ins first."""
    return list(BUILTIN) + [n for n in list(_REGISTERED) + list(_discovered()) if n not in BUILTIN]
