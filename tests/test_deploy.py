"""The deployment files in deploy/ say what docs/deploy.md says they do: every YAML
parses, the configs are valid sleuth settings on Redis, the compose file runs three
HTTP-only replicas, two workers and a proxy that does not buffer task events, and the
Kubernetes manifests probe /readyz and /healthz, autoscale the deployments that exist
and let the pods reach only DNS, Redis and the egress proxy."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from sleuth.config import Settings, load_settings

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
K8S = DEPLOY / "k8s"
ALL_INTERFACES = "0.0.0.0"  # noqa: S104 - what the containers bind to, read here
SERVE_ARGS = ["serve", "--host", ALL_INTERFACES, "--port", "8080", "--no-workers"]


def documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def manifests() -> list[dict[str, Any]]:
    paths = sorted(set(K8S.glob("*.yaml")) - {K8S / "kustomization.yaml"})
    return [doc for path in paths for doc in documents(path)]


def one(kind: str, name: str) -> dict[str, Any]:
    (found,) = [m for m in manifests() if m["kind"] == kind and m["metadata"]["name"] == name]
    return found


def settings_from(text: str, tmp_path: Path) -> Settings:
    path = tmp_path / "sleuth.yaml"
    path.write_text(text, encoding="utf-8")
    return load_settings(path)


def ours(path: Path) -> bool:
    return "grafana" not in path.relative_to(DEPLOY).parts  # deploy/grafana has its own


@pytest.mark.parametrize(
    "path",
    [p for p in sorted(DEPLOY.rglob("*.y*ml")) if ours(p)],
    ids=lambda p: str(p.relative_to(DEPLOY)),
)
def test_every_yaml_file_parses(path: Path) -> None:
    assert documents(path)


# --- compose -------------------------------------------------------------------------


def test_compose_runs_redis_three_http_replicas_two_workers_and_a_proxy(tmp_path: Path) -> None:
    (compose,) = documents(DEPLOY / "compose.yaml")
    services = compose["services"]
    assert services["redis"]["image"].startswith("redis:7")
    replicas = [services[f"sleuth-{n}"] for n in (1, 2, 3)]
    assert all(replica["command"] == SERVE_ARGS for replica in replicas)
    assert all("/readyz" in replica["healthcheck"]["test"][-1] for replica in replicas)
    assert services["worker"]["command"] == ["worker"]
    assert services["worker"]["deploy"]["replicas"] == 2
    assert services["proxy"]["image"].startswith("nginx:")
    assert set(services["proxy"]["depends_on"]) == {"sleuth-1", "sleuth-2", "sleuth-3"}
    assert all(s["build"]["dockerfile"] == "deploy/Dockerfile" for s in [*replicas])

    settings = settings_from((DEPLOY / "sleuth.yaml").read_text(encoding="utf-8"), tmp_path)
    assert settings.store.backend == "redis"
    assert urlsplit(settings.store.url).hostname == "redis"  # the compose service
    assert settings.serve.auth_required(ALL_INTERFACES)
    grace = int(services["worker"]["stop_grace_period"].removesuffix("s"))
    assert grace > settings.serve.shutdown_grace_s


def test_the_proxy_balances_the_replicas_and_streams_task_events_unbuffered() -> None:
    conf = (DEPLOY / "nginx.conf").read_text(encoding="utf-8")
    upstream = re.search(r"upstream sleuth \{(.*?)\}", conf, re.S)
    assert upstream is not None
    assert re.findall(r"server (sleuth-\d):8080", upstream.group(1)) == [
        "sleuth-1",
        "sleuth-2",
        "sleuth-3",
    ]
    events = re.search(r"location ~ \^/v1/tasks/\[\^/\]\+/events\$ \{(.*?)\}", conf, re.S)
    assert events is not None
    assert "proxy_buffering off;" in events.group(1)
    assert "proxy_pass http://sleuth;" in events.group(1)


def test_the_image_is_built_from_the_repository_and_serves_http_only_by_default() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    assert "pip install --no-cache-dir ." in dockerfile
    assert not re.search(r"--(extra-)?index-url|\s-i\s", dockerfile)  # the default index only
    assert 'CMD ["serve", "--host", "0.0.0.0", "--port", "8080", "--no-workers"]' in dockerfile
    assert re.search(r"^USER 10001", dockerfile, re.M)


# --- Kubernetes ----------------------------------------------------------------------


def test_kustomization_lists_every_manifest() -> None:
    (kustomization,) = documents(K8S / "kustomization.yaml")
    files = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization["resources"]) == files
    # A manifest without a namespace gets kustomize's, which must then be "sleuth".
    assert kustomization["namespace"] == "sleuth"
    assert all(m["metadata"].get("namespace", "sleuth") == "sleuth" for m in manifests())


def test_the_configmap_is_valid_settings_on_redis_through_the_egress_proxy(
    tmp_path: Path,
) -> None:
    config = one("ConfigMap", "sleuth-config")
    settings = settings_from(config["data"]["sleuth.yaml"], tmp_path)
    assert settings.store.backend == "redis"
    redis_host = urlsplit(settings.store.url).hostname or ""
    assert redis_host.split(".")[0] == one("Service", "redis")["metadata"]["name"]
    assert settings.egress_proxy is not None
    proxy = urlsplit(settings.egress_proxy)
    assert proxy.port == 3128
    for name in ("sleuth-serve", "sleuth-worker"):
        pod = one("Deployment", name)["spec"]["template"]["spec"]
        assert pod["terminationGracePeriodSeconds"] > settings.serve.shutdown_grace_s
        assert {"configMap": {"name": "sleuth-config"}, "name": "config"} in pod["volumes"]


def test_serve_pods_are_probed_on_readyz_and_healthz_and_workers_run_tasks() -> None:
    serve = one("Deployment", "sleuth-serve")
    (container,) = serve["spec"]["template"]["spec"]["containers"]
    assert container["args"] == SERVE_ARGS
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert ports == {"http": 8080}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    service = one("Service", "sleuth")
    assert (
        service["spec"]["selector"].items()
        <= serve["spec"]["template"]["metadata"]["labels"].items()
    )

    worker = one("Deployment", "sleuth-worker")
    (container,) = worker["spec"]["template"]["spec"]["containers"]
    assert container["args"] == ["worker"]


def test_autoscalers_target_the_deployments_on_cpu() -> None:
    targets = {}
    for hpa in (m for m in manifests() if m["kind"] == "HorizontalPodAutoscaler"):
        ref = hpa["spec"]["scaleTargetRef"]
        assert ref["kind"] == "Deployment"
        one("Deployment", ref["name"])  # exists
        (metric,) = hpa["spec"]["metrics"]
        assert metric["resource"]["name"] == "cpu"
        targets[ref["name"]] = hpa["spec"]["minReplicas"]
    assert targets == {"sleuth-serve": 3, "sleuth-worker": 2}


def test_the_network_policy_lets_sleuth_reach_only_dns_redis_and_the_egress_proxy() -> None:
    deny = one("NetworkPolicy", "default-deny")
    assert deny["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}

    policy = one("NetworkPolicy", "sleuth-egress")
    assert policy["spec"]["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "sleuth"}
    rules = policy["spec"]["egress"]
    # Every rule names its peers (an empty `to` would allow every destination).
    assert all(rule.get("to") for rule in rules)
    allowed = {
        (port["protocol"], port["port"]): [
            peer["podSelector"]["matchLabels"] for peer in rule["to"]
        ]
        for rule in rules
        for port in rule["ports"]
    }
    assert set(allowed) == {("UDP", 53), ("TCP", 53), ("TCP", 6379), ("TCP", 3128)}
    assert allowed[("UDP", 53)] == [{"k8s-app": "kube-dns"}]
    assert allowed[("TCP", 6379)] == [{"app.kubernetes.io/name": "redis"}]
    assert allowed[("TCP", 3128)] == [{"app.kubernetes.io/name": "egress-proxy"}]
    redis_pods = one("StatefulSet", "redis")["spec"]["template"]["metadata"]["labels"]
    assert redis_pods["app.kubernetes.io/name"] == "redis"

    # Redis takes connections from sleuth alone and makes none.
    redis_policy = one("NetworkPolicy", "redis")
    assert "egress" not in redis_policy["spec"]
    assert "Egress" in redis_policy["spec"]["policyTypes"]
    (ingress,) = redis_policy["spec"]["ingress"]
    assert ingress["from"] == [
        {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "sleuth"}}}
    ]
