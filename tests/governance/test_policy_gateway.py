"""The policy gate in a running gateway, over REST and MCP with a loopback backend: denials,
the approval obligation, output redaction, attestations, reload without restart, and fail-closed
on a broken policy set. The backend's request log proves what never ran."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from joserfc.jwk import ECKey

from colonnade.config import PolicySettings
from colonnade.store.audit_repo import AuditFilter, StoredAudit
from tests.support.attestation import attest
from tests.support.dpop import proof
from tests.support.governed import Governed, governed_gateway

# The gateway compiles a policy set of its own in a child process first (crash-safe), so every test
# here starts one.
pytestmark = pytest.mark.integration

POLICY = """package colonnade.policy

import rego.v1

deny contains "the value 'forbidden' may not be written" if {
	input.tool.operation == "write_item"
	input.arguments.value == "forbidden"
}

require_approval contains "item I-9 is precious: a human looks first" if input.arguments.item_id == "I-9"

require_attestation contains "agents attest their writes" if {
	input.principal.kind == "agent"
	input.tool.side_effects == "write"
}

redact_output_fields contains "value" if input.tool.operation == "read_item"
"""

AGENT_KEY = ECKey.generate_key("P-256", auto_kid=True)
STRANGER = ECKey.generate_key("P-256", auto_kid=True)
WRITE = "acme:items:write_item"


@pytest.fixture(scope="module")
def policies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("policies")
    (directory / "items.rego").write_text(POLICY)
    return directory


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory, policies: Path) -> Iterator[Governed]:
    settings = PolicySettings(directories=[policies], reload_interval_s=0.2)
    with governed_gateway(tmp_path_factory.mktemp("policy-gw"), policy=settings) as running:
        with running.rest(running.token("security", sub="officer")) as client:
            agent = {
                "agent_id": "writer-bot",
                "allowed_tools": ["acme:items:*"],
                "public_key": dict(AGENT_KEY.as_dict(private=False)),
            }
            assert client.post("/v1/agents", json=agent).status_code == 201
        yield running


def _audit(governed: Governed, call_id: str) -> StoredAudit:
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    records = governed.running.run(audit.store.query(AuditFilter(kind="call"), limit=500))
    (record,) = [record for record in records if record.call_id == call_id]
    return record


def _post(governed: Governed, token: str, body: dict[str, Any]) -> dict[str, Any]:
    with governed.rest(token) as client:
        return dict(client.post("/v1/calls", json=body).json())


def test_a_denied_call_is_refused_audited_and_never_reaches_the_backend(governed: Governed) -> None:
    admin, hits = governed.token("admin"), len(governed.backend_hits())
    call_id = str(uuid.uuid4())
    body = {"call_id": call_id, "tool_id": WRITE, "input": {"item_id": "I-1", "value": "forbidden"}}
    refused = _post(governed, admin, body)
    assert refused["error"]["code"] == "A-AUTH-POLICY-DENIED"
    assert refused["error"]["details"]["reasons"] == ["the value 'forbidden' may not be written"]
    version = governed.running.gateway.governance.policy.version  # type: ignore[union-attr]
    assert refused["error"]["details"]["policy_version"] == version
    record = _audit(governed, call_id)
    assert (record.decision, record.code) == ("deny", "A-AUTH-POLICY-DENIED")
    assert record.reasons == ["the value 'forbidden' may not be written"]
    assert record.details["policy"]["policy_version"] == version
    assert len(governed.backend_hits()) == hits
    assert _post(governed, admin, {"tool_id": WRITE, "input": {"item_id": "I-1", "value": "fine"}})[
        "status"
    ] == ("success")


async def test_mcp_clients_meet_the_same_denial_and_redaction(governed: Governed) -> None:
    hits = len(governed.backend_hits())
    async with governed.mcp(governed.token("admin")) as client:
        denied = await client.call_tool("acme__items__write_item", {"item_id": "I-2", "value": "forbidden"})
        assert denied.is_error and "A-AUTH-POLICY-DENIED" in str(denied.content[0])
        assert len(governed.backend_hits()) == hits
        read = await client.call_tool("acme__items__read_item", {"item_id": "I-2"})
    assert not read.is_error and read.structured_content == {"id": "I-2", "value": "[redacted]"}


def test_redaction_over_rest_hides_the_field_the_backend_returned(governed: Governed) -> None:
    status, result = governed.call(governed.token("admin"), "acme:items:read_item", item_id="I-1")
    assert status == 200 and result["output"] == {"id": "I-1", "value": "[redacted]"}
    assert governed.backend.items["I-1"] != "[redacted]"


def test_the_approval_obligation_stops_the_call_before_it_runs(governed: Governed) -> None:
    hits, call_id = len(governed.backend_hits()), str(uuid.uuid4())
    body = {"call_id": call_id, "tool_id": WRITE, "input": {"item_id": "I-9", "value": "x"}}
    held = _post(governed, governed.token("admin"), body)
    # Parked for a second person (docs/approvals.md): pending with an approval id, nothing ran.
    assert held["status"] == "pending" and held["error"] is None, held
    assert held["pending"]["token"].startswith("ap_")
    assert len(governed.backend_hits()) == hits
    assert _audit(governed, call_id).details["policy"]["require_approval"] == [
        "item I-9 is precious: a human looks first"
    ]


def _agent_call(governed: Governed, arguments: dict[str, Any], attestation: str | None, call_id: str) -> str:
    body: dict[str, Any] = {"sub": "writer-bot", "agent_id": "writer-bot", "tenant": "acme"}
    token = governed.issuer.mint(
        {**body, "cnf": {"jkt": AGENT_KEY.thumbprint()}}, audience=governed.resource, ttl_s=300
    )
    url = f"{governed.base_url}/v1/calls"
    headers = {"Authorization": f"DPoP {token}", "DPoP": proof(AGENT_KEY, "POST", url, token)}
    envelope = {"call_id": call_id, "tool_id": WRITE, "input": arguments, "attestation": attestation}
    answer = httpx2.post(url, json=envelope, headers=headers).json()
    return "ok" if answer.get("status") == "success" else str(answer["error"]["code"])


def test_an_agents_write_needs_its_attestation_and_each_attack_is_refused(governed: Governed) -> None:
    args = {"item_id": "I-3", "value": "attested"}
    effects = len(governed.effects())
    cases = [
        ("A-AUTH-ATTESTATION-REQUIRED", None, "a1"),
        ("A-AUTH-ATTESTATION-INVALID", attest(STRANGER, WRITE, args, "a2"), "a2"),  # wrong key
        ("A-AUTH-ATTESTATION-INVALID", attest(AGENT_KEY, WRITE, {**args, "value": "other"}, "a3"), "a3"),
        (
            "A-AUTH-ATTESTATION-INVALID",
            attest(AGENT_KEY, WRITE, args, "a4", issued_at=time.time() - 300),
            "a4",
        ),
    ]
    for expected, attestation, call_id in cases:
        assert _agent_call(governed, args, attestation, call_id) == expected, call_id
    assert len(governed.effects()) == effects
    good = attest(AGENT_KEY, WRITE, args, "a5")
    assert _agent_call(governed, args, good, "a5") == "ok"
    assert governed.backend.items["I-3"] == "attested"
    recorded = _audit(governed, "a5").details["attestation"]
    assert recorded["verified"] is True and recorded["agent"] == "writer-bot"
    assert recorded["key_thumbprint"] == AGENT_KEY.thumbprint() and "token" not in recorded
    assert _agent_call(governed, args, good, "a5") == "A-AUTH-ATTESTATION-REPLAY"
    assert _audit_codes(governed, "a2") == "A-AUTH-ATTESTATION-INVALID"


def _audit_codes(governed: Governed, call_id: str) -> str | None:
    return _audit(governed, call_id).code


def _wait_for(predicate: Any, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "the gateway did not pick up the policy change"
        time.sleep(0.05)


def test_a_changed_file_is_reloaded_and_a_broken_one_keeps_the_old_set(
    governed: Governed, policies: Path
) -> None:
    admin = governed.token("admin")
    policy = governed.running.gateway.governance.policy
    assert policy is not None
    first = policy.version
    extra = policies / "extra.rego"
    extra.write_text(
        "package colonnade.policy\n\nimport rego.v1\n\n"
        'deny contains "no I-7" if input.arguments.item_id == "I-7"\n'
    )
    try:
        _wait_for(lambda: policy.version != first)
        assert governed.call(admin, "acme:items:read_item", item_id="I-7")[1]["error"]["code"] == (
            "A-AUTH-POLICY-DENIED"
        )
        second = policy.version
        extra.write_text("package colonnade.policy\n\ndeny contains x if {\n")  # does not compile
        _wait_for(lambda: policy.problem is not None)
        with governed.rest(admin) as client:
            shown = client.get("/v1/policy").json()
            status = client.get("/v1/status").json()["policy"]
            reloaded = client.post("/v1/policy/reload")
        assert shown["version"] == second and shown["serving"] is True
        assert "extra.rego: does not compile" in shown["problem"] and status["problem"] == shown["problem"]
        assert reloaded.status_code == 422 and reloaded.json()["reloaded"] is False
        assert governed.call(admin, "acme:items:read_item", item_id="I-7")[1]["error"]["code"] == (
            "A-AUTH-POLICY-DENIED"  # the old set still decides
        )
    finally:
        extra.unlink()
    with governed.rest(admin) as client:
        assert client.post("/v1/policy/reload").json()["version"] == first
    after = governed.call(admin, "acme:items:read_item", item_id="I-7")[1]
    assert after["error"]["code"] == "I-REQ-UPSTREAM-NOT-FOUND"  # allowed again: the backend has no I-7


def test_reloading_needs_the_security_write_scope(governed: Governed) -> None:
    with governed.rest(governed.token("developer")) as client:
        refused = client.post("/v1/policy/reload")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "A-AUTH-SCOPE"


def test_a_gateway_whose_policies_do_not_load_refuses_every_call(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "bad.rego").write_text("package colonnade.policy\n\ndeny contains x if {\n")
    with governed_gateway(tmp_path, policy=PolicySettings(directories=[broken])) as running:
        _, result = running.call(running.token("admin"), "acme:items:read_item", item_id="I-1")
        assert (
            result["error"]["code"] == "A-AUTH-POLICY-UNAVAILABLE" and result["status"] == "retryable_error"
        )
        assert "bad.rego: does not compile" in result["error"]["message"]
        assert running.backend_hits() == []
