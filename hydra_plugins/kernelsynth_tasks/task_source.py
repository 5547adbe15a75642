"""The ``task`` config group of kernelsynth, generated from the task folders (no conf/task files).

Hydra finds these plugins in the ``hydra_plugins`` namespace: a ConfigSource (scheme
``kernelsynth-tasks://``) and a SearchPathPlugin that adds it to kernelsynth's app only. For every task folder that
kernelsynth.tasks discovers (specs/ and ``$KERNELSYNTH_SPECS``) the option ``task/<name>`` is
``{name: <name>, tunables: {<each tunable the spec declares>: null}}``, so ``task=flip2d``,
``-m task=flip2d,conv_relu_maxpool`` and ``task.tunables.BLOCK_N=256`` (no ``+``) work; the
tunables node accepts other names too, which kernelsynth.spec.load_spec then refuses in one
line listing the spec's tunables. Any other task name is accepted as ``{name: <name>}`` and
resolved at run time with ``task.search_path`` (an unknown task then fails there, listing the
known ones). Other apps' configs are untouched:
this source answers only for the ``task`` group and only where a search path names it.
"""

from __future__ import annotations

from typing import List, Optional

from hydra.core.config_search_path import ConfigSearchPath
from hydra.core.object_type import ObjectType
from hydra.plugins.config_source import ConfigResult, ConfigSource
from hydra.plugins.search_path_plugin import SearchPathPlugin
from omegaconf import OmegaConf

GROUP = "task"


def _option(config_path: str) -> Optional[str]:
    """``flip2d`` for ``task/flip2d`` or ``task/flip2d.yaml``; None for anything else."""
    path = config_path.strip("/")
    if path.endswith(".yaml"):
        path = path[: -len(".yaml")]
    group, _, name = path.partition("/")
    if group != GROUP or not name or "/" in name:
        return None
    return name


def task_node(name: str) -> dict:
    """The generated config of task ``name``: its name and the spec's tunables (null: the
    spec's own values). A spec that does not load gets no tunables here; loading it at run time
    reports the error (a broken task breaks only itself)."""
    from kernelsynth.errors import UserError
    from kernelsynth.spec import load_spec
    from kernelsynth.tasks import discover

    node = {"name": name, "tunables": {}}
    try:
        path = discover().get(name)
        if path is not None:
            spec = load_spec(path, task_folder=True)
            node["tunables"] = {k: None for k in sorted({t for c in spec.candidates for t in c.tunables})}
    except UserError:
        pass
    return node


class KernelsynthTaskSource(ConfigSource):
    @staticmethod
    def scheme() -> str:
        return "kernelsynth-tasks"

    def load_config(self, config_path: str) -> ConfigResult:
        name = _option(config_path)
        if name is None:
            raise FileNotFoundError(config_path)
        node = OmegaConf.create(task_node(name))
        # open to any name, so a misspelled tunable (or one of a spec given by task.spec) reaches
        # load_spec, whose one-line error lists the spec's tunables, instead of Hydra's "not in struct"
        OmegaConf.set_struct(node.tunables, False)
        return ConfigResult(config=node, path=f"{self.scheme()}://{self.path}",
                            provider=self.provider, header={"package": None})

    def available(self) -> bool:
        return True

    def is_group(self, config_path: str) -> bool:
        return config_path.strip("/") in ("", GROUP)  # the source's root holds one group, task

    def is_config(self, config_path: str) -> bool:
        return _option(config_path) is not None

    def list(self, config_path: str, results_filter: Optional[ObjectType]) -> List[str]:
        path = config_path.strip("/")
        if path == "" and results_filter in (None, ObjectType.GROUP):
            return [GROUP]  # so --help lists the group and its options
        if path != GROUP or results_filter not in (None, ObjectType.CONFIG):
            return []
        from kernelsynth.errors import UserError
        from kernelsynth.tasks import discover

        try:
            return sorted(discover())
        except UserError:
            return []


class KernelsynthTaskSearchPath(SearchPathPlugin):
    """Puts this source on the search path of kernelsynth's app only (the one whose primary
    config folder is kernelsynth's conf/), so composition, multirun and ``--help`` all see the
    ``task`` group; any other Hydra app in the environment is left as it is."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        from pathlib import Path

        from kernelsynth.paths import CONF_DIR

        def is_ours(path: str) -> bool:
            path = path[len("file://"):] if path.startswith("file://") else path
            return "://" not in path and Path(path).resolve() == CONF_DIR.resolve()

        if any(is_ours(e.path) for e in search_path.get_path() if e.path):
            search_path.append(provider="kernelsynth", path=f"{KernelsynthTaskSource.scheme()}://")
