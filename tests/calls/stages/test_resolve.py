"""The resolve stage: a requested name, version and digest become one tool, or a typed refusal."""

from __future__ import annotations

import json

import yaml

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallRequest, CallStatus
from colonnade.calls.stages.resolve import Resolve
from colonnade.catalog.builtins import BuiltinTools, builtin_tool
from colonnade.catalog.catalog import Catalog
from colonnade.contracts.model import Contract
from tests.calls.stages.conftest import Reached
from tests.support.authorizers import OnlyPrefix
from tests.support.repo import ROOT


async def test_a_wire_or_canonical_name_resolves_and_the_deadline_follows_the_tool(
    catalog: Catalog, reached: Reached
) -> None:
    stage = Resolve(catalog)
    for name in ("acme:crm:get_customer", "acme__crm__get_customer"):
        call = Call.start(CallRequest(tool_id=name, constraints={"timeout_ms": 50}))  # type: ignore[arg-type]
        result = await stage(call, reached)
        assert result.status is CallStatus.SUCCESS
        assert result.provenance is not None and result.provenance.tool_id == "acme:crm:get_customer"
    passed = reached.calls[-1]
    assert passed.tool.canonical_name == "acme:crm:get_customer"
    assert passed.manifest.tool_id == "acme:crm:get_customer"
    assert 0 < passed.deadline - passed.started <= 0.050001


async def test_an_unknown_name_suggests_only_tools_the_caller_may_see(
    catalog: Catalog, reached: Reached
) -> None:
    everyone = await Resolve(catalog)(Call.start(CallRequest(tool_id="acme:billing:get_customers")), reached)
    assert everyone.status is CallStatus.INVALID_REQUEST and everyone.error is not None
    assert everyone.error.code == "I-REQ-UNKNOWN-TOOL"
    assert "acme:crm:get_customer" in everyone.error.details["did_you_mean"]
    assert "did you mean" in everyone.error.message

    crm_only = Resolve(catalog, authorizer=OnlyPrefix("acme:billing:"))
    hidden = await crm_only(Call.start(CallRequest(tool_id="acme:crm:get_customers")), reached)
    assert hidden.error is not None
    assert all(
        name.startswith(("acme:billing:", "acme__billing__"))
        for name in hidden.error.details.get("did_you_mean", [])
    )
    assert "'acme:crm:get_customer'" not in hidden.error.message  # only the name the caller sent
    assert reached.calls == [] and hidden.provenance is None


async def test_a_version_range_and_a_pinned_digest_are_enforced(catalog: Catalog, reached: Reached) -> None:
    stage = Resolve(catalog)
    tool = catalog.get("acme:crm:get_customer")
    assert tool is not None
    wrong = await stage(
        Call.start(CallRequest(tool_id=tool.canonical_name, provenance={"digest": "0" * 64})), reached
    )
    assert wrong.error is not None and wrong.error.code == "C-CONTRACT-DIGEST-MISMATCH"
    missing = await stage(Call.start(CallRequest(tool_id=tool.canonical_name, tool_version="^9")), reached)
    assert missing.error is not None and missing.error.code == "C-CONTRACT-VERSION-MISMATCH"
    pinned = await stage(
        Call.start(
            CallRequest(
                tool_id=tool.canonical_name,
                tool_version=f"^{tool.version}",
                provenance={"digest": tool.digest},
            )
        ),
        reached,
    )
    assert pinned.status is CallStatus.SUCCESS and len(reached.calls) == 1


async def test_builtin_tools_resolve_before_the_catalog(catalog: Catalog, reached: Reached) -> None:
    echo = builtin_tool(
        "echo", wire_name="echo", title="Echo", description="Echo.", input_schema={"type": "object"}
    )
    stage = Resolve(catalog, builtins=BuiltinTools([echo]))
    for name in ("echo", "colonnade:gateway:echo"):
        assert (await stage(Call.start(CallRequest(tool_id=name)), reached)).status is CallStatus.SUCCESS
    assert [call.tool for call in reached.calls] == [echo, echo]


def _crm_twin(catalog: Catalog) -> None:
    """A second API serving the same bare names as the CRM (`get_customer`, ...)."""
    data = yaml.safe_load((ROOT / "examples" / "contracts" / "crm.yaml").read_text())
    catalog.publish(Contract.model_validate({**data, "name": "crm-eu"}))


async def test_a_bare_tool_name_resolves_when_it_is_unique(catalog: Catalog, reached: Reached) -> None:
    result = await Resolve(catalog)(Call.start(CallRequest(tool_id="get_customer")), reached)
    assert result.status is CallStatus.SUCCESS
    assert result.provenance is not None and result.provenance.tool_id == "acme:crm:get_customer"
    versioned = await Resolve(catalog)(
        Call.start(CallRequest(tool_id="get_invoice", tool_version="^1")), reached
    )
    assert versioned.provenance is not None and versioned.provenance.tool_id == "acme:billing:get_invoice"


async def test_a_bare_name_several_visible_tools_bear_lists_the_candidates(
    catalog: Catalog, reached: Reached
) -> None:
    _crm_twin(catalog)
    result = await Resolve(catalog)(Call.start(CallRequest(tool_id="get_customer")), reached)
    assert result.status is CallStatus.INVALID_REQUEST and result.error is not None
    assert result.error.code == "I-REQ-AMBIGUOUS-TOOL"
    assert result.error.details["candidates"] == [
        {"canonical_name": "acme:crm-eu:get_customer", "wire_name": "acme__crm-eu__get_customer"},
        {"canonical_name": "acme:crm:get_customer", "wire_name": "acme__crm__get_customer"},
    ]
    assert "'acme:crm:get_customer'" in result.error.message and reached.calls == []


async def test_a_bare_name_counts_only_the_tools_the_caller_may_see(
    catalog: Catalog, reached: Reached
) -> None:
    _crm_twin(catalog)
    eu_only = Resolve(catalog, authorizer=OnlyPrefix("acme:crm-eu:"))
    result = await eu_only(Call.start(CallRequest(tool_id="get_customer")), reached)
    assert result.provenance is not None and result.provenance.tool_id == "acme:crm-eu:get_customer"
    billing_only = Resolve(catalog, authorizer=OnlyPrefix("acme:billing:"))
    hidden = await billing_only(Call.start(CallRequest(tool_id="get_customer")), reached)
    assert hidden.error is not None and hidden.error.code == "I-REQ-UNKNOWN-TOOL"
    assert "acme:crm" not in json.dumps(hidden.error.model_dump())  # the alias reveals nothing
