"""bench/h200_s32.sh pins the seed ladders' tunables to keep one device call short (issue 14): the pins
must name tunables the specs still have and leave every version at least one config, or the one call a
session gets would be spent on a SpecError."""

from __future__ import annotations

import re
from pathlib import Path

from kernelsynth.spec import load_spec

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = (ROOT / "bench" / "h200_s32.sh").read_text()


def _pins(text: str) -> dict:
    return {k: int(v) for k, v in re.findall(r"task\.tunables\.(\w+)=(\d+)", text)}


def _configs(task: str, pins: dict) -> dict:
    spec = load_spec(ROOT / "specs" / task / "spec.yaml", tunables=pins, task_folder=True)
    return {c.name: len(list(c.configs())) for c in spec.candidates}


def test_conv_pins_keep_every_version_with_one_or_two_configs():
    block = SCRIPT[SCRIPT.index("CONV_PINS=${CONV_PINS-"):SCRIPT.index('"}', SCRIPT.index("CONV_PINS=${CONV_PINS-"))]
    pins = _pins(block)
    assert pins["BW"] == 128 and pins["STAGES"] == 3 and "BN" not in pins  # v8/v9 keep BN 64 and 128
    counts = _configs("conv_relu_maxpool", pins)
    assert counts["wgmma_decoupled_copies"] == 2 and counts["wgmma_async_pipeline"] == 2
    assert set(counts.values()) <= {1, 2}, counts
    assert sum(counts.values()) == 16


def test_flip_pins_keep_v4s_fastest_h200_config():
    line = next(ln for ln in SCRIPT.splitlines() if "task.tunables.BLOCK_M=1" in ln)
    counts = _configs("flip2d", _pins(line))
    assert counts == {"two_pass": 2, "single_pass": 2, "packed_words": 2, "wide_words": 2, "inductor_schedule": 2,
                      "mirrored_vectors": 3}
    spec = load_spec(ROOT / "specs" / "flip2d" / "spec.yaml", tunables=_pins(line), task_folder=True)
    v4 = next(c for c in spec.candidates if c.name == "inductor_schedule")
    assert {"BLOCK_M": 1, "BLOCK_N": 512, "num_warps": 4} in [dict(cfg) for cfg in v4.configs()]


def test_session_34_script_pins_the_same_conv_configs_and_keeps_every_flip_version():
    """bench/h200_s34.sh (the next session's first call): conv's pins are h200_s32.sh's; flip2d's default
    pin (BLOCK_M=1) and the short-budget one (num_warps=4 too) leave every version, v5 included, configs."""
    s34 = (ROOT / "bench" / "h200_s34.sh").read_text()

    def block(text):
        start = text.index("CONV_PINS=${CONV_PINS-")
        return _pins(text[start:text.index('"}', start)])

    assert block(s34) == block(SCRIPT)
    default = _pins(re.search(r"FLIP_PINS:-([^}]*)\}", s34).group(1))
    assert default == {"BLOCK_M": 1}
    counts = _configs("flip2d", default)
    assert counts["mirrored_vectors"] == 6 and counts["inductor_schedule"] == 4 and min(counts.values()) >= 4
    short = _configs("flip2d", {"BLOCK_M": 1, "num_warps": 4})
    assert short["mirrored_vectors"] == 3 and min(short.values()) >= 2
