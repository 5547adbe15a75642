"""Operator task specs: ``specs/<task>/spec.yaml`` plus a PyTorch reference and kernel files.

A spec is the single source of truth for a task's shapes, dtypes, tolerance, work model,
candidate ladder and tunables, and says each fact once: ``include:`` brings in shared YAML
(files named ``_*.yaml``, merged under the spec's own keys), spec-level ``tunables`` and
``launch`` are every candidate's defaults (a candidate's own keys win), shapes may be named
(``{M: 4097, N: 1}``) or positional (``[4097, 1]``, in ``dims`` order), and the aten operators
of the reference are recorded from the reference itself (:func:`merge_reference_ops`; the spec
lists only extra routes in ``reference_ops``). A task's name is its folder's
(kernelsynth/tasks.py finds the folders). :func:`load_spec` validates the whole document and
raises :class:`~kernelsynth.errors.SpecError` naming the file, the field and what was expected.
The format is documented in README.md ("Adding a task") and references/EXPLORATION.md.
"""

from __future__ import annotations

import ast
import copy
import functools
import hashlib
import itertools
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import yaml

from . import backends
from .errors import SpecError, closest
from .shapes import allowed
from .paths import SPECS_DIR  # noqa: F401 - re-exported: the built-in task folders

#: Bytes per element of every dtype a spec may name (torch's names).
DTYPE_ITEMSIZE = {
    "float64": 8, "float32": 4, "float16": 2, "bfloat16": 2,
    "int64": 8, "int32": 4, "int16": 2, "int8": 1, "uint8": 1, "bool": 1,
}
FLOAT_DTYPES = {"float64", "float32", "float16", "bfloat16"}
COMPARISONS = ("exact", "allclose")
BASELINES = ("eager", "compile")


@dataclass(frozen=True)
class CandidateSpec:
    """One rung of the ladder: a kernel file defining ``class ModelNew(torch.nn.Module)``."""

    version: str
    name: str
    file: Path
    backend: str
    technique: str
    rationale: str
    tunables: Dict[str, List[Any]]
    #: backend "cuda" only: kernel name, grid/block/shared_bytes formulas and argument names
    launch: Optional[Dict[str, Any]] = None
    #: the ladder's first rung may be eager PyTorch itself (it calls the reference's operators)
    allow_reference_ops: bool = False
    #: the author's notes: earlier measurements and sources behind the rationale; never embedded
    #: in records, which say only what their own run measured (references/SYNTHESIS.md)
    notes: str = ""

    def configs(self, override: Optional[Dict[str, List[Any]]] = None) -> List[Dict[str, Any]]:
        """Cartesian product of the tunables, in a stable order (empty tunables: one ``{}``).
        ``override`` replaces the values of the tunables it names (the spec's ``interpret``)."""
        tun = dict(self.tunables) | {k: v for k, v in (override or {}).items() if k in self.tunables}
        keys = sorted(tun)
        return [dict(zip(keys, vals)) for vals in itertools.product(*(tun[k] for k in keys))]

    def interpreter_configs(self, interpret: Dict[str, List[Any]], pinned: Iterable[str], limit: int
                            ) -> List[Dict[str, Any]]:
        """The configs run on the Triton interpreter: the spec's ``interpret`` values replace the
        tunables the user did not pin (``task.tunables``; a pin always wins), and at most ``limit``
        configs are kept per combination of pinned values, so every pinned value runs."""
        pinned = set(pinned)
        configs = self.configs({k: v for k, v in interpret.items() if k not in pinned})
        seen: Counter = Counter()
        out = []
        for cfg in configs:
            combo = tuple(sorted((k, repr(v)) for k, v in cfg.items() if k in pinned))
            if seen[combo] < max(1, limit):
                seen[combo] += 1
                out.append(cfg)
        return out


