"""Execute dispatches on the binding kind through the adapter registry; the network policy refuses
what it cannot check."""

from __future__ import annotations

import dataclasses

from colonnade.adapters.builtin import BuiltinAdapter
from colonnade.adapters.outcome import AdapterOutcome, OutcomeKind
from colonnade.adapters.registry import AdapterRegistry, Invocation
from colonnade.calls.call import Call
from colonnade.calls.envelope import CallConstraints, CallRequest, CallStatus
from colonnade.calls.manifest import Manifests
from colonnade.calls.stages.execute import Execute
from colonnade.calls.stages.network import NetworkPolicy
from colonnade.catalog.bindings import McpBinding
from colonnade.catalog.builtins import builtin_tool
from colonnade.catalog.catalog import Catalog
from colonnade.governance.principal import Principal, PrincipalKind
from tests.calls.stages.conftest import Reached, resolved
from tests.support.source_tools import source_tool


class Recording:
    """An adapter that records what it was handed and answers with a given outcome."""

    def __init__(self, outcome: AdapterOutcome) -> None:
        self.outcome = outcome
        self.invocations: list[Invocation] = []

    async def execute(self, invocation: Invocation) -> AdapterOutcome:
        self.invocations.append(invocation)
        return self.outcome

    async def aclose(self) -> None:
        return None


async def _unreachable(call: Call) -> object:
    raise AssertionError("execute is the last stage; it never calls next")


async def test_execute_hands_the_adapter_of_the_tools_kind_an_invocation(catalog: Catalog) -> None:
    http = Recording(AdapterOutcome(OutcomeKind.SUCCESS, body={"id": "C-1"}, warnings=("cached",)))
    ann = Principal(PrincipalKind.USER, "ann")
    call = resolved(catalog, "acme:crm:get_customer", input={"customer_id": "C-1"}).evolve(principal=ann)
    keyed = call.evolve(
        request=call.request.model_copy(update={"constraints": CallConstraints(idempotency_key="k-1")})
    )
    result = await Execute(AdapterRegistry({"http": http}))(keyed, _unreachable)  # type: ignore[arg-type]
    assert (result.status, result.output, result.warnings) == (CallStatus.SUCCESS, {"id": "C-1"}, ["cached"])
    (invocation,) = http.invocations
    assert invocation.tool.canonical_name == "acme:crm:get_customer"
    assert invocation.arguments == {"customer_id": "C-1"} and invocation.principal == ann
    assert invocation.idempotency_key is not None and invocation.idempotency_key.startswith("cln-")
    assert "k-1" not in invocation.idempotency_key  # the backend sees a scoped, opaque form
    assert 0 < invocation.timeout_s <= keyed.remaining_s + 0.01


async def test_an_adapter_error_becomes_the_registry_status_of_its_code(catalog: Catalog) -> None:
    failing = Recording(
        AdapterOutcome(
            OutcomeKind.RETRYABLE_ERROR, error_code="R-UPSTREAM-429", retry_after_ms=900, details={"x": 1}
        )
    )
    result = await Execute(AdapterRegistry({"http": failing}))(
        resolved(catalog, "acme:crm:get_customer"), _unreachable
    )  # type: ignore[arg-type]
    assert result.status is CallStatus.RETRYABLE_ERROR and result.error is not None
    assert result.error.details == {"x": 1, "retry_after_ms": 900}


async def test_a_kind_without_an_adapter_is_a_configuration_error(catalog: Catalog) -> None:
    result = await Execute(AdapterRegistry({}))(resolved(catalog, "acme:crm:get_customer"), _unreachable)  # type: ignore[arg-type]
    assert result.status is CallStatus.TERMINAL_ERROR and result.error is not None
    assert result.error.code == "S-TOOL-CONFIG" and "'http'" in result.error.message


async def test_the_builtin_adapter_runs_the_handler_its_binding_names() -> None:
    echo = builtin_tool(
        "echo", wire_name="echo", title="Echo", description="Echo.", input_schema={"type": "object"}
    )
    other = builtin_tool(
        "other", wire_name="other", title="O", description="O.", input_schema={"type": "object"}
    )

    async def handler(invocation: Invocation) -> AdapterOutcome:
        return AdapterOutcome(OutcomeKind.SUCCESS, body=dict(invocation.arguments))

    adapter = BuiltinAdapter({"echo": handler})
    execute = Execute(AdapterRegistry({"builtin": adapter}))
    answered = await execute(
        Call.start(CallRequest(tool_id="echo", input={"a": 1}), echo, Manifests().for_tool(echo)),
        _unreachable,
    )  # type: ignore[arg-type]
    assert answered.output == {"a": 1}
    unhandled = await execute(
        Call.start(CallRequest(tool_id="other"), other, Manifests().for_tool(other)), _unreachable
    )  # type: ignore[arg-type]
    assert unhandled.error is not None and unhandled.error.code == "S-TOOL-CONFIG"


