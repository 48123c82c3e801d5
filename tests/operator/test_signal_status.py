"""The signal in the status: written when due (stale or asking for other pods), read back
the same, with "never catches up" surviving as an absent field."""

from __future__ import annotations

import math

from segue.operator.act.signal_status import REFRESH, due, from_status, to_status
from segue.operator.autoscale import AppSignal


def signal(at: float = 1000.0, **changes: float) -> AppSignal:
    fields = {"namespace": "ns", "app": "wc", "time": at, "replicas": 3, "lag_records": 40,
              "input_rate": 100.0, "processing_rate": 120.0, "seconds_to_catch_up": 2.0,
              "projected_seconds_to_catch_up": 1.5, "replicas_needed": 2.2, **changes}  # fmt: skip
    return AppSignal(**fields)  # type: ignore[arg-type]


def test_a_signal_survives_the_status() -> None:
    written = signal(seconds_to_catch_up=math.inf)
    status = to_status(written).model_dump(mode="json", by_alias=True, exclude_none=True)
    assert "secondsToCatchUp" not in status  # inf: absent, JSON has no infinity
    back = from_status("ns", "wc", 3, status)
    assert back is not None
    assert back.time == written.time
    assert back.seconds_to_catch_up == math.inf
    assert (back.replicas_needed, back.lag_records, back.input_rate) == (2.2, 40, 100.0)
    assert from_status("ns", "wc", 3, None) is None


def test_written_when_missing_stale_or_asking_for_other_pods_only() -> None:
    first = to_status(signal())
    assert due(None, signal())
    assert not due(first, signal(at=1000.0 + REFRESH / 2, replicas_needed=2.9))  # still 3 pods
    assert due(first, signal(at=1000.0 + REFRESH / 2, replicas_needed=3.1))  # now 4
    assert due(first, signal(at=1000.0 + REFRESH))


def test_an_unknown_signal_is_written_and_read_back_unknown() -> None:
    """While the leader measures the input again after an outage it serves no value; a
    standby, answering from the status, must refuse it too."""
    known = to_status(signal())
    regaining = signal(unknown="measuring the input again")  # type: ignore[arg-type]
    assert due(known, regaining)  # the same observation, now unknown: written at once
    written = to_status(regaining)
    assert written.unknown == "measuring the input again"
    status = written.model_dump(mode="json", by_alias=True, exclude_none=True)
    back = from_status("ns", "wc", 3, status)
    assert back is not None
    assert back.unknown == "measuring the input again"
    assert not due(written, regaining)
    assert due(written, signal(at=1001.0))  # known again
    assert "unknown" not in to_status(signal()).model_dump(exclude_none=True)