@dataclass(frozen=True)
class TaskSpec:
    """A validated operator task. Shapes are dicts of named dims (``{"M": 37, "N": 1000}``)."""

    name: str
    path: Path
    category: str
    summary: str
    reference: Path
    dims: List[str]
    verify_shapes: List[Dict[str, int]]
    timing_shape: Optional[Dict[str, int]]
    dtypes: List[str]
    comparison: str
    tolerance: Dict[str, Dict[str, float]]
    work: Dict[str, str]
    question: str
    why: str
    candidates: List[CandidateSpec]
    baselines: List[str]
    reference_ops: List[str] = field(default_factory=list)
    interpret_shapes: List[Dict[str, int]] = field(default_factory=list)
    interpret_tunables: Dict[str, List[Any]] = field(default_factory=dict)
    #: dtypes run on the interpreter (None: all of ``dtypes``)
    interpret_dtypes: Optional[List[str]] = None
    #: how raw CUDA kernels bind to the reference's tensors: inputs, params, derived, output
    interface: Dict[str, Any] = field(default_factory=dict)
    #: per dtype, the arithmetic precision policy of reference and candidates (stated in records)
    precision: Dict[str, str] = field(default_factory=dict)
    #: per dtype, the policy name the precision rule holds candidates to (tolerance.POLICY_NAMES)
    precision_policy: Dict[str, str] = field(default_factory=dict)
    sha256: str = field(default="")
    #: per dtype, ``{"atol", "rtol"}`` two calls on one input may differ by (float atomics, a
    #: decoupled look-back scan); a dtype not in it, or None: bitwise.
    determinism: Optional[Dict[str, Dict[str, float]]] = None
    #: Add the harness's fresh ragged shapes and threshold shape (shapes.derived_shapes).
    derived_shapes: bool = True
    #: per dim, ``{"min": int, "multiple_of": int}`` every shape honours (listed ones are checked,
    #: derived ones are generated inside them: kernelsynth.shapes.fit)
    constraints: Dict[str, Dict[str, int]] = field(default_factory=dict)
    #: ``mode:``, the module mode the reference and every candidate run in: ``eval`` (the only one
    #: the harness runs: kernelsynth/jobs.py ``_reference``, verify/precision.py call ``.eval()``;
    #: BatchNorm's batch statistics and Dropout's masks of train mode are not supported)
    mode: str = "eval"
    #: the user's ``task.tunables`` overrides, normalised to lists (they win over ``interpret``)
    pinned: Dict[str, List[Any]] = field(default_factory=dict)
    #: shared YAML files merged in by ``include:`` (part of :attr:`sha256`)
    includes: List[Path] = field(default_factory=list)
    #: input-range probes (VERIFICATION.md rule 24), normalised: ``{"kind": "scale"|"shift"|"mask"|"constant"|"wrap",
    #: "value": float, "params": bool, "atol": float, "rtol": float, "source": str}`` (a ranged scale also
    #: ``"low"``; ``"dtypes"`` when given); none for
    #: ``exact`` tasks and for a spec that declares none
    probes: List[Dict[str, Any]] = field(default_factory=list)
    #: the reduction length of one output, a formula of the dims (rule 23's accumulation slack;
    #: ``"1"`` when the spec leaves it out and its category is elementwise or data movement; None:
    #: the shape's largest dim)
    reduction: Optional[str] = None
    #: ``allclose`` tasks: whether trial 1 of each listed shape plants NaN and +-Inf (rule 8); a spec
    #: opts out with ``nonfinite: {plant: false, source: "why"}`` (its reference does not propagate them)
    nonfinite: bool = True

    def reduction_length(self, shape: Dict[str, int]) -> float:
        """Terms reduced into one output at ``shape``: the ``reduction`` formula, else the largest dim."""
        return float(evaluate(self.reduction, dict(shape))) if self.reduction else float(max(shape.values()))

    def policy(self, dtype: str) -> Optional[str]:
        """The precision policy the precision rule holds ``dtype`` to (VERIFICATION.md rule 23): the
        spec's ``precision_policy`` entry for it (``{float32: tf32}``), else
        :func:`kernelsynth.tolerance.default_policy` of its category; None for ``exact`` comparisons."""
        from .tolerance import default_policy

        if self.comparison != "allclose":
            return None
        return self.precision_policy.get(dtype) or default_policy(self.category, dtype)

    @property
    def root(self) -> Path:
        return self.path.parent

    def work_model(self, shape: Dict[str, int], dtype: str) -> Dict[str, float]:
        """Bytes moved and FLOPs for one call at ``shape`` in ``dtype``.

        Returns ``{"bytes": float, "flops": float}`` from the spec's ``work`` formulas, which see
        the dims and ``itemsize`` (bytes per element of ``dtype``).
        """
        env = dict(shape, itemsize=DTYPE_ITEMSIZE[dtype])
        return {k: float(evaluate(expr, env)) for k, expr in self.work.items()}


# --------------------------------------------------------------------------- formulas
#: The binary operators a formula may use (:func:`evaluate`).
_BINOPS = frozenset({ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Pow, ast.Mod})


