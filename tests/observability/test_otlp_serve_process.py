"""The real `colonnade serve --stdio` process configured only by the standard OTEL_* variables exports the
caller's trace to a real OTLP receiver on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.conftest import COLONNADE, Stack, stack  # noqa: F401  (the module's real stack)
from tests.support.otlp_receiver import OtlpReceiver, attributes_of, otlp_receiver, until

pytestmark = pytest.mark.e2e

TRACE = "5bf92f3577b34da6a3ce929d0e0e4737"
PARENT = "10f067aa0ba902b8"


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with otlp_receiver() as running:
        yield running


async def test_otel_variables_alone_send_the_callers_trace(
    stack: Stack,  # noqa: F811
    receiver: OtlpReceiver,
    tmp_path: Path,
) -> None:
    env = {
        **stack.env,
        "COLONNADE_DATA_DIR": str(tmp_path / "data"),
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
        "OTEL_SERVICE_NAME": "colonnade-stdio",
        "OTEL_BSP_SCHEDULE_DELAY": "50",
        "OTEL_METRICS_EXPORTER": "none",
    }
    params = StdioServerParameters(command=str(COLONNADE), args=["serve", "--stdio"], env=env)
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            meta = {"traceparent": f"00-{TRACE}-{PARENT}-01"}
            result = await client.call_tool("acme__crm__get_customer", {"customer_id": "C-1002"}, meta=meta)
            assert result.is_error is False
            assert await until(lambda: any(s.name.startswith("execute_tool") for s in receiver.spans()), 20)
    (call,) = [s for s in receiver.spans() if s.name == "execute_tool acme:crm:get_customer"]
    assert (call.trace_id.hex(), call.parent_span_id.hex()) == (TRACE, PARENT)
    assert attributes_of(call)["mcp.method.name"] == "tools/call"
    names = {
        a.key: a.value.string_value for r in receiver.traces for a in r.resource_spans[0].resource.attributes
    }
    assert names["service.name"] == "colonnade-stdio"
    assert receiver.metrics == []  # OTEL_METRICS_EXPORTER=none
