"""A KernelBench-format problem's source, re-executed at any shape (used by imported references).

KernelBench's problem file fixes its sizes as module-level constants (``batch_size = 16``) that
``get_inputs()`` and ``get_init_inputs()`` read. :class:`ProblemSource` finds those constants in
the syntax tree, and :meth:`ProblemSource.namespace` executes the source again with some of them
set to other values (names computed from them, such as ``bias_shape = (out_channels, 1, 1)``,
follow, because their assignments run again). While the original ``get_inputs()`` runs, the name
``torch`` in that namespace is a proxy whose random functions (``randn``, ``rand``, ``randint``,
``randn_like``, ...) draw from the harness's generator on its device, and whose factories create on
that device; everything else is torch itself. ``numpy`` is a proxy too when a generator is given
(:class:`NumpyProxy`): ``np.random``'s draws come from a ``RandomState`` seeded from that
generator, so inputs drawn with numpy are reproducible like torch's. Floating-point inputs are
then cast to the dtype under test; integer ones (class targets, indices) keep their dtype.

Nothing in torch's own namespace is changed (the proxy lives only in the re-executed namespace).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import types
from typing import Any, Dict, List, Optional, Tuple

import torch
from torch.overrides import TorchFunctionMode

#: torch functions that draw random numbers: they get the generator (and the device, when they
#: create a tensor from a size).
RANDOM_FROM_SIZE = ("randn", "rand", "randint", "randperm")
RANDOM_LIKE = ("randn_like", "rand_like", "randint_like")
RANDOM_FROM_TENSOR = ("bernoulli", "multinomial", "normal", "poisson")
#: factories that create a tensor: they get the device when the source names none.
FACTORIES = ("zeros", "ones", "full", "arange", "eye", "linspace", "logspace", "tensor", "as_tensor", "empty")
#: Tensor methods that draw from torch's global RNG, which the importer cannot point at a generator.
UNSEEDED_METHODS = ("uniform_", "normal_", "random_", "bernoulli_", "exponential_", "geometric_",
                    "log_normal_", "cauchy_")


def _int_literal(node) -> Optional[int]:
    """The value of an int expression made only of literals (``2048 * 2``), else None."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, int) and not isinstance(node.value, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _int_literal(node.operand)
        return None if v is None else -v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Pow)):
        a, b = _int_literal(node.left), _int_literal(node.right)
        if a is None or b is None:
            return None
        try:
            return int({ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}.get(type(node.op))
                       if not isinstance(node.op, (ast.FloorDiv, ast.Pow)) else (a // b if isinstance(node.op, ast.FloorDiv)
                                                                               else a ** b))
        except ZeroDivisionError:
            return None
    return None