#: Functions a formula may call: ``cdiv(a, b)`` (ceiling division, for grids), ``min``, ``max``.
FUNCTIONS = {"cdiv": lambda a, b: -(-a // b), "min": min, "max": max}


def evaluate(expr: str, env: Dict[str, float]) -> float:
    """Evaluate an arithmetic formula: numbers, names from ``env``, + - * / // % ** and parentheses,
    and calls of :data:`FUNCTIONS`.

    Raises ValueError for anything else (other calls, attributes, unknown names).

    The formula is checked and compiled once (:func:`_compiled`) and runs as Python with only
    ``env`` and :data:`FUNCTIONS` in scope (a native kernel's grid and output shape are evaluated
    on every call, inside the census's hooks: about 3 % of conv_relu_maxpool v4's protocol time
    when each call walked the tree, session 30).
    """
    code, names = _compiled(str(expr))
    for name in names:
        if name not in env:
            raise ValueError(f"unknown name '{name}' (known: {', '.join(sorted(env))})")
    return eval(code, _FORMULA_GLOBALS, env)  # noqa: S307 - checked by _compiled: arithmetic only


#: A formula's function calls are compiled as calls of these names (:func:`_compiled`), so a dim
#: named like a function (``min``) is still read from ``env``.
_CALL_PREFIX = "__ks_fn_"
_FORMULA_GLOBALS = {"__builtins__": {}, **{_CALL_PREFIX + k: f for k, f in FUNCTIONS.items()}}


@functools.lru_cache(maxsize=4096)
def _compiled(expr: str):
    """``(code, names)`` of a formula :func:`evaluate` accepts -- numbers, names, + - * / // % **,
    unary minus, calls of :data:`FUNCTIONS` without keywords -- with the names it reads, in the
    order it reads them. Raises ValueError naming the first other construct (or a syntax error)."""
    tree = _parsed(expr)
    names: List[str] = []

    def check(node) -> None:
        if isinstance(node, ast.Expression):
            return check(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return None
        if isinstance(node, ast.Name):
            if node.id not in names:
                names.append(node.id)
            return None
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            check(node.left)
            return check(node.right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return check(node.operand)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
                and not node.keywords):
            for a in node.args:
                check(a)
            return None
        raise ValueError(f"unsupported syntax '{ast.unparse(node)}'")

    check(tree)
    tree = copy.deepcopy(tree)  # _parsed's tree is cached: rename the calls in a copy
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            node.func = ast.copy_location(ast.Name(id=_CALL_PREFIX + node.func.id, ctx=ast.Load()), node.func)
    return compile(tree, "<formula>", "eval"), tuple(names)


@functools.lru_cache(maxsize=4096)
def _parsed(expr: str) -> ast.Expression:
    """``expr`` parsed once (launch grids and work models are evaluated per call). Raises
    ValueError for a syntax error."""
    try:
        return ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise ValueError(f"not a formula: {e.msg}") from None


# --------------------------------------------------------------------------- validation
class _Checker:
    def __init__(self, path: Path):
        self.path = path

    def fail(self, fld, expected, got=None):
        raise SpecError(self.path, fld, expected, got)

    def keys(self, doc, fld, required, optional=()):
        if not isinstance(doc, dict):
            self.fail(fld or "<document>", "a mapping", doc)
        allowed = set(required) | set(optional)
        for k in doc:
            if k not in allowed:
                near = closest(str(k), sorted(allowed))
                hint = f" (did you mean '{near[0]}'?)" if near else ""
                self.fail(_join(fld, k), f"one of the known keys {sorted(allowed)}{hint}", k)
        for k in required:
            if k not in doc:
                self.fail(_join(fld, k), "a value (the field is required)")

    def string(self, doc, fld, key, default=None):
        val = doc.get(key, default)
        if not isinstance(val, str) or (default is None and not val.strip()):
            self.fail(_join(fld, key), "a non-empty string", val)
        return val

    def shape(self, val, fld, dims):
        """A shape, named (``{M: 37, N: 1000}``, every dim once) or positional (``[37, 1000]``)."""
        if isinstance(val, dict) and set(val) == set(dims):
            val = [val[d] for d in dims]
        ok = (isinstance(val, list) and len(val) == len(dims)
              and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in val))
        if not ok:
            self.fail(fld, f"a list of {len(dims)} positive ints ({', '.join(dims)}) or a mapping of "
                      f"each of those dims to one", val)
        return dict(zip(dims, val))


def _join(prefix, key):
    return f"{prefix}.{key}" if prefix else str(key)


def resolve_spec_path(name: Optional[str], spec: Optional[str], search_path: Sequence[str] = ()) -> Path:
    """The spec file for a task: ``spec`` (a YAML path or a folder holding spec.yaml) when given,
    else the task folder ``name`` found in the spec roots (kernelsynth/tasks.py; ``search_path``
    adds roots). Raises SpecError when it does not exist (listing the known tasks)."""
    if not spec:
        from .tasks import find_task

        return find_task(str(name), search_path)
    p = Path(spec).expanduser().resolve()
    if p.is_dir():
        p = p / "spec.yaml"
    if not p.is_file():
        from .tasks import discover

        raise SpecError(p, "task.spec", f"an existing spec file (known tasks: {sorted(discover(search_path))})",
                        str(spec))
    return p


#: aten operators any kernel wrapper dispatches (allocation, copies, views): never counted as
#: the reference's computation when recorded from it (a spec that means them lists them).
PLUMBING_OPS = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
    "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "clone", "copy_",
    "_to_copy", "contiguous", "detach", "alias", "lift_fresh", "view", "_unsafe_view", "reshape",
    "as_strided", "expand", "permute", "t", "transpose", "unsqueeze", "squeeze", "select", "slice",
    "split", "unbind", "resize_", "set_", "size", "stride", "dim", "is_contiguous",
})


def merge_reference_ops(declared: Iterable[str], recorded: Iterable[str]) -> List[str]:
    """The reference's aten operators: those one call of the reference dispatched (``recorded``,
    by :func:`kernelsynth.jobs.oracle`; :data:`PLUMBING_OPS` left out) plus the ones the spec
    ``declared`` (routes a candidate could take that the reference's call does not show, such
    as ``cudnn_convolution``). Sorted, each once."""
    return sorted(set(declared) | (set(recorded) - PLUMBING_OPS))


def spec_sha256(root: Path, includes: Sequence[Path] = ()) -> str:
    """SHA-256 over every file of the spec folder (relative path + bytes), in sorted order, then
    over each included file outside it (name + bytes), in include order."""
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    for f in includes:
        if root not in f.parents:
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def _deep_merge(base: Dict[str, Any], top: Dict[str, Any]) -> Dict[str, Any]:
    """``top`` over ``base``: mappings merge key by key, anything else (lists too) is replaced."""
    out = dict(base)
    for k, v in top.items():
        out[k] = _deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _yaml_problem(e: "yaml.YAMLError") -> str:
    """A YAML error in one line with where it is: ``"expected ',' or ']', but got ':' (line 4, column 7;
    while parsing a flow sequence from line 3, column 7)"`` (lines and columns from 1)."""
    problem = getattr(e, "problem", None)
    mark = getattr(e, "problem_mark", None)
    if not problem:
        return str(e).splitlines()[0]
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    context, cmark = getattr(e, "context", None), getattr(e, "context_mark", None)
    if context:
        where += (f"; {context}" + (f" from line {cmark.line + 1}, column {cmark.column + 1}" if cmark else ""))
    return f"{problem} ({where.lstrip('; ')})" if where else problem


