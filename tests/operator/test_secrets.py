"""Where Kafka credentials are held in memory they never print: the operator's
``KafkaCredentials`` (from the Secret, for its admin client) and the worker's Kafka
settings (from ``SEGUE_KAFKA_*``), in a repr, a log line or a validation error.
The end-to-end proof over logs, events, objects and metrics is test_e2e_secrets.py."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from segue.operator.observe.credentials import KafkaCredentials
from segue.worker.config import from_sources

PASSWORD = "canary-7f3a9c"
WORKER_ENV = {
    "POD_NAMESPACE": "ns",
    "SEGUE_STREAMAPP": "wc",
    "SEGUE_BOOTSTRAP_SERVERS": "k:9092",
    "SEGUE_KAFKA_SASL_USERNAME": "segue",
    "SEGUE_KAFKA_SASL_PASSWORD": PASSWORD,
}


def test_operator_credentials_name_their_keys_only() -> None:
    creds = KafkaCredentials({"sasl.password": PASSWORD, "sasl.mechanism": "PLAIN"})
    assert dict(creds) == {"sasl.password": PASSWORD, "sasl.mechanism": "PLAIN"}
    for shown in (repr(creds), str(creds), f"{creds}", repr({"key": creds})):
        assert PASSWORD not in shown
        assert "sasl.password" in shown
    # Equal settings share one admin client; different ones do not.
    assert {creds: 1}[KafkaCredentials({"sasl.mechanism": "PLAIN", "sasl.password": PASSWORD})] == 1
    assert creds != KafkaCredentials({"sasl.password": "other", "sasl.mechanism": "PLAIN"})


def test_worker_config_hides_kafka_values_but_clients_get_them() -> None:
    config = from_sources({"app": "m:o", "member": "wc-0"}, WORKER_ENV)
    assert dict(config.kafka) == {"sasl.username": "segue", "sasl.password": PASSWORD}
    assert PASSWORD not in repr(config)
    assert PASSWORD not in str(config.kafka)
    assert "sasl.password" in repr(config)


@pytest.mark.parametrize(
    "flags",
    [
        {"app": "m:o"},  # member missing: pydantic shows the whole input
        {"app": "nocolon", "member": "wc-0"},  # a field's own check
        {"app": "m:o", "member": "wc-0", "metrics_port": 70000},
    ],
    ids=["missing-field", "bad-app", "bad-port"],
)
def test_an_invalid_worker_config_error_does_not_show_the_password(
    flags: dict[str, object],
) -> None:
    with pytest.raises(ValidationError) as caught:
        from_sources(flags, WORKER_ENV)
    assert PASSWORD not in str(caught.value)
    assert PASSWORD not in repr(caught.value)