def _global_loads(node, local=frozenset()):
    """(name, line) of every name ``node`` reads that no enclosing function binds (arguments,
    assignments, loop targets, imports): the module-level names it reads."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = node.args
        bound = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs} | {x.arg for x in (a.vararg, a.kwarg) if x}
        body = node.body if isinstance(node.body, list) else [node.body]
        for n in body:
            for sub in ast.walk(n):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    bound.add(sub.id)
                elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                    bound |= {(al.asname or al.name).split(".")[0] for al in sub.names}
        local = local | bound
        defaults = a.defaults + [d for d in a.kw_defaults if d is not None]
        out = [x for d in defaults for x in _global_loads(d, local - bound)]
        for n in body:
            out += _global_loads(n, local)
        return out
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        return [] if node.id in local else [(node.id, node.lineno)]
    return [x for child in ast.iter_child_nodes(node) for x in _global_loads(child, local)]


class ProblemSource:
    """The parsed source of one problem file.

    ``constants``: every int constant at module level, keyed ``name`` (``batch_size = 16``) or
    ``name[i]`` for an element of a tuple of ints (``input_shape = (32768,)``; ``d, h = 16, 32``
    gives ``d`` and ``h``), in source order,
    with its value. ``shared_literals``: groups of names bound by one chained assignment
    (``height = width = 128``). ``derived``: module-level names computed from constants, with the
    constants they depend on."""

    def __init__(self, source: str, filename: str = "<problem>"):
        self.source = source
        self.filename = filename
        self.tree = ast.parse(source, filename)
        self.constants: Dict[str, int] = {}
        self.shared_literals: List[List[str]] = []
        self.derived: Dict[str, set] = {}
        for node in self.tree.body:
            targets, value = self._assignment(node)
            if not targets:
                continue
            unpacked = self._unpacked(targets, value)
            if unpacked:  # depth, height, width = 16, 32, 32
                for n, v in unpacked:
                    self.constants[n] = v
                continue
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            v = _int_literal(value)
            if v is not None and len(names) == len(targets):
                for n in names:
                    self.constants[n] = v
                if len(names) > 1:
                    self.shared_literals.append(names)
                continue
            if isinstance(value, (ast.Tuple, ast.List)) and len(names) == 1 and value.elts:
                vals = [_int_literal(e) for e in value.elts]
                if all(x is not None for x in vals):
                    for i, x in enumerate(vals):
                        self.constants[f"{names[0]}[{i}]"] = x
                    continue
            used = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
            deps = set()
            for u in used:
                deps |= {k for k in self.constants if k.split("[")[0] == u} | self.derived.get(u, set())
            for n in names:
                if deps:
                    self.derived[n] = deps

    @staticmethod
    def _unpacked(targets, value):
        """``[(name, int)]`` of ``a, b = 1, 2`` (one tuple target of names, int literals), else None."""
        if (len(targets) == 1 and isinstance(targets[0], ast.Tuple) and isinstance(value, ast.Tuple)
                and len(targets[0].elts) == len(value.elts) and all(isinstance(t, ast.Name) for t in targets[0].elts)):
            vals = [_int_literal(e) for e in value.elts]
            if all(v is not None for v in vals):
                return [(t.id, v) for t, v in zip(targets[0].elts, vals)]
        return None

    @staticmethod
    def _assignment(node):
        if isinstance(node, ast.Assign):
            return node.targets, node.value
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            return [node.target], node.value
        return [], None

    def names_read_outside_inputs(self) -> Dict[str, List[str]]:
        """Constants (and names derived from them) read by module-level code other than
        ``get_inputs``/``get_init_inputs`` -- the Model class and helper functions: ``{constant:
        [where]}``. The harness builds the original ``Model``, which would keep reading the
        original values, so such a constant cannot vary per shape."""
        out: Dict[str, List[str]] = {}
        for node in self.tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name not in ("get_inputs", "get_init_inputs"):
                for name, line in _global_loads(node):
                    keys = {k for k in self.constants if k.split("[")[0] == name} | self.derived.get(name, set())
                    for k in keys:
                        out.setdefault(k, []).append(f"{node.name} (line {line})")
        return out

    def unseeded_draws(self) -> List[str]:
        """Calls in get_inputs/get_init_inputs of Tensor methods that draw from the global RNG."""
        found = []
        for node in self.tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in ("get_inputs", "get_init_inputs"):
                for n in ast.walk(node):
                    if isinstance(n, ast.Attribute) and n.attr in UNSEEDED_METHODS:
                        found.append(f"line {n.lineno}: .{n.attr}()")
        return found

    def code(self, values: Dict[str, int]):
        """The module compiled with the constants of ``values`` (keys as in :attr:`constants`)
        set to new values; every other statement unchanged (cached per values)."""
        key = tuple(sorted(values.items()))
        cache = self.__dict__.setdefault("_code", {})
        if key not in cache:
            cache[key] = self._compile(values)
        return cache[key]

    def _compile(self, values: Dict[str, int]):
        tree = ast.parse(self.source, self.filename)
        body = []
        for node in tree.body:
            targets, value = self._assignment(node)
            unpacked = self._unpacked(targets, value) if targets else None
            if unpacked:
                for (n, _), e in zip(unpacked, value.elts):
                    value.elts[value.elts.index(e)] = ast.copy_location(ast.Constant(int(values.get(n, self.constants[n]))), e)
                body.append(node)
                continue
            names = [t.id for t in targets if isinstance(t, ast.Name)] if targets else []
            if names and len(names) == len(targets) and _int_literal(value) is not None:
                for n in names:  # a chained assignment becomes one assignment per name
                    new = ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store())],
                                     value=ast.Constant(int(values.get(n, self.constants[n]))))
                    body.append(ast.copy_location(new, node))
                continue
            if (names and len(names) == 1 and isinstance(value, (ast.Tuple, ast.List))
                    and f"{names[0]}[0]" in self.constants):
                for i, e in enumerate(value.elts):
                    key = f"{names[0]}[{i}]"
                    value.elts[i] = ast.copy_location(ast.Constant(int(values.get(key, self.constants[key]))), e)
            body.append(node)
        tree.body = body
        return compile(ast.fix_missing_locations(tree), self.filename, "exec")

    def namespace(self, values: Dict[str, int], device=None, generator=None) -> Dict[str, Any]:
        """A fresh module namespace of the source at ``values``, with ``torch`` (and any
        ``from torch import ...``) bound to a :class:`TorchProxy` drawing from ``generator`` and
        creating tensors on ``device``."""
        proxy = TorchProxy(device, generator)
        nproxy = NumpyProxy(generator)

        def _import(name, globals=None, locals=None, fromlist=(), level=0):
            mod = builtins.__import__(name, globals, locals, fromlist, level)
            if level == 0 and mod is torch and (name == "torch" or not fromlist):
                return proxy
            if level == 0 and name.split(".")[0] == "numpy" and nproxy.usable:
                if not fromlist:  # import numpy / import numpy.random as npr: the top package
                    return nproxy
                if name == "numpy":  # from numpy import random
                    return nproxy
                if name == "numpy.random":  # from numpy.random import randn
                    return nproxy.random
            return mod

        ns: Dict[str, Any] = {"__name__": "kb_problem", "__file__": self.filename,
                              "__builtins__": dict(vars(builtins), __import__=_import)}
        exec(self.code(values), ns)
        return ns

    def inputs(self, values: Dict[str, int], dtype: Optional[torch.dtype], device, generator) -> List[Any]:
        """The original ``get_inputs()`` at ``values``; floating-point tensors cast to ``dtype``
        (None: kept), integer and bool tensors and non-tensors unchanged. Its ``.cuda()`` and
        ``.to("cuda")`` calls give tensors on ``device`` (:func:`on_device`)."""
        fn = self.namespace(values, device, generator)["get_inputs"]
        with on_device(device):
            got = fn()
        return self.cast(list(got), dtype, device)

    @staticmethod
    def cast(out: List[Any], dtype: Optional[torch.dtype], device) -> List[Any]:
        """``get_inputs()``'s list moved to ``device`` (None: kept) with floating-point tensors
        cast to ``dtype`` (None: kept)."""
        if device is not None:
            out = [x.to(device) if isinstance(x, torch.Tensor) else x for x in out]
        return [x.to(dtype) if dtype is not None and isinstance(x, torch.Tensor) and x.is_floating_point() else x
                for x in out]

    def init_inputs(self, values: Dict[str, int]) -> List[Any]:
        """The original ``get_init_inputs()`` at ``values``."""
        return list(self.namespace(values)["get_init_inputs"]())


def _names_cuda(x) -> bool:
    return (isinstance(x, str) and x.split(":")[0] == "cuda") or (isinstance(x, torch.device) and x.type == "cuda")


class OnDevice(TorchFunctionMode):
    """While a problem's ``get_inputs()`` runs: ``Tensor.cuda()`` and ``Tensor.to(<a CUDA
    device>)`` (positional or ``device=``) give the tensor on ``device`` instead -- KernelBench files
    often end their inputs with ``.cuda()``, and the importer analyses them on the meta device and
    the CPU (its sandbox has no GPU), as ``hw=cpu`` runs do. Entered through :func:`on_device`."""

    def __init__(self, device):
        super().__init__()
        self.device = torch.device(device)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is torch.Tensor.cuda:
            return args[0].to(self.device)
        if func is torch.Tensor.to:
            args = tuple(self.device if _names_cuda(a) else a for a in args)
            if _names_cuda(kwargs.get("device")):
                kwargs["device"] = self.device
        return func(*args, **kwargs)


def on_device(device):
    """:class:`OnDevice` for a ``device`` that is given and no CUDA device; else no change."""
    if device is None or torch.device(device).type == "cuda":
        return contextlib.nullcontext()
    return OnDevice(device)


class TorchProxy(types.ModuleType):
    """``torch`` for a re-executed problem: random functions take ``generator`` (when given) and
    ``device``; factories take ``device`` when the source names none; ``empty`` is ``zeros``
    (uninitialised memory would make two processes' inputs differ); all else is torch's."""

    def __init__(self, device, generator):
        super().__init__("torch")
        self._device, self._gen = device, generator

    def _kw(self, kw, random):
        kw = dict(kw)
        if self._device is not None:
            kw["device"] = self._device
        if random and self._gen is not None:
            kw["generator"] = self._gen
        return kw

    def __getattr__(self, name):
        fn = getattr(torch, name)
        if name in RANDOM_FROM_SIZE:
            return lambda *a, **kw: fn(*a, **self._kw(kw, True))
        if name in RANDOM_LIKE:
            base = {"randn_like": torch.randn, "rand_like": torch.rand}.get(name)

            def like(t, *a, **kw):
                kw = self._kw(kw, True)
                kw.setdefault("dtype", t.dtype)
                if base is not None:
                    return base(t.shape, **kw)
                return torch.randint(*a, t.shape, **kw)  # randint_like(t, [low,] high)
            return like
        if name in RANDOM_FROM_TENSOR:
            def draw(*a, **kw):
                if self._gen is not None:
                    kw["generator"] = self._gen
                return fn(*a, **kw)
            return draw
        if name in FACTORIES:
            target = torch.zeros if name == "empty" else fn
            return lambda *a, **kw: target(*a, **self._kw(kw, False))
        return fn


class NumpyProxy(types.ModuleType):
    """``numpy`` for a re-executed problem: ``numpy.random`` is a ``numpy.random.RandomState``
    seeded from the harness's generator (one int drawn from it, ``torch.randint(0, 2**31 - 1)``
    on its device, at the first use), so that inputs drawn with ``np.random.randn`` are the same for the same
    generator state, as torch's draws are; ``np.random.default_rng()`` without a seed takes the
    same seed. Everything else is numpy's. Without a generator (the problem's own ``get_inputs``
    semantics) it is numpy itself."""

    def __init__(self, generator):
        super().__init__("numpy")
        self._gen = generator
        try:
            import numpy
        except ImportError:  # no numpy: the problem's own import fails as it would anyway
            numpy = None
        self._np = numpy
        self._random = None

    @property
    def usable(self) -> bool:
        return self._np is not None and self._gen is not None

    @property
    def random(self):
        if self._random is None:
            # on the generator's own device (the harness draws GPU inputs from a CUDA generator)
            seed = int(torch.randint(0, 2 ** 31 - 1, (1,), generator=self._gen, device=self._gen.device))
            self._random = _SeededNumpyRandom(self._np, seed)
        return self._random

    def __getattr__(self, name):
        return getattr(self._np, name)


class _SeededNumpyRandom(types.ModuleType):
    """``numpy.random`` with its module-level draws (``randn``, ``rand``, ``randint``, ``normal``,
    ``uniform``, ...) made by one seeded ``RandomState``; ``default_rng()`` without a seed seeded
    alike; everything else (``Generator``, ``RandomState``, ``default_rng(seed)``) numpy's."""

    def __init__(self, np, seed: int):
        super().__init__("numpy.random")
        self._mod, self._seed, self._state = np.random, seed, np.random.RandomState(seed)

    def default_rng(self, seed=None):
        return self._mod.default_rng(self._seed if seed is None else seed)

    def seed(self, seed=None):
        self._state.seed(seed)

    def __getattr__(self, name):
        if hasattr(self._state, name) and not name.startswith("_"):
            return getattr(self._state, name)
        return getattr(self._mod, name)


