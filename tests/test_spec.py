"""Spec loading and its errors: each names the file, the field and what was expected."""

import shutil
from pathlib import Path

import re

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, FLIP2D
from kernelsynth.errors import SpecError
from kernelsynth.spec import SPECS_DIR, evaluate, load_spec, resolve_spec_path


def _edit(spec_dir, fn):
    path = spec_dir / "spec.yaml"
    doc = yaml.safe_load(path.read_text())
    fn(doc)
    path.write_text(yaml.safe_dump(doc))
    return path


def test_flip2d_loads():
    spec = load_spec(FLIP2D / "spec.yaml")
    assert spec.name == "flip2d" and spec.dims == ["M", "N"]
    assert [c.version for c in spec.candidates] == ["v0", "v1", "v2", "v3", "v4", "v5"]
    assert {"M": 1, "N": 4097} in spec.verify_shapes and {"M": 4097, "N": 1} in spec.verify_shapes
    assert spec.dtypes == ["float32", "bfloat16", "float16", "int32"]
    # the timing shape is >= 1 GiB per tensor in every 2-byte dtype, 2 GiB in float32
    assert spec.work_model(spec.timing_shape, "bfloat16")["bytes"] / 2 >= 2**30
    assert spec.work_model({"M": 3, "N": 5}, "float32") == {"bytes": 120.0, "flops": 0.0}
    assert len(spec.candidates[1].configs()) == 8
    assert len(spec.sha256) == 64


def test_tunable_and_dtype_overrides():
    spec = load_spec(FLIP2D / "spec.yaml", tunables={"BLOCK_N": 256}, dtypes=["bfloat16"])
    assert spec.dtypes == ["bfloat16"]
    assert all(c.tunables["BLOCK_N"] == [256] for c in spec.candidates)
    with pytest.raises(SpecError, match="task.tunables.BLOCK_Q"):
        load_spec(FLIP2D / "spec.yaml", tunables={"BLOCK_Q": 1})
    # a pin of another type than the spec's values: before the run, not as every config's TypeError
    # in the workers (session 30's new user: task.tunables.BLOCK_N=abc)
    for bad, shown in (("abc", "'abc'"), ([128, 1.5], "1.5"), (True, "True")):
        with pytest.raises(SpecError, match=r"task.tunables.BLOCK_N': expected values of the type .* \(int: "
                                            r"\[1024, 2048\]\), got " + re.escape(shown)):
            load_spec(FLIP2D / "spec.yaml", tunables={"BLOCK_N": bad})
    with pytest.raises(SpecError, match="float8"):
        load_spec(FLIP2D / "spec.yaml", dtypes=["float8"])


@pytest.mark.parametrize("mutate, field, expected", [
    (lambda d: d.pop("dims"), "dims", "required"),
    (lambda d: d.update(shapes={"verify": [[3, -1]]}), "shapes.verify[0]", "positive ints"),
    (lambda d: d.update(shapes={"verify": [[3]]}), "shapes.verify[0]", "list of 2 positive ints"),
    (lambda d: d.update(shapes={"verify": [[3, 2.5]]}), "shapes.verify[0]", "positive ints"),
    (lambda d: d.update(dtypes=["float32", "float8"]), "dtypes[1]", "one of"),
    (lambda d: d.update(shapez=1), "shapez", "did you mean 'shapes'"),
    (lambda d: d.update(reference="missing.py"), "reference", "Python file"),
    (lambda d: d["candidates"][0].update(file="kernels/nope.py"), "candidates[0].file", "existing kernel file"),
    (lambda d: d["candidates"][1].pop("rationale"), "candidates[1].rationale", "required"),
    (lambda d: d["candidates"][1].update(version="v0"), "candidates[1].version", "used once"),
    (lambda d: d.update(work={"bytes": "2 * M * K"}), "work.bytes", "unknown name 'K'"),
    (lambda d: d.update(work={"bytes": "__import__('os')"}), "work.bytes", "unsupported"),
    (lambda d: d.update(comparison="close"), "comparison", "one of"),
    (lambda d: d.update(comparison="allclose"), "tolerance.float32", "atol and rtol"),
    (lambda d: d.update(name=7), "name", "non-empty string"),
])
def test_bad_specs_name_file_field_and_expectation(flip2d_copy, mutate, field, expected):
    path = _edit(flip2d_copy, mutate)
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert e.value.field == field
    assert expected in str(e.value)
    assert str(path) in str(e.value)


