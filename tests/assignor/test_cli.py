"""``segue assign``: JSON in, JSON out, exit 2 with the offending item on bad input."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

import pytest

from segue.assignor import cli

REQUEST = {
    "tasks": [
        {"id": "1_0", "stateful": True, "state_bytes": 123},
        {"id": "1_1", "stateful": True, "state_bytes": 5},
    ],
    "members": [{"id": "wc-0", "capacity": 1, "rack": "a", "leaving": False}, {"id": "wc-1"}],
    "current": {"wc-0": {"active": ["1_0", "1_1"], "standby": [], "learning": []}},
    "lags": {"wc-1": {"1_0": 0}},
    "config": {
        "num_standby_replicas": 0,
        "acceptable_recovery_lag": 10000,
        "max_warmup_replicas": 2,
    },
}


def run(argv: list[str], stdin: str = "") -> int:
    parser = argparse.ArgumentParser()
    cli.configure(parser)
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
    try:
        return cli.run(parser.parse_args(argv))
    finally:
        sys.stdin = sys.__stdin__


def test_json_in_json_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(REQUEST))
    assert run([str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"target", "assignment", "stats"}
    assert set(out["target"]) == set(out["assignment"]) == {"wc-0", "wc-1"}
    assert set(out["target"]["wc-0"]) == {"active", "standby"}
    assert set(out["assignment"]["wc-0"]) == {"active", "standby", "learning"}
    assert out["assignment"]["wc-1"]["active"] == ["1_0"]  # caught up: handed over at once
    assert out["stats"]["bytes_to_restore"] == 0


def test_reads_standard_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["-"], json.dumps(REQUEST)) == 0
    assert json.loads(capsys.readouterr().out)["stats"]["tasks"] == 2


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (json.dumps({**REQUEST, "members": [{"id": "wc-0"}, {"id": "wc-0"}]}), "wc-0"),
        (json.dumps({**REQUEST, "lags": {"wc-1": {"1_0": -4}}}), "lags.wc-1.1_0"),
        ("{not json", "invalid"),
    ],
)
def test_bad_input_exits_2(text: str, needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["-"], text) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert needle in captured.err


def test_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run([str(tmp_path / "nope.json")]) == 2
    assert "nope.json" in capsys.readouterr().err
