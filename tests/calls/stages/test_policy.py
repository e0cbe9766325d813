"""The policy, redaction and attestation stages with a fake `next`: real regopy, real JWS."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from joserfc.jwk import ECKey

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.pipeline import Next, Pipeline
from colonnade.calls.stages.approval import ApprovalGate
from colonnade.calls.stages.attestation import AttestationCheck
from colonnade.calls.stages.policy import PolicyCheck
from colonnade.calls.stages.redact_output import RedactOutput
from colonnade.catalog.catalog import Catalog
from colonnade.governance.attestation import AttestationVerifier
from colonnade.governance.identity.agent_book import AgentBook
from colonnade.governance.identity.dpop import ProofsSeen
from colonnade.governance.policy.gate import PolicyGate
from colonnade.governance.policy.sources import SHIPPED_POLICIES
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.store.agents_repo import AgentRecord
from tests.calls.stages.conftest import Reached, resolved
from tests.support.attestation import attest

POLICY = """package colonnade.policy

import rego.v1

deny contains "refunds above 1000 need a ticket" if {
	input.tool.operation == "refund_invoice"
	input.arguments.amount > 1000
}

require_approval contains "customers of the watch list need a second look" if {
	input.arguments.customer_id == "C-WATCH"
}

require_attestation contains "agents attest invoices they create" if {
	input.principal.kind == "agent"
	input.tool.operation == "create_invoice"
}

