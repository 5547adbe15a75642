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


#: torch's ``_disable_dynamo`` wrapper code objects, filled on first use. Filled in place, never
#: rebound: a rebinding changes this module's namespace, which the integrity guard compares by
#: identity, and sent every later check down its slow full comparison (about 30 ms instead of
#: 1 ms on the 2-core CPU; session 21).
_WRAPPER_CODES: list = []


def _torch_wrapper(fn) -> bool:
    """Whether ``fn`` runs torch's ``_disable_dynamo`` wrapper code (which object it wraps is the
    integrity guard's check: only the wrapper recorded before the candidate ran may be restored).
    Runs in every integrity check once dynamo is imported: the code objects are looked up once."""
    if not _WRAPPER_CODES:
        import torch._compile

        _WRAPPER_CODES.extend(c for c in torch._compile._disable_dynamo.__code__.co_consts
                              if isinstance(c, types.CodeType))
    return getattr(fn, "__code__", None) in _WRAPPER_CODES


def _modes():
    for name in MODES:
        module, cls = name.rsplit(".", 1)
        yield name, getattr(importlib.import_module(module), cls)


def _genuine_disable(cached, raw) -> bool:
    """Whether ``cached`` (what torch's wrapper found in ``raw.__dynamo_disable``, the function it
    calls instead of ``raw``) is what ``torch._dynamo.disable(raw)`` makes: DisableContext's
    ``_fn`` code, with ``raw`` and a plain DisableContext in its closure. Session 20's attack a2 set
    ``raw.__dynamo_disable`` to its own function, and the mode's records went there."""
    ef = sys.modules.get("torch._dynamo.eval_frame")
    if ef is None or not isinstance(cached, types.FunctionType):
        return False
    codes = [c for c in ef.DisableContext.__call__.__code__.co_consts if isinstance(c, types.CodeType)]
    try:
        cells = [c.cell_contents for c in cached.__closure__ or ()]
    except ValueError:
        return False
    return cached.__code__ in codes and any(c is raw for c in cells) and \
        all(type(c) is ef.DisableContext for c in cells if c is not raw)


def state() -> tuple:
    """What :func:`intact` checks against, taken by the integrity guard's snapshot before the
    candidate runs: ``((name, class, torch's wrapper), ...)`` of the deferred modes and the import
    hook object (a candidate may clear :data:`_DEFERRED` or rebind ``_HOOK`` later)."""
    return tuple((f"{cls.__module__}.{cls.__qualname__}", cls, wrapped) for cls, wrapped in _DEFERRED), _HOOK


#: :func:`intact`'s finding for a mode without torch's wrapper once dynamo is imported.
_NO_WRAPPER = ("still without torch's _disable_dynamo wrapper after torch._dynamo was imported (the import hook was "
               "removed or kept from restoring it)")


def intact(recorded: tuple = None) -> Dict[str, str]:
    """``{class name: problem}`` for the harness's modes (:data:`MODES` and those ``recorded``):
    one that holds a method other than torch's ``_disable_dynamo`` wrapper although
    ``torch._dynamo`` is imported; one still raw while the import hook is gone from
    ``sys.meta_path`` (dynamo imported afterwards, or imported and then dropped from
    ``sys.modules``, would leave it raw unseen: session 20's attacks a1/a6); one whose raw method
    carries a ``__dynamo_disable`` that torch's wrapper would call instead of it and that is not
    ``torch._dynamo.disable`` of that method (attack a2). Empty when all is well. ``recorded``:
    :func:`state` as the snapshot took it (default: now)."""
    deferred, hook = recorded or state()
    raws = {name: getattr(wrapped, "__wrapped__", None) for name, _, wrapped in deferred}
    classes = dict(_modes())
    classes.update((name, cls) for name, cls, _ in deferred)
    dynamo = _DYNAMO in sys.modules
    hooked = any(f is hook for f in sys.meta_path)
    out = {}
    for name, cls in classes.items():
        now, raw = cls.__dict__.get("__torch_dispatch__"), raws.get(name)
        if dynamo and not _torch_wrapper(now):
            out[name] = _NO_WRAPPER
        elif raw is not None and now is raw and not hooked:
            out[name] = "still raw while the torch._dynamo import hook is gone from sys.meta_path"
        cached = getattr(raw, "__dict__", {}).get("__dynamo_disable")
        if cached is not None and not _genuine_disable(cached, raw):
            out[name] = ("its method's __dynamo_disable (what torch's wrapper calls instead of it) is not "
                         "torch._dynamo.disable of that method")
    return out