def read_spec_document(path: Path, _chain: Tuple[Path, ...] = ()) -> Tuple[Dict[str, Any], List[Path]]:
    """The YAML document of ``path`` with its ``include:`` files merged under it, and the
    included files (depth first). ``include`` is a file name or a list of them, each looked up
    beside the including file, then in the spec root above it (shared files of a root), then in
    the built-in specs/ (so a copied task folder keeps working); each must be named ``_*.yaml``
    (meant only for inclusion) and may include others.
    Raises SpecError naming the file for invalid YAML, a missing or misnamed include, or a cycle."""
    c = _Checker(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise SpecError(path, "<document>", "valid YAML", _yaml_problem(e)) from None
    if not isinstance(doc, dict):
        c.fail("<document>", "a mapping", doc)
    inc = doc.pop("include", None)
    if inc is None:
        return doc, []
    names = [inc] if isinstance(inc, str) else inc
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        c.fail("include", "a file name or a list of file names (relative to this file)", inc)
    merged: Dict[str, Any] = {}
    files: List[Path] = []
    for i, n in enumerate(names):
        fld = "include" if isinstance(inc, str) else f"include[{i}]"
        if not Path(n).name.startswith("_") or Path(n).suffix not in (".yaml", ".yml"):
            c.fail(fld, "a file meant only for inclusion, named _<name>.yaml", n)
        where = [path.parent, path.parent.parent, SPECS_DIR]
        f = next(((d / n).resolve() for d in where if (d / n).is_file()), None)
        if f is None:
            c.fail(fld, "an existing YAML file beside this file, in the spec root above it or in the built-in "
                   f"specs/ ({', '.join(str(d) for d in where)})", n)
        if f == path or f in _chain:
            c.fail(fld, "no include cycle", " -> ".join(str(p) for p in (*_chain, path, f)))
        sub, subfiles = read_spec_document(f, (*_chain, path))
        merged = _deep_merge(merged, sub)
        files += [f] + subfiles
    return _deep_merge(merged, doc), files


def load_spec(path: Path | str, tunables: Optional[Dict[str, Any]] = None,
              dtypes: Optional[List[str]] = None, task_folder: bool = False) -> TaskSpec:
    """Load and validate a spec file.

    ``tunables`` overrides the candidates' search space per name (scalar: pin one value; list:
    replace the values; the pins win over the spec's ``interpret`` values too); ``dtypes``
    restricts the spec's dtypes. ``task_folder``: the file is a discovered task's
    ``<task>/spec.yaml``, so its name is the folder's and a different ``name:`` is an error;
    otherwise (a spec given by path) ``name:`` may differ and defaults to the folder's name.
    Raises SpecError on any missing field, wrong type, unknown key, missing file or unknown dtype.
    """
    path = Path(path).resolve()
    c = _Checker(path)
    doc, includes = read_spec_document(path)
    c.keys(doc, "", required=("reference", "dims", "shapes", "dtypes", "work", "candidates"),
           optional=("name", "category", "summary", "comparison", "tolerance", "question", "why", "baselines",
                     "interpret", "reference_ops", "interface", "precision", "precision_policy", "determinism", "tunables",
                     "launch", "constraints", "probes", "reduction", "mode", "nonfinite"))
    root = path.parent
    name = c.string(doc, "", "name") if "name" in doc else root.name
    if task_folder and name != root.name:
        c.fail("name", f"the folder's name '{root.name}' (a task's name is its folder's: {root}; leave "
               "name out)", name)
    reference = root / c.string(doc, "", "reference")
    if not reference.is_file():
        c.fail("reference", "a Python file beside the spec", doc["reference"])

    dims = doc["dims"]
    if not (isinstance(dims, list) and dims and all(isinstance(d, str) and d.isidentifier() for d in dims)):
        c.fail("dims", "a non-empty list of dimension names", dims)

    shapes = doc["shapes"]
    c.keys(shapes, "shapes", required=("verify",), optional=("timing", "derived"))
    if not isinstance(shapes.get("derived", True), bool):
        c.fail("shapes.derived", "true or false (add fresh random and above-threshold shapes)", shapes["derived"])
    if not isinstance(shapes["verify"], list) or not shapes["verify"]:
        c.fail("shapes.verify", "a non-empty list of shapes", shapes["verify"])
    verify = [c.shape(s, f"shapes.verify[{i}]", dims) for i, s in enumerate(shapes["verify"])]
    timing = c.shape(shapes["timing"], "shapes.timing", dims) if shapes.get("timing") is not None else None
    constraints = _constraints(c, doc.get("constraints", {}), dims)
    mode = doc.get("mode", "eval")
    if mode != "eval":
        c.fail("mode", "eval (the harness runs the reference and every candidate in eval mode; train mode, with "
               "BatchNorm's batch statistics and Dropout's random masks, is not supported)", mode)
    for fld, s in [(f"shapes.verify[{i}]", v) for i, v in enumerate(verify)] + [("shapes.timing", timing)]:
        if s is not None and not allowed(s, constraints):
            c.fail(fld, f"a shape within the spec's constraints {constraints}", s)

    dts = doc["dtypes"]
    if not isinstance(dts, list) or not dts:
        c.fail("dtypes", "a non-empty list of dtype names", dts)
    for i, d in enumerate(dts):
        if d not in DTYPE_ITEMSIZE:
            c.fail(f"dtypes[{i}]", f"one of {sorted(DTYPE_ITEMSIZE)}", d)
    if dtypes:
        unknown = [d for d in dtypes if d not in dts]
        if unknown:
            c.fail("dtypes", f"task.dtypes to be a subset of the spec's {dts}", unknown)
        dts = [d for d in dts if d in dtypes]

    comparison = doc.get("comparison", "exact")
    if comparison not in COMPARISONS:
        c.fail("comparison", f"one of {list(COMPARISONS)}", comparison)
    tolerance = doc.get("tolerance") or {}
    if not isinstance(tolerance, dict):
        c.fail("tolerance", "a mapping dtype -> {atol, rtol}", tolerance)
    for d, tol in tolerance.items():
        c.keys(tol, f"tolerance.{d}", required=("atol", "rtol"), optional=("source",))
        for k in ("atol", "rtol"):
            if not isinstance(tol[k], (int, float)) or tol[k] < 0:
                c.fail(f"tolerance.{d}.{k}", "a non-negative number", tol[k])
    if comparison == "allclose":  # a dtype left out takes the default of its operator class
        from .tolerance import OP_CLASSES, default_tolerance

        tolerance = dict(tolerance)
        for d in dts:
            if d not in tolerance:
                tolerance[d] = default_tolerance(doc.get("category", ""), d)
                if tolerance[d] is None:
                    c.fail(f"tolerance.{d}", "atol and rtol for every dtype when comparison is allclose (or a "
                           f"category among {list(OP_CLASSES[1:])} to take kernelsynth/tolerance.py's default)")
    determinism = doc.get("determinism", "bitwise")
    # keys checked against the spec's dtypes, kept for the run's (task.dtypes=[bfloat16] on a spec with a
    # float32 bound failed here: session 28, cumsum_rows)
    determinism = None if determinism == "bitwise" else _determinism(c, determinism, dts, doc["dtypes"])

    work = doc["work"]
    c.keys(work, "work", required=("bytes",), optional=("flops",))
    work = {k: str(v) for k, v in work.items()}
    work.setdefault("flops", "0")
    probe = {d: 1 for d in dims} | {"itemsize": 4}
    for k, expr in work.items():
        try:
            evaluate(expr, probe)
        except (ValueError, ZeroDivisionError) as e:
            c.fail(f"work.{k}", f"a formula of {dims + ['itemsize']} ({e})", expr)

    cands = doc["candidates"]
    if not isinstance(cands, list) or not cands:
        c.fail("candidates", "a non-empty list of candidates", cands)
    default_tun = doc.get("tunables") or {}
    if not isinstance(default_tun, dict):
        c.fail("tunables", "a mapping name -> list of values (every candidate's, unless it overrides)", default_tun)
    default_launch = doc.get("launch") or {}
    c.keys(default_launch, "launch", required=(),
           optional=("kernel", "grid", "block", "args", "shared_bytes", "arch_specific"))
    pinned = {k: list(v) if isinstance(v, (list, tuple)) else [v] for k, v in (tunables or {}).items()}
    for k, v in pinned.items():
        if not v:
            raise SpecError(path, f"task.tunables.{k}", "a value or a non-empty list of values", v)
    candidates, seen = [], set()
    for i, cd in enumerate(cands):
        fld = f"candidates[{i}]"
        c.keys(cd, fld, required=("version", "name", "file", "technique", "rationale"),
               optional=("backend", "tunables", "launch", "allow_reference_ops", "notes"))
        own_tun = cd.get("tunables") or {}
        if not isinstance(own_tun, dict):
            c.fail(f"{fld}.tunables", "a mapping name -> list of values", own_tun)
        # spec-level defaults under the candidate's own keys
        cd = dict(cd, tunables={**default_tun, **own_tun})
        if cd.get("launch") is not None and isinstance(cd["launch"], dict):
            cd["launch"] = {**default_launch, **cd["launch"]}
        version = c.string(cd, fld, "version")
        if version in seen:
            c.fail(f"{fld}.version", "a version label used once", version)
        seen.add(version)
        f = root / c.string(cd, fld, "file")
        if not f.is_file():
            c.fail(f"{fld}.file", "an existing kernel file (relative to the spec)", cd["file"])
        backend = cd.get("backend", "triton")
        in_specs = [n for n in backends.names() if backends.get(n).in_specs]
        if backend not in in_specs:
            c.fail(f"{fld}.backend", f"one of {in_specs} (kernelsynth/backends/)", backend)
        tun = cd.get("tunables") or {}
        if not isinstance(tun, dict):
            c.fail(f"{fld}.tunables", "a mapping name -> list of values", tun)
        for k, v in tun.items():
            if not isinstance(v, list) or not v:
                c.fail(f"{fld}.tunables.{k}", "a non-empty list of values", v)
        tun = {k: list(v) for k, v in tun.items()}
        launch = _launch(c, cd, fld, backend, dims, tun)
        allow_ref = cd.get("allow_reference_ops", False)
        if not isinstance(allow_ref, bool) or (allow_ref and i != 0):
            c.fail(f"{fld}.allow_reference_ops", "true only on the first candidate (v0 may be eager PyTorch)", allow_ref)
        for k, v in pinned.items():
            if k in tun:
                kinds = {type(x) for x in tun[k]}
                odd = [x for x in v if type(x) not in kinds]
                if odd:  # caught here, not as every config's TypeError in the workers (session 30's new user)
                    raise SpecError(path, f"task.tunables.{k}",
                                    f"values of the type {fld} ({version}) declares for it "
                                    f"({' or '.join(sorted(t.__name__ for t in kinds))}: {tun[k]})", odd[0])
                tun[k] = list(v)
        notes = cd.get("notes", "")
        if not isinstance(notes, str):
            c.fail(f"{fld}.notes", "a string (the author's notes, never in records)", notes)
        candidates.append(CandidateSpec(version, c.string(cd, fld, "name"), f, backend,
                                        c.string(cd, fld, "technique"), c.string(cd, fld, "rationale"), tun,
                                        launch, allow_ref, notes))
    for k in pinned:
        if not any(k in cd.tunables for cd in candidates):
            known = sorted({t for cd in candidates for t in cd.tunables})
            raise SpecError(path, f"task.tunables.{k}", f"one of the spec's tunables {known}", k)

    baselines = doc.get("baselines", list(BASELINES))
    if not isinstance(baselines, list) or any(b not in BASELINES for b in baselines):
        c.fail("baselines", f"a list drawn from {list(BASELINES)}", baselines)

    interp = doc.get("interpret") or {}
    c.keys(interp, "interpret", required=(), optional=("shapes", "tunables", "dtypes"))
    interp_dtypes = interp.get("dtypes")
    if interp_dtypes is not None and (not isinstance(interp_dtypes, list) or not interp_dtypes
                                      or any(d not in doc["dtypes"] for d in interp_dtypes)):
        c.fail("interpret.dtypes", f"a non-empty subset of the spec's dtypes {doc['dtypes']}", interp_dtypes)
    interp_shapes = verify
    if "shapes" in interp:
        if not isinstance(interp["shapes"], list) or not interp["shapes"]:
            c.fail("interpret.shapes", "a non-empty list of shapes", interp["shapes"])
        interp_shapes = [c.shape(s, f"interpret.shapes[{i}]", dims) for i, s in enumerate(interp["shapes"])]
        for i, s_ in enumerate(interp_shapes):
            if not allowed(s_, constraints):
                c.fail(f"interpret.shapes[{i}]", f"a shape within the spec's constraints {constraints}", s_)
    interp_tun = interp.get("tunables") or {}
    if not isinstance(interp_tun, dict) or any(not isinstance(v, list) or not v for v in interp_tun.values()):
        c.fail("interpret.tunables", "a mapping name -> non-empty list of values", interp_tun)

    ref_ops = doc.get("reference_ops") or []
    if not isinstance(ref_ops, list) or not all(isinstance(o, str) and o.isidentifier() for o in ref_ops):
        c.fail("reference_ops", "a list of aten operator names (e.g. [flip, convolution])", ref_ops)

    interface = _interface(c, doc.get("interface"), dims)
    needing = [cd.backend for cd in candidates if backends.get(cd.backend).needs_interface]
    if needing and not interface:
        c.fail("interface", f"inputs/params/derived/output declared (a candidate has backend: {needing[0]})")
    precision = doc.get("precision") or {}
    if not isinstance(precision, dict) or not all(isinstance(v, str) for v in precision.values()):
        c.fail("precision", "a mapping dtype -> text", precision)
    policies = doc.get("precision_policy") or {}
    from .tolerance import POLICY_NAMES, op_class

    if not isinstance(policies, dict) or any(k not in doc["dtypes"] or v not in POLICY_NAMES for k, v in policies.items()):
        c.fail("precision_policy", f"a mapping dtype (of {doc['dtypes']}) -> one of {list(POLICY_NAMES)}", policies)

    probes = _probes(c, doc.get("probes") or [], comparison)
    nonfinite = doc.get("nonfinite") or {}
    if not isinstance(nonfinite, dict) or set(nonfinite) - {"plant", "source"} or \
            not isinstance(nonfinite.get("plant", True), bool) or \
            (nonfinite.get("plant", True) is False and not str(nonfinite.get("source", "")).strip()):
        c.fail("nonfinite", "{plant: false, source: why the reference does not propagate NaN/Inf}", nonfinite)
    reduction = doc.get("reduction")
    if reduction is not None:
        try:
            evaluate(str(reduction), {d: 1 for d in dims})
        except (ValueError, ZeroDivisionError) as e:
            c.fail("reduction", f"a formula of {dims} ({e})", reduction)
        reduction = str(reduction)
    elif op_class(str(doc.get("category", ""))) in ("elementwise", "data_movement"):
        # one output, one term: no accumulation to allow for (rule 23; redteam_s8 gelu gp1, a 20-ulp exp
        # that the largest dim's sqrt(n) u admitted on an elementwise task)
        reduction = "1"

    summary = doc.get("summary", name)
    return TaskSpec(
        name=name, path=path, category=str(doc.get("category", "uncategorized")), summary=summary,
        reference=reference, dims=list(dims), verify_shapes=verify, timing_shape=timing, dtypes=dts,
        comparison=comparison, tolerance=tolerance, work=work,
        question=str(doc.get("question", summary)), why=str(doc.get("why", "")),
        candidates=candidates, baselines=baselines, reference_ops=list(ref_ops), interpret_shapes=interp_shapes,
        interpret_tunables={k: list(v) for k, v in interp_tun.items() if k not in pinned}, interface=interface,
        interpret_dtypes=[d for d in dts if d in interp_dtypes] if interp_dtypes else None,
        precision={str(k): v for k, v in precision.items()}, sha256=spec_sha256(root, includes),
        precision_policy={str(k): str(v) for k, v in policies.items()},
        determinism=determinism, derived_shapes=shapes.get("derived", True), pinned=pinned, includes=includes,
        constraints=constraints, probes=probes, reduction=reduction, mode=mode,
        nonfinite=comparison == "allclose" and bool(nonfinite.get("plant", True)),
    )


#: The kinds of input-range probe a spec may declare (rule 24; :func:`_probes`).
PROBE_KINDS = ("scale", "shift", "mask", "constant", "wrap", "abs", "bits")


def _probes(c: "_Checker", doc, comparison: str) -> List[Dict[str, Any]]:
    """The ``probes:`` list (VERIFICATION.md rule 24), normalised. Each entry is ``{scale: s}``
    (every float input, and with ``params: true`` every random parameter draw, times ``s``),
    ``{shift: c}`` (each row of every float input plus its own offset in ``[c, 2c)``), ``{mask: v}``
    (entries of each row -- scattered, a suffix or a prefix, never the whole row -- set to ``v``:
    ``-.inf`` or a very negative number) or ``{constant: c}`` (half the rows set to ``c``: zero
    variance; zero rows for 0), ``{scale: [low, high]}`` (a factor drawn log-uniformly per trial:
    ``"low"`` is added, ``"value"`` is ``high``) or ``{wrap: k}`` (integer inputs moved by multiples
    of their range, for a reference that reduces indices modulo a size), ``{abs: s}`` (every float
    input replaced by ``s |x|``: rows of one sign, as probabilities and attention weights are) or
    ``{bits: b}`` (every float input rounded to nearest with ``b`` significant bits, 2 to 23: with 8,
    float32 activations upcast from bfloat16) --
    :func:`kernelsynth.verify.inputs.apply_probe` --, with optional
    ``atol``/``rtol`` factors of the tolerance (default 1), ``dtypes`` (the dtypes it runs in;
    default every dtype: a shift that leaves no random bits in a narrow format, e.g. 1000 in
    bfloat16 with its unit spacing of 4-8 there, makes a probe every honest kernel fails) and a
    ``source`` saying why the reference stays exact enough there. Only for ``allclose`` tasks (an ``exact`` task's special
    values already probe its range, rule 8)."""
    if not isinstance(doc, list):
        c.fail("probes", "a list of {scale: s}, {shift: c}, {mask: v}, {constant: c}, {wrap: k}, {abs: s} or "
                         "{bits: b} entries", doc)
    if doc and comparison != "allclose":
        c.fail("probes", "no probes for an exact comparison (rule 8 plants its special values)", doc)
    out = []
    for i, p in enumerate(doc):
        fld = f"probes[{i}]"
        c.keys(p, fld, required=(), optional=PROBE_KINDS + ("params", "atol", "rtol", "dtypes", "source"))
        kinds = [k for k in PROBE_KINDS if k in p]
        if len(kinds) != 1:
            c.fail(fld, "exactly one of " + ", ".join(f"{k}:" for k in PROBE_KINDS), p)
        kind = kinds[0]
        value = p[kind]
        low = None
        if kind == "scale" and isinstance(value, list):  # a ranged scale: a factor drawn per trial
            ok = len(value) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) and
                                         math.isfinite(v) and v > 0 for v in value) and value[0] < value[1]
            if not ok or p.get("params"):
                c.fail(f"{fld}.scale", "a positive number, or [low, high] with 0 < low < high (not with params)", value)
            low, value = float(value[0]), value[1]
        if kind == "wrap" and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            c.fail(f"{fld}.wrap", "a positive integer k (integer inputs plus r (max + 1), r in [-k, k])", value)
        if kind == "bits" and (not isinstance(value, int) or isinstance(value, bool) or not 2 <= value <= 23):
            c.fail(f"{fld}.bits", "an integer number of significant bits from 2 to 23 (8: bfloat16's)", value)
        number = isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)
        if not number or (kind in ("scale", "shift", "abs") and (value == 0 or not math.isfinite(value))) or \
                (kind in ("scale", "abs") and value < 0) or (kind == "constant" and not math.isfinite(value)):
            c.fail(f"{fld}.{kind}", "a number: scale and abs positive, shift nonzero, constant finite, mask finite "
                   "or -.inf", value)
        for k in ("atol", "rtol"):
            v = p.get(k, 1.0)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v <= 0:
                c.fail(f"{fld}.{k}", "a positive finite factor of the tolerance", v)
        if not isinstance(p.get("params", False), bool) or (p.get("params") and kind != "scale"):
            c.fail(f"{fld}.params", "true or false (scale probes only)", p.get("params"))
        dts = p.get("dtypes")
        if dts is not None and (not isinstance(dts, list) or not dts or not all(isinstance(d, str) for d in dts)):
            c.fail(f"{fld}.dtypes", "a non-empty list of dtype names", dts)
        out.append({"kind": kind, "value": float(value), "params": bool(p.get("params", False)),
                    "atol": float(p.get("atol", 1.0)), "rtol": float(p.get("rtol", 1.0)),
                    "source": str(p.get("source", "")), **({"dtypes": list(dts)} if dts else {}),
                    **({"low": low} if low is not None else {})})
    return out


