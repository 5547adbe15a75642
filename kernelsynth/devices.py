"""The devices of a run: which GPUs get worker processes, and how each worker is pinned.

The parent never initialises CUDA: the devices come from the hardware probe, a worker that sees
every GPU the parent's environment exposes (:func:`kernelsynth.hwprobe.probe`, its ``devices``: index,
name, uuid, PCI bus id, arch, SM count, memory of each). :func:`plan_slots` turns
``exploration.workers`` into one entry per worker slot:

* ``auto`` (the default): one worker per visible GPU of the run's model; on the Triton
  interpreter (``hw=cpu``, no devices) one unpinned worker, as before;
* a number ``N``: N workers, spread over the visible GPUs in turn (all on the one GPU of a
  one-GPU machine; unpinned on the interpreter);
* a list of device indices ``[0, 2]``: one worker per listed GPU (an index is a position among
  the GPUs the probe saw, i.e. within the parent's own ``CUDA_VISIBLE_DEVICES``).

A pinned worker gets ``CUDA_VISIBLE_DEVICES=<its device>`` (the parent's entry for that index when
the parent has ``CUDA_VISIBLE_DEVICES`` set, so UUIDs and MIG names pass through; else the index),
so it sees one GPU, as ``cuda:0``. Each device has its own fingerprint (:func:`device_fingerprint`):
its ceilings are measured and cached under it, the independent references (the oracle) are
computed on it, and every observation records the device index and fingerprint it ran on. The run
fingerprint (:attr:`kernelsynth.hardware.Hardware.fingerprint`, in every content key) stays the
model's, so a run on one GPU and on two plans the same keys. A run's devices are one model: a GPU
whose name, arch, SM count or memory differs from the first is left out (``auto``) or refused
(an explicit list), since a record names one hardware. No torch here.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from .errors import UserError

log = logging.getLogger(__name__)

#: The properties that make two GPUs the same model for a run's records.
MODEL_KEYS = ("name", "arch", "sm_count", "total_mem_bytes")


@dataclass(frozen=True)
class Device:
    """One GPU a worker slot is pinned to.

    ``index``: position among the GPUs the probe saw (0-based). ``visible``: the value of the
    worker's ``CUDA_VISIBLE_DEVICES``. ``fingerprint``: :func:`device_fingerprint` (16 hex).
    ``name``, ``uuid``, ``pci_bus_id``: what the probe reported (uuid and bus id may be None)."""

    index: int
    visible: str
    fingerprint: str
    name: str = ""
    uuid: Optional[str] = None
    pci_bus_id: Optional[str] = None

    def env(self) -> Dict[str, str]:
        """What a worker of this device adds to its environment: ``CUDA_VISIBLE_DEVICES`` and, when
        the probe reported it, ``KERNELSYNTH_GPU_UUID`` (the GPU's lock is then found without
        initialising CUDA, so the worker's CUDA start-up runs under the lock: kernelsynth/gpulock.py)."""
        env = {"CUDA_VISIBLE_DEVICES": self.visible}
        if self.uuid:
            env["KERNELSYNTH_GPU_UUID"] = str(self.uuid)
        return env

    @property
    def label(self) -> str:
        return f"cuda device {self.index} ({self.name}, CUDA_VISIBLE_DEVICES={self.visible})"


def device_fingerprint(run_fingerprint: str, info: Dict[str, Any]) -> str:
    """SHA-256 (16 hex) of the run's hardware fingerprint (model, driver, library versions) with
    this device's index, name, uuid and PCI bus id, as the probe reported them."""
    parts = [run_fingerprint, info.get("index"), info.get("name"), info.get("uuid"), info.get("pci_bus_id")]
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:16]


def visible_value(index: int, parent_visible: Optional[str]) -> str:
    """``CUDA_VISIBLE_DEVICES`` for a worker of device ``index``: the parent's ``index``-th entry
    when the parent sets the variable (``"3,5"``, index 1 -> ``"5"``), else ``str(index)``.
    Raises UserError when the parent's list has no entry ``index``."""
    if parent_visible is None or not parent_visible.strip():
        return str(index)
    entries = [e.strip() for e in parent_visible.split(",") if e.strip()]
    if index >= len(entries):
        raise UserError(f"device {index} is not among CUDA_VISIBLE_DEVICES={parent_visible!r} of this process")
    return entries[index]


def _model(d: Dict[str, Any]) -> tuple:
    return tuple(d.get(k) for k in MODEL_KEYS)


