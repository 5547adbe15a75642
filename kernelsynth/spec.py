"""Operator task specs: ``specs/<task>/spec.yaml`` plus a PyTorch reference and kernel files.

A spec is the single source of truth for a task's shapes, dtypes, tolerance, work model,
candidate ladder and tunables. :func:`load_spec` validates the whole document and raises
:class:`~kernelsynth.errors.SpecError` naming the file, the field and what was expected.
The format is documented in README.md ("Adding a task") and references/EXPLORATION.md.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import itertools
import operator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

import yaml

from .errors import SpecError

SPECS_DIR = Path(__file__).resolve().parent.parent / "specs"

#: Bytes per element of every dtype a spec may name (torch's names).
DTYPE_ITEMSIZE = {
    "float64": 8, "float32": 4, "float16": 2, "bfloat16": 2,
    "int64": 8, "int32": 4, "int16": 2, "int8": 1, "uint8": 1, "bool": 1,
}
FLOAT_DTYPES = {"float64", "float32", "float16", "bfloat16"}
COMPARISONS = ("exact", "allclose")
BACKENDS = ("triton", "torch", "cuda")
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

    def configs(self, override: Optional[Dict[str, List[Any]]] = None) -> List[Dict[str, Any]]:
        """Cartesian product of the tunables, in a stable order (empty tunables: one ``{}``).
        ``override`` replaces the values of the tunables it names (the spec's ``interpret``)."""
        tun = dict(self.tunables) | {k: v for k, v in (override or {}).items() if k in self.tunables}
        keys = sorted(tun)
        return [dict(zip(keys, vals)) for vals in itertools.product(*(tun[k] for k in keys))]


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
    sha256: str = field(default="")
    #: ``{"atol", "rtol"}`` two calls on one input may differ by (atomics); None: bitwise.
    determinism: Optional[Dict[str, float]] = None
    #: Add the harness's fresh ragged shapes and threshold shape (shapes.derived_shapes).
    derived_shapes: bool = True

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
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow,
           ast.Mod: operator.mod}


