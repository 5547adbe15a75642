"""Config composition: every group option composes; mistakes fail at start naming the key."""

import pytest
from hydra.errors import ConfigCompositionException
from omegaconf.errors import ValidationError

from conftest import CONF_DIR, compose
from kernelsynth.tasks import discover


@pytest.mark.parametrize("group", ["task", "hw", "exploration", "selection", "synthesis", "publish"])
def test_every_group_option_composes(group):
    # the task group has no files: one option per task folder (hydra_plugins/kernelsynth_tasks)
    options = sorted(discover()) if group == "task" else sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))
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


def test_task_group_has_one_option_per_task_folder_and_no_files():
    assert not (CONF_DIR / "task").exists()
    assert {"flip2d", "conv_relu_maxpool"} <= set(discover())
    cfg = compose(["task=conv_relu_maxpool"])
    assert cfg.task.name == "conv_relu_maxpool"
    # every tunable the spec declares is in the config (null: the spec's values), so it overrides without +
    assert dict(cfg.task.tunables) == {k: None for k in ["BLOCK", "BLOCK_C", "BLOCK_K", "BLOCK_W", "BN", "BW", "CC", "KPT",
                                                           "ROWS", "STAGES", "num_stages", "num_warps"]}
    assert compose(["task.tunables.BLOCK_N=256"]).task.tunables.BLOCK_N == 256


def test_every_stage_default_is_written_once():
    """The schema (kernelsynth/config.py) holds the defaults: the group files set none of them and
    each stage's constructor takes exactly the schema's fields with the schema's defaults."""
    import dataclasses
    import inspect

    import yaml
    from hydra.utils import get_class

    from kernelsynth import config

    for group, schema in [("exploration", config.ExplorationConfig), ("selection", config.SelectionConfig),
                          ("synthesis", config.SynthesisConfig), ("publish", config.PublishConfig)]:
        assert not yaml.safe_load((CONF_DIR / group / ("none.yaml" if group == "publish" else "default.yaml"))
                                  .read_text()), group
        fields = {f.name: f for f in dataclasses.fields(schema) if f.name != "_target_"}
        for target in {schema._target_} | ({"kernelsynth.publish.HubPublisher"} if group == "publish" else set()):
            params = inspect.signature(get_class(target)).parameters
            if any(p.kind == p.VAR_KEYWORD for p in params.values()):
                continue  # NoPublish takes and ignores everything
            assert set(params) == set(fields), (target, set(params) ^ set(fields))
            for name, p in params.items():
                f = fields[name]
                want = f.default if f.default is not dataclasses.MISSING else None
                assert p.default == want or (p.default is None and f.default_factory is not dataclasses.MISSING) \
                    or (p.default is inspect.Parameter.empty and want is None), (target, name, p.default, want)
    assert compose().synthesis.system_prompt == inspect.signature(get_class(config.SynthesisConfig._target_)) \
        .parameters["system_prompt"].default != ""
