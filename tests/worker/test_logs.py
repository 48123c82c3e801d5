"""The worker's JSON log lines (``segue.worker.logs``): one object per line, the app and
pod on each, the task or generation where the call names one, the same message as the
plain form. Pure logging: no Kafka."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys

from segue.worker.logs import PLAIN, JsonFormatter, about


def lines(formatter: logging.Formatter, emit: object) -> list[str]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    log = logging.getLogger("segue.worker.test")
    log.handlers[:], log.propagate = [handler], False
    log.setLevel(logging.INFO)
    try:
        emit(log)  # type: ignore[operator]
    finally:
        log.handlers[:] = []
    return stream.getvalue().splitlines()


def said(log: logging.Logger) -> None:
    log.info("task %s running (inputs %s)", "1_3", ["in[3]"], extra=about("1_3"))
    log.info("applying generation %d: %s", 7, "+1_3", extra=about(generation=7))
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("task %s: letting it go failed", "0_1", extra=about("0_1"))


def test_each_line_is_one_object_with_app_pod_task_and_generation() -> None:
    parsed = [json.loads(line) for line in lines(JsonFormatter("wc-1a2b", "wc-0"), said)]
    assert len(parsed) == 3
    first, second, third = parsed
    assert first["message"] == "task 1_3 running (inputs ['in[3]'])"
    assert (first["app"], first["pod"], first["task"]) == ("wc-1a2b", "wc-0", "1_3")
    assert "generation" not in first
    assert (second["generation"], second["level"]) == (7, "INFO")
    assert "task" not in second
    assert third["level"] == "ERROR"
    assert third["exception"].endswith("ValueError: boom")
    assert first["time"].endswith("+00:00")


def test_the_plain_form_says_the_same_messages() -> None:
    plain = lines(logging.Formatter(PLAIN), said)
    messages = [json.loads(line)["message"] for line in lines(JsonFormatter("a", "p"), said)]
    for message in messages:
        assert any(message in line for line in plain), message


def test_the_worker_offers_the_flag_and_its_environment_default() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "segue", "worker", "--help"],
        capture_output=True, text=True, check=True, env={"SEGUE_LOG_FORMAT": "json", "PATH": ""},
    )  # fmt: skip
    assert "--log-format {plain,json}" in shown.stdout
    assert "SEGUE_LOG_FORMAT" in shown.stdout


CHILD = """
import logging, os, sys
from segue.worker.logs import about, configure
configure("INFO", "plain", "", "")
logging.getLogger("segue.worker").info("before the app is known")
configure("INFO", "json", "wc-1a2b", "wc-0")
logging.getLogger("segue.worker").info("task %s running", "1_3", extra=about("1_3"))
os.write(2, b"%3|1795701259.630|FAIL|rdkafka#producer-1| [thrd:x]: Connect failed\\n")
print("a stray print to stderr", file=sys.stderr, flush=True)
import time; time.sleep(0.3)  # the pump forwards the lines written to fd 2
raise RuntimeError("uncaught")
"""


def test_in_json_every_line_on_stderr_is_an_object_with_the_pod() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    first, *rest = done.stderr.splitlines()
    assert first.endswith("INFO segue.worker: before the app is known")  # plain, until known
    parsed = [json.loads(line) for line in rest]
    by_message = {o["message"]: o for o in parsed}
    assert by_message["task 1_3 running"]["task"] == "1_3"
    raw = by_message["%3|1795701259.630|FAIL|rdkafka#producer-1| [thrd:x]: Connect failed"]
    assert (raw["app"], raw["pod"], raw["logger"]) == ("wc-1a2b", "wc-0", "segue.worker.stderr")
    assert by_message["a stray print to stderr"]["pod"] == "wc-0"
    (crash,) = [o for o in parsed if o["logger"] == "uncaught"]
    assert crash["message"].endswith("RuntimeError: uncaught"), crash
    assert (crash["level"], crash["pod"]) == ("CRITICAL", "wc-0")
