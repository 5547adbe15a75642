"""Structured-config schemas for every config group.

Hydra merges each YAML file of ``conf/`` into these dataclasses, so a misspelled key or a value
of the wrong type fails at start-up with a message that names the key (for example
``Key 'trails' not in 'ExplorationConfig'``). The schemas are registered once, in
:func:`register_configs`, under the name ``kernelsynth_schema``; ``conf/config.yaml`` lists that
name first in its defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING


@dataclass
class TaskConfig:
    """Which operator task to run.

    ``name`` selects ``specs/<name>/spec.yaml``; ``spec`` (a path) overrides it with a spec that
    lives anywhere. ``tunables`` overrides the spec's search space per name: a scalar pins one
    value (what a Hydra multirun sweep passes), a list replaces the candidate values.
    ``dtypes`` (when not empty) restricts the spec's dtypes.
    """

    name: str = MISSING
    spec: Optional[str] = None
    tunables: Dict[str, Any] = field(default_factory=dict)
    dtypes: List[str] = field(default_factory=list)


@dataclass
class HardwareConfig:
    """A hardware target with its datasheet peaks.

    ``match``: substrings of the CUDA device name that identify this target ("H200").
    ``peak_gbps``: datasheet DRAM bandwidth in GB/s. ``peak_tflops``: dense TFLOP/s per dtype.
    ``source``: where the peaks come from. ``interpret``: run Triton kernels on CPU tensors
    through the interpreter (no timings). ``allow_mismatch``: record on the detected device even
    when it is not the named target; records are then labelled ``hw_mismatch=true``.
    """

    name: str = MISSING
    match: List[str] = field(default_factory=list)
    arch: Optional[str] = None
    peak_gbps: Optional[float] = None
    peak_tflops: Dict[str, float] = field(default_factory=dict)
    sm_count: Optional[int] = None
    l2_mb: Optional[float] = None
    source: str = ""
    interpret: bool = False
    allow_mismatch: bool = False


@dataclass
class ExplorationConfig:
    """Settings of the exploration stage (see references/EXPLORATION.md)."""

    _target_: str = "kernelsynth.stages.exploration.Exploration"
    trials: int = 5
    timing_shape_trials: int = 1
    seed: int = 0
    warmup_ms: float = 25.0
    rep_ms: float = 100.0
    timing_repeats: int = 2
    timeout_s: float = 600.0
    workers: Optional[int] = None
    interpreter_max_configs: int = 1
    baselines: bool = True
    progress: bool = True
    extra_candidates: List[str] = field(default_factory=list)
    fresh_worker: str = "external"  # "external" or "always": a fresh worker process after those jobs
    screen_sources: bool = True  # reject Python candidates that reach frames, the heap or the harness


@dataclass
class SelectionConfig:
    """Rules of the selection stage (see references/SELECTION.md)."""

    _target_: str = "kernelsynth.stages.selection.Selection"
    min_speedup: float = 1.5
    max_timing_spread: float = 0.05
    require_all_configs_correct: bool = False
    reject_below_floor: bool = True


@dataclass
class SynthesisConfig:
    """Settings of the synthesis stage (see references/SYNTHESIS.md)."""

    _target_: str = "kernelsynth.stages.synthesis.Synthesis"
    dataset_dir: str = "dataset"
    split: str = "train"
    system_prompt: str = (
        "You are an expert GPU kernel engineer. Write correct, fast kernels and explain "
        "the measurements that justify each change."
    )


@dataclass
class PublishConfig:
    """Where the dataset goes after synthesis. ``none`` keeps it in the run directory."""

    _target_: str = "kernelsynth.publish.NoPublish"
    repo_id: Optional[str] = None
    private: bool = True
    commit_message: str = "Add kernelsynth records"


@dataclass
class KernelsynthConfig:
    task: TaskConfig = field(default_factory=TaskConfig)
    hw: HardwareConfig = field(default_factory=HardwareConfig)
    exploration: ExplorationConfig = field(default_factory=ExplorationConfig)
    selection: SelectionConfig = field(default_factory=SelectionConfig)
    synthesis: SynthesisConfig = field(default_factory=SynthesisConfig)
    publish: PublishConfig = field(default_factory=PublishConfig)
    #: where measured ceilings are kept; null: $KERNELSYNTH_CACHE or ~/.cache/kernelsynth
    cache_dir: Optional[str] = None
    verbose: bool = False


def register_configs() -> None:
    """Register the schema with Hydra's ConfigStore (idempotent)."""
    ConfigStore.instance().store(name="kernelsynth_schema", node=KernelsynthConfig)
