"""Hardware targets: detection, matching against conf/hw, and the measured ceilings.

Detection runs in a spawned worker (:func:`kernelsynth.hwprobe.probe`); the parent never touches
CUDA. Measured ceilings (copy GB/s, bf16 matmul TFLOP/s), each the best of several methods
(:func:`kernelsynth.timing.measure_ceilings`), are kept per hardware fingerprint in
``<cache_dir>/ceilings.json`` under each device's fingerprint (kernelsynth/devices.py; the
run's hardware fingerprint for an unpinned worker) so each device is measured once; an entry
of an earlier measurement protocol (:data:`CEILINGS_PROTOCOL`) is measured again. A run may raise a ceiling
to a verified observation above it (kernelsynth/ceilings.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from omegaconf import OmegaConf

from .errors import HardwareMismatchError
from .paths import CONF_DIR
from .store import atomic_write_bytes

log = logging.getLogger(__name__)


@dataclass
class Hardware:
    """The resolved hardware of a run.

    ``target``: the conf/hw name used (h200, cpu, ...). ``device_name``: what the GPU reports.
    ``interpret``: Triton interpreter on CPU tensors (no timings). ``mismatch``: recorded on a
    device other than the named target (``hw.allow_mismatch=true``). Peaks are datasheet values
    (``peak_source``); ``copy_gbps`` (GB/s) and ``matmul_tflops`` (TFLOP/s) are the ceilings in
    effect: the best measured method (``*_measured``, every method in ``ceiling_methods``), or a
    verified observation above it (``ceiling_corrections`` says which).
    """

    target: str
    device_name: str
    interpret: bool
    arch: Optional[str] = None
    sm_count: Optional[int] = None
    l2_bytes: Optional[int] = None
    total_mem_bytes: Optional[int] = None
    driver: Optional[str] = None
    torch: str = ""
    triton: str = ""
    cuda_runtime: Optional[str] = None
    python: str = ""
    mismatch: bool = False
    peak_gbps: Optional[float] = None
    peak_tflops: Dict[str, float] = field(default_factory=dict)
    peak_source: str = ""
    copy_gbps: Optional[float] = None
    matmul_tflops: Optional[float] = None
    #: the best measured method, before any raise by an observation (kernelsynth/ceilings.py)
    copy_gbps_measured: Optional[float] = None
    matmul_tflops_measured: Optional[float] = None
    #: every method measured: {"ceiling", "method", "value", "unit", "detail", "error"}
    ceiling_methods: List[Dict[str, Any]] = field(default_factory=list)
    #: raises of a ceiling by a verified observation: {"ceiling", "measured", "raised_to", "unit",
    #: "observation", "what"} (kernelsynth/ceilings.py)
    ceiling_corrections: List[Dict[str, Any]] = field(default_factory=list)
    #: every GPU the probe saw (kernelsynth/devices.py): index, name, arch, sm_count,
    #: total_mem_bytes, uuid, pci_bus_id; after exploration also the run's use of each: ``fingerprint``,
    #: ``visible`` (its workers' CUDA_VISIBLE_DEVICES), ``workers``, ``copy_gbps``, ``matmul_tflops``
    #: (its own measured ceilings), ``observations`` (jobs it ran), ``retired`` (why, or None)
    devices: List[Dict[str, Any]] = field(default_factory=list)

    @property
    def device(self) -> str:
        return "cpu" if self.interpret else "cuda"

    @property
    def fingerprint(self) -> str:
        """Hash of what makes measurements comparable: device, driver, library versions."""
        parts = [self.device_name, self.arch, self.sm_count, self.total_mem_bytes, self.driver,
                 self.torch, self.triton, self.cuda_runtime, self.interpret]
        return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:16]

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self) | {"fingerprint": self.fingerprint, "device": self.device}


def known_targets() -> Dict[str, Dict[str, Any]]:
    """Every conf/hw/*.yaml except ``auto``, by name."""
    out = {}
    for f in sorted((CONF_DIR / "hw").glob("*.yaml")):
        if f.stem != "auto":
            out[f.stem] = OmegaConf.to_container(OmegaConf.load(f), resolve=True)
    return out


def resolve(hw_cfg: Dict[str, Any], probe: Dict[str, Any]) -> Hardware:
    """Combine the configured target with what the worker detected.

    Raises HardwareMismatchError when a GPU target is named but no GPU, or another GPU, is present
    (unless ``allow_mismatch``).
    """
    name = hw_cfg["name"]
    if name == "auto":
        if not probe["cuda"]:
            hw_cfg = known_targets()["cpu"]
        else:
            named = [t for t in known_targets().values()
                     if any(m.lower() in probe["name"].lower() for m in t.get("match") or [])]
            found = [t for t in named if not sku_difference(t, probe)]
            if found:
                hw_cfg = found[0]
            else:
                why = f" ({t['name']}: {sku_difference(t, probe)})" if (t := next(iter(named), None)) else ""
                log.warning("no conf/hw target matches %r%s: recording without datasheet peaks", probe["name"], why)
                hw_cfg = {"name": "unknown", "source": "no conf/hw entry for this device"}
    interpret = bool(hw_cfg.get("interpret"))
    mismatch = False
    if not interpret:
        wanted = hw_cfg.get("match") or []
        if not probe["cuda"]:
            raise HardwareMismatchError(
                f"hw={hw_cfg['name']} needs a CUDA GPU, and this machine has none. Use hw=cpu (or hw=auto) "
                "to run on the Triton interpreter without timings.")
        other = None
        if wanted and not any(m.lower() in probe["name"].lower() for m in wanted):
            other = f"expects a GPU whose name contains {wanted}, but this machine has {probe['name']!r}"
        elif sku_difference(hw_cfg, probe):
            other = (f"is a GPU with the datasheet's {sku_difference(hw_cfg, probe)}, on this machine's "
                     f"{probe['name']!r}: another model, whose peaks differ")
        if other:
            if not hw_cfg.get("allow_mismatch"):
                raise HardwareMismatchError(
                    f"hw={hw_cfg['name']} {other}. Use hw=auto, or hw.allow_mismatch=true to record on this device "
                    "anyway (records are then labelled hw_mismatch=true).")
            mismatch = True
    return Hardware(
        target=hw_cfg["name"], device_name=probe["name"] if not interpret else "cpu (Triton interpreter)",
        interpret=interpret, arch=probe.get("arch") if not interpret else None,
        sm_count=probe.get("sm_count") if not interpret else None,
        l2_bytes=probe.get("l2_bytes") if not interpret else None,
        total_mem_bytes=probe.get("total_mem_bytes") if not interpret else None,
        driver=probe.get("driver"), torch=probe["torch"], triton=probe["triton"],
        cuda_runtime=probe.get("cuda_runtime"), python=probe.get("python", ""), mismatch=mismatch,
        peak_gbps=hw_cfg.get("peak_gbps"), peak_tflops=dict(hw_cfg.get("peak_tflops") or {}),
        peak_source=hw_cfg.get("source", ""), devices=[dict(d) for d in probe.get("devices") or []] if not interpret else [],
    )


def sku_difference(target: Dict[str, Any], probe: Dict[str, Any]) -> Optional[str]:
    """How the detected GPU differs from the target's datasheet ``arch`` and ``sm_count``
    (``"sm_count 114, not 132"``), or None when both agree or either side does not say."""
    diffs = [f"{k} {probe[k]}, not {target[k]}" for k in ("arch", "sm_count")
             if target.get(k) is not None and probe.get(k) is not None and probe[k] != target[k]]
    return "; ".join(diffs) or None


#: The ceiling measurement's protocol: cached entries of another one are measured again
#: (2: the best of several copy and matmul methods, each kept).
CEILINGS_PROTOCOL = 2


def load_or_measure_ceilings(hw: Hardware, cache_dir: Path, measure: Callable[[], Dict[str, Any]]) -> None:
    """Fill ``hw.copy_gbps``, ``hw.matmul_tflops`` (and their ``*_measured`` twins, and
    ``ceiling_methods``) from ``<cache_dir>/ceilings.json``, or call ``measure()`` (a worker job)
    once and store the result under the hardware fingerprint."""
    if hw.interpret:
        return
    apply_ceilings(hw, [(None, ceilings_entry(hw.fingerprint, hw.device_name, cache_dir, measure))])


#: The longest a run waits for another's ceiling measurement (``<cache>/ceilings.lock``), seconds.
LOCK_WAIT_S = 900.0


def ceilings_entry(fingerprint: str, device_name: str, cache_dir: Path,
                   measure: Callable[[], Dict[str, Any]]) -> Dict[str, Any]:
    """The ceilings measured under ``fingerprint`` (a run's or one device's,
    kernelsynth/devices.py) from ``<cache_dir>/ceilings.json``, or ``measure()`` called once and
    stored there: ``{"copy_gbps", "matmul_tflops", "methods", "device", "measured_at", "protocol"}``.
    Safe for processes sharing ``cache_dir`` on one host or a shared filesystem whose locks work
    (fcntl.flock; NFS emulates it with byte-range locks): one lock over the check, the measurement
    and the write, and the file replaced atomically, so a device is measured once and no entry is
    lost. Raises what ``measure`` raises (nothing is stored then)."""
    path = Path(cache_dir).expanduser() / "ceilings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    # One lock for the whole check-measure-write, so concurrent runs measure a device once and
    # never drop each other's entries (runs in different directories share this cache).
    # The lock file is the parent's own (0600): the shared cache is readable in the sandbox, and a
    # read-only descriptor is enough to take a flock, so a worker of another run could otherwise
    # hold it for as long as it lives (tests/adversarial/sandbox_s7 flock_cache). Waiting is bounded
    # (LOCK_WAIT_S) for the same reason: past it the run goes on unlocked and says so.
    lock_path = path.with_suffix(".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.fchmod(fd, 0o600)
    except OSError:
        pass
    with os.fdopen(fd, "a") as lock:
        try:
            deadline = time.monotonic() + LOCK_WAIT_S
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        log.warning("%s: still locked after %.0f s; measuring without the lock", lock_path, LOCK_WAIT_S)
                        break
                    time.sleep(0.2)
        except OSError as e:  # a filesystem without locks (Lustre mounted without -o flock): unlocked
            log.warning("%s: no lock on this filesystem (%s): concurrent runs may each measure a device once",
                        lock_path, e)
        entry = _read_json(path).get(fingerprint)
        if entry is not None and entry.get("protocol") != CEILINGS_PROTOCOL:
            entry = None  # measured by an earlier protocol (one method): measure again
        if entry is None:
            log.info("measuring the ceilings of %s (once per device fingerprint %s)", device_name, fingerprint)
            entry = dict(measure(), device=device_name, measured_at=datetime.now(timezone.utc).isoformat(),
                         protocol=CEILINGS_PROTOCOL)
            cache = _read_json(path)  # read again just before the write: without a lock, the shortest window
            cache[fingerprint] = entry
            atomic_write_bytes(path, json.dumps(cache, indent=2).encode())
    return entry


def apply_ceilings(hw: Hardware, entries: List[tuple]) -> None:
    """Set the run's measured ceilings from ``entries``, ``[(device index or None, entry of
    :func:`ceilings_entry`)]``: each ceiling is the best over the devices (the devices of a run are
    one model: a ceiling is the best measured value, METHOD.md), ``ceiling_methods`` every device's
    methods (with more than one device each carries its ``device`` index and its detail says which).
    Raises ValueError when ``entries`` is empty."""
    if not entries:
        raise ValueError("no ceilings to apply")
    hw.copy_gbps = max(e["copy_gbps"] for _, e in entries)
    hw.matmul_tflops = max(e["matmul_tflops"] for _, e in entries)
    hw.copy_gbps_measured, hw.matmul_tflops_measured = hw.copy_gbps, hw.matmul_tflops
    methods = []
    for index, e in entries:
        for m in e.get("methods") or []:
            if len(entries) > 1:
                m = dict(m, device=index, detail=f"cuda device {index}: {m.get('detail') or ''}".rstrip(": "))
            methods.append(m)
    hw.ceiling_methods = methods
    hw.ceiling_corrections = []


def _read_json(path: Path) -> Dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError:
        log.warning("ignoring unreadable %s", path)
        return {}


def summary_lines(hw: Hardware) -> List[str]:
    if hw.interpret:
        return ["hardware: cpu, Triton interpreter (correctness only, no timings)"]
    lines = [f"hardware: {hw.device_name} ({hw.arch}, {hw.sm_count} SMs) as hw={hw.target}"
             + (" [MISMATCH: recorded on this device anyway]" if hw.mismatch else "")]
    if hw.copy_gbps:
        lines += ceiling_lines(hw)
    return lines


def ceiling_lines(hw: Hardware) -> List[str]:
    """The ceilings in a few lines: each one's value in effect, every method measured (or its
    error) and any raise by a verified observation."""
    lines = []
    for kind, unit, value, measured, peak in (
            ("copy", "GB/s", hw.copy_gbps, hw.copy_gbps_measured, hw.peak_gbps),
            ("matmul", "TFLOP/s", hw.matmul_tflops, hw.matmul_tflops_measured, hw.peak_tflops.get("bfloat16"))):
        if value is None:
            continue
        name = "copy" if kind == "copy" else "bf16 matmul"
        methods = [m for m in hw.ceiling_methods if m.get("ceiling") == kind]
        each = ", ".join(f"{m['method']} " + (f"{m['value']:.0f}" if m.get("value") is not None else
                                              f"failed ({m.get('error')})") for m in methods)
        line = f"ceiling: {name} {value:.0f} {unit}"
        if measured is not None and value != measured:
            line += f" (raised from the measured {measured:.0f})"
        line += f"; measured: best of {each}" if each else " measured"
        if peak:
            line += f"; datasheet {peak:.0f} {unit}"
        lines.append(line)
    lines += [f"ceiling raised: {c['what']}" for c in hw.ceiling_corrections]
    return lines
