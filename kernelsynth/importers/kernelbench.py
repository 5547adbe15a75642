"""``kernelsynth-tools import-kernelbench PATH... --out SPECS_DIR``: KernelBench-format problems
as task folders.

A problem is one ``.py`` file with ``class Model(nn.Module)``, module-level size constants
(``batch_size = 16``), ``get_inputs()`` and ``get_init_inputs()``. Each becomes
``<out>/kb_l<level>_<number>_<slug>/`` (level from a ``level<N>`` parent folder, else 0):

- ``reference.py``: a header naming the origin, the original source unchanged, and an adapter
  (:func:`kernelsynth.importers.kbsource.adapter`) with the harness's ``get_inputs(shape, dtype,
  device, generator)`` and ``get_init_inputs(shape)``;
- ``kernels/v0_eager.py``: the original source with ``ModelNew = Model`` (v0 = eager PyTorch);
- ``spec.yaml``: everything below, decided from evidence that the import report keeps.

Every decision is measured, on the meta device (shapes and FLOPs, no data) or on the CPU at the
small verify shapes (values):

- **dims**: each int constant is perturbed (+1 and x2; the smallest multiple (a divisor of the value,
  2..128) that runs when +1 breaks the model). It is a size when the model still runs and an input's shape changes, or an output axis
  grows linearly with it while some output/parameter axis equals it (``out_channels``); otherwise
  it is an op parameter kept fixed (kernel size, stride, a reduced-dim index). Constants whose
  perturbation alone breaks the model but which run when perturbed together are one dim
  (flagged). Constants read by ``Model`` itself stay fixed (the harness builds the original class).
- **constraints**: the smallest value and the multiple each dim needs to run (flagged): on the
  meta device, and also in real CPU runs with the other dims small (:meth:`Probe.runs_for_real`:
  the meta device's checks differ between torch versions, and a reshape into pairs may refuse
  only real data; :func:`_real_multiple`). Then every combination of each dim at its minimum or
  the next value must run together (:func:`joint_check`: InstanceNorm needs H * W > 1): else one
  dim's minimum is raised (said, flagged), or the problem is refused with one line when none does.
- **work**: ``flops`` from torch.utils.flop_counter.FlopCounterMode and ``bytes`` from the inputs,
  outputs, parameters and buffers, fitted as formulas of the dims (kernelsynth/importers/fit.py)
  and checked at three shapes off the fitting grid; a formula that does not check is flagged
  and not written (flops: 0).
- **category**: ``matmul`` when the counted FLOPs are not zero, ``reduction`` when a dim is
  reduced away or a reduction operator runs, else ``elementwise``; tolerances are
  kernelsynth/tolerance.py's defaults of that class, with their sources; a reduction's atol is
  raised to the float32 summation bound of its reduced length (:func:`summation_tolerance`),
  a centring normalisation's (an operator of :data:`CENTERING_OPS`, or one written by hand: a
  mean subtracted from its own input and scaled by a reciprocal square root of its statistics,
  :class:`CentringTracer`) to the error honest float32 makes on a row of nearly equal values
  (:func:`centering_tolerance`).
- **shapes**: the original sizes as the timing shape; verify and interpreter shapes scaled down,
  odd (ragged), reduced dims kept long, within a work budget.
- **checks on the CPU** at the verify shapes: whether an all-zeros or a bfloat16-precision
  answer would pass (flagged), whether eager bfloat16 meets the bfloat16 tolerance (else the
  dtype is left out, flagged ``bfloat16-left-out`` with the worst element), whether train and
  eval mode differ on one draw of the inputs (BatchNorm, Dropout: the harness runs modules in
  eval mode; flagged, and stated in the spec as ``mode: eval``), whether two draws of the inputs
  from one generator state agree (else ``unseeded-inputs``); and what the harness requires of v0
  (:func:`contract_check`: tensor inputs, one fresh output tensor, inputs unchanged, a
  deterministic forward), else the problem is not imported (its one-line reason). Eager bfloat16
  that does not run on the CPU leaves bfloat16 out (``bfloat16-left-out`` with the error). Eager
  float32 that misses its own float32 tolerance (``reference-fails-tolerance``) leaves the whole
  problem out (status ``left-out``, :class:`LeftOut`), unless ``--keep-failing-reference``.
- **reduced dims**: reduced away (in no output shape) or with ``keepdim`` (a reduction operator's
  output holds the axis at 1 while its input grows with the dim); kept long in verify shapes.
- **timing shape**: flagged ``large-timing-shape`` (bytes) past 1 GiB of inputs, outputs and
  parameters; scaled down past the budget (``--timing-budget-gib``), said so.

Isolation: the importer's process runs none of the problem's code. :func:`import_all` starts one
worker in the sandbox (kernelsynth/sandbox.py, ``--out`` hidden); for each problem the worker
forks a process (:func:`run_forked`) that runs :func:`analyse` and is killed after
``--timeout-s`` seconds; the files and report come back as plain data and the importer writes
them. The problem's code is called through :func:`_call`, which names it in the one-line reason
of a failure (``get_inputs() raised ...``, ``get_init_inputs() called sys.exit(3)``) and in the
reason of a crash or a hang (reported on a pipe before each call). Reasons longer than a table
cell allows are cut at a word, with an ellipsis (:func:`clip`).
"""

from __future__ import annotations

import ast
import importlib
import json
import math
import os
import re
import select
import shutil
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import yaml

from fractions import Fraction

from ..spec import PLUMBING_OPS, evaluate, load_spec
from ..tolerance import default_tolerance
from .fit import Atom, rank, axis_form, fit_grid, grid_values
from .kbsource import ProblemSource, adapter, on_device

#: Formula names a dim may not take (kernelsynth.spec.evaluate's own names).
RESERVED = {"itemsize", "cdiv", "min", "max"}
#: aten operators (overload packet names) that reduce along an axis.
REDUCTION_OPS = {
    "sum", "mean", "amax", "amin", "max", "min", "prod", "var", "var_mean", "std", "std_mean", "norm",
    "linalg_vector_norm", "_softmax", "_log_softmax", "logsumexp", "cumsum", "cumprod", "cummax", "cummin",
    "logcumsumexp", "native_layer_norm", "native_batch_norm", "_native_batch_norm_legit",
    "_native_batch_norm_legit_no_training", "native_group_norm", "nll_loss_forward", "nll_loss2d_forward",
    "argmax", "argmin", "all", "any", "topk", "sort", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "kl_div", "_fused_rms_norm", "rms_norm", "_weight_norm_interface",
}
#: Work budgets of the listed verify shapes (GPU run) and of the interpreter shapes (hw=cpu).
VERIFY_BUDGET = {"flops": 1e8, "elements": 1 << 20}
INTERPRET_BUDGET = {"flops": 2e7, "elements": 1 << 15}
#: Bytes of the timing shape's inputs, outputs and parameters past which the report flags it
#: (``large-timing-shape``), and the default budget past which the timing shape is scaled down
#: (``--timing-budget-gib``): the harness holds several copies at the timing shape (a float64
#: reference among them), so 16 GiB of float32 tensors need several times that on the GPU.
LARGE_TIMING_BYTES = 1 << 30
TIMING_BUDGET_BYTES = 16 << 30
#: The most floating-point elements (inputs, outputs, parameters) a check on the CPU runs at:
#: the summation bound's statistics at the timing shape are taken with the dims that are not
#: reduced made smaller until within it (the rows, whose length sets the bound, keep theirs).
CPU_ELEMENTS = 1 << 26
#: :meth:`Probe.runs_for_real` runs the model on the CPU only when its tensors hold at most this many floats
REAL_CHECK_ELEMENTS = 1 << 20
#: :func:`find_constraints`: the other dims' largest value in the real CPU run of one dim's values
REAL_CHECK_DIM = 16
#: Grid points a formula fit may measure (each is one traced forward on the meta device).
MAX_GRID = 512
LICENSE_NOTE = ("License: to be stated by the user who imports it (KernelBench's own problems are MIT-licensed, "
                "https://github.com/ScalingIntelligence/KernelBench).")


class ImportFailure(Exception):
    """A problem that cannot be imported; the message is its one-line reason."""


class LeftOut(ImportFailure):
    """A problem that imports but whose spec is not written: its own eager reference fails the
    tolerance the import decided (``reference-fails-tolerance``), so the harness would reject v0
    and every honest candidate; written anyway with ``--keep-failing-reference``. Its status in
    the report is ``left-out``."""


class ProblemExit(BaseException):
    """The problem's code called ``sys.exit`` (or raised KeyboardInterrupt): the whole problem
    fails with this one-line reason, whatever value was being tried (not evidence about a value)."""


#: Where the problem's code runs: set by :func:`_call` and sent to the process that watches the
#: analysis (:func:`run_forked`), so that a crash, an ``os._exit`` or a hang names the function.
_STAGE = {"fd": None, "now": "the importer's analysis"}


def _stage(where: str) -> None:
    _STAGE["now"] = where
    fd = _STAGE["fd"]
    if fd is not None:
        try:
            os.write(fd, b"S " + where.encode() + b"\n")
        except OSError:
            pass


def clip(text: str, n: int) -> str:
    """``text`` when at most ``n`` characters, else cut at the last space within ``n - 1``
    characters (mid-word only when the first word alone is longer) and ended with an ellipsis:
    one-line reasons stay readable in the import table and report."""
    if len(text) <= n:
        return text
    cut = text[:n - 1]
    space = cut.rfind(" ")
    if space > 0:
        cut = cut[:space]
    return cut.rstrip(" ,;:(") + "…"


def _one_line(e: BaseException, n: int = 160) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {clip(text[0], n)}" if text else type(e).__name__


def _call(where: str, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, the problem's own code, named ``where`` (``get_inputs()``,
    ``get_init_inputs()``, ``Model(*get_init_inputs())``, ``Model.forward``, ``the module code``):
    an exception it raises becomes :class:`ImportFailure` naming ``where``; ``sys.exit`` becomes
    :class:`ProblemExit`."""
    _stage(where)
    try:
        out = fn(*args, **kwargs)
    except (ImportFailure, ProblemExit):
        raise
    except SystemExit as e:
        raise ProblemExit(f"{where} called sys.exit({e.code!r})") from None
    except KeyboardInterrupt:
        raise ProblemExit(f"{where} raised KeyboardInterrupt") from None
    except Exception as e:  # noqa: BLE001 - the evidence, attributed
        raise ImportFailure(f"{where} raised {_one_line(e)}") from None
    _stage("the importer's analysis")
    return out


def _namespace(src: ProblemSource, values, device=None, generator=None) -> Dict[str, Any]:
    """``src.namespace(...)`` with the problem's functions attributed (:func:`_call`)."""
    ns = _call("the module code", src.namespace, values, device, generator)
    for name in ("get_inputs", "get_init_inputs", "Model"):
        if not callable(ns.get(name)):
            raise ImportFailure(f"the module code defines no callable {name}")
    return ns


def _inputs(ns, dtype, device) -> List[Any]:
    with on_device(device):  # its .cuda() calls give tensors on the analysis's device
        got = _call("get_inputs()", ns["get_inputs"])
    if not isinstance(got, (list, tuple)):
        raise ImportFailure(f"get_inputs() returned {type(got).__name__}, not a list")
    return ProblemSource.cast(list(got), dtype, device)


def _init_inputs(ns) -> List[Any]:
    got = _call("get_init_inputs()", ns["get_init_inputs"])
    if not isinstance(got, (list, tuple)):
        raise ImportFailure(f"get_init_inputs() returned {type(got).__name__}, not a list")
    return list(got)


def _model(ns, init):
    return _call("Model(*get_init_inputs())", ns["Model"], *init)


def _forward(model, inputs):
    return _call("Model.forward", model, *inputs)


@dataclass
class Measured:
    """One traced forward on the meta device."""

    inputs: List[Tuple[Tuple[int, ...], torch.dtype]]
    outputs: List[Tuple[Tuple[int, ...], torch.dtype]]
    params: List[Tuple[Tuple[int, ...], torch.dtype]]
    trace: List[Tuple[int, ...]]
    flops: int
    ops: List[str]
    no_formula: List[str]
    #: each call of a :data:`REDUCTION_OPS` operator: (name, its first tensor's shape, its outputs' shapes)
    reductions: List[Tuple[str, Tuple[int, ...], List[Tuple[int, ...]]]] = field(default_factory=list)
    #: the ``eps`` argument of each normalisation operator call (:data:`EPS_ARG`), as traced, and the
    #: number added under the root of each hand-written centring (:class:`CentringTracer`)
    eps: List[float] = field(default_factory=list)
    #: each hand-written centring normalisation the trace shows (:class:`CentringTracer`), described
    centring: List[str] = field(default_factory=list)

    def axes(self, trace: bool = True):
        groups = [("input", self.inputs), ("output", self.outputs), ("param", self.params)]
        out = [(g, i, s) for g, ts in groups for i, (s, _) in enumerate(ts)]
        if trace:
            out += [("trace", i, s) for i, s in enumerate(self.trace)]
        return out

    def float_elements(self) -> int:
        return sum(math.prod(s) for s, d in self.inputs + self.outputs + self.params if d.is_floating_point)

    def other_bytes(self) -> int:
        return sum(math.prod(s) * _itemsize(d) for s, d in self.inputs + self.outputs + self.params
                   if not d.is_floating_point)

    def largest(self) -> int:
        return max([math.prod(s) for s, _ in self.inputs + self.outputs] or [0])

    def tensor_bytes(self, which=("inputs", "outputs", "params")) -> int:
        """Bytes of the listed tensors in their own dtypes."""
        return sum(math.prod(s) * _itemsize(d) for w in which for s, d in getattr(self, w))