def _bound(c: "_Checker", doc, fld: str) -> Dict[str, float]:
    """``{"atol", "rtol"}`` of a mapping with both, each a non-negative finite number (a NaN bound
    loaded and then failed every candidate's repeat call: red team s25)."""
    for k in ("atol", "rtol"):
        if not isinstance(doc[k], (int, float)) or isinstance(doc[k], bool) or not math.isfinite(doc[k]) or doc[k] < 0:
            c.fail(f"{fld}.{k}", "a non-negative finite number", doc[k])
    return {"atol": float(doc["atol"]), "rtol": float(doc["rtol"])}


def _determinism(c: "_Checker", doc, dtypes: Sequence[str], spec_dtypes: Sequence[str]) -> Dict[str, Dict[str, float]]:
    """The spec's ``determinism:`` as ``{dtype: {"atol", "rtol"}}`` for the run's ``dtypes``: one
    bound for every dtype (``{atol, rtol, source}``) or one per dtype (``{float32: {atol, rtol},
    source}``; a dtype left out stays bitwise). The repeat call of rule 9 must agree with the first
    within it. Per-dtype keys may name any of ``spec_dtypes`` (the spec's own list): a run
    narrowed by ``task.dtypes`` ignores the others' bounds. At least one bound
    must be for a dtype of ``spec_dtypes``."""
    if isinstance(doc, dict) and ("atol" in doc or "rtol" in doc):
        c.keys(doc, "determinism", required=("atol", "rtol"), optional=("source",))
        bound = _bound(c, doc, "determinism")
        return {d: dict(bound) for d in dtypes}
    c.keys(doc, "determinism", required=(), optional=tuple(spec_dtypes) + ("source",))
    out = {}
    for d in spec_dtypes:
        if d in doc:
            c.keys(doc[d], f"determinism.{d}", required=("atol", "rtol"))
            bound = _bound(c, doc[d], f"determinism.{d}")
            if d in dtypes:
                out[d] = bound
    if not any(d in doc for d in spec_dtypes):
        c.fail("determinism", "atol and rtol, or a bound for at least one of the spec's dtypes", doc)
    return out


