"""deploy/: the HAProxy configuration `make replicas` runs, the Dockerfile, the Kubernetes manifests.

This machine runs no container engine or cluster, so the paper is checked for what can go wrong on
paper: every manifest parses and fits the others (labels, ports, probes, the HPA's target), every
`COLONNADE_*` variable and every colonnade.yaml key they name is a setting the gateway accepts (its
own loader reads them, and it refuses unknown names), and the HAProxy configuration, filled in,
passes `haproxy -c` and balances round-robin without stickiness.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from scripts.replica_setup import find_haproxy, haproxy_config, replica_environment

from colonnade.config import ConfigError, Settings, load_settings
from tests.support.repo import ROOT

DEPLOY = ROOT / "deploy"
MANIFESTS = sorted((DEPLOY / "kubernetes").glob("*.yaml"))
ENV_LINE = re.compile(r"\b(COLONNADE_[A-Z0-9_]+)=(\S*)")
# What a variable filled from a Secret holds, so the loader can read it like the real value.
SECRET_VALUES = {"COLONNADE_DATABASE_URL": "postgresql+asyncpg://colonnade@db.example.com/colonnade"}


def _documents() -> dict[str, dict[str, Any]]:
    """Every manifest document by kind (each kind appears once)."""
    documents: dict[str, dict[str, Any]] = {}
    for path in MANIFESTS:
        for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            assert {"apiVersion", "kind", "metadata"} <= set(document), (path.name, document)
            assert document["kind"] not in documents, f"{document['kind']} twice"
            documents[document["kind"]] = document
    return documents


def _settings(environ: dict[str, str], config: Path | None = None) -> Settings:
    """The gateway's own loader on these variables (and file): unknown names are refused by it."""
    try:
        return load_settings(config, environ=environ)
    except ConfigError as exc:
        pytest.fail(f"not real settings: {exc.problems}")


def test_the_manifests_are_the_four_kinds_and_fit_together() -> None:
    documents = _documents()
    assert set(documents) == {"ConfigMap", "Deployment", "Service", "HorizontalPodAutoscaler"}
    deployment, service, hpa = (
        documents["Deployment"],
        documents["Service"],
        documents["HorizontalPodAutoscaler"],
    )
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["sessionAffinity"] == "None"  # any replica serves any request
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert service["spec"]["ports"][0]["targetPort"] in ports
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["resources"]["requests"]["cpu"], "the HPA's utilisation is against the CPU request"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    (metric,) = hpa["spec"]["metrics"]
    assert metric["resource"]["name"] == "cpu"
    assert hpa["spec"]["minReplicas"] >= 2


def test_the_manifests_name_only_real_settings(tmp_path: Path) -> None:
    documents = _documents()
    config_map, deployment = documents["ConfigMap"], documents["Deployment"]
    spec = deployment["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    environ: dict[str, str] = {}
    for variable in container["env"]:
        name = variable["name"]
        assert name.startswith("COLONNADE_"), name
        environ[name] = variable.get("value") or SECRET_VALUES[name]
    # The config file is where COLONNADE_CONFIG says, from the ConfigMap the volume mounts.
    (mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == environ["COLONNADE_CONFIG"]]
    (volume,) = [v for v in spec["volumes"] if v["name"] == mount["name"]]
    assert volume["configMap"]["name"] == config_map["metadata"]["name"]
    config = tmp_path / "colonnade.yaml"
    config.write_text(config_map["data"][mount["subPath"]], encoding="utf-8")
    environ["COLONNADE_CONFIG"] = str(config)

    settings = _settings(environ)

    assert settings.database_url == SECRET_VALUES["COLONNADE_DATABASE_URL"]
    assert settings.server.port in {p["containerPort"] for p in container["ports"]}
    assert settings.auth.configured, "a gateway listening beyond loopback needs authentication"
    keys = {m["mountPath"] for m in container["volumeMounts"] if m["name"] == "keys"}
    assert {str(settings.audit.key_file.parent), str(settings.approvals.key_file.parent)} == keys  # type: ignore[union-attr]
    grace = spec["terminationGracePeriodSeconds"]
    assert grace > settings.server.drain_timeout_s, "the pod is killed before its calls have drained"


def test_the_dockerfile_names_only_real_settings() -> None:
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    environ = dict(ENV_LINE.findall(text.split("\nFROM ", 2)[-1]))  # the final stage's ENV
    assert "COLONNADE_SERVER__HOST" in environ, environ
    environ["COLONNADE_AUTH__RESOURCE"] = "https://gateway.example.com/mcp"  # given by `docker run -e`

    settings = _settings(environ)

    assert f"EXPOSE {settings.server.port}" in text
    assert settings.auth.configured
    assert re.search(r'^CMD \["colonnade", "serve"\]$', text, re.M)
    # The run example's variables are settings too.
    _settings({**dict(ENV_LINE.findall(text.split("\nFROM ", 1)[0])), **environ})


def test_a_replicas_environment_names_only_real_settings(tmp_path: Path) -> None:
    environ = replica_environment(
        {},
        data_dir=tmp_path / "r1",
        database_url="postgresql+asyncpg://postgres@127.0.0.1:5432/colonnade_replicas",
        keys=(tmp_path / "audit.key", tmp_path / "approval-signing.jwk"),
        contracts=[tmp_path / "contracts"],
        lb_url="http://127.0.0.1:8765",
        redis_url="redis://127.0.0.1:6379/0",
    )
    settings = _settings(environ)
    assert settings.auth.resource == "http://127.0.0.1:8765/mcp"
    assert settings.audit.key_file == tmp_path / "audit.key"


def test_the_haproxy_template_balances_round_robin_without_stickiness() -> None:
    config = haproxy_config(8765, [9001, 9002, 9003])
    assert "$" not in config, "a placeholder was left unfilled"
    backend = config.split("backend replicas", 1)[1]
    assert re.search(r"^\s+balance roundrobin$", backend, re.M)
    assert [line.split()[1:3] for line in backend.splitlines() if line.strip().startswith("server ")] == [
        ["r1", "127.0.0.1:9001"],
        ["r2", "127.0.0.1:9002"],
        ["r3", "127.0.0.1:9003"],
    ]
    words = {word for line in config.splitlines() for word in line.split("#", 1)[0].split()}
    assert not words & {"cookie", "stick", "stick-table", "hash-type", "prefer-last-server"}
    # A request that reached a replica is never resent by the balancer: only failed connections are.
    assert re.search(r"^\s+retry-on conn-failure$", config, re.M)


def test_haproxy_accepts_the_filled_in_configuration(tmp_path: Path) -> None:
    haproxy = find_haproxy()
    if haproxy is None:
        pytest.skip("HAProxy is not installed: `make haproxy` installs Debian's package (as root)")
    path = tmp_path / "haproxy.cfg"
    path.write_text(haproxy_config(8765, [9001, 9002, 9003]), encoding="utf-8")

    checked = subprocess.run([haproxy, "-c", "-f", str(path)], capture_output=True, text=True, timeout=60)

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Configuration file is valid" in checked.stdout + checked.stderr
