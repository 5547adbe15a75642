"""Command line: a Hydra app over conf/ (``python -m kernelsynth [overrides]``).

User errors (a broken spec, a hardware mismatch) print one line and exit with status 2;
``verbose=true`` shows the traceback instead.
"""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from .config import register_configs
from .errors import UserError
from .paths import CONF_DIR

register_configs()


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
def _app(cfg: DictConfig) -> None:
    from . import engine

    run_dir = Path(HydraConfig.get().runtime.output_dir)
    try:
        engine.run(cfg, run_dir)
    except UserError as e:
        if cfg.verbose:
            raise
        print(f"kernelsynth: error: {e}", file=sys.stderr)
        sys.exit(2)


def main() -> None:
    _app()