def probes_for(probes: List[Dict[str, Any]], dtype: str) -> List[Dict[str, Any]]:
    """The normalised ``probes`` (:func:`_probes`) that run at ``dtype``: those without
    ``dtypes`` and those naming it."""
    return [p for p in probes if "dtypes" not in p or dtype in p["dtypes"]]


def _constraints(c: "_Checker", doc, dims) -> Dict[str, Dict[str, int]]:
    """``constraints:``: a mapping dim -> ``{min: int >= 1, multiple_of: int >= 1}`` (either key)."""
    if not isinstance(doc, dict) or any(d not in dims for d in doc):
        c.fail("constraints", f"a mapping of dims (of {dims}) -> {{min: int, multiple_of: int}}", doc)
    out = {}
    for d, rule in doc.items():
        if (not isinstance(rule, dict) or not rule or set(rule) - {"min", "multiple_of"}
                or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in rule.values())):
            c.fail(f"constraints.{d}", "a mapping with min and/or multiple_of, each a positive int", rule)
        out[str(d)] = {str(k): int(v) for k, v in rule.items()}
    return out


def _interface(c: _Checker, iface, dims) -> Dict[str, Any]:
    """Validate the task's ``interface`` (see kernelsynth/backends/cuda.py); {} when absent."""
    if iface is None:
        return {}
    c.keys(iface, "interface", required=("inputs", "output"), optional=("params", "derived"))
    names = set(dims)
    for group in ("inputs", "params"):
        g = iface.get(group) or {}
        if not isinstance(g, dict):
            c.fail(f"interface.{group}", "a mapping tensor name -> list of dims", g)
        for t, shape in g.items():
            if not isinstance(shape, list) or not all(isinstance(d, int) or (isinstance(d, str) and d in dims)
                                                      for d in shape):
                c.fail(f"interface.{group}.{t}", f"a list of dims from {dims} or ints", shape)
    derived = iface.get("derived") or {}
    if not isinstance(derived, dict):
        c.fail("interface.derived", "a mapping name -> formula", derived)
    for d, expr in derived.items():
        try:
            evaluate(str(expr), {n: 1 for n in names})
        except (ValueError, ZeroDivisionError) as e:
            c.fail(f"interface.derived.{d}", f"a formula of {sorted(names)} ({e})", expr)
        names.add(d)
    out = iface["output"]
    if not isinstance(out, list) or not out:
        c.fail("interface.output", "a list of dims or formulas", out)
    for i, e in enumerate(out):
        try:
            evaluate(str(e), {n: 1 for n in names})
        except (ValueError, ZeroDivisionError) as err:
            c.fail(f"interface.output[{i}]", f"a formula of {sorted(names)} ({err})", e)
    return {"inputs": dict(iface["inputs"]), "params": dict(iface.get("params") or {}),
            "derived": {k: str(v) for k, v in derived.items()}, "output": [str(e) for e in out]}


