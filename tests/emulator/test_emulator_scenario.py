"""Loading scenario source directories: layering, filled-in metadata, and clear errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from emulatorkit import TF_BASIC
from kubernetes.client import models
from scenarioloader import (
    DEFAULT_CREATION_TIMESTAMP,
    ScenarioError,
    load_scenario,
    scenario_names,
)

from emulator.cluster import ClusterData, LogKey, version_info
from k8s.helm_record import decode_record

SAMPLE_BUNDLES = Path(__file__).parents[2] / "sample_bundles"


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def _names(data: ClusterData, key: tuple[str, str]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in data.objects.get(key, []))


POD_A = """
    apiVersion: v1
    kind: Pod
    metadata: {name: a, namespace: ml, labels: {v: base}}
    spec: {containers: [{name: main, image: busybox}]}
    """


@pytest.fixture
def layered(tmp_path: Path) -> Path:
    _write(
        tmp_path,
        {
            "_shared/objects.yaml": """
            apiVersion: v1
            kind: Namespace
            metadata: {name: ml}
            """,
            "base/scenario.yaml": "description: base\nserverVersion: v1.29.8-eks-a737599\n",
            "base/objects/pods.yaml": POD_A + "---\n" + POD_A.replace("name: a,", "name: b,"),
            "base/logs/ml/a/main.log": "base line\n",
            "base/logs/ml/b/main.log": "b line\n",
            "child/scenario.yaml": """
            description: child
            base: base
            include: [_shared/objects.yaml]
            delete: [Pod/ml/b]
            """,
            "child/objects/pods.yaml": POD_A.replace("v: base", "v: child"),
            "child/logs/ml/a/main.previous.log": "previous line\n",
        },
    )
    return tmp_path


def test_layering_base_include_override_delete(layered: Path) -> None:
    data = load_scenario(layered / "child")
    assert _names(data, ("", "pods")) == ["a"]
    assert data.objects[("", "pods")][0]["metadata"]["labels"] == {"v": "child"}
    assert _names(data, ("", "namespaces")) == ["ml"]
    assert data.logs == {
        LogKey("ml", "a", "main"): "base line\n",
        LogKey("ml", "a", "main", previous=True): "previous line\n",
    }  # the deleted pod's logs went with it
    assert data.server_version["gitVersion"] == "v1.29.8-eks-a737599"  # inherited
    assert data.server_version["minor"] == "29+"


def test_scenario_names(layered: Path) -> None:
    assert scenario_names(layered) == ["base", "child"]
    assert scenario_names(layered / "missing") == []


def test_metadata_is_filled_deterministically(layered: Path) -> None:
    first, second = load_scenario(layered / "child"), load_scenario(layered / "child")
    meta = first.objects[("", "pods")][0]["metadata"]
    assert meta == second.objects[("", "pods")][0]["metadata"]
    assert meta["uid"] and meta["resourceVersion"].isdigit()
    assert meta["creationTimestamp"] == DEFAULT_CREATION_TIMESTAMP
    # the source objects are not modified by loading
    assert "uid" not in (layered / "child/objects/pods.yaml").read_text()


def test_tf_basic_references_and_types(tf_data: ClusterData) -> None:
    pods = {p["metadata"]["name"]: p for p in tf_data.objects[("", "pods")]}
    controller = pods["tensor-fusion-sys-controller-6d8f9c7b5d-x7k2p"]
    event = next(
        e
        for e in tf_data.objects[("", "events")]
        if e["involvedObject"]["name"] == controller["metadata"]["name"]
    )
    assert event["involvedObject"]["uid"] == controller["metadata"]["uid"]
    rs = tf_data.objects[("apps", "replicasets")][0]
    assert controller["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]
    gpus = tf_data.types[("tensor-fusion.ai", "gpus")]
    assert (gpus.kind, gpus.namespaced, gpus.singular, gpus.version) == ("GPU", False, "gpu", "v1")
    assert [c["name"] for c in gpus.printer_columns][:2] == ["GPU Model", "Phase"]
    # fields the API always sets are completed, so typed clients accept the objects
    status = controller["status"]["containerStatuses"][0]
    assert (status["image"], status["imageID"]) == (
        "tensorfusion/tensor-fusion-operator:1.35.2",
        "",
    )
    node = tf_data.objects[("", "nodes")][0]
    assert node["status"]["nodeInfo"]["architecture"] == "amd64"


TYPED = {
    ("", "pods"): models.V1Pod,
    ("", "nodes"): models.V1Node,
    ("", "namespaces"): models.V1Namespace,
    ("", "events"): models.CoreV1Event,
    ("apps", "deployments"): models.V1Deployment,
    ("apps", "replicasets"): models.V1ReplicaSet,
    ("apps", "daemonsets"): models.V1DaemonSet,
    ("apps", "statefulsets"): models.V1StatefulSet,
    ("", "configmaps"): models.V1ConfigMap,
    ("", "services"): models.V1Service,
}


def _scenario_dirs() -> list[Path]:
    return [TF_BASIC] + [SAMPLE_BUNDLES / n for n in scenario_names(SAMPLE_BUNDLES)]


@pytest.mark.parametrize("path", _scenario_dirs(), ids=lambda path: path.name)
def test_every_scenario_loads_and_suits_the_typed_client(path: Path) -> None:
    # tf-basic and every sample scenario: a scenario the collector's client cannot read is broken
    data = load_scenario(path)
    for key, model in TYPED.items():
        for obj in data.objects.get(key, []):
            if hasattr(model, "from_dict"):  # kubernetes >= 35 validates with pydantic
                model.from_dict(obj)


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"s/objects/x.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"},
            r"s/objects/x.yaml: Widget/w: no resource type for apiVersion 'example.com/v1' kind 'Widget'",
        ),
        (
            {
                "s/objects/x.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: k, namespace: d}\n"
            },
            r"Secret/d/k: Secrets are never served",
        ),
        (
            {"s/objects/x.yaml": "apiVersion: v1\nkind: Node\nmetadata: {name: n, namespace: d}\n"},
            r"Node is cluster-scoped; remove metadata.namespace",
        ),
        (
            {"s/objects/x.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {labels: {}}\n"},
            r"x.yaml: document 1 \(Pod\): metadata.name is missing",
        ),
        (
            {"s/objects/x.yaml": "kind: Pod\nmetadata: {name: p}\n"},
            r"document 1: apiVersion is missing",
        ),
        ({"s/objects/x.yaml": "a: [\n"}, r"x.yaml: invalid YAML"),
        ({"s/logs/ml/p/c.log": "x\n"}, r"c.log: no pod ml/p in the scenario"),
        (
            {"s/objects/p.yaml": POD_A, "s/logs/ml/a/other.log": "x\n"},
            r"pod ml/a has no container 'other' \(it has: main\)",
        ),
        (
            {"s/logs/ml/c.log": "x\n"},
            r"logs must be logs/<namespace>/<pod>/<container>\[.previous\].log",
        ),
        ({"s/scenario.yaml": "descripton: typo\n"}, r"unknown key\(s\) descripton"),
        ({"s/helm/r.yaml": "namespace: d\n"}, r"helm/r.yaml: namespace and chart.name/version"),
        (
            {"s/helm/r.yaml": "namespace: d\nchart: {version: 1}\nvalue: {}\n"},
            r"helm/r.yaml: unknown key\(s\) value",
        ),
        (
            {"s/helm/r.yaml": "namespace: d\nchart: {version: 1}\ndriver: sql\n"},
            r"driver must be secret or configmap",
        ),
        ({"s/scenario.yaml": "base: s\n"}, r"base cycle: s -> s"),
        ({"s/scenario.yaml": "base: nowhere\n"}, r"nowhere/scenario.yaml: not found"),
        (
            {"s/scenario.yaml": "include: [missing.yaml]\n"},
            r"include .*missing.yaml does not exist",
        ),
        ({"s/scenario.yaml": "delete: [Pod/ml/ghost]\n"}, r"delete 'Pod/ml/ghost': no such object"),
        ({"s/scenario.yaml": "delete: [Pod]\n"}, r"must be Kind/namespace/name or Kind/name"),
        (
            {"s/scenario.yaml": "serverVersion: latest\n"},
            r"serverVersion 'latest' is not like v1.30.4",
        ),
        (
            {
                "s/objects/crd.yaml": """
            apiVersion: apiextensions.k8s.io/v1
            kind: CustomResourceDefinition
            metadata: {name: wrong.example.com}
            spec: {group: example.com, scope: Cluster, names: {plural: widgets, kind: Widget},
                   versions: [{name: v1, served: true}]}
            """
            },
            r"CustomResourceDefinition/wrong.example.com: metadata.name must be widgets.example.com",
        ),
    ],
)
def test_errors_name_the_file_and_object(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    _write(tmp_path, {"s/scenario.yaml": "description: broken\n", **files})
    with pytest.raises(ScenarioError, match=message):
        load_scenario(tmp_path / "s")


def test_crd_versions_lists_and_defaults(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "s/scenario.yaml": "description: crd\n",
            "s/objects/crd.yaml": """
            apiVersion: apiextensions.k8s.io/v1
            kind: CustomResourceDefinition
            metadata: {name: widgets.example.com}
            spec:
              group: example.com
              scope: Namespaced
              names: {plural: widgets, kind: Widget, shortNames: [wd], categories: [all]}
              versions:
              - {name: v1alpha1, served: true}
              - {name: v1beta2, served: true}
              - {name: v1, served: false}
            """,
            "s/objects/widgets.yaml": """
            apiVersion: v1
            kind: List
            items:
            - {apiVersion: example.com/v1alpha1, kind: Widget, metadata: {name: w1}}
            - {apiVersion: example.com/v1beta2, kind: Widget, metadata: {name: w2, namespace: ml}}
            """,
        },
    )
    data = load_scenario(tmp_path / "s")
    widgets = data.types[("example.com", "widgets")]
    assert (widgets.version, widgets.short_names, widgets.singular) == (
        "v1beta2",
        ("wd",),
        "widget",
    )
    objs = {o["metadata"]["name"]: o for o in data.objects[("example.com", "widgets")]}
    assert objs["w1"]["apiVersion"] == "example.com/v1beta2"  # served version, converted
    assert objs["w1"]["metadata"]["namespace"] == "default"  # like kubectl apply


def test_version_info() -> None:
    info = version_info("v1.30.4")
    assert (info["major"], info["minor"], info["gitVersion"], info["platform"]) == (
        "1",
        "30",
        "v1.30.4",
        "linux/amd64",
    )


@pytest.mark.parametrize("driver", ["secret", "configmap"])
def test_helm_release_is_stored_as_helm_stores_it(tmp_path: Path, driver: str) -> None:
    _write(
        tmp_path,
        {
            "s/scenario.yaml": "description: helm\n",
            "s/helm/tf.yaml": f"""
            namespace: tensor-fusion-sys
            revision: 3
            driver: {driver}
            chart: {{name: tensor-fusion, version: 1.8.7, appVersion: 2.17.0}}
            values: {{greptime: {{password: hunter2}}}}
            manifest: "kind: Secret"
            """,
        },
    )
    data = load_scenario(tmp_path / "s")
    key = ("", "secrets") if driver == "secret" else ("", "configmaps")
    (record,) = data.objects[key]
    assert record["metadata"]["name"] == "sh.helm.release.v1.tf.v3"
    assert record["metadata"]["labels"] == {
        "name": "tf",
        "owner": "helm",
        "status": "deployed",
        "version": "3",
    }
    if driver == "secret":
        assert record["type"] == "helm.sh/release.v1"
    # What the collector decodes: gzip + base64 (+ base64 for a Secret).
    release = decode_record(record, from_secret=driver == "secret")
    assert release["chart"]["metadata"] == {
        "apiVersion": "v2",
        "name": "tensor-fusion",
        "version": "1.8.7",
        "appVersion": "2.17.0",
    }
    assert release["version"] == 3
    assert release["config"] == {"greptime": {"password": "hunter2"}}