async def test_the_network_policy_refuses_a_binding_it_cannot_check(reached: Reached) -> None:
    upstream = source_tool("files:fs:read_file")  # no binding: where it reaches is unknown
    call = Call.start(CallRequest(tool_id=upstream.canonical_name), upstream, Manifests().for_tool(upstream))
    result = await NetworkPolicy()(call, reached)
    assert result.status is CallStatus.TERMINAL_ERROR and result.error is not None
    assert result.error.code == "P-PRECOND-NET-UNCHECKED" and reached.calls == []


async def test_the_network_policy_checks_http_and_passes_builtins(catalog: Catalog, reached: Reached) -> None:
    tool = resolved(catalog, "acme:crm:get_customer", constraints={"net_allowlist": ["elsewhere.example"]})
    denied = await NetworkPolicy()(tool, reached)
    assert denied.error is not None and denied.error.code == "P-PRECOND-NET-DENIED"
    echo = builtin_tool(
        "echo", wire_name="echo", title="Echo", description="Echo.", input_schema={"type": "object"}
    )
    builtin = Call.start(
        CallRequest(tool_id="echo", constraints={"net_allowlist": []}),
        echo,
        Manifests().for_tool(echo),  # type: ignore[arg-type]
    )
    assert (await NetworkPolicy()(builtin, reached)).status is CallStatus.SUCCESS


def _mcp_call(binding: McpBinding, allowlist: list[str] | None = None) -> Call:
    tool = dataclasses.replace(source_tool("default:srv:t"), binding=binding)
    request = CallRequest(tool_id=tool.canonical_name, constraints={"net_allowlist": allowlist})
    return Call.start(request, tool, Manifests().for_tool(tool))


async def test_an_http_mcp_server_is_checked_by_its_url(reached: Reached) -> None:
    binding = McpBinding("srv", "t", "http", "http://127.0.0.1:9000/mcp")
    for allowlist in (None, ["127.0.0.1:9000"]):
        assert (await NetworkPolicy()(_mcp_call(binding, allowlist), reached)).status is CallStatus.SUCCESS
    denied = await NetworkPolicy()(_mcp_call(binding, ["127.0.0.1:9001"]), reached)
    assert denied.error is not None and denied.error.code == "P-PRECOND-NET-DENIED"
    assert denied.error.details["target"] == "127.0.0.1:9000"


async def test_a_stdio_server_runs_unless_the_caller_limits_the_network_without_naming_it(
    reached: Reached,
) -> None:
    binding = McpBinding("srv", "t", "stdio")
    assert (await NetworkPolicy()(_mcp_call(binding), reached)).status is CallStatus.SUCCESS
    for allowlist in (["stdio:srv"], ["stdio"]):
        assert (await NetworkPolicy()(_mcp_call(binding, allowlist), reached)).status is CallStatus.SUCCESS
    denied = await NetworkPolicy()(_mcp_call(binding, ["127.0.0.1"]), reached)
    assert denied.error is not None and denied.error.details["target"] == "stdio:srv"
    assert len(reached.calls) == 3


async def test_the_backend_gets_the_time_left_less_the_record_reserve_and_nothing_when_too_little(
    catalog: Catalog,
) -> None:
    http = Recording(AdapterOutcome(OutcomeKind.SUCCESS, body={"id": "C-1"}))
    execute = Execute(AdapterRegistry({"http": http}))
    call = resolved(catalog, "acme:crm:get_customer", constraints=CallConstraints(timeout_ms=300))
    await execute(call, _unreachable)  # type: ignore[arg-type]
    (invocation,) = http.invocations
    assert invocation.timeout_s <= call.remaining_s - 0.03 + 0.001  # a tenth of 300 ms kept for records
    # The stages before spent all but 20 ms: less than the 30 ms reserve, so nothing is sent.
    spent = call.evolve(started=call.started - 0.28, deadline=call.deadline - 0.28)
    late = await execute(spent, _unreachable)  # type: ignore[arg-type]
    assert len(http.invocations) == 1
    assert late.status is CallStatus.RETRYABLE_ERROR and late.error is not None
    assert late.error.code == "R-CAP-OVERLOAD" and late.error.details["reason"] == "deadline"