#: aten operators through which a statistic, a root or an eps tag follows its one tensor argument
#: (views, copies, a dtype change): :class:`CentringTracer`.
_FOLLOW_OPS = {"view", "_unsafe_view", "reshape", "unsqueeze", "squeeze", "expand", "clone", "_to_copy", "alias",
               "detach", "contiguous", "slice", "select", "permute", "transpose", "t", "lift_fresh"}


class CentringTracer:
    """Finds centring normalisations written by hand in a traced forward, by what the operators
    do rather than by names: a mean of a tensor X (``mean``, or ``sum`` scaled by a number)
    subtracted from X itself (the same tensor, or the same view of the same base), and a
    reciprocal square root (``rsqrt``, ``pow(-0.5)``, or a division by, or the reciprocal of, a
    ``sqrt`` / ``pow(0.5)``) either of a tensor computed from that centred difference
    (``rsqrt(mean((x - mu)^2) + eps)``) or of one computed from a mean that then scales the
    centred difference (``(x - mu) * rsqrt(E[x^2] - mu^2 + eps)``). The number added under the
    root (``var + eps``, a clamp's ``min``) is its eps; one added after the root (``std + eps``)
    counts as its square under it. :func:`centering_tolerance` gives such a model the bound of
    :data:`CENTERING_OPS`' operators."""

    def __init__(self):
        self.keep: List[torch.Tensor] = []  # traced tensors kept alive: their ids stay unique
        self.stat: Dict[int, Any] = {}  # id -> key of the tensor it is the mean of
        self.partial: Dict[int, Any] = {}  # id -> key of the tensor it is the sum of
        self.centred: set = set()  # ids of tensors computed from a centred difference
        self.from_mean: set = set()  # ids of tensors computed from a mean
        #: ids of second moments about the mean not computed from a centred difference: ``var``,
        #: ``E[x^2] - mean^2`` (a difference of two mean-derived tensors) and what follows from them
        self.moment: set = set()
        self.eps: Dict[int, float] = {}  # id -> the number added to a centred or mean-derived tensor
        self.root: Dict[int, Optional[float]] = {}  # id -> eps under a square root (None: none seen)
        self.inv: Dict[int, Optional[float]] = {}  # the same for a reciprocal square root of a mean-derived tensor
        self.found: List[str] = []
        self.found_eps: List[float] = []

    @staticmethod
    def _key(t: torch.Tensor):
        base = t
        while getattr(base, "_base", None) is not None:
            base = base._base
        return (id(base), tuple(t.shape), tuple(t.stride()), t.storage_offset()) if base is not t else (id(t),)

    def _hit(self, how: str, eps: Optional[float]) -> None:
        self.found.append(f"hand-written centring (a mean subtracted from its own input, {how})")
        if eps is not None and eps > 0:
            self.found_eps.append(float(eps))

    def see(self, name: str, args, kwargs, out) -> None:
        ins = _leaves(list(args)) + _leaves(dict(kwargs or {}))
        outs = _leaves(out)
        self.keep += ins + outs
        ids = [id(t) for t in ins]
        nums = [a for a in list(args)[1:] if isinstance(a, (int, float)) and not isinstance(a, bool)]
        one = ins[0] if len(ins) == 1 else None

        def tag(table, value=None):
            for o in outs:
                if isinstance(table, set):
                    table.add(id(o))
                else:
                    table[id(o)] = value

        if name in ("var_mean", "std_mean") and ins and len(outs) == 2:  # (var or std, mean)
            self.stat[id(outs[1])] = self._key(ins[0])
            outs = outs[:1]
        if name in ("var", "var_mean") and ins:
            tag(self.moment)
        elif name in ("std", "std_mean") and ins:
            tag(self.root, None)  # the root of a moment: std + eps puts eps^2 under it
        if name == "mean" and ins:
            tag(self.stat, self._key(ins[0]))
        elif name == "sum" and ins:
            tag(self.partial, self._key(ins[0]))
        elif one is not None and (name in _FOLLOW_OPS or (name in ("div", "mul") and nums)):
            for table in (self.stat, self.partial):
                if id(one) in table:
                    tag(self.stat if name in ("div", "mul") else table, table[id(one)])
        if name == "sub" and len(ins) == 2:
            a, b = ins
            if self.stat.get(id(b)) == self._key(a) or self.stat.get(id(a)) == self._key(b):
                tag(self.centred)
            elif all(id(t) in self.from_mean or id(t) in self.stat for t in ins):  # E[x^2] - mean^2
                tag(self.moment)
        if any(i in self.moment for i in ids):
            tag(self.moment)
        if any(i in self.centred for i in ids):
            tag(self.centred)
        if any(i in self.from_mean or i in self.stat for i in ids):
            tag(self.from_mean)
        if len(ins) == 2 and name in ("mul", "div"):
            a, b = ids
            if a in self.centred and (b in self.inv if name == "mul" else b in self.root):
                self._hit("scaled by a reciprocal square root of its statistics", (self.inv if name == "mul"
                                                                                    else self.root)[b])
            elif name == "mul" and b in self.centred and a in self.inv:
                self._hit("scaled by a reciprocal square root of its statistics", self.inv[a])
        if one is None:
            return
        k = id(one)
        stats = k in self.centred or k in self.from_mean or k in self.moment
        # a root of a mean of anything else (another input's RMS, mean |x|) is a gain, not the
        # centred tensor's own spread: no hit (session 18's attack, files 1 and 15)
        spread = k in self.centred or k in self.moment
        if stats:
            if name == "add" and nums:
                tag(self.eps, float(nums[0]))
            elif name in ("clamp", "clamp_min") and (nums or (kwargs or {}).get("min") is not None):
                tag(self.eps, float(nums[0] if nums else kwargs["min"]))
        if spread:
            if name == "rsqrt" or (name == "pow" and nums and nums[0] == -0.5):
                if k in self.centred:
                    self._hit(f"then {name} of its mean square", self.eps.get(k))
                tag(self.inv, self.eps.get(k))
            elif name == "sqrt" or (name == "pow" and nums and nums[0] == 0.5):
                tag(self.root, self.eps.get(k))
        if name in _FOLLOW_OPS:
            for table in (self.eps, self.root, self.inv):
                if k in table:
                    tag(table, table[k])
        if k in self.root:
            if name == "add" and nums:  # std + eps: eps^2 under the root
                tag(self.root, self.root[k] if self.root[k] is not None else float(nums[0]) ** 2)
            elif name == "reciprocal":
                tag(self.inv, self.root[k])


def _itemsize(d: torch.dtype) -> int:
    return torch.empty((), dtype=d).element_size()


def _leaves(x):
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for e in x for t in _leaves(e)]
    if isinstance(x, dict):
        return [t for e in x.values() for t in _leaves(e)]
    return []