def test_invalid_yaml(flip2d_copy):
    (flip2d_copy / "spec.yaml").write_text("name: [unclosed\n")
    with pytest.raises(SpecError, match="valid YAML"):
        load_spec(flip2d_copy / "spec.yaml")
    # where it is (session 30's new user got "while parsing a flow sequence" alone): a ']' left off line 2
    (flip2d_copy / "spec.yaml").write_text("category: copy\ndims: [M, N\nsummary: x\n")
    with pytest.raises(SpecError, match=r"but got ':' \(line 3, column 8; while parsing a flow sequence from "
                                        r"line 2, column 7\)"):
        load_spec(flip2d_copy / "spec.yaml")


def test_resolve_spec_path(flip2d_copy):
    assert resolve_spec_path("flip2d", None) == FLIP2D / "spec.yaml"
    assert resolve_spec_path("ignored", str(flip2d_copy)) == flip2d_copy / "spec.yaml"
    with pytest.raises(SpecError, match="flip2d"):  # lists the known tasks
        resolve_spec_path("nosuchtask", None)


def test_formula_evaluator():
    assert evaluate("2 * M * N * itemsize", {"M": 3, "N": 4, "itemsize": 2}) == 48
    assert evaluate("(M + 1) // 2 ** 1", {"M": 5}) == 3
    for bad in ("M.x", "f(M)", "[M]", "__import__('os')", "min(M, key=1)", "M if M else 1", "M < 2", "'a' * M",
                "min(*[M])", "unknown + 1"):
        with pytest.raises(ValueError):
            evaluate(bad, {"M": 1})


