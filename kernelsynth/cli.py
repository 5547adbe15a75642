"""Command line: a Hydra app over conf/ (``python -m kernelsynth [overrides]``).

User errors (a broken spec, a hardware mismatch, no Hub token) print one line and exit with
status 2; ``verbose=true`` shows the traceback instead. A run with no records, or whose push
failed after synthesis, exits 1 with one line. Ctrl-C or SIGTERM prints the run directory and the
command that resumes it, and exits 130 / 143. In a multirun, a job's user error is written to
``<job dir>/failed.json`` and the sweep goes on; the merge at the end names it.
"""

from __future__ import annotations

import json
import shlex
import signal
import sys
from pathlib import Path
from typing import List

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from .config import register_configs
from .errors import UserError
from .paths import CONF_DIR

register_configs()


def version() -> str:
    """kernelsynth's version: the installed distribution's, else the package constant (a checkout
    run with PYTHONPATH, as on the GPU machine)."""
    from importlib.metadata import PackageNotFoundError, version as dist_version

    from . import __version__

    try:
        return dist_version("kernelsynth")
    except PackageNotFoundError:
        return __version__


def resume_command(argv: List[str], key: str, directory: Path) -> str:
    """The command line that re-runs ``argv`` into ``directory`` (``key``: hydra.run.dir or
    hydra.sweep.dir), which skips every observation already there."""
    args = [a for a in argv if not a.startswith(("hydra.run.dir=", "hydra.sweep.dir="))]
    return shlex.join(["python", "-m", "kernelsynth", *args, f"{key}={directory}"])


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C's KeyboardInterrupt."""


def _on_sigterm(signum, frame):
    raise _Terminated()


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
def _app(cfg: DictConfig) -> None:
    from . import engine

    hc = HydraConfig.get()
    run_dir = Path(hc.runtime.output_dir)
    multirun = hc.mode == RunMode.MULTIRUN
    signal.signal(signal.SIGTERM, _on_sigterm)
    (run_dir / "failed.json").unlink(missing_ok=True)  # a resumed sweep job starts over
    try:
        # a sweep publishes its merged dataset; its folder (the other jobs' directories) is hidden
        # from workers too (tests/adversarial/sandbox_s7 sweep_sibling)
        result = engine.run(cfg, run_dir, publish=not multirun, hidden=[hc.sweep.dir] if multirun else [])
    except UserError as e:
        if cfg.verbose:
            raise
        print(f"kernelsynth: error: {e}", file=sys.stderr)
        if multirun:
            (run_dir / "failed.json").write_text(json.dumps({"error": str(e)}))
            return
        sys.exit(2)
    except KeyboardInterrupt as e:
        where = (f"sweep {hc.sweep.dir} (job {run_dir})" if multirun else str(run_dir))
        cmd = resume_command(sys.argv[1:], "hydra.sweep.dir" if multirun else "hydra.run.dir",
                             Path(hc.sweep.dir) if multirun else run_dir)
        how = "terminated" if isinstance(e, _Terminated) else "interrupted"
        print(f"kernelsynth: {how}; finished observations are kept in {where}. Resume with: {cmd}",
              file=sys.stderr, flush=True)
        sys.exit(143 if isinstance(e, _Terminated) else 130)
    if result.publish_error:
        repo = cfg.publish.repo_id
        print(f"kernelsynth: error: publishing to {repo} failed ({result.publish_error}); the dataset is kept in "
              f"{result.dataset_dir}. Retry the push alone: kernelsynth-tools publish {run_dir} --repo-id {repo}",
              file=sys.stderr)
        sys.exit(1)
    if not result.n_records and not multirun:
        print(f"kernelsynth: error: no records: {len(result.trajectories)} trajectory(ies) rejected; the reasons "
              f"are in {run_dir / 'trajectories.parquet'} (and printed above)", file=sys.stderr)
        sys.exit(1)


def main() -> None:
    if "--version" in sys.argv[1:]:  # Hydra's own --version prints Hydra's
        print(f"kernelsynth {version()}")
        return
    from .config import unknown_group_options, unknown_overrides, unknown_settings_message

    found = unknown_overrides(sys.argv[1:])
    if found:  # Hydra would refuse it too, but suggest appending it with '+' (session 29)
        print(f"kernelsynth: error: {unknown_settings_message(found)}", file=sys.stderr)
        sys.exit(2)
    from .paths import CONF_DIR
    options = unknown_group_options(sys.argv[1:], CONF_DIR)
    if options:  # Hydra's own answer adds its search path and a HYDRA_FULL_ERROR hint (session 30)
        print("kernelsynth: error: " + "\n".join(options), file=sys.stderr)
        sys.exit(2)
    _app()
