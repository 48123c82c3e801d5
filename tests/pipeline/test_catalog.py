"""The policy catalog: readable canonical names, and --policies read strictly."""

from __future__ import annotations

import pytest

from segue.operator.scaling import Policy
from segue.pipeline.catalog import default, default_sweep, parse, segue_point
from segue.pipeline.policies.segue import SegueController


def test_the_default_is_the_segue_sweep_and_the_three_baselines() -> None:
    names = [s.name for s in default()]
    assert names[-3:] == ["eager", "kip441", "keda"]
    assert "segue(warmups=4,standbys=0)" in names
    assert "segue(warmups=2,standbys=0,promotion=batch)" in names
    assert len(set(names)) == len(names)
    assert all(s.kind == "segue" for s in default_sweep())


def test_a_name_reads_back_as_the_same_policy() -> None:
    for spec in default_sweep():
        (back,) = parse(spec.name)
        assert back == spec


def test_a_point_names_its_two_axes_and_what_differs_from_the_default() -> None:
    assert segue_point(Policy()).name == "segue(warmups=2,standbys=0)"
    point = Policy(max_warmup_replicas=4, num_standby_replicas=1, learner_promotion="batch")
    assert segue_point(point).name == "segue(warmups=4,standbys=1,promotion=batch)"
    (spec,) = parse("segue(standbys=1,warmups=4,promotion=batch)")
    assert spec.policy == point
    controller = spec.controller()
    assert isinstance(controller, SegueController)
    assert controller.policy == point


def test_lists_mix_sweeps_points_and_baselines() -> None:
    names = [s.name for s in parse("segue(warmups=1), baselines")]
    assert names == ["segue(warmups=1,standbys=0)", "eager", "kip441", "keda"]
    assert parse("kip441")[0].params()["max_warmup_replicas"] == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nope", "unknown policy 'nope'"),
        ("segue(warmups=x)", "warmups must be a whole number"),
        ("segue(colour=1)", "expected warmups|standbys|lag|promotion=VALUE"),
        ("segue(promotion=lazy)", "promotion is eager or batch"),
        ("eager,eager", "policies named twice: eager"),
        ("", "no policies given"),
    ],
)
def test_a_bad_list_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("|", r"\|")):
        parse(text)


def test_the_kafka_connector_jars_are_of_the_pinned_pyspark() -> None:
    import tomllib
    from pathlib import Path

    import pyspark

    from segue.stack.paths import read_versions

    root = Path(__file__).resolve().parents[2]
    spark_extra = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["spark"]
    version = read_versions()["SPARK_VERSION"]
    assert f"pyspark=={version}" in spark_extra
    assert pyspark.__version__ == version
