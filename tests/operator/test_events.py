"""The operator's events on the real API server: one Event object per (StreamApp, type,
reason), its count and lastTimestamp growing, as kubectl users expect; a restarted
operator bumps the same object."""

from __future__ import annotations

import uuid
from typing import Any

from kubernetes import client

from segue.operator.act.recorder import EventRecorder, Involved


def events(core: client.CoreV1Api, namespace: str, app: str) -> list[client.CoreV1Event]:
    selector = f"involvedObject.name={app}"
    items: list[client.CoreV1Event] = core.list_namespaced_event(
        namespace, field_selector=selector
    ).items
    return items


def test_a_repeated_event_is_one_object_with_a_count(kube_api: Any, namespace: str) -> None:
    core = client.CoreV1Api(kube_api)
    app = Involved(namespace, "wc", str(uuid.uuid4()))
    recorder = EventRecorder(core)
    for i in range(3):
        recorder.post(app, type_="Warning", reason="TopicMissing", message=f"m{i}", now=100.0 + i)
    recorder.post(app, type_="Normal", reason="ScalingUp", message="3 replicas", now=103.0)
    by_reason = {e.reason: e for e in events(core, namespace, "wc")}
    assert sorted(by_reason) == ["ScalingUp", "TopicMissing"]
    warning = by_reason["TopicMissing"]
    assert (warning.count, warning.message, warning.type) == (3, "m2", "Warning")
    assert warning.first_timestamp.timestamp() == 100.0
    assert warning.last_timestamp.timestamp() == 102.0
    assert warning.involved_object.uid == app.uid
    assert by_reason["ScalingUp"].count == 1

    # A restarted operator (a new recorder) finds the same object and bumps it.
    EventRecorder(core).post(app, type_="Warning", reason="TopicMissing", message="m3", now=110.0)
    (again,) = [e for e in events(core, namespace, "wc") if e.reason == "TopicMissing"]
    assert (again.count, again.message) == (4, "m3")
    assert again.last_timestamp.timestamp() == 110.0


def test_an_event_that_expired_is_posted_anew(kube_api: Any, namespace: str) -> None:
    core = client.CoreV1Api(kube_api)
    app = Involved(namespace, "wc", str(uuid.uuid4()))
    recorder = EventRecorder(core)
    recorder.post(app, type_="Normal", reason="MemberLeft", message="a", now=100.0)
    (first,) = events(core, namespace, "wc")
    core.delete_namespaced_event(first.metadata.name, namespace)  # as the event TTL does
    recorder.post(app, type_="Normal", reason="MemberLeft", message="b", now=200.0)
    (fresh,) = events(core, namespace, "wc")
    assert (fresh.count, fresh.message) == (1, "b")