#: Functions a formula may call: ``cdiv(a, b)`` (ceiling division, for grids), ``min``, ``max``.
FUNCTIONS = {"cdiv": lambda a, b: -(-a // b), "min": min, "max": max}


def evaluate(expr: str, env: Dict[str, float]) -> float:
    """Evaluate an arithmetic formula: numbers, names from ``env``, + - * / // % ** and parentheses,
    and calls of :data:`FUNCTIONS`.

    Raises ValueError for anything else (other calls, attributes, unknown names).
    """

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in env:
                raise ValueError(f"unknown name '{node.id}' (known: {', '.join(sorted(env))})")
            return env[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
                and not node.keywords):
            return FUNCTIONS[node.func.id](*[ev(a) for a in node.args])
        raise ValueError(f"unsupported syntax '{ast.unparse(node)}'")

    try:
        tree = ast.parse(str(expr), mode="eval")
    except SyntaxError as e:
        raise ValueError(f"not a formula: {e.msg}") from None
    return ev(tree)


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
                near = difflib.get_close_matches(str(k), sorted(allowed), n=1)
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
        ok = (isinstance(val, list) and len(val) == len(dims)
              and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in val))
        if not ok:
            self.fail(fld, f"a list of {len(dims)} positive ints ({', '.join(dims)})", val)
        return dict(zip(dims, val))


def _join(prefix, key):
    return f"{prefix}.{key}" if prefix else str(key)


def resolve_spec_path(name: Optional[str], spec: Optional[str]) -> Path:
    """The spec file for a task: ``spec`` (a YAML path or a folder holding spec.yaml) when given,
    else ``specs/<name>/spec.yaml``. Raises SpecError when it does not exist."""
    if spec:
        p = Path(spec).expanduser().resolve()
        if p.is_dir():
            p = p / "spec.yaml"
    else:
        p = SPECS_DIR / str(name) / "spec.yaml"
    if not p.is_file():
        known = sorted(d.name for d in SPECS_DIR.iterdir() if (d / "spec.yaml").is_file()) if SPECS_DIR.is_dir() else []
        raise SpecError(p, "task.spec" if spec else "task.name",
                        f"an existing spec file (tasks in specs/: {known})", str(spec or name))
    return p


def spec_sha256(root: Path) -> str:
    """SHA-256 over every file of the spec folder (relative path + bytes), in sorted order."""
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def load_spec(path: Path | str, tunables: Optional[Dict[str, Any]] = None,
              dtypes: Optional[List[str]] = None) -> TaskSpec:
    """Load and validate a spec file.

    ``tunables`` overrides the candidates' search space per name (scalar: pin one value; list:
    replace the values); ``dtypes`` restricts the spec's dtypes. Raises SpecError on any
    missing field, wrong type, unknown key, missing file or unknown dtype.
    """
    path = Path(path).resolve()
    c = _Checker(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise SpecError(path, "<document>", "valid YAML", str(e).splitlines()[0]) from None
    c.keys(doc, "", required=("name", "reference", "dims", "shapes", "dtypes", "work", "candidates"),
           optional=("category", "summary", "comparison", "tolerance", "question", "why", "baselines", "interpret",
                     "reference_ops", "interface", "precision", "determinism"))
    root = path.parent
    name = c.string(doc, "", "name")
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
    if determinism == "bitwise":
        determinism = None
    else:
        c.keys(determinism, "determinism", required=("atol", "rtol"), optional=("source",))
        for k in ("atol", "rtol"):
            if not isinstance(determinism[k], (int, float)) or isinstance(determinism[k], bool) or determinism[k] < 0:
                c.fail(f"determinism.{k}", "a non-negative number", determinism[k])
        determinism = {"atol": float(determinism["atol"]), "rtol": float(determinism["rtol"])}

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
    candidates, seen = [], set()
    for i, cd in enumerate(cands):
        fld = f"candidates[{i}]"
        c.keys(cd, fld, required=("version", "name", "file", "technique", "rationale"),
               optional=("backend", "tunables", "launch", "allow_reference_ops"))
        version = c.string(cd, fld, "version")
        if version in seen:
            c.fail(f"{fld}.version", "a version label used once", version)
        seen.add(version)
        f = root / c.string(cd, fld, "file")
        if not f.is_file():
            c.fail(f"{fld}.file", "an existing kernel file (relative to the spec)", cd["file"])
        backend = cd.get("backend", "triton")
        if backend not in BACKENDS:
            c.fail(f"{fld}.backend", f"one of {list(BACKENDS)}", backend)
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
        for k, v in (tunables or {}).items():
            if k in tun:
                tun[k] = list(v) if isinstance(v, (list, tuple)) else [v]
        candidates.append(CandidateSpec(version, c.string(cd, fld, "name"), f, backend,
                                        c.string(cd, fld, "technique"), c.string(cd, fld, "rationale"), tun,
                                        launch, allow_ref))
    for k in (tunables or {}):
        if not any(k in cd.tunables for cd in candidates):
            known = sorted({t for cd in candidates for t in cd.tunables})
            raise SpecError(path, f"task.tunables.{k}", f"a tunable some candidate declares ({known})", k)

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
    interp_tun = interp.get("tunables") or {}
    if not isinstance(interp_tun, dict) or any(not isinstance(v, list) or not v for v in interp_tun.values()):
        c.fail("interpret.tunables", "a mapping name -> non-empty list of values", interp_tun)

    ref_ops = doc.get("reference_ops") or []
    if not isinstance(ref_ops, list) or not all(isinstance(o, str) and o.isidentifier() for o in ref_ops):
        c.fail("reference_ops", "a list of aten operator names (e.g. [flip, convolution])", ref_ops)

    interface = _interface(c, doc.get("interface"), dims)
    if any(cd.backend == "cuda" for cd in candidates) and not interface:
        c.fail("interface", "inputs/params/derived/output declared (a candidate has backend: cuda)")
    precision = doc.get("precision") or {}
    if not isinstance(precision, dict) or not all(isinstance(v, str) for v in precision.values()):
        c.fail("precision", "a mapping dtype -> text", precision)

    summary = doc.get("summary", name)
    return TaskSpec(
        name=name, path=path, category=str(doc.get("category", "uncategorized")), summary=summary,
        reference=reference, dims=list(dims), verify_shapes=verify, timing_shape=timing, dtypes=dts,
        comparison=comparison, tolerance=tolerance, work=work,
        question=str(doc.get("question", summary)), why=str(doc.get("why", "")),
        candidates=candidates, baselines=baselines, reference_ops=list(ref_ops), interpret_shapes=interp_shapes,
        interpret_tunables={k: list(v) for k, v in interp_tun.items()}, interface=interface,
        interpret_dtypes=[d for d in dts if d in interp_dtypes] if interp_dtypes else None,
        precision={str(k): v for k, v in precision.items()}, sha256=spec_sha256(root),
        determinism=determinism, derived_shapes=shapes.get("derived", True),
    )


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
    """Validate a cuda candidate's ``launch`` block (kernel, grid, block, shared_bytes, args)."""
    launch = cd.get("launch")
    if backend != "cuda":
        if launch is not None:
            c.fail(f"{fld}.launch", "no launch block (only backend: cuda candidates have one)", launch)
        return None
    if launch is None:
        c.fail(f"{fld}.launch", "a launch block (kernel, grid, block, args) for backend: cuda")
    c.keys(launch, f"{fld}.launch", required=("kernel", "grid", "block", "args"), optional=("shared_bytes",))
    if not isinstance(launch["kernel"], str) or not launch["kernel"].isidentifier():
        c.fail(f"{fld}.launch.kernel", "the name of an extern \"C\" __global__ function", launch["kernel"])
    for key in ("grid", "block"):
        val = launch[key]
        if not isinstance(val, list) or not 1 <= len(val) <= 3:
            c.fail(f"{fld}.launch.{key}", "a list of 1 to 3 formulas", val)
    if not isinstance(launch["args"], list) or not all(isinstance(a, str) for a in launch["args"]):
        c.fail(f"{fld}.launch.args", "a list of tensor or dim names", launch["args"])
    grid = [str(g) for g in launch["grid"]] + ["1"] * (3 - len(launch["grid"]))
    block = [str(b) for b in launch["block"]] + ["1"] * (3 - len(launch["block"]))
    return {"kernel": launch["kernel"], "grid": grid, "block": block,
            "shared_bytes": str(launch.get("shared_bytes", 0)), "args": list(launch["args"])}