redact_output_fields contains "customer.email" if input.tool.operation == "get_invoice"
"""

KEY = ECKey.generate_key("P-256", auto_kid=True)
STRANGER = ECKey.generate_key("P-256", auto_kid=True)
AGENT = Principal(PrincipalKind.AGENT, "invoice-bot", tenant="acme", persona="agent")
USER = Principal(PrincipalKind.USER, "alice", tenant="acme", persona="developer")
CREATE = "acme:billing:create_invoice"
ARGS = {"customer_id": "C-1", "amount": 12}


class _Answer:
    """A fake `next` answering with a given output."""

    def __init__(self, output: Any) -> None:
        self.output = output

    async def __call__(self, call: Call) -> CallResult:
        return call.result(CallStatus.SUCCESS, output=self.output)


class _Last:
    """The stage that ends the call in place of execution, handing it to a fake `next`."""

    def __init__(self, reached: Reached | _Answer) -> None:
        self.reached = reached

    async def __call__(self, call: Call, next: Next) -> CallResult:
        return await self.reached(call)


@pytest.fixture
def gate(tmp_path: Path) -> PolicyGate:
    (tmp_path / "mine.rego").write_text(POLICY)
    # the crash-safe compile in a child process is the gate's own tests' matter; a stage test stays in process
    gate = PolicyGate((SHIPPED_POLICIES, tmp_path), isolate=False)
    assert gate.load()
    return gate


def _agents() -> AgentBook:
    record = AgentRecord(
        "invoice-bot",
        "acme",
        "alice",
        ("acme:billing:*",),
        dict(KEY.as_dict(private=False)),
        KEY.thumbprint(),
        "api",
        datetime.now(UTC),
    )
    return AgentBook([record])


def _pipeline(
    gate: PolicyGate, end: Reached | _Answer, *, verifier: AttestationVerifier | None = None
) -> Pipeline:
    return Pipeline(
        [PolicyCheck(gate), RedactOutput(), AttestationCheck(verifier), ApprovalGate(), _Last(end)]
    )


def _call(catalog: Catalog, tool: str, principal: Principal = USER, **fields: Any) -> Call:
    return resolved(catalog, tool, **fields).evolve(principal=principal)


async def test_a_denied_call_is_refused_with_the_policies_reasons(
    gate: PolicyGate, catalog: Catalog, reached: Reached
) -> None:
    call = _call(catalog, "acme:billing:refund_invoice", input={"invoice_id": "i", "amount": 5000})
    result = await _pipeline(gate, reached).run(call)
    assert result.status is CallStatus.TERMINAL_ERROR and result.error is not None
    assert result.error.code == "A-AUTH-POLICY-DENIED"
    assert result.error.details == {
        "reasons": ["refunds above 1000 need a ticket"],
        "policy_version": gate.version,
    }
    assert reached.calls == []


async def test_an_allowed_call_carries_the_obligations_to_the_stages_after_it(
    gate: PolicyGate, catalog: Catalog, reached: Reached
) -> None:
    call = _call(catalog, "acme:billing:get_invoice", input={"invoice_id": "inv_1"})
    result = await Pipeline([PolicyCheck(gate), _Last(reached)]).run(call)
    assert result.status is CallStatus.SUCCESS
    obligations = reached.calls[0].obligations
    assert obligations.redact_output_fields == ("customer.email",)
    assert obligations.policy_version == gate.version and not obligations.require_approval


async def test_a_require_approval_obligation_stops_the_call_at_the_approval_gate(
    gate: PolicyGate, catalog: Catalog, reached: Reached
) -> None:
    call = _call(catalog, CREATE, input={"customer_id": "C-WATCH", "amount": 1})
    result = await _pipeline(gate, reached).run(call)
    assert result.error is not None and result.error.code == "P-PRECOND-APPROVAL-REQUIRED"
    assert reached.calls == []


async def test_the_named_output_fields_are_redacted(gate: PolicyGate, catalog: Catalog) -> None:
    answer = _Answer({"id": "inv_1", "customer": {"email": "ada@example.com", "name": "Ada"}})
    call = _call(catalog, "acme:billing:get_invoice", input={"invoice_id": "inv_1"})
    result = await _pipeline(gate, answer).run(call)
    assert result.output == {"id": "inv_1", "customer": {"email": "[redacted]", "name": "Ada"}}


async def test_without_a_loaded_policy_set_every_call_is_refused(
    tmp_path: Path, catalog: Catalog, reached: Reached
) -> None:
    broken = PolicyGate((tmp_path / "nowhere",))
    assert not broken.load()
    result = await _pipeline(broken, reached).run(_call(catalog, "acme:billing:list_invoices"))
    assert result.error is not None and result.error.code == "A-AUTH-POLICY-UNAVAILABLE"
    assert result.status is CallStatus.RETRYABLE_ERROR and reached.calls == []


async def test_an_attested_call_goes_on_and_each_attack_is_refused(
    gate: PolicyGate, catalog: Catalog, reached: Reached
) -> None:
    pipeline = _pipeline(gate, reached, verifier=AttestationVerifier(_agents(), ProofsSeen(), window_s=60))

    async def run(attestation: str | None, *, call_id: str = "call-1", args: dict[str, Any] = ARGS) -> str:
        call = _call(catalog, CREATE, AGENT, input=args, call_id=call_id, attestation=attestation)
        result = await pipeline.run(call)
        return "ok" if result.status is CallStatus.SUCCESS else result.error.code  # type: ignore[union-attr]

    assert await run(None) == "A-AUTH-ATTESTATION-REQUIRED"
    assert (
        await run(attest(STRANGER, CREATE, ARGS, "call-2"), call_id="call-2") == "A-AUTH-ATTESTATION-INVALID"
    )
    swapped = attest(KEY, CREATE, {**ARGS, "amount": 12_000}, "call-3")
    assert await run(swapped, call_id="call-3") == "A-AUTH-ATTESTATION-INVALID"
    other_call = attest(KEY, CREATE, ARGS, "call-4")
    assert await run(other_call, call_id="call-5") == "A-AUTH-ATTESTATION-INVALID"
    stale = attest(KEY, CREATE, ARGS, "call-6", issued_at=time.time() - 120)
    assert await run(stale, call_id="call-6") == "A-AUTH-ATTESTATION-INVALID"
    other_tool = attest(KEY, "acme:billing:void_invoice", ARGS, "call-7")
    assert await run(other_tool, call_id="call-7") == "A-AUTH-ATTESTATION-INVALID"
    assert await run("not.a.jws", call_id="call-8") == "A-AUTH-ATTESTATION-INVALID"
    assert reached.calls == []
    good = attest(KEY, CREATE, ARGS, "call-9")
    assert await run(good, call_id="call-9") == "ok"
    assert await run(good, call_id="call-9") == "A-AUTH-ATTESTATION-REPLAY"
    assert len(reached.calls) == 1


async def test_only_a_registered_agent_can_attest(
    gate: PolicyGate, catalog: Catalog, reached: Reached
) -> None:
    verifier = AttestationVerifier(AgentBook(), ProofsSeen())
    call = _call(catalog, CREATE, AGENT, input=ARGS, call_id="c", attestation=attest(KEY, CREATE, ARGS, "c"))
    result = await _pipeline(gate, reached, verifier=verifier).run(call)
    assert result.error is not None and result.error.code == "A-AUTH-ATTESTATION-REQUIRED"
    assert "no registered public key" in result.error.message
    assert "agents attest invoices they create" in result.error.message