def adapter(dims: Dict[str, List[str]], lines: Tuple[int, int]) -> str:
    """The Python text appended to an imported reference.py: ``get_inputs(shape, dtype, device,
    generator)`` and ``get_init_inputs(shape)`` that re-execute the original source (lines
    ``lines`` of the file) with each dim's constants set to the shape's value."""
    return f'''

# --------------------------------------------------------------------------------------------
# kernelsynth adapter, written by `kernelsynth-tools import-kernelbench` (not part of the original).
# The original source above is unchanged. The two functions below replace its get_inputs() and
# get_init_inputs() for the harness: they execute that source again with each dim's constants
# set to the shape's value, torch's random functions drawing from the harness's generator on its
# device; floating-point inputs are cast to the dtype under test, integer ones keep their dtype
# (kernelsynth/importers/kbsource.py).
from pathlib import Path as _KsPath

from kernelsynth.importers.kbsource import ProblemSource as _KsProblemSource

#: spec dim -> the module-level constants of the original it sets
KS_DIMS = {dims!r}
_KS_LINES = {lines!r}  # the original source's lines in this file (1-based, inclusive)
_KS_SOURCE = None


def _ks_values(shape):
    global _KS_SOURCE
    if _KS_SOURCE is None:
        text = _KsPath(__file__).read_text().splitlines()[_KS_LINES[0] - 1:_KS_LINES[1]]
        _KS_SOURCE = _KsProblemSource("\\n".join(text) + "\\n", __file__)
    values = {{}}
    for dim, constants in KS_DIMS.items():
        if shape is not None and dim in shape:
            values.update({{c: int(shape[dim]) for c in constants}})
    return _KS_SOURCE, values


def get_init_inputs(shape=None):
    source, values = _ks_values(shape)
    return source.init_inputs(values)


def get_inputs(shape, dtype, device, generator):
    source, values = _ks_values(shape)
    return source.inputs(values, dtype, device, generator)
'''
