"""The verification protocol (references/VERIFICATION.md lists every rule), one module per concern.

For every shape and trial: fresh seeded inputs; allocator and every uninitialised allocation
poisoned; the candidate runs first, the reference afterwards on clones of the untouched inputs;
then every element is compared (bitwise for ``exact``, ``|out - ref| <= atol + rtol * |ref|``
against a float64 reference for ``allclose``). Also checked: exact type ``torch.Tensor``, dtype,
shape, strides and device; inputs bitwise unchanged; the output shares no storage with an input;
NaN/Inf only where the reference has them; two calls on the same input agree (bitwise, or within
the spec's declared determinism bound); no thread the candidate started is still running after a
call; every retained output still matches after a pause at the end.

Modules: :mod:`.failures` (the two exceptions; no torch), :mod:`.guard` (integrity guard,
process fingerprint, thread check), :mod:`.poison` (memory poisoning and the poisoned call),
:mod:`.inputs` (seeded trial inputs, planted edge values), :mod:`.comparison` (output against
reference), :mod:`.transport` (outputs sent to the parent; no torch at import), :mod:`.census`
(the fallback census: operators by what they do, launched kernels on a GPU), :mod:`.params`
(fresh and perturbed parameters per trial), :mod:`.refmemo` (the worker's memo of reference
outputs), :mod:`.protocol` (:class:`VerifyPolicy` and the trial driver :func:`verify`).

Importing this package imports no module of it and no torch: the parent imports only the modules
it needs (:mod:`kernelsynth.audit`). The first name read from the package itself
(``from kernelsynth.verify import compare``; the worker's :mod:`kernelsynth.jobs`) imports every
module and binds all of :data:`_EXPORTS` here at once, so the integrity guard, which snapshots this
namespace, sees every name a candidate could rebind.
"""

from __future__ import annotations

import importlib

#: The names read from the package, by module.
_EXPORTS = {
    "failures": ("VerificationFailure", "TamperingError"),
    "guard": ("GUARDED", "_namespace", "guard_also", "integrity_snapshot", "check_integrity", "process_fingerprint",
              "thread_ids", "check_no_new_threads"),
    "poison": ("poison_value", "PoisonEmpty", "poison_allocator", "call_poisoned", "note_returned", "reset_returned",
               "check_outputs_released"),
    "inputs": ("trial_seed", "param_seed", "shape_label", "trial_inputs", "plant_special_values", "plan_changes",
               "plan_last", "plan_first", "plan_permutation", "apply_changes", "plan_rolling", "apply_rolling", "apply_probe",
               "probe_tolerance", "plan_nudge", "plan_bump"),
    "comparison": ("_bits", "shares_storage", "describe_mismatch", "layout_mismatch", "compare", "run_reference",
                   "outputs_agree", "check_inputs_untouched", "check_earlier_output"),
    "transport": ("DIGEST_MAX_BYTES", "audit_key", "parse_audit_key", "digest", "tensor_of"),
    "params": ("RANDOM_FILLS", "build_seed", "PerturbDraws", "ScaleDraws", "probe_perturb"),
    "census": ("LAYOUT_OPS", "op_name", "library_calls", "RecordAtenOps", "aten_ops_of", "kernel_base_name",
               "own_kernel_names", "kernel_census", "Census", "install_watch", "watching", "thread_starts",
               "triton_launches", "profiled_ops", "profiled_library_calls", "PROFILED_LAYOUT", "COPY_OPS",
               "unlaunched_kernels"),
    "refmemo": ("ReferenceMemo", "MEMO", "BUILD_ATTR", "fingerprint"),
    "protocol": ("VerifyPolicy", "VerificationReport", "verify", "recheck_after_settling", "check_repeat_and_fresh"),
}


def _bind_all() -> None:
    for module, names in _EXPORTS.items():
        mod = importlib.import_module(f"{__name__}.{module}")
        for name in names:
            globals()[name] = getattr(mod, name)


def __getattr__(name: str):
    if any(name in names for names in _EXPORTS.values()):
        _bind_all()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
