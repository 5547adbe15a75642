"""The hardware probe job (:func:`probe`), run by the worker the engine starts before exploration
(kernelsynth/engine.py ``probe_hardware``). Its own module, not :mod:`kernelsynth.jobs`, so that a
worker whose only job is the probe imports torch and triton but not ``torch._dynamo`` and the
verification harness (:mod:`kernelsynth.workers` imports :mod:`kernelsynth.jobs` on a worker's
first other job): about 1.5 CPU seconds less for every run. Only :func:`interpreter_facts` runs in
the parent process (an interpreter run has nothing to detect); :func:`probe` initialises CUDA.
"""

from __future__ import annotations

import os
import platform
import subprocess
from typing import Any, Dict

import torch

from .loading import import_file


def _driver_version() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None
    except (OSError, subprocess.SubprocessError):
        return None


def _facts(triton_version: str, interpret: bool) -> Dict[str, Any]:
    """The fields of :func:`probe`'s answer that need no GPU and no spec code."""
    return {
        "cuda": False, "name": platform.processor() or platform.machine() or "cpu", "arch": None,
        "sm_count": None, "l2_bytes": None, "total_mem_bytes": None, "driver": None,
        "torch": str(torch.__version__), "triton": triton_version, "cuda_runtime": torch.version.cuda,
        "python": platform.python_version(), "interpret": interpret, "visible_devices": None, "devices": [],
    }


def interpreter_facts() -> Dict[str, Any]:
    """:func:`probe`'s answer for an interpreter run (``hw.interpret``), taken in the calling process:
    the same interpreter and packages as its workers (they run this Python with these site-packages
    under a read-only filesystem), no CUDA call (nothing to detect: the interpreter runs on the CPU)
    and no import of triton (its version from the package metadata) or of the spec's reference,
    which the run's first worker imports instead (``check_reference`` of
    :meth:`kernelsynth.stages.exploration.Exploration.run`). Saves a CPU run the probe's worker: one
    process start and torch import, about 3 CPU seconds on the project's 2-core machine. Where the
    installed triton has no package metadata under that name (a vendored copy, or one installed as
    ``pytorch-triton``), its version is read from the imported module instead."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        triton_version = version("triton")
    except PackageNotFoundError:
        import triton

        triton_version = str(triton.__version__)
    return _facts(triton_version, True)


def probe(payload: Dict[str, Any]) -> Dict[str, Any]:
    """What this worker sees: GPU name, arch, SM count, L2 bytes, memory, driver, library versions.

    ``cuda`` is False (and the GPU fields None) on a machine without a usable CUDA GPU. The GPU
    fields are device 0's; ``devices`` lists every visible GPU (``index``, ``name``, ``arch``,
    ``sm_count``, ``total_mem_bytes``, ``uuid``, ``pci_bus_id``; empty without CUDA or on the
    interpreter) and ``visible_devices`` is this worker's ``CUDA_VISIBLE_DEVICES`` (None: unset).
    With ``payload["reference"]`` (a path), ``reference_error`` says why that file does not
    import or lacks ``Model``/``get_init_inputs``/``get_inputs`` (None when it is fine).
    """
    import triton

    info = _facts(str(triton.__version__), os.environ.get("TRITON_INTERPRET") == "1")
    ref = payload.get("reference")
    if ref:  # the spec's reference must import and define the three names the harness calls
        try:
            mod = import_file(ref)
            missing = [n for n in ("Model", "get_init_inputs", "get_inputs") if not hasattr(mod, n)]
            info["reference_error"] = f"defines no {', '.join(missing)}" if missing else None
        except BaseException as e:  # noqa: BLE001 - reported to the user as a spec error
            info["reference_error"] = f"importing it raised {type(e).__name__}: {e}"
    info["visible_devices"] = os.environ.get("CUDA_VISIBLE_DEVICES")  # what this worker was pinned to, if anything
    info["devices"] = []
    if not info["interpret"] and torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        info.update(cuda=True, name=p.name, arch=f"sm_{p.major}{p.minor}", sm_count=p.multi_processor_count,
                    l2_bytes=getattr(p, "L2_cache_size", None), total_mem_bytes=p.total_memory,
                    driver=_driver_version())
        for i in range(torch.cuda.device_count()):  # every GPU this worker sees (kernelsynth/devices.py)
            q = torch.cuda.get_device_properties(i)
            uuid = getattr(q, "uuid", None)
            bus = [getattr(q, f"pci_{k}_id", None) for k in ("domain", "bus", "device")]
            info["devices"].append({
                "index": i, "name": q.name, "arch": f"sm_{q.major}{q.minor}", "sm_count": q.multi_processor_count,
                "total_mem_bytes": q.total_memory, "uuid": str(uuid) if uuid is not None else None,
                "pci_bus_id": "{:04x}:{:02x}:{:02x}".format(*bus) if None not in bus else None})
    return info
