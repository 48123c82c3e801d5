"""The operator's app-state series (``OperatorMetrics.show_state``): set afresh on each
look, a condition's old reason or a learner that is gone removed, nothing left once the
app is forgotten. Pure prometheus-client: no Kubernetes, no Kafka."""

from __future__ import annotations

from prometheus_client import generate_latest

from segue.operator.metrics import OperatorMetrics


def series(metrics: OperatorMetrics, family: str) -> dict[tuple[tuple[str, str], ...], float]:
    out = {}
    for metric in metrics.registry.collect():
        for sample in metric.samples:
            if sample.name == family:
                out[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def labels(**kv: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted({"namespace": "team", "app": "wc", **kv}.items()))


def test_conditions_learners_and_errors_replace_what_was_shown() -> None:
    m = OperatorMetrics()
    m.show_state(
        "team",
        "wc",
        [("Balanced", "False", "NotBalanced"), ("Degraded", "False", "AsExpected")],
        learners={"0_1": ("wc-2", 500), "0_2": ("wc-3", 40)},
        errors={"TopicMissing": 2},
    )
    m.show_state("team", "other", [("Balanced", "True", "Balanced")])
    m.show_state(
        "team",
        "wc",
        [("Balanced", "True", "Balanced"), ("Degraded", "True", "StartFailed")],
        learners={"0_2": ("wc-3", 10)},
        errors={},
        members={"member": 2, "joining": 2},
    )
    assert series(m, "segue_app_condition") == {
        labels(type="Balanced", status="True", reason="Balanced"): 1.0,
        labels(type="Degraded", status="True", reason="StartFailed"): 1.0,
        labels(app="other", type="Balanced", status="True", reason="Balanced"): 1.0,
    }
    assert series(m, "segue_app_learner_lag_records") == {labels(task="0_2", member="wc-3"): 10.0}
    assert series(m, "segue_app_task_errors") == {}
    assert series(m, "segue_app_members") == {
        labels(role="member"): 2.0,
        labels(role="joining"): 2.0,
    }


def test_conditions_alone_keep_the_learners_and_forgetting_drops_everything() -> None:
    m = OperatorMetrics()
    m.show_state(
        "team", "wc", [("Balanced", "False", "NotBalanced")], learners={"0_1": ("wc-2", 7)}
    )
    m.show_state("team", "wc", [("Degraded", "True", "KafkaUnavailable")])
    assert series(m, "segue_app_learner_lag_records") == {labels(task="0_1", member="wc-2"): 7.0}
    assert series(m, "segue_app_condition") == {
        labels(type="Degraded", status="True", reason="KafkaUnavailable"): 1.0
    }
    assert series(m, "segue_operator_events_total") == {
        labels(type="Warning", reason="ScaleDownTimeout"): 0.0  # a first one is an increase
    }
    m.count_event("team", "wc", "Normal", "TaskHandedOver")
    m.count_event("team", "wc", "Normal", "TaskHandedOver")
    handed = labels(type="Normal", reason="TaskHandedOver")
    assert series(m, "segue_operator_events_total")[handed] == 2
    # what the dashboard rates starts at 0 with the app too
    assert series(m, "segue_operator_handovers_total") == {labels(): 0.0}
    assert series(m, "segue_operator_handover_duration_seconds_count") == {labels(): 0.0}
    m.forget_state("team", "wc")
    page = generate_latest(m.registry).decode()
    assert 'app="wc"' not in page, page


def test_the_step_queues_are_read_at_each_scrape() -> None:
    m = OperatorMetrics()
    queues = [(0, 0)]
    m.watch_steps(lambda: queues[-1])
    assert series(m, "segue_operator_steps_queued") == {
        (("urgency", "urgent"),): 0.0,
        (("urgency", "routine"),): 0.0,
    }
    queues.append((3, 40))
    assert series(m, "segue_operator_steps_queued") == {
        (("urgency", "urgent"),): 3.0,
        (("urgency", "routine"),): 40.0,
    }
