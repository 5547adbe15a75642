"""Synthesis: one record per accepted trajectory, written as a Hugging Face dataset.

Input: the trajectories from selection and the observations they point to. Output:
``<run dir>/<dataset_dir>/`` in the Hub's layout -- one Parquet file per (task, hardware
target) and a ``README.md`` card whose YAML header declares one config per task (named after the
task) and the features -- loadable with ``datasets.load_dataset(<that dir>, "<task>")``. A run
writes ``data/<split>-00000-of-00001.parquet``; a merged sweep (kernelsynth/merge.py) writes
``data/<task>/<hw target>-00000-of-00001.parquet``, one split per hardware target. The contract
is references/SYNTHESIS.md.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

import yaml

from ..config import SynthesisConfig as _D  # the defaults, written once
from ..hardware import Hardware
from .. import inductor
from ..records import FEATURES, FIELD_DOCS, build_record
from ..spec import TaskSpec
from ..store import atomic_write_bytes, group_readable

log = logging.getLogger(__name__)


@dataclass
class Part:
    """The records of one task on one hardware target: one data file, one split of the task's config.

    ``path``: the Parquet file, relative to the dataset folder. ``trajectories``: selection's
    verdicts for this task and target (the card lists the rejected ones with their reasons).
    ``observations``: those the trajectories point to (the charts are drawn from them);
    ``charts``: filled by :func:`write_dataset` (kernelsynth/charts.py entries)."""

    spec: TaskSpec
    hw: Hardware
    split: str
    path: str
    records: List[Dict[str, Any]]
    trajectories: List[Dict[str, Any]]
    observations: List[Dict[str, Any]] = field(default_factory=list)
    charts: List[Dict[str, Any]] = field(default_factory=list)


class Synthesis:
    """See module docstring; settings are documented in conf/synthesis/default.yaml."""

    def __init__(self, dataset_dir: str = _D.dataset_dir, split: str = _D.split, system_prompt: str = _D.system_prompt):
        self.dataset_dir, self.split, self.system_prompt = dataset_dir, split, system_prompt
        #: the charts of the last :meth:`run` (kernelsynth/charts.py entries), for run.json
        self.charts: List[Dict[str, Any]] = []

    def records(self, spec: TaskSpec, hw: Hardware, trajectories: List[Dict[str, Any]],
                observations: List[Dict[str, Any]], run_config: Dict[str, Any],
                generated: Optional[Dict[str, Any]] = None) -> List[Dict[str, Any]]:
        """One record (records.FEATURES) per accepted trajectory, in the trajectories' order.
        ``generated``: the run's candidates of the ``inductor`` source by observation name
        (:func:`kernelsynth.inductor.load_all`)."""
        by_key = {o["key"]: o for o in observations}
        return [build_record(spec, hw, t, by_key, run_config, self.system_prompt, generated)
                for t in trajectories if t["accepted"]]

    def run(self, spec: TaskSpec, hw: Hardware, trajectories: List[Dict[str, Any]],
            observations: List[Dict[str, Any]], run_dir: Path, run_config: Dict[str, Any]) -> Path:
        """Render and write the dataset of one run; returns its folder."""
        records = self.records(spec, hw, trajectories, observations, run_config, inductor.load_all(run_dir))
        out = Path(run_dir) / self.dataset_dir
        part = Part(spec, hw, self.split, f"data/{self.split}-00000-of-00001.parquet", records, trajectories,
                    observations)
        write_dataset(out, [part])
        self.charts = part.charts
        log.info("synthesis: %d record(s) (%d trajectory(ies) rejected) -> %s", len(records),
                 sum(not t["accepted"] for t in trajectories), out)
        return out


def write_dataset(out: Path, parts: List[Part]) -> None:
    """Write every part's Parquet file (against FEATURES), its charts (``out/charts/``,
    kernelsynth/charts.py; ``part.charts`` says what was drawn or why not) and the card into
    ``out``, replacing what an earlier synthesis left in ``out/data`` and ``out/charts``. Raises
    ValueError when two records share an id."""
    from .. import charts
    from datasets import Dataset, disable_progress_bars

    disable_progress_bars()  # a bar per tiny file on stderr buries the run's own messages
    ids = [r["id"] for p in parts for r in p.records]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"record ids are not unique: {dup}")
    data = Path(out) / "data"
    for old in (data, Path(out) / "charts"):
        if old.exists():
            shutil.rmtree(old)
    digests = {}
    for p in parts:
        final = Path(out) / p.path
        final.parent.mkdir(parents=True, exist_ok=True)
        ds = Dataset.from_list(p.records, features=FEATURES) if p.records else \
            Dataset.from_dict({k: [] for k in FEATURES}, features=FEATURES)
        tmp = final.parent / f".{final.name}.tmp"
        ds.to_parquet(str(tmp))
        group_readable(tmp)
        tmp.replace(final)
        digests.setdefault(p.spec.name, hashlib.sha256()).update(final.read_bytes())
        p.charts = charts.draw(Path(out) / "charts", p.spec.name, p.hw, p.trajectories, p.observations)
    atomic_write_bytes(Path(out) / "README.md",
                       dataset_card(parts, {t: h.hexdigest() for t, h in digests.items()}).encode())


def chart_lines(p: Part) -> List[str]:
    """The card's charts of one part: each drawn chart embedded, each skipped one's reason once."""
    lines = []
    drawn = [c for c in p.charts if c["path"]]
    if drawn:
        lines += ["", "Charts (measured values; roofline: achieved rate against the ceilings, ladder: latency beside "
                  "eager and torch.compile):", ""]
        lines += [f"![{c['task']} {c['dtype']} {c['kind']}]({c['path']})" for c in drawn]
    reasons = sorted({c["reason"] for c in p.charts if c["reason"]})
    lines += [""] + [f"Charts not drawn: {r}." for r in reasons] if reasons else []
    return lines


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` value for ``n`` rows."""
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "n>1M"


