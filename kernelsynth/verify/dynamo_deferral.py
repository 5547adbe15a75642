"""The harness's dispatch modes without an up-front ``import torch._dynamo`` (about 2.5 s of CPU
per worker start, the largest part of a fresh worker's start after ``import torch`` itself:
py-spy of the adversarial flip2d run, session 20).

torch wraps the ``__torch_dispatch__`` of every :class:`~torch.utils._python_dispatch.TorchDispatchMode`
subclass in ``torch._disable_dynamo`` (``TorchDispatchMode.__init_subclass__``), so that a
torch.compile under the mode does not trace into the mode's own code; the wrapper imports
``torch._dynamo`` on its first call. Before dynamo is imported nothing can be compiled, so the
raw method is equivalent; :func:`defer` installs it and a meta-path hook (:class:`_AfterDynamo`)
puts torch's wrapped method back the moment ``torch._dynamo`` finishes importing (a candidate's
torch.compile, the compile baseline), before any compilation can start. :func:`intact` names
every harness mode that holds anything but torch's wrapper once dynamo is imported (a candidate
removed the hook or kept it from restoring): the integrity guard reports that as tampering
(kernelsynth/verify/guard.py), and it guards the modes' class dicts themselves.

The same hook notes the ``torch.library`` kernels torch registers while importing
``torch._dynamo`` or ``torch._inductor`` (143 in torch 2.13: ``_c10d_functional``, ``fsdp``,
``streams``, ...; :data:`TORCH_IMPORT_IMPLS`): the process fingerprint leaves them out
(``verify.guard.process_fingerprint``), so a job whose candidate or reference imported dynamo
(a ``torch.compile``, ``torch.manual_seed``) does not cost every later job a fresh worker.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Dict, List, Tuple

#: (class, torch's wrapped ``__torch_dispatch__``) of every deferred mode
_DEFERRED: List[Tuple[type, object]] = []
_DYNAMO = "torch._dynamo"
#: the modules whose import the hook watches (torch._inductor imports torch._dynamo)
_WATCHED = (_DYNAMO, "torch._inductor")
#: ``torch.library._impls`` entries added while a watched module was imported
TORCH_IMPORT_IMPLS: set = set()


def _impls() -> set:
    import torch.library

    return set(getattr(torch.library, "_impls", ()))


def _restore() -> None:
    for cls, wrapped in _DEFERRED:
        cls.__torch_dispatch__ = wrapped


class _Loader(importlib.abc.Loader):
    """``torch._dynamo``'s own loader, with :func:`_restore` after the module ran."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        before = _impls()
        try:
            self._loader.exec_module(module)
        finally:
            TORCH_IMPORT_IMPLS.update(_impls() - before)
            if module.__name__ == _DYNAMO:
                _restore()

    def __getattr__(self, name):  # get_resource_reader, is_package, ...: the original loader's
        return getattr(self._loader, name)


class _AfterDynamo(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for the :data:`_WATCHED` modules it returns the path finder's spec
    with :class:`_Loader` around its loader."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in _WATCHED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


_HOOK = _AfterDynamo()


def defer(cls: type) -> type:
    """Class decorator for a TorchDispatchMode subclass: its raw ``__torch_dispatch__`` until
    ``torch._dynamo`` is imported, torch's ``_disable_dynamo`` wrapper from then on (module
    docstring). A no-op when dynamo is imported already or the method is not torch's wrapper."""
    wrapped = cls.__dict__.get("__torch_dispatch__")
    raw = getattr(wrapped, "__wrapped__", None)
    if raw is None or _DYNAMO in sys.modules:
        return cls
    _DEFERRED.append((cls, wrapped))
    cls.__torch_dispatch__ = raw
    if _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)
    return cls


#: The harness's deferred modes, by their guarded names (verify/guard.py guards each class's
#: attribute dict: a candidate cannot swap their methods, only keep the hook from restoring them)
MODES = ("kernelsynth.verify.census.RecordAtenOps", "kernelsynth.verify.poison.PoisonEmpty",
         "kernelsynth.verify.params.ScaleDraws", "kernelsynth.verify.params.PerturbDraws")


_WRAPPER_CODES: tuple = ()


def _torch_wrapper(fn) -> bool:
    """Whether ``fn`` runs torch's ``_disable_dynamo`` wrapper code (which object it wraps is the
    integrity guard's check: only the wrapper recorded before the candidate ran may be restored).
    Runs in every integrity check once dynamo is imported: the code objects are looked up once."""
    global _WRAPPER_CODES
    if not _WRAPPER_CODES:
        import torch._compile

        _WRAPPER_CODES = tuple(c for c in torch._compile._disable_dynamo.__code__.co_consts
                               if isinstance(c, types.CodeType))
    return getattr(fn, "__code__", None) in _WRAPPER_CODES


def _modes():
    for name in MODES:
        module, cls = name.rsplit(".", 1)
        yield name, getattr(importlib.import_module(module), cls)


def intact() -> Dict[str, str]:
    """``{class name: problem}`` for the harness's modes (:data:`MODES`) that still hold a method
    other than torch's ``_disable_dynamo`` wrapper although ``torch._dynamo`` is imported (empty
    when all is well, and always before dynamo's import)."""
    if _DYNAMO not in sys.modules:
        return {}
    out = {}
    for name, cls in _modes():
        if not _torch_wrapper(cls.__dict__.get("__torch_dispatch__")):
            out[name] = ("still without torch's _disable_dynamo wrapper after torch._dynamo was imported "
                         "(the import hook was removed or kept from restoring it)")
    return out
