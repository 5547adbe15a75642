"""The typed parent<->worker contract (kernelsynth/contract.py, issue 12 item 4): requests are
final before they are keyed, every result field lands in a column, faults are one Enum."""

import dataclasses
import pickle
import subprocess
import sys

import pytest

from conftest import FLIP2D
from kernelsynth import contract
from kernelsynth.contract import RESULT_NOT_IN_ROW, EvaluateResult, Fault, JobRequest, result_columns
from kernelsynth.hardware import Hardware
from kernelsynth.spec import load_spec
from kernelsynth.stages.exploration import Exploration, observation_row
from kernelsynth.store import OBSERVATION_SCHEMA, rows_to_table
from kernelsynth.verify.failures import TamperingError
from kernelsynth.workers import RESTART_FAULTS, JobResult, classify, finished


def _cpu_hw():
    return Hardware(target="cpu", device_name="cpu", interpret=True)


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    return Exploration(trials=2).plan(load_spec(FLIP2D / "spec.yaml"), _cpu_hw(),
                                      cache_dir=tmp_path_factory.mktemp("cache"))


def test_every_result_field_lands_in_a_column_or_is_excluded_with_a_reason():
    names = {f.name for f in dataclasses.fields(EvaluateResult)}
    assert set(RESULT_NOT_IN_ROW) <= names and all(RESULT_NOT_IN_ROW.values())
    assert set(result_columns()) == names - set(RESULT_NOT_IN_ROW)
    missing = set(result_columns()) - set(OBSERVATION_SCHEMA.names)
    assert not missing, f"result fields with no observation column: {sorted(missing)}"


def test_observation_row_keeps_every_result_field(jobs):
    values = {"verdict": "accepted", "reason": "", "trials": 9, "aten_ops": "empty_like", "reference_ops_used": None,
              "compile_cached": True, "n_kernels": 2, "library_calls": "convolution", "foreign_kernels": None,
              "kernel_census": False}
    for f in dataclasses.fields(EvaluateResult):
        if f.name not in values and f.name not in RESULT_NOT_IN_ROW:
            values[f.name] = 7 if "n_" in f.name or f.name.endswith(("bytes", "_hits", "_calls")) else 0.5
    row = observation_row(jobs[0], finished(EvaluateResult(**values), 1.0), _cpu_hw())
    (stored,) = rows_to_table([row], OBSERVATION_SCHEMA).to_pylist()
    assert {k: stored[k] for k in values} == values
    assert stored["fault"] == "ok" and stored["wall_s"] == 1.0
    with pytest.raises(KeyError, match="not fields of EvaluateResult: \\['n_registers'\\]"):
        EvaluateResult().update({"n_registers": 3})  # a backend's misspelt stat is an error, not dropped


def test_the_resume_key_is_computed_from_the_final_request(jobs):
    job = jobs[0]
    context = dict(spec=load_spec(FLIP2D / "spec.yaml").sha256, hw=_cpu_hw().fingerprint,
                   kernelsynth=__import__("kernelsynth").__version__)
    assert job.request.cache_dir is not None  # set at planning, before the key (it used to be added after)
    assert job.key == job.row["key"] == job.request.key(**context)
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.request.cache_dir = "/elsewhere"
    changed = {"trials": 3, "seed": 1, "dtype": "int32", "timing_repeats": 5, "comparison": "allclose",
               "verify_shapes": [{"M": 2, "N": 2}], "candidate": dataclasses.replace(job.request.candidate, config={})}
    for name, value in changed.items():
        assert dataclasses.replace(job.request, **{name: value}).key(**context) != job.key, name
    excluded = {"cache_dir": "/other", "fresh_worker": not job.request.fresh_worker,
                "reference_ops": ["flip", "index"],  # e.g. the ops the oracle saw the reference dispatch
                "reference_memo": not job.request.reference_memo}
    assert set(excluded) == set(contract.KEY_EXCLUDED)
    for name, value in excluded.items():  # where kernels are cached does not change what is measured
        assert dataclasses.replace(job.request, **{name: value}).key(**context) == job.key, name
    assert len({j.key for j in jobs}) == len(jobs)


def test_requests_and_results_cross_the_process_boundary_typed(jobs):
    req = pickle.loads(pickle.dumps(jobs[0].request))
    assert isinstance(req, JobRequest) and req == jobs[0].request
    res = pickle.loads(pickle.dumps(JobResult(Fault.TAMPERING, error="x")))
    assert res.fault is Fault.TAMPERING and not res.ok


def test_a_result_that_is_not_an_evaluate_result_is_a_rejected_observation(jobs):
    row = observation_row(jobs[0], JobResult(Fault.OK, {"verdict": "accepted"}, seconds=0.1), _cpu_hw())
    assert (row["verdict"], row["fault"]) == ("rejected", "exception") and "not an EvaluateResult" in row["reason"]


def test_worker_recycling_is_a_field_of_the_result_not_a_key_in_its_data():
    assert finished(EvaluateResult(recycle_worker=True), 0.0).recycle
    assert not finished(EvaluateResult(), 0.0).recycle
    data = {"recycle_worker": True}
    assert not finished(data, 0.0).recycle and data == {"recycle_worker": True}  # nothing popped