def dataset_card(parts: List[Part], digests: Dict[str, str]) -> str:
    """The README.md card: YAML metadata (license, task_categories, tags, size_categories, one
    config per task with one split per hardware target, features) and a body generated from the data.

    Each config carries a ``description`` with the SHA-256 of its data files: ``datasets`` caches a
    local folder by folder name and config name (plus the card's config entries), so without it
    two folders named ``dataset`` with a config ``flip2d`` would load each other's cached rows."""
    tasks = list(dict.fromkeys(p.spec.name for p in parts))
    configs = [{"config_name": t, "description": f"kernelsynth records of {t}; data sha256 {digests[t]}",
                "data_files": [{"split": p.split, "path": p.path.replace("-00000-of-00001", "-*")}
                               for p in parts if p.spec.name == t]} for t in tasks]
    n = sum(len(p.records) for p in parts)
    header = {
        "license": "apache-2.0",
        "task_categories": ["text-generation"],
        "tags": ["kernels", "triton", "cuda", "gpu", "code", "kernelsynth"],
        "size_categories": [size_category(n)],
        "pretty_name": "kernelsynth: " + ", ".join(tasks),
        "configs": configs,
        "dataset_info": [{"config_name": t, "features": FEATURES._to_yaml_list()} for t in tasks],
    }
    lines = ["---", yaml.safe_dump(header, sort_keys=False).rstrip(), "---", "",
             "# kernelsynth: " + ", ".join(tasks), "",
             "Verified GPU-kernel optimization cases generated by kernelsynth. Every number was measured on the "
             "hardware each record names; records made on the Triton interpreter (no GPU) are correctness-only "
             "drafts and say so.", "",
             "Load one task (a config) and one hardware target (a split):", "", "```python",
             "import datasets", f"ds = datasets.load_dataset(PATH_OR_REPO_ID, {tasks[0]!r}, split={parts[0].split!r})",
             "```", ""]
    for p in parts:
        spec, hw = p.spec, p.hw
        lines += [f"## {spec.name} on {hw.device_name} (config `{spec.name}`, split `{p.split}`)", "",
                  f"{spec.summary.strip()}", "",
                  f"- hardware: {hw.device_name}" + (" (Triton interpreter, correctness only)" if hw.interpret else ""),
                  f"- records: {len(p.records)}; trajectories rejected by selection: "
                  f"{sum(not t['accepted'] for t in p.trajectories)}",
                  f"- spec SHA-256: `{spec.sha256}`", ""]
        if p.records:
            lines += ["| id | dtype | final | best ms | speedup vs v0 | vs eager | vs compile | % of copy ceiling |",
                      "|---|---|---|---|---|---|---|---|"]
        for r in p.records:
            m = r["metrics"]
            f = lambda x, s: "n/a" if x is None else format(x, s)  # noqa: E731
            lines.append(f"| {r['id']} | {r['dtype']} | {m['best_version']} | {f(m['best_ms'], '.4f')} | "
                         f"{f(m['speedup_vs_v0'], '.2f')} | {f(m['speedup_vs_eager'], '.2f')} | "
                         f"{f(m['speedup_vs_compile'], '.2f')} | {f(m['pct_of_copy_ceiling'], '.1f')} |")
        lines += chart_lines(p)
        rejected = [t for t in p.trajectories if not t["accepted"]]
        if rejected:
            lines += ["", "Rejected trajectories:", ""]
            lines += [f"- {t['dtype']}: " + "; ".join(t["reasons"]) for t in rejected]
        lines.append("")
    lines += ["## Fields", ""] + [f"- `{k}`: {v}" for k, v in FIELD_DOCS.items()]
    lines += ["", "Generated by kernelsynth; the protocols are in its references/ folder "
              "(EXPLORATION.md, SELECTION.md, SYNTHESIS.md).", ""]
    return "\n".join(lines)
