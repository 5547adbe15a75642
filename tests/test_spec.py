"""Spec loading and its errors: each names the file, the field and what was expected."""

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FLIP2D
from kernelsynth.errors import SpecError
from kernelsynth.spec import evaluate, load_spec, resolve_spec_path


def _edit(spec_dir, fn):
    path = spec_dir / "spec.yaml"
    doc = yaml.safe_load(path.read_text())
    fn(doc)
    path.write_text(yaml.safe_dump(doc))
    return path


def test_flip2d_loads():
    spec = load_spec(FLIP2D / "spec.yaml")
    assert spec.name == "flip2d" and spec.dims == ["M", "N"]
    assert [c.version for c in spec.candidates] == ["v0", "v1", "v2"]
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


def test_resolve_spec_path(flip2d_copy):
    assert resolve_spec_path("flip2d", None) == FLIP2D / "spec.yaml"
    assert resolve_spec_path("ignored", str(flip2d_copy)) == flip2d_copy / "spec.yaml"
    with pytest.raises(SpecError, match="flip2d"):  # lists the known tasks
        resolve_spec_path("nosuchtask", None)


def test_formula_evaluator():
    assert evaluate("2 * M * N * itemsize", {"M": 3, "N": 4, "itemsize": 2}) == 48
    assert evaluate("(M + 1) // 2 ** 1", {"M": 5}) == 3
    for bad in ("M.x", "f(M)", "[M]"):
        with pytest.raises(ValueError):
            evaluate(bad, {"M": 1})


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
    assert spec.determinism == {"atol": 0.0, "rtol": 1e-6}
    assert spec.tolerance["float32"]["rtol"] == 3.05e-5 and "Higham" in spec.tolerance["float32"]["source"]
    assert spec.tolerance["bfloat16"]["rtol"] == 1.6e-2
    assert load_spec(FLIP2D / "spec.yaml").determinism is None  # default: bitwise


@pytest.mark.parametrize("mutate, field, expected", [
    (lambda d: d.update(determinism={"atol": -1, "rtol": 0}), "determinism.atol", "non-negative"),
    (lambda d: d.update(determinism={"rtol": 0}), "determinism.atol", "required"),
    (lambda d: d.update(determinism="loose"), "determinism", "a mapping"),
    (lambda d: d["shapes"].update(derived="yes"), "shapes.derived", "true or false"),
    (lambda d: d.update(comparison="allclose", category="data_movement"), "tolerance.float32", "kernelsynth/tolerance.py"),
])
def test_bad_determinism_and_shapes_fields(flip2d_copy, mutate, field, expected):
    path = _edit(flip2d_copy, mutate)
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert e.value.field == field and expected in str(e.value)