def _walked(expr, env):
    """The formula's value by walking its tree with Python's operators: an oracle for evaluate."""
    import ast
    import operator

    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow, ast.Mod: operator.mod}
    funcs = {"cdiv": lambda a, b: -(-a // b), "min": min, "max": max}

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return env[node.id]
        if isinstance(node, ast.BinOp):
            return ops[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp):
            return -ev(node.operand)
        return funcs[node.func.id](*[ev(a) for a in node.args])
    return ev(ast.parse(expr, mode="eval"))


def test_compiled_formulas_give_what_a_tree_walk_gives():
    """Session 30: formulas run as compiled Python; every launch grid, block, output shape and work
    formula of the specs, and a few edge cases, give a tree walk's values and types; a dim named like a
    function (``min``) is read from the dims, and a call still calls the function."""
    exprs = {"cdiv(N * C_out * PH * PW, BLOCK)", "-M ** 2 % 5", "M / 2", "max(M, N) - min(1, N) // 3", "2.5 * M"}
    for path in SPECS_DIR.glob("*/spec.yaml"):
        text = path.read_text()
        exprs |= set(re.findall(r'"((?:cdiv|max|min)\([^"]*)"', text))
        exprs |= set(re.findall(r'(?:flops|bytes): "([^"]*)"', text))
    assert len(exprs) > 30, exprs
    env = {n: 37 + i for i, n in enumerate(["N", "M", "C_out", "C_in", "PH", "PW", "H", "W", "BLOCK", "K", "D", "S",
                                             "B", "BN", "BW", "BLOCK_M", "BLOCK_N", "KPT", "CC", "itemsize", "V",
                                             "T", "E", "HD", "R", "C", "L", "BLOCK_R", "BLOCK_C", "TILE", "ROWS"])}
    checked = 0
    for e in sorted(exprs):
        try:
            got = evaluate(e, env)
        except ValueError as err:  # a dim this env lacks
            assert str(err).startswith("unknown name"), (e, err)
            continue
        want = _walked(e, env)
        assert got == want and type(got) is type(want), (e, got, want)
        checked += 1
    assert checked > 10
    assert evaluate("min + 1", {"min": 4}) == 5
    assert evaluate("min(min, 2)", {"min": 4}) == 2
    assert evaluate("cdiv(max, 2)", {"max": 7}) == 4


_value = st.one_of(st.integers(-3, 5), st.floats(allow_nan=True), st.text(max_size=3), st.none(),
                   st.lists(st.integers(-2, 5), max_size=3))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shapes=st.lists(_value, min_size=0, max_size=3), dtypes=st.lists(st.sampled_from(
    ["float32", "bfloat16", "int32", "float8", 3, None]), max_size=3), extra=st.dictionaries(
    st.sampled_from(["shapes", "dims", "work", "baselines", "oops"]), _value, max_size=2))
def test_any_spec_document_loads_or_raises_spec_error(flip2d_copy, shapes, dtypes, extra):
    def mutate(d):
        d["shapes"] = {"verify": shapes}
        d["dtypes"] = dtypes
        d.update(extra)
    path = _edit(flip2d_copy, mutate)
    try:
        spec = load_spec(path)
    except SpecError as e:
        assert str(path) in str(e) and e.field
    else:
        assert spec.verify_shapes and all(v > 0 for s in spec.verify_shapes for v in s.values())


def test_determinism_bound_and_default_tolerance(flip2d_copy):
    def softmaxish(d):
        d.update(comparison="allclose", category="reduction", determinism={"atol": 0, "rtol": 1e-6},
                 dtypes=["float32", "bfloat16"])
        d.pop("tolerance", None)
    spec = load_spec(_edit(flip2d_copy, softmaxish))
    assert spec.determinism == {"float32": {"atol": 0.0, "rtol": 1e-6}, "bfloat16": {"atol": 0.0, "rtol": 1e-6}}
    assert spec.tolerance["float32"]["rtol"] == 3.05e-5 and "Higham" in spec.tolerance["float32"]["source"]
    assert spec.tolerance["bfloat16"]["rtol"] == 1.6e-2
    assert load_spec(FLIP2D / "spec.yaml").determinism is None  # default: bitwise


def test_a_determinism_bound_per_dtype_reaches_only_that_dtypes_jobs(flip2d_copy):
    """cumsum_rows' form: torch.compile's float32 scan (a decoupled look-back) is not bitwise
    repeatable, its bfloat16 one is; a dtype the spec leaves out stays bitwise in its jobs."""
    from kernelsynth.hardware import Hardware
    from kernelsynth.stages.exploration import Exploration

    def per_dtype(d):
        d.update(comparison="allclose", category="reduction", dtypes=["float32", "bfloat16"],
                 determinism={"float32": {"atol": 3e-3, "rtol": 3.05e-5}, "source": "look-back scans"})
        d.pop("tolerance", None)
    spec = load_spec(_edit(flip2d_copy, per_dtype))
    assert spec.determinism == {"float32": {"atol": 3e-3, "rtol": 3.05e-5}}
    jobs = Exploration().plan(spec, Hardware(target="cpu", device_name="cpu", interpret=True))
    bounds = {(j.request.dtype, str(j.request.determinism)) for j in jobs}
    assert bounds == {("float32", str({"atol": 3e-3, "rtol": 3.05e-5})), ("bfloat16", "None")}, bounds


def test_a_run_narrowed_to_another_dtype_keeps_the_specs_per_dtype_determinism_keys():
    """Session 28 on the GPU: `task=cumsum_rows 'task.dtypes=[bfloat16]'` stopped with "field
    'determinism.float32': expected one of the known keys ['bfloat16', 'source']" -- the keys were
    checked against the run's dtypes, not the spec's. The spec as shipped, narrowed either way."""
    from kernelsynth.paths import SPECS_DIR

    path = SPECS_DIR / "cumsum_rows" / "spec.yaml"
    assert load_spec(path, dtypes=["bfloat16"]).determinism == {}  # bfloat16 stays bitwise
    assert load_spec(path, dtypes=["float32"]).determinism == {"float32": {"atol": 3e-3, "rtol": 3.05e-5}}
    assert load_spec(path).determinism == {"float32": {"atol": 3e-3, "rtol": 3.05e-5}}


@pytest.mark.parametrize("mutate, field, expected", [
    (lambda d: d.update(determinism={"atol": -1, "rtol": 0}), "determinism.atol", "non-negative"),
    (lambda d: d.update(determinism={"rtol": 0}), "determinism.atol", "required"),
    (lambda d: d.update(determinism="loose"), "determinism", "a mapping"),
    (lambda d: d.update(determinism={"float32": {"atol": 1e-6}}), "determinism.float32.rtol", "required"),
    (lambda d: d.update(determinism={"float64": {"atol": 0, "rtol": 0}}), "determinism.float64", "known keys"),
    (lambda d: d.update(determinism={"source": "atomics"}), "determinism", "at least one of the spec's dtypes"),
    (lambda d: d.update(determinism={"float32": {"atol": float("nan"), "rtol": 0}}), "determinism.float32.atol",
     "finite"),  # redteam s25: a NaN bound loaded, then rejected every candidate as not deterministic
    (lambda d: d.update(determinism={"atol": 0, "rtol": float("inf")}), "determinism.rtol", "finite"),
    (lambda d: d["shapes"].update(derived="yes"), "shapes.derived", "true or false"),
    (lambda d: d.update(constraints={"K": {"min": 2}}), "constraints", "a mapping of dims"),
    (lambda d: d.update(constraints={"N": {"min": 0}}), "constraints.N", "positive int"),
    (lambda d: d.update(constraints={"N": {"at_least": 2}}), "constraints.N", "min and/or multiple_of"),
    (lambda d: d.update(constraints={"N": {"multiple_of": 8}}), "shapes.verify[0]", "within the spec's constraints"),
    (lambda d: d.update(comparison="allclose", category="data_movement"), "tolerance.float32", "kernelsynth/tolerance.py"),
])
def test_bad_determinism_and_shapes_fields(flip2d_copy, mutate, field, expected):
    path = _edit(flip2d_copy, mutate)
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert e.value.field == field and expected in str(e.value)


# ---------------------------------------------------------------- one fact once (issue 12 item 2)
BEFORE = FIXTURES / "specs_before"  # the spec files as they were before defaults/include/named shapes


def _as_loaded(spec, root):
    """A TaskSpec as comparable data: paths relative to the spec folder; the file's identity
    (path, sha256, includes) left out, reference_ops as a set."""
    import dataclasses

    def rel(v):
        if isinstance(v, Path):
            return str(v.relative_to(root))
        if isinstance(v, dict):
            return {k: rel(x) for k, x in v.items()}
        if isinstance(v, list):
            return [rel(x) for x in v]
        return v

    out = {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)
           if f.name not in ("path", "sha256", "includes", "candidates", "reference_ops")}
    out["candidates"] = [rel(dataclasses.asdict(c)) for c in spec.candidates]
    return rel(out)