class Probe:
    """Runs the problem at chosen constant values on the meta device (cached per values)."""

    def __init__(self, source: ProblemSource):
        self.source = source
        self._cache: Dict[Tuple, Any] = {}
        self._real: Dict[Tuple, Optional[bool]] = {}
        #: the one-line reason of each real run that failed (:meth:`runs_for_real`)
        self.real_errors: Dict[Tuple, str] = {}

    def run(self, values: Dict[str, int]) -> Measured:
        key = tuple(sorted(values.items()))
        if key not in self._cache:
            try:
                self._cache[key] = self._run(values)
            except ImportFailure as e:  # any failure is evidence (the value breaks the model), named by where
                self._cache[key] = e
            except Exception as e:  # noqa: BLE001 - the importer's own tracing
                self._cache[key] = ImportFailure(_one_line(e))
        res = self._cache[key]
        if isinstance(res, ImportFailure):
            raise res
        return res

    def ok(self, values: Dict[str, int]) -> bool:
        try:
            self.run(values)
            return True
        except ImportFailure:
            return False

    def runs_for_real(self, values: Dict[str, int]) -> Optional[bool]:
        """Whether the problem runs at ``values`` on the CPU with real float32 tensors (eval mode,
        no grad), or None when it cannot be told cheaply: it fails on the meta device already, or
        its tensors hold more than :data:`REAL_CHECK_ELEMENTS` floats. The meta device's shape
        checks differ between torch versions (torch 2.11's meta convolution accepts an input
        smaller than the kernel; torch 2.13's refuses it, as the CPU kernel does): a value the
        meta run accepts may still break the model on a device (cached per values)."""
        key = tuple(sorted(values.items()))
        if key not in self._real:
            try:
                small = self.run(values).float_elements() <= REAL_CHECK_ELEMENTS
            except ImportFailure:
                small = False
            if not small:
                self._real[key] = None
            else:
                try:
                    _cpu_outputs(self.source, values, torch.float32)
                    self._real[key] = True
                except ImportFailure as e:
                    self._real[key] = False
                    self.real_errors[key] = str(e)
        return self._real[key]

    def works(self, values: Dict[str, int]) -> bool:
        """The model runs at ``values`` on the meta device and, where :meth:`runs_for_real` can
        tell, in a real CPU run."""
        return self.ok(values) and self.runs_for_real(values) is not False

    def why_not(self, values: Dict[str, int]) -> str:
        """The one-line error of a run at ``values`` that :meth:`works` refused."""
        try:
            self.run(values)
        except ImportFailure as e:
            return f"{e}, on the meta device"
        return self.real_errors.get(tuple(sorted(values.items())), "no error recorded") + ", in a CPU run"

    def _run(self, values):
        from torch.utils._python_dispatch import TorchDispatchMode
        from torch.utils.flop_counter import FlopCounterMode, flop_registry

        meta = torch.device("meta")
        ns = _namespace(self.source, values, meta, None)
        init = _init_inputs(ns)
        inputs = _inputs(ns, None, meta)
        with torch.device(meta):
            model = _model(ns, init)
        if not isinstance(model, torch.nn.Module):
            raise ImportFailure(f"Model(*get_init_inputs()) made a {type(model).__name__}, not an nn.Module")
        model.eval()
        trace, ops, no_formula, reductions, eps = [], [], [], [], []
        centring = CentringTracer()

        class Recorder(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                name = func.overloadpacket.__name__
                ops.append(name)
                if func.overloadpacket not in flop_registry:
                    no_formula.append(name)
                trace.extend(tuple(t.shape) for t in _leaves(out))
                if name in CENTERING_OPS and len(args) > EPS_ARG[name] and isinstance(args[EPS_ARG[name]], (int, float)):
                    eps.append(float(args[EPS_ARG[name]]))
                if name in REDUCTION_OPS:
                    first = _leaves(list(args))
                    if first:
                        reductions.append((name, tuple(first[0].shape), [tuple(t.shape) for t in _leaves(out)]))
                centring.see(name, args, kwargs, out)
                return out

        counter = FlopCounterMode(display=False)
        with torch.no_grad(), counter, Recorder():
            out = _forward(model, inputs)
        outs = _leaves(out)
        if not outs:
            raise ImportFailure("Model.forward returned no tensor")
        if all(t.numel() == 0 for t in outs):  # batch_size = 0: any kernel would pass (session 18's attack, file 12)
            raise ImportFailure("Model.forward returned only empty tensors at these sizes: nothing to verify; "
                                "give every size constant a value of 1 or more")
        tensors = lambda ts: [(tuple(t.shape), t.dtype) for t in ts]  # noqa: E731
        params = list(model.parameters()) + list(model.buffers())
        return Measured(tensors(_leaves(inputs)), tensors(outs), tensors(params), trace, int(counter.get_total_flops()),
                        ops, no_formula, reductions, eps + centring.found_eps, sorted(set(centring.found)))


@dataclass
class Dim:
    name: str
    constants: List[str]
    value: int
    multiple_of: int = 1
    minimum: int = 1
    reduced: bool = False
    #: how it is reduced: "away" (in no output shape) or "keepdim" (a reduction's output keeps it at size 1)
    reduced_how: str = ""
    atoms: List[Atom] = field(default_factory=list)
    runs: List[int] = field(default_factory=list)

    def values(self, v: int) -> Dict[str, int]:
        return {c: v for c in self.constants}

    def snap(self, x: int, odd: bool = True) -> int:
        """``x`` moved into the dim's lattice (multiple of ``multiple_of``, at least ``minimum``),
        odd in units of the multiple when ``odd``."""
        m = self.multiple_of
        u = max(1, x // m)
        if odd and u > 1 and u % 2 == 0:
            u -= 1
        low = -(-self.minimum // m)
        return max(low, u) * m


def values_at(dims: List[Dim], base_values: Dict[str, int], shape: Dict[str, int]) -> Dict[str, int]:
    """The problem's constants at ``shape``: ``base_values`` with every dim's constants set to the
    shape's value of that dim."""
    vals = dict(base_values)
    for d in dims:
        vals.update(d.values(shape[d.name]))
    return vals


def raise_atol(tolerance: Dict[str, Dict], bound: float, source: str) -> Tuple[float, Dict[str, Dict]]:
    """``bound`` rounded up to two significant digits, and ``tolerance`` with each dtype's ``atol``
    raised to it where smaller, its ``source`` then ``"atol: " + source + ". rtol: " + the old
    source``."""
    atol = float(f"{bound:.2g}")
    atol = atol if atol >= bound else float(f"{bound * 1.05:.2g}")
    out = {}
    for dt, v in tolerance.items():
        v = dict(v)
        if atol > v["atol"]:
            v["atol"] = atol
            v["source"] = f"atol: {source}. rtol: " + v["source"]
        out[dt] = v
    return atol, out


@dataclass
class Report:
    """What one problem's import decided, on what evidence, and what needs a person."""

    source: str
    task: Optional[str] = None
    #: "imported", "left-out" (imports, but its reference fails its own tolerance: :class:`LeftOut`) or "failed"
    status: str = "failed"
    reason: Optional[str] = None
    decisions: List[Dict[str, str]] = field(default_factory=list)
    flags: List[Dict[str, str]] = field(default_factory=list)
    #: wall seconds of the problem's analysis (its worker job), None when it did not run
    seconds: Optional[float] = None

    def decide(self, what: str, choice: Any, evidence: str):
        self.decisions.append({"what": what, "choice": str(choice), "evidence": evidence})

    def flag(self, kind: str, message: str):
        self.flags.append({"kind": kind, "message": message})


# --------------------------------------------------------------------------- naming
def task_name(path: Path) -> str:
    """``.../level1/88_MinGPTNewGelu.py`` -> ``kb_l1_88_mingptnewgelu`` (level 0 without a
    ``level<N>`` parent folder, number 0 without a leading number)."""
    level = next((int(m.group(1)) for p in path.resolve().parents
                  for m in [re.fullmatch(r"level(\d+)", p.name)] if m), 0)
    m = re.match(r"(\d+)_?(.*)", path.stem)
    number, rest = (int(m.group(1)), m.group(2)) if m else (0, path.stem)
    slug = re.sub(r"[^a-z0-9]+", "_", rest.lower()).strip("_") or "problem"
    return f"kb_l{level}_{number}_{slug}"


def _dim_name(key: str, taken: set) -> str:
    name = re.sub(r"\W", "_", key.replace("[", "_").replace("]", "")).strip("_")
    if not name.isidentifier() or name in RESERVED:
        name = f"d_{name}"
    while name in taken:
        name += "_"
    return name


# --------------------------------------------------------------------------- analysis
def _changes(base: Measured, new: Measured) -> Dict[str, bool]:
    return {"inputs": [s for s, _ in base.inputs] != [s for s, _ in new.inputs],
            "outputs": [s for s, _ in base.outputs] != [s for s, _ in new.outputs]}


def _linear_output(base: Measured, runs: Dict[int, Measured], v: int) -> bool:
    """Some output or intermediate (traced) axis grows linearly with the constant (the same
    positive slope at every perturbation) and some output or intermediate axis equals the
    constant's value in every run (``out_channels``, a hidden width; a transposed convolution's
    kernel size grows the output too, but no output axis equals it)."""
    if len(runs) < 2:
        return False
    use_trace = all(len(r.trace) == len(base.trace) for r in runs.values())
    axes0 = [s for g, _, s in base.axes(use_trace) if g in ("output", "trace")]
    others = {p: [s for g, _, s in r.axes(use_trace) if g in ("output", "trace")] for p, r in runs.items()}
    linear = False
    for i, s in enumerate(axes0):
        for ax, e0 in enumerate(s):
            slopes = set()
            for p, shapes in others.items():
                if len(shapes) != len(axes0) or len(shapes[i]) != len(s):
                    break
                slopes.add((shapes[i][ax] - e0) / (p - v))
            else:
                if len(slopes) == 1 and next(iter(slopes)) > 0:
                    linear = True
    equal = all(any(p in s for g, _, s in r.axes(use_trace) if g in ("output", "trace")) for p, r in runs.items())
    return linear and equal


def find_dims(src: ProblemSource, probe: Probe, base: Measured, rep: Report) -> List[Dim]:
    """Sizes among the int constants, by perturbation (module docstring); the rest are fixed."""
    read_by_model = src.names_read_outside_inputs()
    results: Dict[str, Tuple[str, Dict[int, Any]]] = {}
    sizes: List[Tuple[List[str], int, int, Dict[int, Measured]]] = []
    broke: List[str] = []
    for key, v in src.constants.items():
        if key in read_by_model:
            rep.decide(f"constant {key} = {v}", "parameter (fixed)",
                       f"read by {', '.join(sorted(set(read_by_model[key]))[:3])}: the harness builds the original Model, "
                       "which keeps the original value")
            continue
        if v <= 0:
            rep.decide(f"constant {key} = {v}", "parameter (fixed)", "not a positive size")
            continue
        verdict, mult, runs, why = _perturb(probe, base, [key], v)
        if verdict == "size":
            sizes.append(([key], v, mult, runs))
            rep.decide(f"constant {key} = {v}", "size (a dim)", why)
        else:
            if verdict == "broke":
                broke.append(key)
            rep.decide(f"constant {key} = {v}", "parameter (fixed)", why)
    # constants that break the model alone but not together (e.g. two names for one size)
    by_value: Dict[int, List[str]] = {}
    for k in broke:
        by_value.setdefault(src.constants[k], []).append(k)
    for v, keys in by_value.items():
        if len(keys) < 2:
            continue
        verdict, mult, runs, why = _perturb(probe, base, keys, v)
        if verdict == "size":
            sizes.append((keys, v, mult, runs))
            rep.decide(f"constants {', '.join(keys)} = {v}", "one size (a dim)", "perturbed together: " + why)
            rep.flag("shared-constant", f"{' and '.join(keys)} must stay equal (each alone breaks the model, together "
                                        f"they run): imported as one dim that sets them all")
    for names in src.shared_literals:
        in_dims = [n for n in names if any(n in ks for ks, *_ in sizes)]
        if len(in_dims) > 1:
            rep.flag("shared-constant", f"{' = '.join(names)} share one literal in the source; they varied "
                                        "independently under perturbation, so they are separate dims (check that "
                                        "the problem means them to be independent)")
    order = list(src.constants)
    sizes.sort(key=lambda s: order.index(s[0][0]))
    dims, taken = [], set()
    for keys, v, mult, runs in sizes:
        name = _dim_name(keys[0], taken)
        taken.add(name)
        d = Dim(name, keys, v, multiple_of=mult)
        if not any(_changes(base, r)["outputs"] for r in runs.values()):
            d.reduced, d.reduced_how = True, "away"
        elif _kept_at_one(base, runs):
            d.reduced, d.reduced_how = True, "keepdim"
        dims.append(d)
    return dims


def _kept_at_one(base: Measured, runs: Dict[int, Measured]) -> bool:
    """A reduction operator (:data:`REDUCTION_OPS`) whose first tensor's extent along some axis
    changes with the constant while an output of the same rank keeps that axis at size 1, at
    the original value and a perturbed one: the constant is reduced with ``keepdim=True``
    (``x / x.norm(dim=1, keepdim=True)``, a mean kept for broadcasting), even when the model's
    own output keeps the full extent."""
    for r in runs.values():
        if [n for n, *_ in r.reductions] != [n for n, *_ in base.reductions]:
            continue
        for (_, i0, o0), (_, i1, o1) in zip(base.reductions, r.reductions):
            if len(i0) != len(i1) or i0 == i1:
                continue
            axes = [a for a in range(len(i0)) if i0[a] != i1[a]]
            for s0, s1 in zip(o0, o1):
                if len(s0) == len(i0) and s0 == s1 and all(s0[a] == 1 for a in axes):
                    return True
    return False


def _perturb(probe: Probe, base: Measured, keys: List[str], v: int):
    """("size" | "fixed" | "broke", multiple_of, runs, evidence text) for constants ``keys`` at value ``v``."""
    tries = [v + 1, 2 * v] if v + 1 != 2 * v else [v + 1, v + 2]
    runs, errors = {}, {}
    for p in tries:
        try:
            runs[p] = probe.run({k: p for k in keys})
        except ImportFailure as e:
            errors[p] = str(e)
    mult = 1
    if v + 1 in errors:  # maybe a multiple is required
        # the smallest divisor m of v (up to 128) at which v + m and 2 v + m run: a requirement r that
        # divides v is found exactly (v + m is a multiple of r only when r divides m); not only powers of
        # two (session 17's attack #12: a channel shuffle in 3 groups needs a multiple of 3)
        for m in (d for d in range(2, 129) if v % d == 0):
            if probe.ok({k: v + m for k in keys}) and probe.ok({k: 2 * v + m for k in keys}):
                mult = m
                runs = {v + m: probe.run({k: v + m for k in keys}), 2 * v + m: probe.run({k: 2 * v + m for k in keys})}
                errors = {}
                break
    label = "/".join(keys)
    if errors:
        p, e = next(iter(errors.items()))
        return "broke", 1, runs, f"{label} = {p} breaks the model ({e})"
    changed_in = [p for p, r in runs.items() if _changes(base, r)["inputs"]]
    note = f" (values that are not multiples of {mult} break it)" if mult > 1 else ""
    if changed_in:
        shapes = [str([list(s) for s, _ in runs[p].inputs]) for p in changed_in[:1]]
        return "size", mult, runs, f"at {label} = {changed_in[0]} the model runs and the input shapes change to {shapes[0]}{note}"
    if _linear_output(base, runs, v):
        return "size", mult, runs, (f"at {label} = {', '.join(map(str, runs))} the inputs keep their shapes but an output or "
                                    f"intermediate axis grows linearly with it and an output/intermediate axis equals it{note}")
    if any(_changes(base, r)["outputs"] for r in runs.values()):
        return "fixed", 1, runs, (f"at {label} = {', '.join(map(str, runs))} only the output shape changes, not in "
                                  "proportion: an op parameter (window, stride, padding, axis)")
    return "fixed", 1, runs, f"at {label} = {', '.join(map(str, runs))} no tensor shape changes"


def _small_others(dims: List[Dim], d: Dim) -> Dict[str, int]:
    """The constants of every dim but ``d`` at a small value (at most :data:`REAL_CHECK_DIM`, in
    its lattice): the context of a real CPU run of ``d``'s values."""
    small: Dict[str, int] = {}
    for o in dims:
        if o is not d:
            small.update(o.values(o.snap(min(o.value, REAL_CHECK_DIM), False)))
    return small


def _real_multiple(probe: Probe, dims: List[Dim], d: Dim, rep: Report) -> bool:
    """Raises ``d.multiple_of`` where real CPU runs need a larger multiple than the meta device
    showed (a reshape into pairs that only real data refuses, a view the meta device lets
    through): in a run with the other dims small (:func:`_small_others`) that works at ``d``'s own
    value, ``v + m`` or ``2 v + m`` breaks it; the smallest multiple ``k`` of ``m`` that divides
    ``v`` (up to 128) at which ``v + k`` and ``2 v + k`` run on the meta device and for real
    becomes the multiple (the search of :func:`_perturb`). True when it changed."""
    v, m = d.value, d.multiple_of
    small = _small_others(dims, d)
    if probe.runs_for_real({**small, **d.values(v)}) is not True:
        return False  # no real evidence here (too large, or the context itself does not run)
    real = lambda x: probe.runs_for_real({**small, **d.values(x)}) is not False  # noqa: E731
    if real(v + m) and real(2 * v + m):
        return False
    broke = next(x for x in (v + m, 2 * v + m) if not real(x))
    for k in (k for k in range(2 * m, 129, m) if v % k == 0):
        if probe.ok(d.values(v + k)) and probe.ok(d.values(2 * v + k)) and real(v + k) and real(2 * v + k):
            others = ", ".join(f"{c} = {x}" for c, x in small.items())
            rep.decide(f"dim {d.name} multiple_of", k, (
                f"{d.name} = {broke} runs on the meta device but breaks the model in a CPU run with the other dims "
                f"small ({others}: {probe.real_errors.get(tuple(sorted({**small, **d.values(broke)}.items())), '?')}); "
                f"{d.name} = {v + k} and {2 * v + k} run there" + (f" (the meta device needed a multiple of {m})"
                                                                   if m > 1 else "")))
            d.multiple_of = k
            return True
    return False


def find_constraints(probe: Probe, dims: List[Dim], rep: Report):
    """The multiple and the smallest value of each dim as constraints. Multiples: those the
    meta device needs (:func:`_perturb`), raised where real CPU runs with the other dims small
    need more (:func:`_real_multiple`; repeated while one changes, since the other dims' small
    values follow their multiples). Minimums: the smallest value that runs (with the next two in
    its lattice) on the meta device at the other dims' own sizes, and -- where that is cheap -- in
    a real run on the CPU with the other dims small (:meth:`Probe.runs_for_real`; the other dims at
    most :data:`REAL_CHECK_DIM`, in their lattices), since the meta device's shape checks depend on
    the torch version (a derived shape the importer allowed broke kb_l1_6_conv2dstrided's reference
    on the H200's torch 2.11, session 17: height 2 under a 3 x 3 kernel)."""
    for _ in range(len(dims) + 1):
        if not any([_real_multiple(probe, dims, d, rep) for d in dims]):
            break
    for d in dims:
        m = d.multiple_of
        small = _small_others(dims, d)
        # the real check only counts where the model runs at this dim's own value with the others small
        real = probe.runs_for_real({**small, **d.values(d.value)}) is True
        runs = lambda x: probe.ok(d.values(x)) and (not real or probe.runs_for_real({**small, **d.values(x)}) is not False)  # noqa: E731
        for k in range(1, 17):
            x = k * m
            if all(runs(x + j * m) for j in range(3)):
                d.minimum = x
                break
        else:
            d.minimum = d.value
        if d.minimum > m:
            smaller = ", ".join(str(x) for x in range(m, d.minimum, m)[:4])
            rep.decide(f"dim {d.name} minimum", d.minimum, f"{d.name} = {smaller} break the model (on the meta device, "
                       "or in a CPU run with the other dims small)")
        if d.minimum > m or m > 1:
            rep.flag("constrained-dim", f"{d.name}: " + ", ".join(
                ([f"min {d.minimum}"] if d.minimum > m else []) + ([f"multiple_of {m}"] if m > 1 else []))
                     + " (found by trying smaller and non-multiple values)")


#: :func:`joint_check`: every combination of the dims' two smallest values is tried up to this many
#: dims (2^6 runs); past it, all dims at their minimum, and each one and each pair at the next value.
JOINT_ALL_DIMS = 6


def _combinations(dims: List[Dim], low: Dict[str, int]) -> List[Dict[str, int]]:
    """The dims' constants at each combination of ``low`` (per dim) and the next value in its
    lattice, the all-``low`` corner first."""
    import itertools

    if len(dims) <= JOINT_ALL_DIMS:
        picks = list(itertools.product((0, 1), repeat=len(dims)))
    else:
        picks = [tuple(int(i in c) for i in range(len(dims)))
                 for r in (0, 1, 2) for c in itertools.combinations(range(len(dims)), r)]
    out = []
    for pick in picks:
        vals: Dict[str, int] = {}
        for d, up in zip(dims, pick):
            vals.update(d.values(low[d.name] + up * d.multiple_of))
        out.append(vals)
    return out


def joint_check(probe: Probe, dims: List[Dim], origin: str, rep: Report) -> None:
    """Each dim's minimum is found with the other dims at larger values; dims that are valid
    alone but not together (InstanceNorm needs H * W > 1: H = 1 runs, W = 1 runs, both break it)
    would let derived shapes pick a combination that breaks the reference. Every combination of
    each dim at its minimum or the next value in its lattice (:func:`_combinations`) is tried on
    the meta device and in a real CPU run (:meth:`Probe.works`). When one breaks, the minimum of
    one dim is raised -- the fewest lattice steps, then the later dim -- to the smallest value
    with which every combination runs (said and flagged); when no single dim's raise (up to 8
    steps) does, the problem is refused with one line (constraints per dim cannot express it)."""
    low = {d.name: d.minimum for d in dims}
    label = lambda vals: ", ".join(f"{d.name}={vals[d.constants[0]]}" for d in dims)  # noqa: E731
    bad = next((c for c in _combinations(dims, low) if not probe.works(c)), None)
    if bad is None:
        return
    for steps in range(1, 9):
        for d in reversed(dims):
            raised = dict(low, **{d.name: d.minimum + steps * d.multiple_of})
            combos = _combinations(dims, raised)
            if all(probe.works(c) for c in combos):
                rep.decide(f"dim {d.name} minimum (joint)", raised[d.name], (
                    f"each dim runs at its own minimum with the others larger, but not all together: at {label(bad)} "
                    f"the model breaks ({probe.why_not(bad)}); with {d.name} at least {raised[d.name]}, every "
                    f"combination of each dim at its minimum or the next value runs ({len(combos)} combinations, on "
                    "the meta device and in CPU runs)"))
                rep.flag("constrained-dim", f"{d.name}: min {raised[d.name]} (the dims' smallest values do not run "
                                            f"together: {label(bad)} breaks the model)")
                d.minimum = raised[d.name]
                return
    raise ImportFailure(
        f"{Path(origin).name}: dims that run alone break the model together (at {label(bad)}: "
        f"{clip(probe.why_not(bad), 120)}) and no one dim's larger minimum avoids it; per-dim constraints cannot "
        "express this: write the spec's constraints by hand or make each dim's valid values independent of the others")


def find_atoms(probe: Probe, dims: List[Dim]):
    """Per dim, the forms it takes in the traced tensors' extents (kernelsynth/importers/fit.py)."""
    for d in dims:
        m, v = d.multiple_of, d.value
        xs = [v, v + m, v + 2 * m, v + 3 * m, v + 5 * m, d.snap(2 * v + m, False), d.minimum, d.minimum + m,
              d.minimum + 3 * m]
        xs = [x for x in dict.fromkeys(xs) if x >= d.minimum and x % m == 0 and probe.ok(d.values(x))]
        d.runs = xs
        runs = [probe.run(d.values(x)) for x in xs]
        use_trace = len({len(r.trace) for r in runs}) == 1
        atoms: List[Atom] = [(d.name, lambda x: x)]
        for axis_id in range(len(runs[0].axes(use_trace))):
            try:
                es = [r.axes(use_trace)[axis_id] for r in runs]
            except IndexError:
                continue
            if len({(g, len(s)) for g, _, s in es}) != 1:
                continue
            for ax in range(len(es[0][2])):
                form = axis_form(d.name, xs, [e[2][ax] for e in es])
                if form is not None:  # kept when it is no combination of the atoms found so far
                    rows = [[Fraction(1)] + [Fraction(f(x)) for _, f in atoms + [form]] for x in xs]
                    if rank(rows) == len(atoms) + 2:
                        atoms.append(form)
        d.atoms = atoms[:4]


def fit_work(probe: Probe, dims: List[Dim], base_values: Dict[str, int], rep: Report) -> Dict[str, Optional[str]]:
    """``{"flops", "float_elements", "other_bytes"}`` formulas (None: no formula checked)."""
    names = [d.name for d in dims]

    def point(p):
        vals = values_at(dims, base_values, p)
        return probe.run(vals)

    measures = {"flops": lambda r: r.flops, "float_elements": lambda r: r.float_elements(),
                "other_bytes": lambda r: r.other_bytes()}
    checks = _check_shapes(probe, dims, base_values)
    out: Dict[str, Optional[str]] = {}
    for key, fn in measures.items():
        out[key] = None
        for power in (1, 2, 3):  # the dims' atoms, then with their squares, then cubes (a square matmul)
            atoms = {d.name: list(d.atoms) + [(" * ".join([d.name] * k), lambda x, k=k: x ** k)
                                              for k in range(2, power + 1)] for d in dims}
            values = {d.name: grid_values(atoms[d.name], d.runs) for d in dims}
            if any(v is None for v in values.values()) or math.prod(len(v) for v in values.values()) > MAX_GRID:
                continue
            try:
                text = fit_grid(names, atoms, values, lambda p: fn(point(p)))
            except ImportFailure:
                continue
            if checks and all(abs(evaluate(text, c) - fn(point(c))) <= 1e-9 * max(1, abs(fn(point(c)))) for c in checks):
                out[key] = text
                rep.decide(f"work {key}", text, f"fitted on a grid of {math.prod(len(v) for v in values.values())} "
                           f"shapes (meta device); equals the measurement at {len(checks)} shapes off the grid: "
                           + "; ".join("x".join(str(c[n]) for n in names) for c in checks))
                break
        if out[key] is None:
            rep.flag("no-formula", f"work {key}: no formula of the dims fits the measurements (FlopCounterMode / "
                     "tensor sizes) at every checked shape; needs a person")
    return out


def _check_shapes(probe, dims, base_values) -> List[Dict[str, int]]:
    """Three shapes off every fitting grid, mixed parities, where the model runs."""
    out = []
    for j, (num, add) in enumerate(((1, 7), (2, 3), (1, 11))):
        c = {}
        for d in dims:
            x = d.snap(d.value * num // (1 + (j == 1)) + add * d.multiple_of, odd=(j != 2))
            while x in d.runs:
                x += d.multiple_of
            c[d.name] = x
        vals = values_at(dims, base_values, c)
        if probe.ok(vals):
            out.append(c)
    return out


def _cost(probe, dims, base_values, shape) -> Optional[Measured]:
    vals = values_at(dims, base_values, shape)
    try:
        return probe.run(vals)
    except ImportFailure:
        return None


def make_shapes(probe, dims, base_values, targets: Sequence[Tuple[int, int]], budget) -> List[Dict[str, int]]:
    """One shape per ``(other, reduced)`` target: non-reduced dims near ``other``, reduced dims
    near ``reduced`` (capped by the original value), odd, then halved (non-reduced dims first,
    largest first) until the work fits ``budget`` and the model runs (a shape whose dims are all
    at their smallest is kept over the budget: fixed sizes inside the problem can exceed it)."""
    out = []
    for other, red in targets:
        s = {d.name: d.snap(min(d.value, red if d.reduced else other)) for d in dims}
        for _ in range(64):
            r = _cost(probe, dims, base_values, s)
            if r is not None and r.flops <= budget["flops"] and r.largest() <= budget["elements"]:
                break
            shrink = sorted((d for d in dims if d.snap(s[d.name] // 2) < s[d.name]),
                            key=lambda d: (d.reduced, -s[d.name]))
            if not shrink:  # every dim at its smallest: kept when it runs, over the budget or not
                s = s if r is not None else None
                break
            d = shrink[0]
            s[d.name] = d.snap(s[d.name] // 2)
        else:
            s = None
        if s is not None and s not in out:
            out.append(s)
    return out


# --------------------------------------------------------------------------- checks on the CPU
def _cpu_inputs(src: ProblemSource, values, dtype, seed=0) -> List[Any]:
    """``get_inputs()`` at ``values`` on the CPU, drawn from a generator seeded ``seed`` (torch's
    and numpy's draws alike, kernelsynth/importers/kbsource.py), floating tensors in ``dtype``."""
    cpu = torch.device("cpu")
    return _inputs(_namespace(src, values, cpu, torch.Generator().manual_seed(seed)), dtype, cpu)


def _cpu_outputs(src: ProblemSource, values, dtype, ref_dtype=None, train=False, seed=0, inputs=None):
    """The model's outputs on the CPU at ``values``: built after torch.manual_seed(42) as the
    harness does, in ``dtype`` (parameters and floating inputs), then evaluated in ``ref_dtype``
    (None: ``dtype``), in eval mode unless ``train``. ``inputs``: ``get_inputs()``'s list to use
    (else drawn with ``seed``)."""
    if inputs is None:
        inputs = _cpu_inputs(src, values, dtype, seed)
    inputs = ProblemSource.cast(list(inputs), dtype, None)
    ns = _namespace(src, values)
    torch.manual_seed(42)
    model = _model(ns, _init_inputs(ns)).to(dtype)
    if ref_dtype is not None:
        model = model.to(ref_dtype)
        inputs = [x.to(ref_dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
    model.train(train)
    with torch.no_grad():
        return _leaves(_forward(model, inputs))


def _worst(outs, refs, tol) -> Tuple[float, float, float]:
    """``(ratio, error, reference value)`` of the element whose error uses the most of the
    tolerance ``atol + rtol * |ref|`` (ratio > 1: it fails)."""
    best = (0.0, 0.0, 0.0)
    for o, r in zip(outs, refs):
        if not o.numel():
            continue
        o, r = o.double().flatten(), r.double().flatten()
        err = (o - r).abs()
        ratio = err / (tol["atol"] + tol["rtol"] * r.abs())
        i = int(torch.nan_to_num(ratio, nan=float("inf")).argmax())
        if float(ratio[i]) > best[0] or math.isnan(float(ratio[i])):
            best = (float(ratio[i]), float(err[i]), float(r[i]))
    return best


def _passes(outs, refs, tol) -> bool:
    return all(torch.all((o.double() - r.double()).abs() <= tol["atol"] + tol["rtol"] * r.double().abs()).item()
               for o, r in zip(outs, refs))


def cpu_checks(src, dims, base_values, shapes, tolerance, rep: Report, dtypes: List[str]) -> Tuple[List[str], bool]:
    """The value checks of the module docstring; returns the dtypes kept and whether eager float32
    met the float32 tolerance at every shape (``reference-fails-tolerance`` when not)."""
    def vals(s):
        return values_at(dims, base_values, s)

    zeros, lowp, bf16_bad, f32_bad, no_bf16 = [], [], [], [], []
    for s in shapes:
        label = "x".join(str(x) for x in s.values()) or "()"
        # one draw of the inputs for every run at this shape: two draws differ where get_inputs uses a random
        # source the importer does not seed (flagged unseeded-inputs), which read as "the reference fails"
        drawn = _cpu_inputs(src, vals(s), torch.float32)
        fresh = lambda: [x.clone() if isinstance(x, torch.Tensor) else x for x in drawn]  # noqa: E731
        ref32 = _cpu_outputs(src, vals(s), torch.float32, torch.float64, inputs=fresh())
        zeros.append((label, _passes([torch.zeros_like(r) for r in ref32], ref32, tolerance["float32"])))
        f32 = _cpu_outputs(src, vals(s), torch.float32, inputs=fresh())
        if not _passes(f32, ref32, tolerance["float32"]):
            f32_bad.append((label, _worst(f32, ref32, tolerance["float32"])))
        try:
            low = _cpu_outputs(src, vals(s), torch.bfloat16, inputs=fresh())
        except ImportFailure as e:  # an operator without a bfloat16 CPU kernel, an index rounded in bfloat16, ...
            no_bf16.append(clip(str(e).splitlines()[0], 160))  # (the problem's own errors arrive as ImportFailure, _call)
            continue
        lowp.append((label, _passes(low, ref32, tolerance["float32"])))
        if "bfloat16" in tolerance:
            ref16 = _cpu_outputs(src, vals(s), torch.bfloat16, torch.float64, inputs=fresh())
            if not _passes(low, ref16, tolerance["bfloat16"]):
                once = [r.to(torch.bfloat16) if r.is_floating_point() else r for r in ref16]
                bf16_bad.append((label, _worst(low, ref16, tolerance["bfloat16"]),
                                 _worst(once, ref16, tolerance["bfloat16"])))
    ev = lambda pairs: ", ".join(f"{lb}: {'passes' if ok else 'fails'}" for lb, ok in pairs)  # noqa: E731
    rep.decide("check: all-zeros answer vs the float32 tolerance", "fails" if not all(ok for _, ok in zeros) else "PASSES",
               ev(zeros))
    if zeros and all(ok for _, ok in zeros):
        rep.flag("zeros-pass", "an all-zeros output passes the float32 tolerance at every verify shape "
                               f"({ev(zeros)}): the check cannot tell a kernel that writes nothing; needs a person")
    rep.decide("check: bfloat16-precision answer vs the float32 tolerance",
               "fails" if not all(ok for _, ok in lowp) else "PASSES", ev(lowp))
    if lowp and all(ok for _, ok in lowp):
        rep.flag("low-precision-pass", "an answer computed in bfloat16 passes the float32 tolerance at every verify "
                                       f"shape ({ev(lowp)}); needs a person (longer reductions, tighter tolerance)")
    if f32_bad:
        t = tolerance["float32"]
        label, (ratio, err, ref) = f32_bad[0]
        rep.flag("reference-fails-tolerance", f"eager float32 on the CPU fails the float32 tolerance (atol {t['atol']:g}, "
                 f"rtol {t['rtol']:g}) against float64 at {', '.join(b[0] for b in f32_bad)}: at {label} its worst "
                 f"element errs by {err:.3g} where the reference is {ref:.3g}, {ratio:.3g} times the allowed error")
    kept = list(dtypes)
    if bf16_bad and "bfloat16" in kept:
        kept.remove("bfloat16")
        t = tolerance["bfloat16"]
        label, (ratio, err, ref), (once, *_) = bf16_bad[0]
        evidence = (f"eager bfloat16 on the CPU fails the bfloat16 tolerance (atol {t['atol']:g}, rtol {t['rtol']:g}) "
                    f"against a float64 reference at {', '.join(b[0] for b in bf16_bad)}: at {label} its worst element "
                    f"errs by {err:.3g} where the reference is {ref:.3g}, {ratio:.3g} times the allowed error; the "
                    f"exact answer rounded once to bfloat16 uses {once:.3g} of it. Eager rounds to bfloat16 after "
                    "every operator, so v0 (eager) would be rejected in bfloat16 and no trajectory could start from it")
        rep.decide("dtype bfloat16", "left out", evidence)
        rep.flag("bfloat16-left-out", evidence + "; to time bfloat16, add it to the spec's dtypes with a tolerance a "
                 "person chooses")
    elif no_bf16 and "bfloat16" in kept:
        # float32 imports on its own; bfloat16 is left out with the error (session 17's attack: torch.fft.rfft has
        # no bfloat16 kernel, token ids in a float tensor round past the vocabulary; each failed the whole import)
        kept.remove("bfloat16")
        evidence = (f"eager bfloat16 does not run on the CPU ({no_bf16[0]}): v0 could not be checked in bfloat16, "
                    "and an operator without a bfloat16 kernel or an index rounded in bfloat16 fails on the GPU too")
        rep.decide("dtype bfloat16", "left out", evidence)
        rep.flag("bfloat16-left-out", evidence + "; to time bfloat16, add it to the spec's dtypes after checking it")
    elif "bfloat16" in kept:
        rep.decide("dtype bfloat16", "kept", "eager bfloat16 on the CPU meets the default bfloat16 tolerance at every "
                   "verify shape")
    return kept, not f32_bad


#: float32's unit roundoff (round to nearest): 2^-24
_U32 = 2.0 ** -24


def summation_tolerance(src, probe, dims, base_values, tolerance, rep: Report,
                        timing: Optional[Dict[str, int]] = None) -> Dict[str, Dict]:
    """``tolerance`` with each ``atol`` raised to the float32 error bound of summing the reduced
    length, when that bound is larger (a sum near zero has no relative slack, so ``rtol`` cannot
    cover it).

    ``n``: the product of the reduced dims' values at the timing shape (the longest rows any
    shape has: verify shapes keep reduced dims at most that long), reduced away or with
    ``keepdim``; no reduced dim (softmax, a scan over a kept axis): ``tolerance`` unchanged. ``r``: the root mean square of the
    reference's float32 outputs at the timing shape, on the CPU (in the output's units: for a sum
    of zero-mean terms ``r ~ std sqrt(n)``, for a mean ``r`` is that over ``n``). Bound: every
    partial sum stays within ``B = 3 r`` (three standard deviations; a nonzero mean only brings
    the partial sums closer to the total), each of the ``n`` additions errs by at most ``u B``
    (``u = 2^-24``, float32 rounding to nearest) and these errors add up like a random walk:
    ``atol = sqrt(n) u B`` (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., sec.
    4.2, the probabilistic ``sqrt(n) u`` factor; any summation order does at most ``n`` additions
    on partial sums within ``B``); the same bound as specs/column_sum/spec.yaml's hand-derived
    atol. When several reductions chain (a loss: a log-sum-exp per row, a mean over rows), ``n``
    counts every reduced element, which over-counts the additions of any one sum: looser, never
    tighter. Rounded up to two significant digits; the bfloat16 entry gets it too (bfloat16
    inputs, float32 accumulation). The all-zeros and bfloat16-answer checks (:func:`cpu_checks`)
    run after, against the raised atol, and are flagged when they pass."""
    timing = timing or {d.name: d.value for d in dims}
    n = math.prod(timing[d.name] for d in dims if d.reduced)
    if n <= 1:
        return tolerance
    shape = dict(timing)
    for _ in range(256):  # the CPU run: dims that are not reduced made smaller until within CPU_ELEMENTS
        r = _cost(probe, dims, base_values, shape)
        if r is not None and r.float_elements() <= CPU_ELEMENTS:
            break
        order = sorted((d for d in dims if not d.reduced and d.snap(shape[d.name] // 2, False) < shape[d.name]),
                       key=lambda d: -shape[d.name])
        if not order:
            break
        shape[order[0].name] = order[0].snap(shape[order[0].name] // 2, False)
    if shape != timing:
        rep.decide("tolerance statistics shape", shape, f"the timing shape {timing} has more than {CPU_ELEMENTS} "
                   "elements for a run on the CPU: the dims that are not reduced made smaller (the reduced length, "
                   "which sets the bound, kept)")
    vals = values_at(dims, base_values, shape)
    outs = [o.double() for o in _cpu_outputs(src, vals, torch.float32) if o.is_floating_point() and o.numel()]
    if not outs:
        return tolerance
    r = math.sqrt(sum(float((o ** 2).sum()) for o in outs) / sum(o.numel() for o in outs))
    bound = math.sqrt(n) * _U32 * 3.0 * r
    atol, out = raise_atol(tolerance, bound, (
        f"float32 summation of n = {n} terms (the reduced dims at the timing shape); the reference's outputs there "
        f"have root mean square r = {r:.4g} (float32, on the CPU), so partial sums stay within B = 3 r and the error "
        f"within sqrt(n) * 2^-24 * B = {bound:.3g} (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., "
        "sec. 4.2: probabilistic bound of summation, any order), rounded up; a sum near zero has no relative slack"))
    rep.decide("tolerance atol (summation)", atol, f"n = {n}, r = {r:.4g}: sqrt(n) * 2^-24 * 3 r = {bound:.3g}")
    return out


#: aten operators (overload packet names) that normalise by a statistic computed after centring
#: on the batch itself (LayerNorm, GroupNorm, BatchNorm in training mode): :func:`centering_tolerance`;
#: one written by hand (``x - x.mean()`` scaled by a reciprocal square root of a mean square of
#: the difference, of ``x.var()``/``x.std()`` or of ``E[x^2] - mean^2``) is found by :class:`CentringTracer`.
#: ``var``/``std`` alone normalise nothing (a model returning ``x.var()`` keeps the summation bound:
#: session 18's attack, file 2). RMSNorm (no centring) and
#: ``_native_batch_norm_legit_no_training`` (running statistics) are not; ``native_batch_norm``
#: also runs in eval mode on some torch versions (kb_l1_10_batchnorm2d on torch 2.13), where the
#: raised atol is looser than its running statistics need.
CENTERING_OPS = {"native_layer_norm", "native_group_norm", "native_batch_norm", "_native_batch_norm_legit"}
#: The eps assumed when a centring normalisation shows none (no ``eps`` argument traced, no module
#: with an ``eps``): PyTorch's default.
DEFAULT_EPS = 1e-5
#: The position of the ``eps`` argument of the aten normalisation operators (native_functions.yaml).
EPS_ARG = {"native_layer_norm": 4, "native_group_norm": 7, "native_batch_norm": 7, "_native_batch_norm_legit": 7,
           "_native_batch_norm_legit_no_training": 6}


def centering_tolerance(src, dims, base_values, base: Measured, shape: Dict[str, int], tolerance,
                        rep: Report) -> Dict[str, Dict]:
    """``tolerance`` with each ``atol`` raised to the error honest float32 makes on an
    ill-conditioned row of a centring normalisation (an operator of :data:`CENTERING_OPS` in the
    trace ``base``, or a hand-written one in ``base.centring``: :class:`CentringTracer`), when that
    is larger: ``x - mean`` keeps the input's absolute rounding (up to ``u |x|`` for x and as much
    for the mean, ``u = 2^-24``) and ``(var + eps)^-1/2`` multiplies it by up to ``eps^-1/2`` when a
    row's values are nearly equal, so ``atol = 2 u M eps^-1/2`` with ``M`` 1.25 times the largest
    ``|x|`` of the floating inputs drawn on the CPU at ``shape`` (the larger GPU draws reach a
    little further) and ``eps`` the smallest eps the traced forward used (a normalisation
    operator's argument or the number added under a hand-written root; never a module's attribute; else
    :data:`DEFAULT_EPS`, said in the decision). The same derivation as specs/layernorm/spec.yaml's
    atol. Rule 12's derived shapes make the normalised length small (2 elements: a row of two nearly
    equal values is common among 10^5 rows): on the H200 (session 17) kb_l1_4_layernorm's eager v0
    erred past the default float32 atol 1e-5 at 357 x 317 x 2 and no trajectory could start. The
    bound is rounded up to two significant digits and given to every dtype's entry (bfloat16 inputs
    are centred in float32); :func:`cpu_checks` runs after it."""
    ops = sorted(set(base.ops) & CENTERING_OPS) + base.centring
    if not ops:
        return tolerance
    vals = values_at(dims, base_values, shape)
    floats = [x for x in _cpu_inputs(src, vals, torch.float32) if isinstance(x, torch.Tensor)
              and x.is_floating_point() and x.numel()]
    if not floats:
        return tolerance
    big = max(float(x.abs().max()) for x in floats)
    # only what the traced forward used: the eps argument of each normalisation operator called
    # and the number added under a hand-written root; never a module's eps attribute (an unused
    # GroupNorm(eps=1e-30) or a CosineSimilarity's eps gave atol 6.4e8: session 18's attack, files 3, 4)
    epss = [e for e in base.eps if e > 0]
    eps = min(epss) if epss else DEFAULT_EPS
    bound = 2.0 * _U32 * 1.25 * big / math.sqrt(eps)
    origin = ("the smallest eps of the traced normalisations" if epss
              else "assumed: no eps traced")
    label = "x".join(str(v) for v in shape.values())
    where = f"eps {eps:g} ({origin}), M = 1.25 x max|x| = 1.25 x {big:.3g} (the inputs at {label} on the CPU)"
    atol, out = raise_atol(tolerance, bound, (
        f"a centring normalisation ({', '.join(ops)}) of a row of nearly equal values: x - mean keeps the inputs' "
        f"absolute rounding (2^-24 |x| for x and the mean) and (var + eps)^-1/2 multiplies it by up to eps^-1/2, so "
        f"honest float32 errs by up to 2 * 2^-24 * M * eps^-1/2 = {bound:.3g} ({where}); rounded up"))
    rep.decide("tolerance atol (centring normalisation)", atol, f"operators {', '.join(ops)}; {where}: "
               f"2 * 2^-24 * M * eps^-1/2 = {bound:.3g}")
    return out


def integer_input_check(src, dims, base_values, shape, rep: Report) -> None:
    """Flags integer inputs that the reference cannot take changed the way the harness's
    partial-staleness check changes them (VERIFICATION.md rule 10: the harness's own
    :func:`~kernelsynth.verify.inputs.plan_changes` and :func:`~kernelsynth.verify.inputs.plan_permutation`,
    which keep integers inside the range the tensor holds): tried on the CPU at ``shape``."""
    vals = values_at(dims, base_values, shape)
    inputs = _cpu_inputs(src, vals, torch.float32)
    ints = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and not x.is_floating_point()
            and x.dtype != torch.bool and x.numel()]
    if not ints:
        return
    from ..verify.inputs import apply_changes, plan_changes, plan_permutation

    changed = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    gen = torch.Generator().manual_seed(1)
    apply_changes(changed, plan_changes(changed, gen, False) + plan_changes(changed, gen, True))
    apply_changes(changed, plan_permutation(changed, gen))
    ns = _namespace(src, vals)
    torch.manual_seed(42)
    model = _model(ns, _init_inputs(ns)).eval()
    try:
        with torch.no_grad():
            _forward(model, changed)
    except ImportFailure as e:  # the evidence
        msg = str(e)
        rep.decide("integer inputs", f"inputs {ints} keep their dtype", f"the reference rejects them changed as the "
                   f"partial-staleness check changes them ({msg})")
        rep.flag("staleness-check-breaks", f"integer inputs {ints} (class targets, indices): the harness's "
                 f"partial-staleness check (VERIFICATION.md rule 10) changes them, which the reference rejects ({msg}); "
                 "every candidate then fails on the CPU and GPU alike")
    else:
        rep.decide("integer inputs", f"inputs {ints} keep their dtype", "the reference accepts them changed as the "
                   "partial-staleness check changes them")


def training_check(src, dims, base_values, shape, rep: Report) -> bool:
    """True (and flagged) when train and eval mode give different outputs at ``shape``."""
    vals = values_at(dims, base_values, shape)
    ns = _namespace(src, vals)
    model = _model(ns, _init_inputs(ns))
    kinds = sorted({type(m).__name__ for m in model.modules()
                    if isinstance(m, (torch.nn.modules.batchnorm._NormBase, torch.nn.modules.dropout._DropoutNd))})
    # one draw of the inputs for both modes: two draws differ wherever get_inputs is not seeded by the
    # harness's generator, which read as "train and eval differ" (session 11 review: np.random inputs)
    inputs = _cpu_inputs(src, vals, torch.float32)
    ev = _cpu_outputs(src, vals, torch.float32, inputs=[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
    tr = _cpu_outputs(src, vals, torch.float32, train=True, inputs=inputs)
    differ = any(not torch.equal(a, b) for a, b in zip(ev, tr))
    if differ or kinds:
        rep.decide("mode", "eval", f"train and eval mode outputs {'differ' if differ else 'agree'} at "
                   f"{'x'.join(map(str, shape.values()))} (modules: {', '.join(kinds) or 'none named'}); the spec format "
                   "has no train/eval field and the harness runs the reference and candidates in eval mode "
                   "(BatchNorm with its running statistics, Dropout off), while KernelBench runs nn.Module's default, "
                   "train mode")
        rep.flag("training-mode", f"{', '.join(kinds) or 'the model'}: imported in eval mode (the harness's mode); "
                                  "KernelBench times train mode (batch statistics); needs a person to accept eval")
    return differ


# --------------------------------------------------------------------------- one problem
def analyse(payload: Dict[str, Any]) -> Dict[str, Any]:
    """The whole analysis of one problem, in the process :func:`run_forked` forks for it (the
    problem's code runs here). ``payload``: ``text`` (the file's source), ``origin`` (its path as
    the user named it: relative to the folder passed, or the file name), ``task``, optional
    ``timing_budget_bytes`` and ``keep_failing_reference``. Returns plain data: ``status``
    (``imported``, ``left-out`` -- :class:`LeftOut` -- or ``failed``), ``reason`` (one line, or None),
    ``decisions``, ``flags`` and ``files`` (the task folder's files by :data:`TASK_FILES` name,
    None when it failed); the parent writes them."""
    rep = Report(source=str(payload.get("origin")), task=payload.get("task"))
    files = None
    try:
        files = _import(str(payload["text"]), str(payload["origin"]), rep,
                        int(payload.get("timing_budget_bytes") or TIMING_BUDGET_BYTES),
                        bool(payload.get("keep_failing_reference")))
        rep.status = "imported"
    except LeftOut as e:
        rep.status, rep.reason = "left-out", str(e)
    except (ImportFailure, ProblemExit) as e:
        rep.reason = str(e)
    except SyntaxError as e:
        rep.reason = f"does not parse: {e.msg} (line {e.lineno})"
    except Exception as e:  # noqa: BLE001 - one problem's failure never stops the others
        rep.reason = f"{_one_line(e, 200)} (in {_STAGE['now']})"
    return {"status": rep.status, "reason": rep.reason, "decisions": rep.decisions, "flags": rep.flags,
            "files": files}


def _import(text: str, origin: str, rep: Report, timing_budget: int,
            keep_failing_reference: bool = False) -> Dict[str, str]:
    src = ProblemSource(text, origin)
    tree_names = {getattr(n, "name", None) for n in src.tree.body}
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if n not in tree_names]
    if missing:
        raise ImportFailure(f"defines no {', '.join(missing)} (KernelBench's format: class Model, get_inputs(), "
                            "get_init_inputs())")
    unseeded = src.unseeded_draws()
    if unseeded:
        raise ImportFailure(f"get_inputs draws with Tensor methods the importer cannot seed ({'; '.join(unseeded)})")
    probe = Probe(src)
    try:
        base = probe.run({})
    except ImportFailure as e:
        where = str(e)
        if where.startswith(("Model.forward", "Model(")) or " raised " not in where:
            raise ImportFailure(f"the model does not run at its own sizes on the meta device ({e})") from None
        raise ImportFailure(f"{e} (at the problem's own sizes, on the meta device)") from None
    dims = find_dims(src, probe, base, rep)
    if not dims:
        raise ImportFailure("no size constant found (no int constant changes an input shape when perturbed)")
    find_constraints(probe, dims, rep)
    joint_check(probe, dims, origin, rep)
    find_atoms(probe, dims)
    base_values: Dict[str, int] = {}
    work = fit_work(probe, dims, base_values, rep)
    nf = sorted(set(base.no_formula) - PLUMBING_OPS)
    if nf:
        rep.flag("no-flop-formula", f"operators without a FLOP formula in torch.utils.flop_counter (counted as 0 "
                                    f"FLOPs): {', '.join(nf)}")
    # category
    red_ops = sorted(set(base.ops) & REDUCTION_OPS)
    reduced = [d.name for d in dims if d.reduced]
    for d in dims:
        if d.reduced_how == "keepdim":
            rep.decide(f"dim {d.name} reduced", "yes (keepdim)", f"a reduction operator's input grows with {d.name} "
                       "while its output keeps that axis at size 1 (keepdim=True); kept long in the verify shapes")
    if base.flops > 0:
        per = base.flops / max(1, sum(math.prod(s) for s, _ in base.outputs))
        category, why = "matmul", f"FlopCounterMode counts {base.flops:.4g} FLOPs at the original sizes ({per:.4g} per output element)"
    elif red_ops or reduced:
        away = [d.name for d in dims if d.reduced_how == "away"]
        kept = [d.name for d in dims if d.reduced_how == "keepdim"]
        parts = ([f"reduction operators {', '.join(red_ops)}"] if red_ops else []) + (
            [f"dims {', '.join(away)} reduced away (in no output shape)"] if away else []) + (
            [f"dims {', '.join(kept)} reduced with keepdim (an output axis stays 1)"] if kept else [])
        category, why = "reduction", "0 counted FLOPs; " + "; ".join(parts)
    else:
        category, why = "elementwise", "0 counted FLOPs, no reduction operator, every dim in the output"
    rep.decide("category", category, why)
    tolerance = {dt: default_tolerance(category, dt) for dt in ("float32", "bfloat16")}
    for v in tolerance.values():
        v["source"] = f"kernelsynth/tolerance.py default for class {category}: {v['source']}"
    timing = timing_shape(probe, dims, base_values, base, timing_budget, rep)
    verify = make_shapes(probe, dims, base_values, [(37, 1031), (9, 517), (1, 4099)], VERIFY_BUDGET)
    interp = make_shapes(probe, dims, base_values, [(5, 67), (3, 33)], INTERPRET_BUDGET)
    if not verify or not interp:
        raise ImportFailure("no verify shape within the work budget runs")
    if category == "reduction":
        tolerance = summation_tolerance(src, probe, dims, base_values, tolerance, rep, timing)
    tolerance = centering_tolerance(src, dims, base_values, base, verify[0], tolerance, rep)
    rep.decide("tolerance", {k: (v["atol"], v["rtol"]) for k, v in tolerance.items()},
               "; ".join(f"{k}: {v['source']}" for k, v in tolerance.items()))
    rep.decide("shapes.verify", verify, f"scaled down, odd, reduced dims kept long ({', '.join(reduced) or 'none'}), "
               f"within {VERIFY_BUDGET['flops']:.0e} FLOPs and {VERIFY_BUDGET['elements']} elements per tensor")
    rep.decide("interpret.shapes", interp, f"for hw=cpu: within {INTERPRET_BUDGET['flops']:.0e} FLOPs and "
               f"{INTERPRET_BUDGET['elements']} elements")
    contract_check(src, dims, base_values, interp[0], rep)
    dtypes, ref_ok = cpu_checks(src, dims, base_values, verify, tolerance, rep, ["float32", "bfloat16"])
    training = training_check(src, dims, base_values, interp[0], rep)
    integer_input_check(src, dims, base_values, interp[0], rep)
    reproducible_inputs_check(src, dims, base_values, interp[0], rep)
    files = render(origin, rep, src, dims, category, tolerance, dtypes, work, timing, verify, interp, training)
    harness_shapes_check(files, probe, dims, base_values, rep)
    if not ref_ok and not keep_failing_reference:
        raise LeftOut(f"{Path(origin).name}: its eager float32 reference fails its own float32 tolerance against float64 "
                      "(flag reference-fails-tolerance), so v0 and every honest candidate would be rejected: spec not "
                      "written; pass --keep-failing-reference to write it anyway, then set its tolerance by hand")
    if not ref_ok:
        rep.decide("reference fails its tolerance", "spec written (--keep-failing-reference)",
                   "eager float32 misses the float32 tolerance (flag reference-fails-tolerance): v0 would be rejected")
    rep.decide("v0", "eager reference (backend torch, allow_reference_ops)", "the problem's Model as written")
    return files


def harness_shapes_check(files: Dict[str, str], probe: Probe, dims: List[Dim], base_values, rep: Report) -> None:
    """Every shape the harness will verify the written spec on -- its listed shapes and rule 12's
    derived ones, as kernelsynth.stages.exploration plans them for ``hw=cpu`` and for a GPU target
    (the H200's plan) -- must run the model on the meta device; else ImportFailure, one line naming
    the shape. Per-dim constraints (min, multiple_of) and :func:`joint_check`'s corners cannot
    express every rule (``width <= height``: session 18's attack, file 8, imported and the engine
    then stopped on a derived 1x256x279 shape); such a problem is refused here instead."""
    import tempfile

    from ..hardware import Hardware
    from ..stages.exploration import Exploration

    shapes: List[Dict[str, int]] = []
    with tempfile.TemporaryDirectory(prefix="kernelsynth-import-plan-") as tmp:
        folder = Path(tmp) / "task"
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        spec = load_spec(folder / "spec.yaml")
        for hw in (Hardware(target="cpu", device_name="cpu", interpret=True),
                   Hardware(target="h200", device_name="gpu", interpret=False, arch="sm_90")):
            for job in Exploration().plan(spec, hw, cache_dir=Path(tmp) / "cache"):
                shapes += list(job.request.verify_shapes) + list(job.request.derived_shapes)
    unique = {tuple(sorted(s.items())): s for s in shapes}
    for shape in unique.values():
        try:
            probe.run(values_at(dims, base_values, shape))
        except ImportFailure as e:
            label = " ".join(f"{k}={v}" for k, v in shape.items())
            raise ImportFailure(f"the harness would verify on {label}, a shape its rules derive from the written "
                                "constraints, where the model does not run: a rule between dims that min and "
                                "multiple_of cannot say; write the spec's shapes and constraints by hand "
                                f"({clip(str(e), 160)})") from None
    rep.decide("harness shapes", f"{len(unique)} run", "every listed and derived shape the harness plans for hw=cpu and "
               "an H200 runs the model on the meta device")


def _gb(n: int) -> str:
    return f"{n} bytes ({n / 1e9:.2f} GB)"


def timing_shape(probe: Probe, dims: List[Dim], base_values, base: Measured, budget: int,
                 rep: Report) -> Dict[str, int]:
    """The timing shape: the problem's own sizes, flagged (``large-timing-shape``, with bytes)
    when its inputs, outputs and parameters take more than :data:`LARGE_TIMING_BYTES`; when they
    take more than ``budget`` bytes (``--timing-budget-gib``), scaled down -- the largest dim
    that is not reduced halved (reduced dims only when no other is left) until they fit -- and
    said so. Bytes are those of the tensors' own dtypes as ``get_inputs()`` makes them (float32
    for most problems: the largest of the spec's dtypes); the harness holds several copies of
    them at once (a float64 reference, the candidate's outputs)."""
    timing = {d.name: d.value for d in dims}
    label = lambda s: "x".join(str(v) for v in s.values())  # noqa: E731
    total, ins = base.tensor_bytes(), base.tensor_bytes(("inputs",))
    if total <= LARGE_TIMING_BYTES:
        rep.decide("shapes.timing", timing, f"the problem's own sizes (inputs, outputs and parameters: {_gb(total)})")
        return timing
    if total <= budget:
        rep.decide("shapes.timing", timing, f"the problem's own sizes: inputs {_gb(ins)}, with outputs and parameters "
                   f"{_gb(total)}, within the budget of {_gb(budget)}")
        rep.flag("large-timing-shape", f"the timing shape {label(timing)} (the original sizes) makes inputs of "
                 f"{_gb(ins)} and inputs + outputs + parameters of {_gb(total)}; kept (within the budget of "
                 f"{_gb(budget)}, --timing-budget-gib), but the harness holds several copies at that shape (a float64 "
                 "reference among them): the GPU needs several times that memory")
        return timing
    shape = dict(timing)
    got = total
    for _ in range(256):
        r = _cost(probe, dims, base_values, shape)
        got = r.tensor_bytes() if r is not None else None
        if got is not None and got <= budget:
            break
        order = sorted((d for d in dims if d.snap(shape[d.name] // 2, False) < shape[d.name]),
                       key=lambda d: (d.reduced, -shape[d.name]))
        if not order:
            break
        d = order[0]
        shape[d.name] = d.snap(shape[d.name] // 2, False)
    if got is None or got > budget:
        raise ImportFailure(f"the timing shape {label(timing)} makes tensors of {_gb(total)}, over the budget of "
                            f"{_gb(budget)} (--timing-budget-gib), and no smaller shape that runs fits it")
    rep.decide("shapes.timing", shape, f"the original sizes {label(timing)} make inputs of {_gb(ins)} and inputs + "
               f"outputs + parameters of {_gb(total)}, over the budget of {_gb(budget)} (--timing-budget-gib): the "
               f"largest dims not reduced halved until they fit ({_gb(got)})")
    rep.flag("large-timing-shape", f"the original sizes {label(timing)} make inputs of {_gb(ins)} (with outputs and "
             f"parameters {_gb(total)}), over the budget of {_gb(budget)}: the timing shape is scaled down to "
             f"{label(shape)} ({_gb(got)}), so records do not time the problem's own sizes; raise "
             "--timing-budget-gib to keep them")
    return shape


def contract_check(src, dims, base_values, shape, rep: Report) -> None:
    """Raises ImportFailure (the problem's one-line reason) when its eager reference breaks what the
    harness requires of every version, v0 included (references/VERIFICATION.md), so no spec is
    written whose own v0 the harness would reject (session 17's importer attack): ``get_inputs()``
    gives tensors only (a Python number crashed the comparison); ``forward`` returns exactly one
    tensor (rule 1: a tuple is rejected), leaves its inputs unchanged (rule 7), returns memory of
    its own (rule 7: a view such as ``x.t()`` shares the input's storage) and is deterministic (two
    calls on the same inputs under different random states agree bit for bit: dropout with
    ``training=True`` draws a new mask per call, and no fixed reference exists). Run on the CPU at
    ``shape``, in float32, eval mode."""
    vals = values_at(dims, base_values, shape)
    inputs = _cpu_inputs(src, vals, torch.float32)
    odd = [f"{type(x).__name__} at position {i}" for i, x in enumerate(inputs) if not isinstance(x, torch.Tensor)]
    if odd:
        raise ImportFailure(f"get_inputs() returns a non-tensor ({', '.join(odd[:3])}): the harness draws and compares "
                            "tensor inputs only; make it a tensor or a module constant")
    kept = [x.clone() for x in inputs]
    ns = _namespace(src, vals)
    torch.manual_seed(42)
    model = _model(ns, _init_inputs(ns))
    model.eval()
    outs = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        with torch.no_grad():
            outs.append(_forward(model, inputs))
    out = outs[0]
    if type(out) is not torch.Tensor:
        n = f" of {len(out)}" if isinstance(out, (tuple, list)) else ""
        raise ImportFailure(f"Model.forward returns a {type(out).__name__}{n}, not one tensor: the harness compares "
                            "exactly one output tensor per call")
    changed = [i for i, (x, k) in enumerate(zip(inputs, kept)) if not torch.equal(x, k)]
    if changed:
        raise ImportFailure(f"Model.forward changes its input {changed[0]} in place: the harness rejects any version "
                            "that modifies its inputs (v0 included)")
    alias = [i for i, x in enumerate(inputs) if x.numel() and out.numel()
             and out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()]
    if alias:
        raise ImportFailure(f"Model.forward returns a view of input {alias[0]} (shares its storage): the harness "
                            "requires an output in memory of its own (v0 included); return a copy, e.g. .contiguous()")
    a, b = outs
    if type(b) is torch.Tensor and not (a.shape == b.shape and bool(((a == b) | (a.isnan() & b.isnan())).all())
                                        if a.is_floating_point() else torch.equal(a, b)):
        raise ImportFailure("Model.forward is random: two calls on the same inputs under different random states "
                            "differ (dropout with training=True, torch.rand in forward): no fixed reference to verify "
                            "against")


def reproducible_inputs_check(src, dims, base_values, shape, rep: Report) -> None:
    """Flags (``unseeded-inputs``) a ``get_inputs()`` whose two draws from the same generator
    state differ: a random source the importer does not seed (torch's and numpy's are), which
    the harness's independent check, drawing the inputs again in another process, would meet."""
    vals = values_at(dims, base_values, shape)
    a, b = _cpu_inputs(src, vals, torch.float32), _cpu_inputs(src, vals, torch.float32)
    same = all(torch.equal(x, y) if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) else x == y
               for x, y in zip(a, b)) and len(a) == len(b)
    if not same:
        rep.flag("unseeded-inputs", "get_inputs() draws different inputs from the same generator state (a random "
                 "source other than torch's and numpy's, e.g. Python's random module): the harness regenerates "
                 "inputs from a seed, so its checks would disagree; needs a person")


def _work_text(work) -> Tuple[str, str]:
    fe, ob = work.get("float_elements"), work.get("other_bytes")
    if fe is None or ob is None:
        bytes_ = "0"
    else:
        bytes_ = "itemsize * 0" if fe == "0" else f"({fe}) * itemsize"
        if ob != "0":
            bytes_ += f" + {ob}"
    return work.get("flops") or "0", bytes_


#: The files one problem's analysis hands back, relative to its task folder (nothing else is written).
TASK_FILES = ("reference.py", "kernels/v0_eager.py", "spec.yaml")


def _heads(origin: str, task: str) -> Tuple[str, str]:
    """The lines that come before the original source in reference.py and in kernels/v0_eager.py."""
    return ((f"# Imported by `kernelsynth-tools import-kernelbench` from {origin} (a problem in KernelBench's "
             f"format).\n# {LICENSE_NOTE}\n# Below: the original problem file, unchanged, then kernelsynth's adapter.\n"),
            f"# v0 of {task}: the original problem's Model, run by eager PyTorch (source unchanged below).\n")


def render(origin, rep, src, dims, category, tolerance, dtypes, work, timing, verify, interp, training) -> Dict[str, str]:
    """The task folder's files (:data:`TASK_FILES`) as text. ``origin``: the problem's path as
    the user named it (never the importer's absolute path: the reference's header goes into
    every record's question)."""
    name = Path(origin).name
    text = src.source if src.source.endswith("\n") else src.source + "\n"
    header, v0_head = _heads(origin, rep.task)
    first = header.count("\n") + 1
    last = first + text.count("\n") - 1
    ks_dims = {d.name: d.constants for d in dims}
    files = {"reference.py": header + text + adapter(ks_dims, (first, last)),
             "kernels/v0_eager.py": v0_head + text + "\n\nModelNew = Model\n"}
    flops, bytes_ = _work_text(work)
    names = [d.name for d in dims]
    doc_model = next((n for n in src.tree.body if getattr(n, "name", None) == "Model"), None)
    docline = (ast.get_docstring(doc_model) or "").strip().splitlines()
    summary = f"A problem in KernelBench's format ({name})" + (f": {docline[0]}" if docline else "")
    spec: Dict[str, Any] = {
        "category": category, "summary": summary, "reference": "reference.py", "dims": names,
    }
    cons = {d.name: {k: v for k, v in (("min", d.minimum), ("multiple_of", d.multiple_of))
                     if (k == "min" and v > d.multiple_of) or (k == "multiple_of" and v > 1)} for d in dims}
    cons = {k: v for k, v in cons.items() if v}
    if cons:
        spec["constraints"] = cons
    spec["shapes"] = {"verify": verify, "timing": timing}
    spec["dtypes"] = dtypes
    spec["comparison"] = "allclose"
    spec["tolerance"] = {dt: {"atol": tolerance[dt]["atol"], "rtol": tolerance[dt]["rtol"],
                              "source": tolerance[dt]["source"]} for dt in dtypes}
    spec["work"] = {"flops": flops, "bytes": bytes_}
    spec["baselines"] = ["eager", "compile"]
    mode = " in eval mode (BatchNorm uses its running statistics, Dropout is off)" if training else ""
    spec["question"] = (f"Write a GPU kernel for the PyTorch module below (a problem in KernelBench's format, {name})"
                        f"{mode}, for inputs of dtype {{dtype}}. It must be correct for any sizes of the dims "
                        f"{', '.join(names)} and faster than eager PyTorch. Timing shape ({', '.join(names)}): "
                        "{timing_shape}.")
    spec["why"] = ("An imported problem in KernelBench's format: the reference is the problem's own Model, and every "
                   "number in the record was measured against it.")
    spec["candidates"] = [{
        "version": "v0", "name": "eager", "backend": "torch", "file": "kernels/v0_eager.py",
        "technique": "Eager PyTorch: the problem's Model as written",
        "rationale": "The reference run by PyTorch eagerly: one kernel or library call per operator, every "
                     "intermediate written to and read back from memory.",
        "allow_reference_ops": True}]
    spec["interpret"] = {"dtypes": ["float32"], "shapes": interp}
    lines = [f"# Imported from {origin} by `kernelsynth-tools import-kernelbench`; every choice below and its",
             "# evidence is in the import report (import_report.json beside this folder).",
             f"# {LICENSE_NOTE}"]
    if training:
        spec["mode"] = "eval"
        lines.append("# mode: eval (the only mode the harness runs). KernelBench itself runs the Model in train")
        lines.append("# mode: see the report's training-mode flag.")
    files["spec.yaml"] = "\n".join(lines) + "\n" + yaml.safe_dump(spec, sort_keys=False, width=110)
    return files


# --------------------------------------------------------------------------- isolation
#: Seconds one problem's analysis may take (``--timeout-s``): the slowest problem file written for the
#: tests (tests/fixtures/kernelbench) takes about 2 s on a shared 2-core CPU (``seconds`` in the
#: report); the perturbations run its forward a few hundred times on the meta device and a few
#: dozen times on the CPU at small shapes, so a large model's file may take far longer.
DEFAULT_TIMEOUT_S = 120.0
#: The most bytes one problem's process may send back (its files and report are a few hundred KB).
MAX_RESULT_BYTES = 64 << 20


def run_forked(payload: Dict[str, Any]) -> Dict[str, Any]:
    """:func:`analyse` of one problem in a process forked from this one (a sandboxed worker,
    :func:`kernelsynth.jobs.import_kernelbench`), given ``payload["timeout_s"]`` seconds: each
    problem starts from the worker's clean state (what one problem's code changes in torch or
    the interpreter dies with its process), and whatever it does -- raise, ``sys.exit``,
    ``os._exit``, crash, loop forever -- this process returns the same plain dict, with a one-line
    ``reason`` that names where the problem's code was (``get_inputs()``, ``Model.forward``, ...:
    the child reports each step on a pipe before it runs it)."""
    limit = float(payload.get("timeout_s") or DEFAULT_TIMEOUT_S)
    # imported here, once per worker, before the fork: the analysis's dispatch modes (FlopCounterMode's
    # __torch_dispatch__ is wrapped in torch._disable_dynamo) would import it in every child, inside its
    # time limit (2.5 s of CPU; kb_l0_7 went past 5 s under load once workers stopped importing it up front)
    importlib.import_module("torch._dynamo")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            os.close(r)
            _STAGE["fd"] = w
            data = memoryview(b"R " + json.dumps(analyse(payload)).encode() + b"\n")
            while data:
                data = data[os.write(w, data):]
        except BaseException:  # noqa: BLE001 - the parent reports a missing result
            code = 70
        os._exit(code)
    os.close(w)
    deadline = time.monotonic() + limit
    stage, tail, result, status, eof, total, over = "the importer's analysis", b"", None, None, False, 0, False

    def take(chunk: bytes) -> None:
        nonlocal tail, stage, result, total, over
        total += len(chunk)
        if total > MAX_RESULT_BYTES:
            over = True
            return
        tail += chunk
        if b"\n" not in chunk:
            return
        *lines, tail = tail.split(b"\n")
        for line in lines:
            if line.startswith(b"S "):
                stage = line[2:202].decode(errors="replace")
            elif line.startswith(b"R "):
                result = line[2:]

    try:
        while not over:
            if status is None:
                done, st = os.waitpid(pid, os.WNOHANG)
                if done:
                    status = st
            if eof and status is not None:
                break
            left = deadline - time.monotonic()
            if left <= 0:
                break
            if eof:
                time.sleep(min(left, 0.05))
                continue
            ready, _, _ = select.select([r], [], [], 0.0 if status is not None else min(left, 0.2))
            if not ready:
                if status is not None:  # exited; a process it started may hold the pipe open
                    break
                continue
            chunk = os.read(r, 1 << 20)
            if chunk:
                take(chunk)
            else:
                eof = True
    finally:
        os.close(r)
        if status is None:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            _, status = os.waitpid(pid, 0)
            timed_out = not over
        else:
            timed_out = False
    fail = lambda reason: {"status": "failed", "reason": reason, "decisions": [], "flags": [], "files": None}  # noqa: E731
    if over:
        return fail(f"the problem's process sent more than {MAX_RESULT_BYTES} bytes (in {stage}): stopped")
    if timed_out:
        return fail(f"no result within {limit:.0f} s (--timeout-s), in {stage}: stopped")
    if result is not None:
        try:
            value = json.loads(result)
        except ValueError:
            return fail(f"the problem's process sent a result that does not parse (in {stage})")
        if isinstance(value, dict):
            return value
        return fail(f"the problem's process sent a {type(value).__name__}, not a result (in {stage})")
    if os.WIFSIGNALED(status):
        n = os.WTERMSIG(status)
        try:
            name = signal.Signals(n).name
        except ValueError:
            name = "?"
        return fail(f"the problem's process was killed by signal {n} ({name}) in {stage}")
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
    return fail(f"the problem's process exited with code {code} in {stage} before its result (os._exit or a crash)")


# --------------------------------------------------------------------------- many problems
def problem_files(paths: Sequence[Path]) -> List[Path]:
    """The ``.py`` files of ``paths`` (files as given, folders searched recursively, sorted)."""
    return [f for f, _ in _problem_origins(paths)]


def _problem_origins(paths: Sequence[Path]) -> List[Tuple[Path, str]]:
    """``(file, origin)`` for every problem file of ``paths``; ``origin`` is the file's path as
    the user named it: ``<folder name>/<path inside the folder>`` for a folder passed, the file
    name for a file passed (no absolute path of the importer's machine)."""
    out: List[Tuple[Path, str]] = []
    for p in map(Path, paths):
        if p.is_dir():
            top = p.resolve().name or "problems"
            out += [(f, f"{top}/{f.relative_to(p).as_posix()}")
                    for f in sorted(f for f in p.rglob("*.py") if f.name != "__init__.py" and "__pycache__" not in f.parts)]
        else:
            out.append((p, p.name))
    return out


def _rows(value: Any, keys: Tuple[str, ...]) -> List[Dict[str, str]]:
    """A worker's list of decisions or flags as rows of ``keys`` (str values, each at most 4000
    characters); anything else dropped."""
    if not isinstance(value, list):
        return []
    return [{k: clip(str(v.get(k, "")), 4000) for k in keys} for v in value[:2000] if isinstance(v, dict)]


def _one(reason: Any) -> str:
    text = str(reason).strip().splitlines()
    return clip(text[0], 400) if text else "no reason given"


def _take(rep: Report, res, out: Path, timeout_s: float, payload: Dict[str, Any]) -> None:
    """Fill ``rep`` from one worker result and write the task folder (this process only), after
    checking what this process can: the original source comes first in both Python files, and the
    spec names only them (:func:`_foreign_paths`)."""
    from ..contract import Fault

    rep.seconds = round(float(res.seconds), 2)
    if not res.ok:
        first = _one(res.error)
        rep.reason = (f"no result within {timeout_s:.0f} s: the import worker was stopped" if res.fault is Fault.TIMEOUT
                      else f"the import worker ended {res.fault.value}: {first}")
        return
    v = res.value
    if not isinstance(v, dict):
        rep.reason = f"the import worker sent a {type(v).__name__}, not a result"
        return
    rep.decisions = _rows(v.get("decisions"), ("what", "choice", "evidence"))
    rep.flags = _rows(v.get("flags"), ("kind", "message"))
    files = v.get("files")
    if v.get("reason") is not None or files is None:
        rep.reason = _one(v.get("reason"))
        if v.get("status") == "left-out":
            rep.status = "left-out"
        return
    if not (isinstance(files, dict) and set(files) == set(TASK_FILES) and all(isinstance(t, str) for t in files.values())):
        rep.reason = f"the import worker sent files other than {', '.join(TASK_FILES)}"
        return
    text = payload["text"] if payload["text"].endswith("\n") else payload["text"] + "\n"
    header, v0_head = _heads(payload["origin"], rep.task)
    wrong = _foreign_paths(files["spec.yaml"])
    if not wrong and not (files["reference.py"].startswith(header + text)
                          and files["kernels/v0_eager.py"].startswith(v0_head + text)):
        wrong = "has Python files that do not start with the original source"
    if wrong:
        rep.reason = f"the import worker sent a task folder that {wrong}: not written"
        return
    folder = out / rep.task
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "kernels").mkdir(parents=True)
    for name in TASK_FILES:
        (folder / name).write_text(files[name])
    try:
        load_spec(folder / "spec.yaml", task_folder=True)  # what it wrote must load (the reference is not imported)
    except Exception as e:  # noqa: BLE001 - the reason
        shutil.rmtree(folder)
        rep.reason = f"the spec written does not load: {_one(e)}"
        return
    rep.status = "imported"


def _foreign_paths(text: str) -> Optional[str]:
    """Why a spec text from a worker names files other than its own (None when it does not): the
    worker ran the problem's code, which could have sent a spec whose candidate is any file of this
    machine (``/home/user/.ssh/id_rsa``), read into every record of the task's runs. The importer
    writes ``reference: reference.py`` and one candidate, ``kernels/v0_eager.py``."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        return f"has a spec that does not parse ({_one_line(e, 80)})"
    if not isinstance(doc, dict):
        return "has a spec that is not a mapping"
    cands = doc.get("candidates")
    if doc.get("reference") != "reference.py":
        return f"names the reference {str(doc.get('reference'))[:80]!r} in its spec, not reference.py"
    if not (isinstance(cands, list) and len(cands) == 1 and isinstance(cands[0], dict)
            and cands[0].get("file") == "kernels/v0_eager.py"):
        return "names candidate files other than kernels/v0_eager.py in its spec"
    return None


def import_all(paths: Sequence[Path], out: Path, timeout_s: float = DEFAULT_TIMEOUT_S, sandbox: Any = "auto",
               timing_budget_bytes: int = TIMING_BUDGET_BYTES, keep_failing_reference: bool = False) -> List[Report]:
    """Import every problem of ``paths`` into ``out``; writes ``out/import_report.json``.

    Each problem's code runs in a process of its own, forked from a worker started in the
    sandbox of kernelsynth/sandbox.py (``sandbox``: ``auto``, ``on``, ``off`` or a
    :class:`~kernelsynth.sandbox.SandboxSettings`; ``out`` hidden from it) and stopped after
    ``timeout_s`` seconds (:func:`run_forked`); only this process writes ``out``. A problem
    that fails, exits, crashes or hangs gets a one-line reason; the rest still import.
    ``timing_budget_bytes``: see :func:`timing_shape`. ``keep_failing_reference``: write the spec
    of a problem whose eager reference fails its own tolerance (else left out, :class:`LeftOut`)."""
    from ..sandbox import Sandbox
    from ..workers import WorkerPool

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    reports, names, todo = [], {}, []
    for f, origin in _problem_origins(paths):
        if not f.is_file():
            reports.append(Report(source=str(f), reason="no such file"))
            continue
        name = task_name(f)
        if name in names:
            reports.append(Report(source=str(f), task=name, reason=f"same task name as {names[name]}"))
            continue
        names[name] = f
        rep = Report(source=str(f), task=name)
        reports.append(rep)
        try:
            text = f.read_text()
        except (OSError, UnicodeDecodeError) as e:
            rep.reason = f"cannot be read: {_one_line(e)}"
            continue
        todo.append((rep, {"text": text, "origin": origin, "task": name, "timeout_s": float(timeout_s),
                           "timing_budget_bytes": int(timing_budget_bytes),
                           "keep_failing_reference": bool(keep_failing_reference)}))
    # kernelsynth's own folder readable: when it is not readable by other users (a checkout under
    # /root), the sandbox keeps the worker at uid 0 (Sandbox.private_files), as exploration's does
    box = Sandbox(sandbox, hidden=[str(out.resolve())], readable=[str(Path(__file__).resolve().parents[1])])
    if todo:
        # the pool's own limit backs up run_forked's: a worker that stops answering is killed too
        with WorkerPool(1, timeout_s=float(timeout_s) + 60.0, sandbox=box) as pool:
            for idx, res in pool.map("import_kernelbench", [p for _, p in todo]):
                _take(todo[idx][0], res, out, float(timeout_s), todo[idx][1])
    (out / "import_report.json").write_text(json.dumps(
        {"tool": "kernelsynth-tools import-kernelbench", "torch": torch.__version__, "sandbox": box.status,
         "timeout_s": float(timeout_s), "timing_budget_bytes": int(timing_budget_bytes),
         "keep_failing_reference": bool(keep_failing_reference), "problems": [asdict(r) for r in reports]}, indent=1) + "\n")
    return reports


def print_table(reports: List[Report], out: Path) -> None:
    """One row per problem (rich table when rich is installed, plain lines otherwise)."""
    rows = [(Path(r.source).name, r.task or "-", r.status,
             r.reason if r.reason else ", ".join(sorted({f["kind"] for f in r.flags})) or "-") for r in reports]
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        for r in rows:
            print("  ".join(r))
    else:
        t = Table(title=f"import-kernelbench -> {out}")
        for c in ("problem", "task", "status", "flags / reason"):
            t.add_column(c, overflow="fold")
        for r in rows:
            t.add_row(*r)
        Console(width=160).print(t)
    ok = sum(r.status == "imported" for r in reports)
    left = sum(r.status == "left-out" for r in reports)
    print(f"{ok} imported, " + (f"{left} left out, " if left else "") + f"{len(reports) - ok - left} failed; "
          f"decisions and evidence: {out / 'import_report.json'}")
