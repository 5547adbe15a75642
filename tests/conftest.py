"""Test setup: kernels run on CPU tensors through the Triton interpreter unless
KERNELSYNTH_TEST_GPU=1 (set before anything imports triton)."""

import os
import shutil
from pathlib import Path

import pytest

if os.environ.get("KERNELSYNTH_TEST_GPU") != "1":
    os.environ.setdefault("TRITON_INTERPRET", "1")

ROOT = Path(__file__).resolve().parent.parent
CONF_DIR = ROOT / "conf"
FLIP2D = ROOT / "specs" / "flip2d"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def flip2d_copy(tmp_path):
    """A writable copy of specs/flip2d for tests that break it."""
    dst = tmp_path / "flip2d"
    shutil.copytree(FLIP2D, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def compose(overrides=()):
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    from kernelsynth.config import register_configs

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return hydra_compose(config_name="config", overrides=list(overrides))