@pytest.mark.parametrize("task", ["flip2d", "conv_relu_maxpool"])
def test_rewritten_specs_load_to_the_same_task_as_before(tmp_path, task):
    import inspect

    import torch

    from kernelsynth.loading import import_file
    from kernelsynth.spec import merge_reference_ops
    from kernelsynth.verify import aten_ops_of

    new = load_spec(SPECS_DIR / task / "spec.yaml", task_folder=True)
    old_dir = tmp_path / task
    shutil.copytree(SPECS_DIR / task, old_dir, ignore=shutil.ignore_patterns("__pycache__"))
    (old_dir / "spec.yaml").write_text((BEFORE / f"{task}.yaml").read_text())
    old = load_spec(old_dir / "spec.yaml")
    assert _as_loaded(new, new.root) == _as_loaded(old, old.root)
    # reference_ops: the spec's additions plus what the reference dispatches (what the oracle records)
    ref = import_file(new.reference)
    shape = new.interpret_shapes[-1]
    init = ref.get_init_inputs(shape) if inspect.signature(ref.get_init_inputs).parameters else ref.get_init_inputs()
    recorded = aten_ops_of(ref.Model(*init).eval(), ref.get_inputs(shape, torch.float32, torch.device("cpu"),
                                                                torch.Generator().manual_seed(0)), torch.device("cpu"))
    assert merge_reference_ops(new.reference_ops, recorded) == sorted(old.reference_ops)
    assert new.includes == ([SPECS_DIR / "_data_movement.yaml"] if task == "flip2d" else [])


