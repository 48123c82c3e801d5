"""What ``helm install`` prints: the mode it runs in, and how to apply a first StreamApp."""

from __future__ import annotations

from .helm import NAMESPACE, notes


def test_cluster_mode_notes_say_so_and_show_the_first_streamapp() -> None:
    text = notes()
    assert "Mode: cluster-wide" in text
    assert "kubectl apply -n default -f examples/wordcount.yaml" in text
    assert "kubectl get sapp -n default -w" in text
    assert f"Lease {NAMESPACE}/demo-segue" in text


def test_namespaced_mode_notes_name_the_namespaces_and_apply_into_the_first() -> None:
    text = notes({"watchNamespaces": ["team-a", "team-b"], "leaderElection": {"enabled": False}})
    assert "Mode: namespaced. The operator watches StreamApps only in: team-a, team-b." in text
    assert "kubectl apply -n team-a -f examples/wordcount.yaml" in text
    assert "Leader election: off" in text
