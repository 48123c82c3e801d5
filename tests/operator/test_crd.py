"""The generated StreamApp CRD on the real kube-apiserver: it is accepted as a
structural schema, the server applies the models' defaults and rejects what the
models reject (HTTP 422 naming the field), unknown fields are pruned (or refused
with fieldValidation=Strict), status is a subresource, ``kubectl scale`` goes
through the scale subresource, and ``kubectl get`` prints the printer columns."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client import ApiException

from segue.operator.api import GROUP, PLURAL, VERSION, Scaling, StreamApp
from segue.stack.paths import Binaries

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("streamapp_crd")]
Manifest = Callable[..., dict[str, Any]]
DOC = Path(__file__).resolve().parents[2] / "docs" / "streamapp.md"


def documented_example() -> dict[str, Any]:
    """The first YAML block of docs/streamapp.md."""
    example: dict[str, Any] = yaml.safe_load(DOC.read_text().split("```yaml\n")[1].split("```")[0])
    return example


@pytest.fixture
def custom(kube_api: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(kube_api)


@pytest.fixture
def kubectl(binaries: Binaries, kube: Any, namespace: str, tmp_path: Path) -> Callable[..., str]:
    """``kubectl(*args, stdin=None, ok=True)`` in the test's namespace: stdout when it
    succeeds, stderr when it fails as expected (``ok=False``)."""

    def run(*args: str, stdin: str | None = None, ok: bool = True) -> str:
        done = subprocess.run(
            [
                str(binaries.kubectl),
                f"--kubeconfig={kube.kubeconfig}",
                f"--cache-dir={tmp_path / 'kubectl-cache'}",
                f"--namespace={namespace}",
                *args,
            ],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert (done.returncode == 0) == ok, f"kubectl {' '.join(args)}: {done.stderr}"
        return done.stdout if ok else done.stderr

    return run


def create(custom: client.CustomObjectsApi, namespace: str, body: dict[str, Any]) -> Any:
    return custom.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)


def read(custom: client.CustomObjectsApi, namespace: str, name: str) -> dict[str, Any]:
    got = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
    assert isinstance(got, dict)
    return got


def test_the_crd_is_established_and_structural(
    kube_api: client.ApiClient, streamapp_crd: str
) -> None:
    crd = client.ApiextensionsV1Api(kube_api).read_custom_resource_definition(streamapp_crd)
    status = crd.to_dict()["status"]
    conditions = {c["type"]: c["status"] for c in status["conditions"]}
    assert conditions["Established"] == "True"
    assert conditions["NamesAccepted"] == "True"
    assert "NonStructuralSchema" not in conditions
    assert status["accepted_names"]["short_names"] == ["sapp"]


def test_applying_the_crd_again_is_harmless(
    custom: client.CustomObjectsApi,
    namespace: str,
    manifest: Manifest,
    apply_streamapp_crd: Callable[[], str],
) -> None:
    create(custom, namespace, manifest())
    assert apply_streamapp_crd() == "streamapps.segue.dev"  # the replace path
    assert read(custom, namespace, "wordcount")["spec"]["replicas"] == 1


def test_minimal_manifest_gets_the_models_defaults(
    custom: client.CustomObjectsApi, namespace: str, manifest: Manifest
) -> None:
    create(custom, namespace, manifest())
    stored = read(custom, namespace, "wordcount")
    spec = stored["spec"]
    assert spec["replicas"] == 1
    assert spec["metricsPort"] == 9400
    assert spec["stateDir"] == "/var/lib/segue/state"
    assert spec["scaling"]["scaleDownTimeoutSeconds"] == 600
    assert spec["scaling"] == Scaling().model_dump(mode="json")
    assert spec["state"] == {"retention": "Delete"}
    assert "topology" not in spec
    # The server's defaulting and pydantic's agree field by field.
    assert StreamApp.from_object(stored).spec == StreamApp.from_object(manifest()).spec


def test_every_field_is_kept(
    custom: client.CustomObjectsApi, namespace: str, manifest: Manifest, full_spec: dict[str, Any]
) -> None:
    """Nothing the models define is pruned, and nothing is added to a full spec."""
    create(custom, namespace, manifest(**full_spec))
    assert read(custom, namespace, "wordcount")["spec"] == full_spec


def test_invalid_manifests_are_rejected_by_name(
    custom: client.CustomObjectsApi,
    namespace: str,
    manifest: Manifest,
    bad_spec: tuple[dict[str, Any], str],
) -> None:
    changes, field = bad_spec
    with pytest.raises(ApiException) as rejected:
        create(custom, namespace, manifest(**changes))
    assert rejected.value.status == 422, rejected.value.body
    assert field in str(rejected.value.body)


def test_missing_application_id_is_rejected(
    custom: client.CustomObjectsApi, namespace: str, manifest: Manifest
) -> None:
    body = manifest()
    del body["spec"]["applicationId"]
    with pytest.raises(ApiException) as rejected:
        create(custom, namespace, body)
    assert rejected.value.status == 422
    assert "spec.applicationId: Required value" in str(rejected.value.body)


def test_the_message_gives_field_and_reason(
    custom: client.CustomObjectsApi, namespace: str, manifest: Manifest
) -> None:
    with pytest.raises(ApiException) as rejected:
        create(custom, namespace, manifest(scaling={"learnerPromotion": "lazy"}))
    assert 'spec.scaling.learnerPromotion: Unsupported value: \\"lazy\\"' in str(
        rejected.value.body
    )


def test_the_documented_example_is_accepted(namespace: str, kubectl: Any) -> None:
    kubectl("apply", "-f", "-", stdin=yaml.safe_dump(documented_example()))
    assert kubectl("get", "sapp", "wordcount", "-o", "jsonpath={.spec.replicas}") == "3"


def test_kubectl_apply_refuses_unknown_fields(
    namespace: str, manifest: Manifest, kubectl: Any
) -> None:
    typo = manifest(scaling={"scaleDownTimeout": 5})
    error = kubectl("apply", "-f", "-", stdin=yaml.safe_dump(typo), ok=False)
    assert 'unknown field "spec.scaling.scaleDownTimeout"' in error


def test_unknown_fields_are_pruned_or_refused_when_strict(
    custom: client.CustomObjectsApi, namespace: str, manifest: Manifest
) -> None:
    typo = manifest(scaling={"scaleDownTimeout": 5})  # for scaleDownTimeoutSeconds
    with pytest.raises(ApiException) as refused:
        custom.create_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, typo, field_validation="Strict"
        )
    assert refused.value.status == 400, refused.value.body  # strict decoding: BadRequest
    assert 'unknown field \\"spec.scaling.scaleDownTimeout\\"' in str(refused.value.body)
    # Without Strict (the default is Warn) the server drops the field and keeps the rest.
    create(custom, namespace, typo)
    scaling = read(custom, namespace, "wordcount")["spec"]["scaling"]
    assert "scaleDownTimeout" not in scaling
    assert scaling["scaleDownTimeoutSeconds"] == 600


def test_status_is_a_subresource_and_validated(
    custom: client.CustomObjectsApi,
    namespace: str,
    manifest: Manifest,
    full_status: dict[str, Any],
) -> None:
    create(custom, namespace, {**manifest(), "status": {"replicas": 5}})
    assert "status" not in read(custom, namespace, "wordcount")  # ignored on the main resource
    custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, namespace, PLURAL, "wordcount", {"status": full_status}
    )
    stored = read(custom, namespace, "wordcount")
    assert stored["status"] == full_status
    assert StreamApp.from_object(stored).status is not None
    with pytest.raises(ApiException) as rejected:
        custom.patch_namespaced_custom_object_status(
            GROUP, VERSION, namespace, PLURAL, "wordcount", {"status": {"phase": "Bogus"}}
        )
    assert rejected.value.status == 422
    assert "status.phase" in str(rejected.value.body)


def test_kubectl_scale_uses_the_scale_subresource(
    custom: client.CustomObjectsApi, namespace: str, manifest: Manifest, kubectl: Any
) -> None:
    create(custom, namespace, manifest())
    kubectl("scale", "streamapp/wordcount", "--replicas=3")
    assert read(custom, namespace, "wordcount")["spec"]["replicas"] == 3
    selector = "app.kubernetes.io/managed-by=segue,segue.dev/app=wordcount"
    custom.patch_namespaced_custom_object_status(
        GROUP,
        VERSION,
        namespace,
        PLURAL,
        "wordcount",
        {"status": {"replicas": 2, "selector": selector}},
    )
    scale = custom.get_namespaced_custom_object_scale(
        GROUP, VERSION, namespace, PLURAL, "wordcount"
    )
    assert isinstance(scale, dict)
    assert scale["kind"] == "Scale"
    assert scale["spec"] == {"replicas": 3}
    assert scale["status"] == {"replicas": 2, "selector": selector}


def test_kubectl_get_prints_the_columns(
    custom: client.CustomObjectsApi, namespace: str, manifest: Manifest, kubectl: Any
) -> None:
    create(custom, namespace, manifest(replicas=4))
    scaled = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 600))
    status = {
        "readyReplicas": 3,
        "updatedReplicas": 2,
        "phase": "Scaling",
        "assignmentGeneration": 12,
        "maxLag": 250,
        "lastScaleTime": scaled,
    }
    custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, namespace, PLURAL, "wordcount", {"status": status}
    )
    header, row = kubectl("get", "sapp").splitlines()
    assert header.split() == [
        "NAME", "REPLICAS", "READY", "UPDATED", "PHASE", "GENERATION", "LAG", "LAST", "SCALE",
        "AGE",
    ]  # fmt: skip
    assert row.split()[:8] == ["wordcount", "4", "3", "2", "Scaling", "12", "250", "10m"]