def test_named_and_positional_shapes_are_the_same_shape(flip2d_copy):
    spec = load_spec(_edit(flip2d_copy, lambda d: d["shapes"].update(verify=[[3, 5], {"N": 5, "M": 3}])))
    assert spec.verify_shapes == [{"M": 3, "N": 5}, {"M": 3, "N": 5}]
    with pytest.raises(SpecError) as e:
        load_spec(_edit(flip2d_copy, lambda d: d["shapes"].update(verify=[{"M": 3, "K": 5}])))
    assert e.value.field == "shapes.verify[0]" and "mapping of each of those dims" in str(e.value)


def test_spec_level_tunables_and_launch_are_defaults_a_candidate_overrides(flip2d_copy):
    def edit(d):
        d["candidates"][2]["tunables"] = {"BLOCK_N": [512], "EXTRA": [1, 2]}
    spec = load_spec(_edit(flip2d_copy, edit))
    v0, _, v2, v3, v4, _ = spec.candidates
    assert v0.tunables == {"BLOCK_M": [1, 4], "BLOCK_N": [1024, 2048], "num_warps": [4, 8]}
    assert v2.tunables == {"BLOCK_M": [1, 4], "BLOCK_N": [512], "num_warps": [4, 8], "EXTRA": [1, 2]}
    assert v3.tunables == {"BLOCK_M": [1], "BLOCK_N": [1024, 2048], "num_warps": [4, 8]}  # its own, whole
    assert v4.tunables == {"BLOCK_M": [1], "BLOCK_N": [512, 1024], "num_warps": [4, 8]}
    conv = load_spec(SPECS_DIR / "conv_relu_maxpool" / "spec.yaml")
    v1, v2 = conv.candidates[1], conv.candidates[2]
    assert v1.launch["args"] == v2.launch["args"] == ["x", "conv.weight", "conv.bias", "out", "N", "C_in", "H", "W",
                                                      "C_out", "PH", "PW"]
    assert v1.launch["kernel"] == "conv_relu_maxpool_naive" and v2.launch["kernel"] == "conv_relu_maxpool_tiled"


def test_include_merges_shared_yaml_under_the_spec_and_names_bad_includes(tmp_path, flip2d_copy):
    (tmp_path / "_shared.yaml").write_text("include: _deeper.yaml\ndtypes: [float32]\nwhy: shared why\n")
    (tmp_path / "_deeper.yaml").write_text("summary: from deeper\nwhy: deeper why\n")
    spec = load_spec(_edit(flip2d_copy, lambda d: (d.update(include="_shared.yaml"), d.pop("dtypes"), d.pop("why"))))
    assert spec.dtypes == ["float32"] and spec.why == "shared why"  # an include wins over its own includes
    assert spec.summary.startswith("Reverse the columns")  # the spec wins over what it includes
    assert spec.includes == [tmp_path / "_shared.yaml", tmp_path / "_deeper.yaml"]
    before = spec.sha256
    (tmp_path / "_deeper.yaml").write_text("summary: from deeper\nwhy: changed\n")
    assert load_spec(flip2d_copy / "spec.yaml").sha256 != before  # an included file is part of the spec
    for include, expected in [("shared.yaml", "named _<name>.yaml"), ("_missing.yaml", "an existing YAML file"),
                              ("_cycle.yaml", "no include cycle")]:
        (tmp_path / "_cycle.yaml").write_text("include: _cycle.yaml\n")
        path = _edit(flip2d_copy, lambda d: d.update(include=include))
        with pytest.raises(SpecError) as e:
            load_spec(path)
        assert expected in str(e.value) and e.value.field == "include", include


def test_a_task_folder_name_is_the_task_name(flip2d_copy):
    assert load_spec(flip2d_copy / "spec.yaml", task_folder=True).name == "flip2d"
    path = _edit(flip2d_copy, lambda d: d.update(name="flip"))
    with pytest.raises(SpecError) as e:
        load_spec(path, task_folder=True)
    assert e.value.field == "name" and "folder's name 'flip2d'" in str(e.value) and str(path) in str(e.value)
    assert load_spec(path).name == "flip"  # a spec given by path (task.spec) may name itself