def parse_workers(workers: Any) -> tuple:
    """``exploration.workers`` as ``(n, indices)``: ``(None, None)`` for ``auto``/None, ``(N, None)``
    for a number, ``(None, [i, ...])`` for a list of device indices. Raises UserError otherwise."""
    if isinstance(workers, str) and workers.strip().lstrip("-").isdigit():
        workers = int(workers)
    if workers is None or workers == "auto":
        return None, None
    if isinstance(workers, bool):
        raise UserError(f"exploration.workers must be auto, a number or a list of device indices, got {workers!r}")
    if isinstance(workers, int):
        if workers < 1:
            raise UserError(f"exploration.workers must be at least 1, got {workers}")
        return workers, None
    if isinstance(workers, (str, dict)) or not hasattr(workers, "__iter__"):
        raise UserError(f"exploration.workers must be auto, a number or a list of device indices, got {workers!r}")
    chosen = list(workers)
    if not chosen or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in chosen) \
            or len(set(chosen)) != len(chosen):
        raise UserError(f"exploration.workers: a list of distinct device indices (0, 1, ...), got {chosen!r}")
    return None, chosen


def plan_slots(workers: Any, devices: List[Dict[str, Any]], run_fingerprint: str,
               parent_visible: Optional[str] = None) -> List[Optional[Device]]:
    """One entry per worker slot (module docstring): a :class:`Device`, or None for an unpinned
    worker (no devices: the interpreter, or a probe that reported none).

    ``workers``: ``"auto"``, None (same as ``"auto"``), an int >= 1, or a list of device indices.
    ``devices``: the probe's ``devices`` (dicts with ``index`` and :data:`MODEL_KEYS`, ``uuid``,
    ``pci_bus_id``), in the probe's order. ``parent_visible``: the parent's
    ``CUDA_VISIBLE_DEVICES`` (:func:`visible_value`). Raises UserError for a value of ``workers``
    that is none of these, an index the probe did not see, or a list of GPUs of different models."""
    n, chosen = parse_workers(workers)
    if not devices:
        if chosen is not None:
            raise UserError(f"exploration.workers={chosen} names GPUs, and this run has none (hw=cpu or no GPU "
                            "visible): use auto or a number")
        return [None] * (n or 1)
    by_index = {int(d["index"]): d for d in devices}
    if chosen is not None:
        missing = [i for i in chosen if i not in by_index]
        if missing:
            raise UserError(f"exploration.workers: device(s) {missing} not visible; the probe saw {sorted(by_index)}")
        picked = [by_index[i] for i in chosen]
        models = {_model(d) for d in picked}
        if len(models) > 1:
            raise UserError("exploration.workers lists GPUs of different models "
                            f"({', '.join(sorted({str(d.get('name')) for d in picked}))}): a run's records name "
                            "one hardware; run one sweep job per model instead")
    else:
        first = _model(devices[0])
        picked = [d for d in devices if _model(d) == first]
        for d in devices:
            if _model(d) != first:
                log.warning("cuda device %s (%s) left out: another model than device %s (%s)", d["index"],
                            d.get("name"), devices[0]["index"], devices[0].get("name"))
    pinned = [Device(int(d["index"]), visible_value(int(d["index"]), parent_visible),
                     device_fingerprint(run_fingerprint, d), str(d.get("name") or ""), d.get("uuid"),
                     d.get("pci_bus_id")) for d in picked]
    if n is None:
        return list(pinned)
    return [pinned[i % len(pinned)] for i in range(n)]


def device_report(devices: List[Dict[str, Any]], slots: List[Optional[Device]], retired: Dict[int, str],
                  observations: List[Dict[str, Any]], ceilings: Dict[int, Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The probe's ``devices`` with this run's use of each (run.json ``hardware.devices``):
    ``fingerprint``, ``visible``, ``workers`` (slots pinned there), ``copy_gbps`` and
    ``matmul_tflops`` (its own measured ceilings, None when not measured), ``observations`` (the
    observations of the run that ran there) and ``retired`` (why, or None)."""
    pinned = {s.index: s for s in slots if s is not None}
    out = []
    for d in devices:
        i = int(d["index"])
        dev = pinned.get(i)
        c = ceilings.get(i) or {}
        out.append(dict(d, fingerprint=dev.fingerprint if dev else None, visible=dev.visible if dev else None,
                        workers=sum(1 for s in slots if s is not None and s.index == i),
                        copy_gbps=c.get("copy_gbps"), matmul_tflops=c.get("matmul_tflops"),
                        observations=sum(1 for o in observations if o.get("device_index") == i and dev is not None
                                         and o.get("device_fingerprint") == dev.fingerprint),
                        retired=retired.get(i)))
    return out


def distinct(slots: List[Optional[Device]]) -> List[Device]:
    """The devices of ``slots``, each once, in slot order."""
    out: Dict[int, Device] = {}
    for s in slots:
        if s is not None:
            out.setdefault(s.index, s)
    return list(out.values())


def parent_visible_devices() -> Optional[str]:
    """This process's ``CUDA_VISIBLE_DEVICES`` (None when unset)."""
    return os.environ.get("CUDA_VISIBLE_DEVICES")
