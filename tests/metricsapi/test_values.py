"""What the provider answers, without a server: quantities, selectors, refusals."""

from __future__ import annotations

import math
import time
from dataclasses import replace

import pytest

from segue.operator.autoscale import AppSignal, SignalBoard
from segue.operator.metricsapi.server import answer
from segue.operator.metricsapi.values import NEVER, Refusal, app_of, quantity

NOW = 1_700_000_000.0
PATH = "/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/{}?labelSelector=segue.dev%2Fapp%3Dwc"


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.0, "0"), (3001, "3001"), (1.5, "1500m"), (0.0004, "0"), (0.0006, "1m"),
     (12.3456, "12346m"), (math.inf, "1000000000"), (-2.0, "0"), (2e12, "1000000000")],
)  # fmt: skip
def test_values_are_quantities_in_thousandths_clamped(value: float, text: str) -> None:
    assert quantity(value) == text


def test_nan_is_refused_not_served() -> None:
    with pytest.raises(Refusal) as refused:
        quantity(math.nan)
    assert refused.value.code == 503
    assert NEVER == 1e9


@pytest.mark.parametrize(
    "selector", ["segue.dev/app=wc", "segue.dev/app==wc", " segue.dev/app = wc "]
)
def test_the_app_label_selects_the_app(selector: str) -> None:
    assert app_of(selector) == "wc"


@pytest.mark.parametrize(
    "selector", [None, "", "app=wc", "segue.dev/app", "segue.dev/app!=wc", "segue.dev/app in (wc)",
                 "segue.dev/app=a,segue.dev/app=b", "segue.dev/app=wc,team=x"],
)  # fmt: skip
def test_any_other_selector_is_a_400_naming_the_label(selector: str | None) -> None:
    with pytest.raises(Refusal) as refused:
        app_of(selector)
    assert refused.value.code == 400
    assert "segue.dev/app=" in refused.value.message


def board_with(**changes: float) -> SignalBoard:
    board = SignalBoard()
    fields = {"namespace": "ns", "app": "wc", "time": NOW, "replicas": 4, "lag_records": 10,
              "input_rate": 1.0, "processing_rate": 2.0, "seconds_to_catch_up": 10.0,
              "projected_seconds_to_catch_up": 5.0, "replicas_needed": 2.5,
              **changes}  # fmt: skip
    board.put(AppSignal(**fields))  # type: ignore[arg-type]
    return board


def test_each_metric_reads_its_field_of_the_signal() -> None:
    board = board_with()
    got = {
        metric: answer(PATH.format(metric), lambda: (board, "leader"), NOW + 1, 60)["items"][0]
        for metric in ("segue-seconds-to-catch-up", "segue-projected-seconds-to-catch-up",
                       "segue-lag-records", "segue-lag-per-replica", "segue-replicas-needed")
    }  # fmt: skip
    assert {m: item["value"] for m, item in got.items()} == {
        "segue-seconds-to-catch-up": "10",
        "segue-projected-seconds-to-catch-up": "5",
        "segue-lag-records": "10",
        "segue-lag-per-replica": "2500m",
        "segue-replicas-needed": "2500m",
    }
    assert got["segue-lag-records"]["timestamp"] == time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime(NOW)
    )
    assert got["segue-lag-records"]["metricLabels"] == {"segue.dev/app": "wc"}


def test_a_stale_signal_or_no_board_is_unavailable() -> None:
    board = board_with()
    with pytest.raises(Refusal) as refused:
        answer(PATH.format("segue-lag-records"), lambda: (board, "leader"), NOW + 61, 60)
    assert (refused.value.code, refused.value.reason) == (503, "ServiceUnavailable")
    with pytest.raises(Refusal) as refused:
        answer(PATH.format("segue-lag-records"), lambda: (None, "standby (leader: x)"), NOW, 60)
    assert refused.value.code == 503
    assert "standby (leader: x)" in refused.value.message


def test_a_signal_kafka_could_not_refresh_is_unknown_until_the_next_one() -> None:
    """Issue 26: no HPA decision on a backlog nobody could read, however fresh the last."""
    board = board_with()
    board.mark_unknown("ns", "wc", "Kafka unavailable: 3 brokers down")
    for metric in ("segue-replicas-needed", "segue-lag-records"):
        with pytest.raises(Refusal) as refused:
            answer(PATH.format(metric), lambda: (board, "leader"), NOW + 1, 60)
        assert (refused.value.code, refused.value.reason) == (503, "ServiceUnavailable")
        assert "ns/wc is unknown: Kafka unavailable: 3 brokers down" in refused.value.message
    last = board.get("ns", "wc")
    assert last is not None
    board.put(replace(last, unknown="", time=NOW + 5))  # read again: served again
    got = answer(PATH.format("segue-replicas-needed"), lambda: (board, "leader"), NOW + 6, 60)
    assert got["items"][0]["value"] == "2500m"
    board.mark_unknown("ns", "other", "never seen: nothing to mark")
    assert board.get("ns", "other") is None


def test_a_zero_replica_app_has_infinite_lag_per_replica_clamped() -> None:
    board = board_with(replicas=0)
    body = answer(PATH.format("segue-lag-per-replica"), lambda: (board, "leader"), NOW, 60)
    assert body["items"][0]["value"] == "1000000000"