def _launch(c: _Checker, cd, fld, backend, dims, tunables) -> Optional[Dict[str, Any]]:
    """Validate the ``launch`` block (kernel, grid, block, shared_bytes, args, arch_specific) of a
    candidate whose backend takes one (:attr:`kernelsynth.backends.Backend.launch`: raw CUDA kernels).
    ``arch_specific`` (optional, a bool, default false) asks for the device's arch-specific target
    (``sm_90`` -> ``sm_90a``), which Hopper's ``wgmma`` and ``setmaxnreg`` need."""
    launch = cd.get("launch")
    if not backends.get(backend).launch:
        if launch is not None:
            takes = [n for n in backends.names() if backends.get(n).launch]
            c.fail(f"{fld}.launch", f"no launch block (only backend: {'/'.join(takes)} candidates have one)", launch)
        return None
    if launch is None:
        c.fail(f"{fld}.launch", f"a launch block (kernel, grid, block, args) for backend: {backend}")
    c.keys(launch, f"{fld}.launch", required=("kernel", "grid", "block", "args"),
           optional=("shared_bytes", "arch_specific"))
    if not isinstance(launch["kernel"], str) or not launch["kernel"].isidentifier():
        c.fail(f"{fld}.launch.kernel", "the name of an extern \"C\" __global__ function", launch["kernel"])
    for key in ("grid", "block"):
        val = launch[key]
        if not isinstance(val, list) or not 1 <= len(val) <= 3:
            c.fail(f"{fld}.launch.{key}", "a list of 1 to 3 formulas", val)
    if not isinstance(launch["args"], list) or not all(isinstance(a, str) for a in launch["args"]):
        c.fail(f"{fld}.launch.args", "a list of tensor or dim names", launch["args"])
    if not isinstance(launch.get("arch_specific", False), bool):
        c.fail(f"{fld}.launch.arch_specific", "true or false (compile for the arch-specific target, sm_90a)",
               launch["arch_specific"])
    grid = [str(g) for g in launch["grid"]] + ["1"] * (3 - len(launch["grid"]))
    block = [str(b) for b in launch["block"]] + ["1"] * (3 - len(launch["block"]))
    return {"kernel": launch["kernel"], "grid": grid, "block": block,
            "shared_bytes": str(launch.get("shared_bytes", 0)), "args": list(launch["args"]),
            "arch_specific": bool(launch.get("arch_specific", False))}
