"""The external metrics API as the chart renders it: a serving certificate the
APIService's caBundle vouches for, under the Service's DNS names; the Service in front
of the operator's port; the flags and the mount that reach the operator; and the HPA
template, which refuses what could not work."""

from __future__ import annotations

import base64
from typing import Any

import yaml
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from .helm import FULLNAME, NAMESPACE, container, deployment, only, render, with_values

SERVICE = f"{FULLNAME}-external-metrics"


def decoded(secret: dict[str, Any], key: str) -> x509.Certificate:
    return x509.load_pem_x509_certificate(base64.b64decode(secret["data"][key]))


def test_the_apiservice_trusts_the_certificate_the_operator_serves() -> None:
    objects = render()
    (api,) = only(objects, "APIService")
    (secret,) = [s for s in only(objects, "Secret") if s["metadata"]["name"] == SERVICE]
    assert api["metadata"]["name"] == "v1beta1.external.metrics.k8s.io"
    assert api["spec"]["service"] == {"name": SERVICE, "namespace": NAMESPACE, "port": 443}
    assert api["spec"]["caBundle"] == secret["data"]["ca.crt"]
    ca, served = decoded(secret, "ca.crt"), decoded(secret, "tls.crt")
    served.verify_directly_issued_by(ca)  # raises if the CA did not sign it
    names = served.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    # The aggregation layer checks the name <service>.<namespace>.svc.
    assert f"{SERVICE}.{NAMESPACE}.svc" in names.get_values_for_type(x509.DNSName)
    usage = served.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.SERVER_AUTH in usage
    assert base64.b64decode(secret["data"]["tls.key"]).startswith(b"-----BEGIN RSA PRIVATE KEY")


def test_the_service_reaches_the_operators_https_port() -> None:
    objects = render({"externalMetrics": {"port": 7443}})
    (service,) = [s for s in only(objects, "Service") if s["metadata"]["name"] == SERVICE]
    assert service["spec"]["ports"] == [
        {"name": "https", "port": 443, "targetPort": "ext-metrics", "protocol": "TCP"}
    ]
    assert service["spec"]["selector"] == deployment(objects)["spec"]["selector"]["matchLabels"]
    ports = {p["name"]: p["containerPort"] for p in container(objects)["ports"]}
    assert ports["ext-metrics"] == 7443
    assert "--external-metrics-port=7443" in container(objects)["args"]


def test_off_renders_none_of_it_and_tells_the_operator() -> None:
    objects = render({"externalMetrics": {"enabled": False}})
    assert not only(objects, "APIService")
    assert not only(objects, "Secret")
    assert [s["metadata"]["name"] for s in only(objects, "Service")] == [f"{FULLNAME}-metrics"]
    assert not [r for r in only(objects, "Role") if r["metadata"]["namespace"] == "kube-system"]
    c = container(objects)
    assert "--external-metrics-port=0" in c["args"]
    assert not [a for a in c["args"] if a.startswith("--tls-")]
    assert [m["name"] for m in c["volumeMounts"]] == ["tmp"]


def test_the_hpa_targets_the_streamapp_through_scale_on_an_external_metric() -> None:
    (hpa,) = only(
        render({"hpa": {"enabled": True, "streamApp": "wordcount"}}), "HorizontalPodAutoscaler"
    )
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["metadata"]["namespace"] == NAMESPACE
    spec = hpa["spec"]
    assert spec["scaleTargetRef"] == {
        "apiVersion": "segue.dev/v1alpha1", "kind": "StreamApp", "name": "wordcount"
    }  # fmt: skip
    assert (spec["minReplicas"], spec["maxReplicas"]) == (1, 4)
    assert spec["metrics"] == [
        {
            "type": "External",
            "external": {
                "metric": {
                    "name": "segue-replicas-needed",
                    "selector": {"matchLabels": {"segue.dev/app": "wordcount"}},
                },
                "target": {"type": "AverageValue", "averageValue": "1"},
            },
        }
    ]
    up, down = spec["behavior"]["scaleUp"], spec["behavior"]["scaleDown"]
    assert up["stabilizationWindowSeconds"] < down["stabilizationWindowSeconds"]
    assert up["policies"]
    assert down["policies"]


def test_an_average_value_target_in_another_namespace() -> None:
    values = {
        "hpa": {
            "enabled": True,
            "streamApp": "wc",
            "namespace": "apps",
            "metric": "segue-lag-records",
            "target": {"type": "AverageValue", "value": "10k"},
        }
    }
    (hpa,) = only(render(values), "HorizontalPodAutoscaler")
    assert hpa["metadata"]["namespace"] == "apps"
    target = hpa["spec"]["metrics"][0]["external"]["target"]
    assert target == {"type": "AverageValue", "averageValue": "10k"}


def test_an_hpa_that_could_not_work_is_refused() -> None:
    cases = {
        "hpa.streamApp": {"hpa": {"enabled": True}},
        "externalMetrics.enabled": {
            "hpa": {"enabled": True, "streamApp": "wc"}, "externalMetrics": {"enabled": False}
        },
        "hpa.minReplicas": {"hpa": {"enabled": True, "streamApp": "wc", "minReplicas": 5}},
        "/hpa/metric": {"hpa": {"metric": "cpu"}},
        "/hpa/target/value": {"hpa": {"target": {"type": "Value", "value": "lots"}}},
    }  # fmt: skip
    for named, values in cases.items():
        result = with_values("template", values)
        assert result.returncode != 0, named
        assert named in result.stderr, (named, result.stderr)


def test_the_wordcount_example_hpa_scales_the_wordcount_example() -> None:
    from segue.operator.metricsapi import METRICS

    from .helm import ROOT

    app = yaml.safe_load((ROOT / "examples" / "wordcount.yaml").read_text())
    example = yaml.safe_load((ROOT / "examples" / "wordcount-hpa.yaml").read_text())
    assert (example["apiVersion"], example["kind"]) == ("autoscaling/v2", "HorizontalPodAutoscaler")
    spec = example["spec"]
    assert spec["scaleTargetRef"] == {
        "apiVersion": app["apiVersion"], "kind": app["kind"], "name": app["metadata"]["name"]
    }  # fmt: skip
    (metric,) = spec["metrics"]
    assert metric["external"]["metric"]["name"] in METRICS
    selector = metric["external"]["metric"]["selector"]
    assert selector == {"matchLabels": {"segue.dev/app": app["metadata"]["name"]}}
    assert spec["minReplicas"] <= app["spec"]["replicas"] <= spec["maxReplicas"]
    chart = only(
        render({"hpa": {"enabled": True, "streamApp": "wordcount"}}), "HorizontalPodAutoscaler"
    )
    assert spec["behavior"] == chart[0]["spec"]["behavior"]  # one recommendation
