"""Config composition: every group option composes; mistakes fail at start naming the key."""

import pytest
from hydra.errors import ConfigCompositionException
from omegaconf.errors import ValidationError

from conftest import CONF_DIR, compose


@pytest.mark.parametrize("group", ["task", "hw", "exploration", "selection", "synthesis", "publish"])
def test_every_group_option_composes(group):
    options = sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))
    assert options, f"conf/{group}/ is empty"
    for opt in options:
        extra = ["publish.repo_id=org/name"] if (group, opt) == ("publish", "hub") else []
        cfg = compose([f"{group}={opt}"] + extra)
        assert cfg[group] is not None
        if group == "hw":
            assert cfg.hw.name == opt


def test_defaults():
    cfg = compose()
    assert cfg.task.name == "flip2d"
    assert cfg.hw.name == "auto"
    assert cfg.exploration.trials == 5
    assert cfg.selection.min_speedup == 1.5
    assert cfg.exploration._target_ == "kernelsynth.stages.exploration.Exploration"


def test_gpu_targets_carry_datasheet_peaks_and_source():
    for name in ("h200", "h100", "a100"):
        hw = compose([f"hw={name}"]).hw
        assert hw.peak_gbps > 1000 and hw.peak_tflops["bfloat16"] > 100 and hw.sm_count > 100
        assert "datasheet" in hw.source
    assert compose(["hw=h200"]).hw.peak_gbps == 4800.0


def test_misspelled_key_names_the_key():
    with pytest.raises(ConfigCompositionException) as e:
        compose(["exploration.trails=3"])
    assert "trails" in str(e.value.__cause__ or e.value)


def test_wrong_type_names_the_key():
    with pytest.raises((ConfigCompositionException, ValidationError)) as e:
        compose(["exploration.trials=many"])
    assert "trials" in str(e.value.__cause__ or e.value)


def test_unknown_group_option_is_refused():
    with pytest.raises(ConfigCompositionException) as e:
        compose(["hw=h900"])
    assert "h900" in str(e.value)


def test_stage_instantiation_from_config():
    from hydra.utils import instantiate

    cfg = compose(["exploration.trials=2", "selection.min_speedup=3"])
    ex, sel = instantiate(cfg.exploration), instantiate(cfg.selection)
    assert type(ex).__name__ == "Exploration" and ex.trials == 2
    assert type(sel).__name__ == "Selection" and sel.min_speedup == 3