def test_fault_classes_are_one_enum_recognised_by_type_not_by_name():
    class Renamed(TamperingError):
        pass

    class TamperingErrorLookalike(Exception):  # a candidate's own class with the harness's name
        pass

    assert classify(Renamed("x")) is Fault.TAMPERING
    assert classify(TamperingErrorLookalike("x")) is Fault.EXCEPTION
    assert classify(SystemExit(3)) is Fault.EXIT_CALLED
    assert classify(RuntimeError("CUDA error: an illegal memory access was encountered")) is Fault.CUDA_ERROR
    assert classify(MemoryError("cannot allocate memory")) is Fault.OOM
    assert RESTART_FAULTS == {Fault.CUDA_ERROR, Fault.CRASHED, Fault.TIMEOUT, Fault.EXIT_CALLED, Fault.TAMPERING,
                              Fault.SANDBOX}
    assert f"{Fault.AUDIT}" == str(Fault.AUDIT) == "audit" and Fault("screened") is Fault.SCREENED
    import re
    from pathlib import Path

    pkg = Path(contract.__file__).parent  # no fault class is written as a bare string anywhere else
    literal = re.compile(r"""\bfault\s*=\s*["']|["']fault["']\s*:\s*["']|\.fault\s*[!=]=\s*["']""")
    offenders = [f"{f.relative_to(pkg)}:{i}" for f in pkg.rglob("*.py") if f.name != "contract.py"
                 for i, line in enumerate(f.read_text().splitlines(), 1) if literal.search(line)]
    assert not offenders, offenders


def test_the_contract_and_the_worker_pool_import_no_torch():
    code = "import sys, kernelsynth.contract, kernelsynth.workers; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_an_oversized_text_field_is_cut_and_rejects_the_observation(jobs):
    """Found by tests/adversarial/sandbox_s6 bloat_result: a 48 MiB aten_ops went into the
    observation file whole; the file then failed the parent's own size check at consolidation
    and the candidate ended with no observation at all."""
    from kernelsynth.stages.exploration import FIELD_CAP

    big = EvaluateResult(verdict="accepted", reason="", trials=1, aten_ops="x" * (FIELD_CAP + 5))
    row = observation_row(jobs[0], finished(big, 1.0), _cpu_hw())
    assert (row["verdict"], row["fault"]) == ("rejected", "tampering")
    assert row["reason"] == (f"tampering: the worker's result has oversized text fields aten_ops "
                             f"({FIELD_CAP + 5} characters); the cap is {FIELD_CAP}")
    assert len(row["aten_ops"]) == FIELD_CAP
    (stored,) = rows_to_table([row], OBSERVATION_SCHEMA).to_pylist()
    assert stored["verdict"] == "rejected"


def test_a_result_field_of_the_wrong_type_rejects_the_observation_not_the_run(jobs):
    """Found by tests/adversarial/sandbox_s7 field_types: ``reason=12345`` made the parent's
    store.append raise ArrowTypeError, which ended the run, and resuming it ended the same way."""
    for bad, named in ((EvaluateResult(verdict="rejected", reason=12345), "reason (int)"),
                       (EvaluateResult(verdict="accepted", reason="", median_ms="0.001"), "median_ms (str)"),
                       (EvaluateResult(verdict="accepted", reason="", trials=True), "trials (bool)"),
                       (EvaluateResult(verdict=["accepted"], reason=""), "verdict")):
        row = observation_row(jobs[0], finished(bad, 1.0), _cpu_hw())
        assert (row["verdict"], row["fault"]) == ("rejected", "tampering"), row["reason"]
        assert named in row["reason"], row["reason"]
        (stored,) = rows_to_table([row], OBSERVATION_SCHEMA).to_pylist()  # the table holds it
        assert stored["fault"] == "tampering"
    ok = observation_row(jobs[0], finished(EvaluateResult(verdict="rejected", reason="wrong output: x", trials=3), 1.0),
                         _cpu_hw())
    assert (ok["verdict"], ok["fault"]) == ("rejected", "wrong_output")


def test_an_int_past_int64_or_a_lone_surrogate_does_not_end_the_run(jobs):
    """tests/adversarial/sandbox_s8 int_overflow and surrogate_text: ``n_regs = 2**70`` (an int where
    the schema has int64) and ``median_ms = 2**70`` passed the type check and made store.append
    raise ArrowInvalid; a ``reason`` holding "\\ud800" (pickle carries it, UTF-8 cannot) raised
    UnicodeEncodeError. The first is tampering; the second is text an honest candidate can produce
    (os.fsdecode of a non-UTF-8 file name), kept with the character escaped."""
    for bad, named in ((EvaluateResult(verdict="rejected", reason="x", n_regs=2 ** 70), "n_regs (int)"),
                       (EvaluateResult(verdict="accepted", reason="", median_ms=2 ** 70), "median_ms (int)")):
        row = observation_row(jobs[0], finished(bad, 1.0), _cpu_hw())
        assert (row["verdict"], row["fault"]) == ("rejected", "tampering"), row["reason"]
        assert named in row["reason"], row["reason"]
        (stored,) = rows_to_table([row], OBSERVATION_SCHEMA).to_pylist()
        assert stored["fault"] == "tampering"
    row = observation_row(jobs[0], finished(EvaluateResult(verdict="rejected", reason="bad name '\udcff'"), 1.0),
                          _cpu_hw())
    (stored,) = rows_to_table([row], OBSERVATION_SCHEMA).to_pylist()
    assert (stored["fault"], stored["reason"]) == ("wrong_output", "bad name '\\udcff'")
    ok = observation_row(jobs[0], finished(EvaluateResult(verdict="rejected", reason="x", n_regs=(1 << 63) - 1), 1.0),
                         _cpu_hw())
    assert ok["fault"] == "wrong_output" and ok["n_regs"] == (1 << 63) - 1
