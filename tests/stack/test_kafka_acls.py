"""The ACL lists of segue.stack.kafka_acls, the ones docs/reliability.md gives platform
teams: an app gets nothing of another app's whose id it prefixes, the operator writes
nothing but its history topic. (tests/operator/test_e2e_auth.py proves them enough on
an authorizing broker.)"""

from __future__ import annotations

from segue.stack import kafka_acls as acls


def test_an_app_owns_its_prefix_and_only_reads_its_inputs() -> None:
    grants = acls.app_grants("wc", ["text"], ["counts"])
    assert acls.describe(grants) == [
        "ALL on TOPIC wc-*",
        "READ on TOPIC text",
        "DESCRIBE on TOPIC text",
        "WRITE on TOPIC counts",
        "DESCRIBE on TOPIC counts",
        "READ on GROUP wc",
        "DESCRIBE on GROUP wc",
        "WRITE on TRANSACTIONAL_ID wc-*",
        "DESCRIBE on TRANSACTIONAL_ID wc-*",
    ]
    no_txn = acls.app_grants("wc", ["text"], ["counts"], transactions=False)
    assert [g for g in no_txn if g[0] == acls.TXN] == []


def test_the_operator_writes_only_its_history_topic() -> None:
    reading = acls.operator_grants("wc", ["text"], ["counts"])
    assert {op for *_, op in reading} == {acls.DESCRIBE}
    recording = acls.operator_grants("wc", ["text"], ["counts"], history_topic="segue-history")
    writes = [(kind, name) for kind, name, _, op in recording if op != acls.DESCRIBE]
    assert writes == [(acls.TOPIC, "segue-history")]


def test_bindings_allow_the_principal_from_any_host() -> None:
    (binding,) = acls.bindings("User:wc-app", [(acls.GROUP, "wc", acls.LITERAL, acls.READ)])
    assert (binding.principal, binding.host, binding.name) == ("User:wc-app", "*", "wc")
    assert binding.permission_type.name == "ALLOW"
