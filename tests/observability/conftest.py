"""Observability fixtures: logging captured as JSON lines, a real catalog, and pipelines to observe.

The stages after `Observe` are small real stages (they follow the pipeline's protocol); the
catalog holds the demo CRM contract.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import structlog
import yaml
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallRequest, CallResult, CallStatus
from colonnade.calls.pipeline import Next, Pipeline, Stage
from colonnade.calls.service import CallService
from colonnade.calls.stages.observe import Observe
from colonnade.calls.stages.resolve import Resolve
from colonnade.catalog.catalog import Catalog
from colonnade.contracts.model import Contract
from colonnade.observability.logging import _SinkHandler, configure_logging
from colonnade.observability.metrics import GatewayMetrics
from colonnade.observability.tracing import TRACER_NAME, build_tracer_provider

ROOT = Path(__file__).resolve().parents[2]
TOOL = "acme:crm:get_customer"
SECRET = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"  # the shape of a Stripe live key (a made-up one)


class LogCapture:
    """Everything the process logged since the fixture started, as JSON lines."""

    def __init__(self, stream: io.StringIO) -> None:
        self.stream = stream

    @property
    def text(self) -> str:
        return self.stream.getvalue()

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.text.splitlines() if line]

    def events(self, event: str) -> list[dict[str, Any]]:
        return [line for line in self.lines() if line.get("event") == event]


def _restore_logging(level: int, levels: dict[str, int]) -> None:
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _SinkHandler)]:
        root.removeHandler(handler)
    root.setLevel(level)
    for name, saved in levels.items():
        logging.getLogger(name).setLevel(saved)
    logging.captureWarnings(False)
    structlog.reset_defaults()


@pytest.fixture
def logs() -> Iterator[LogCapture]:
    """Process logging configured to write JSON lines into a buffer; restored afterwards."""
    quiet = ("httpx", "httpx2", "httpcore", "httpcore2")
    saved = {name: logging.getLogger(name).level for name in quiet}
    level = logging.getLogger().level
    stream = io.StringIO()
    configure_logging("info", stream=stream, renderer="json")
    try:
        yield LogCapture(stream)
    finally:
        _restore_logging(level, saved)


@pytest.fixture
def catalog() -> Catalog:
    data = yaml.safe_load((ROOT / "examples" / "contracts" / "crm.yaml").read_text())
    catalog = Catalog()
    catalog.publish(Contract.model_validate(data))
    return catalog


@dataclass
class Traced:
    exporter: InMemorySpanExporter
    provider: TracerProvider


@pytest.fixture
def traced() -> Iterator[Traced]:
    exporter = InMemorySpanExporter()
    provider = build_tracer_provider(exporter)
    yield Traced(exporter, provider)
    provider.shutdown()


class Answer:
    """Ends the call: success, or the error code named in the input's `fail_with`."""

    async def __call__(self, call: Call, next: Next) -> CallResult:
        code = call.request.input.get("fail_with")
        if code:
            status, err = error(code)
            return call.result(status, error=err)
        logging.getLogger("colonnade.test").info("answering")
        return call.result(CallStatus.SUCCESS, output={"id": "C-1001"})


class Explode:
    """A later stage with a bug: the exception message quotes an argument value."""

    async def __call__(self, call: Call, next: Next) -> CallResult:
        raise KeyError(f"no such key {call.request.input.get('customer_id')!r}")


class Gate:
    """Holds each call until released, so a test can look at the pipeline while calls are inside."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, call: Call, next: Next) -> CallResult:
        self.entered.set()
        await self.release.wait()
        return await next(call)


@dataclass
class Observed:
    service: CallService
    observe: Observe
    metrics: GatewayMetrics


def observed(catalog: Catalog, *stages: Stage, traced: Traced | None = None) -> Observed:
    """A call service whose pipeline is observe, resolve, in-flight, then `stages` (refusals observed too)."""
    metrics = GatewayMetrics()
    tracer = traced.provider.get_tracer(TRACER_NAME) if traced is not None else None
    observe = Observe(metrics, tracer)
    service = CallService(Pipeline([observe, Resolve(catalog), observe.in_flight(), *stages]))
    return Observed(service, observe, metrics)


def request(tool: str = TOOL, **fields: Any) -> CallRequest:
    fields.setdefault("input", {"customer_id": "C-1001"})
    return CallRequest(tool_id=tool, **fields)


def sample(metrics: GatewayMetrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value
