"""Process-wide logging: JSON lines by default, console on a terminal, every library in one format."""

from __future__ import annotations

import io
import json
import logging
import os
import select

import pytest
import structlog

from colonnade.calls.envelope import CallStatus
from colonnade.catalog.catalog import Catalog
from colonnade.observability.logging import configure_logging, level_number
from colonnade.routing.router import Router
from tests.observability.conftest import Answer, LogCapture, observed, request
from tests.support.tool_docs import sample_corpus


def test_structlog_events_are_json_lines_with_level_time_and_logger(logs: LogCapture) -> None:
    structlog.get_logger("colonnade.example").info("started", tools=3)
    (line,) = logs.lines()
    assert line["event"] == "started" and line["tools"] == 3
    assert (line["level"], line["logger"]) == ("info", "colonnade.example")
    assert line["timestamp"].endswith("Z")


def test_library_loggers_share_the_format(logs: LogCapture) -> None:
    logging.getLogger("uvicorn.error").warning(
        "port %d busy", 8765, extra={"color_message": "\x1b[1mport\x1b[0m"}
    )
    logging.getLogger("mcp.server.lowlevel.server").error("handler failed")
    logging.getLogger("colonnade.catalog").info("published %s", "acme/crm")
    first, second, third = logs.lines()
    assert first == {**first, "event": "port 8765 busy", "level": "warning", "logger": "uvicorn.error"}
    assert "color_message" not in first
    assert (second["logger"], second["level"]) == ("mcp.server.lowlevel.server", "error")
    assert third["event"] == "published acme/crm"


def test_router_decision_fields_keep_their_structure(logs: LogCapture) -> None:
    decision = {
        "selected": ["acme:crm:get_customer", "acme:crm:search_customers"],
        "scores": {"acme:crm:get_customer": 0.91, "acme:crm:search_customers": 0.42},
        "confidence": 0.73,
        "reasons": [{"tool": "acme:crm:get_customer", "why": ["lexical", "learned"]}],
        "fallback": False,
    }
    logging.getLogger("colonnade.routing").info("routing.decision", extra=decision)
    (line,) = logs.events("routing.decision")
    assert line["logger"] == "colonnade.routing"
    assert {key: line[key] for key in decision} == decision


def test_the_routers_decision_trace_arrives_with_its_fields(logs: LogCapture) -> None:
    decision = Router(sample_corpus()).route("refund a paid invoice")
    (line,) = logs.events("routing.decision")
    assert line["logger"] == "colonnade.routing" and line["level"] == "info"
    assert line["message"].startswith(f"routing decision: {len(decision.selected)} tools")
    assert line["selected"] == decision.selected
    assert line["scores"] == decision.scores
    assert line["reasons"] == {tool: list(reasons) for tool, reasons in decision.reasons.items()}
    assert (line["confidence"], line["fallback_used"]) == (decision.confidence, decision.fallback_used)
    assert line["query"] == "refund a paid invoice"


def test_levels_filter_both_paths(logs: LogCapture) -> None:
    configure_logging("warning", stream=logs.stream, renderer="json")
    logging.getLogger("colonnade.a").info("hidden")
    structlog.get_logger("colonnade.b").info("hidden too")
    logging.getLogger("colonnade.a").warning("shown")
    structlog.get_logger("colonnade.b").error("shown too")
    assert [line["event"] for line in logs.lines()] == ["shown", "shown too"]


def test_http_client_request_lines_are_kept_out(logs: LogCapture) -> None:
    configure_logging("debug", stream=logs.stream, renderer="json")
    logging.getLogger("httpx2").info('HTTP Request: GET http://backend/customers/C-1001 "HTTP/1.1 200 OK"')
    logging.getLogger("httpcore2.http11").debug("send_request_headers.started")
    logging.getLogger("httpx2").warning("connection pool is full")
    assert [line["event"] for line in logs.lines()] == ["connection pool is full"]


def test_configuring_again_replaces_the_handler(logs: LogCapture) -> None:
    configure_logging("info", stream=logs.stream, renderer="json")
    configure_logging("info", stream=logs.stream, renderer="json")
    logging.getLogger("colonnade.x").info("once")
    assert [line["event"] for line in logs.lines()] == ["once"]


def test_warnings_are_logged(logs: LogCapture) -> None:
    import warnings

    warnings.warn("old option", DeprecationWarning, stacklevel=1)
    (line,) = logs.lines()
    assert line["logger"] == "py.warnings" and "old option" in line["event"]


def _read_until(fd: int, marker: str) -> str:
    """What the terminal received, up to and including the line holding `marker` (or 10 s of silence)."""
    received = ""
    while marker not in received and select.select([fd], [], [], 10)[0]:
        received += os.read(fd, 65536).decode()
    return received


def test_a_terminal_gets_the_console_renderer(logs: LogCapture) -> None:
    primary, secondary = os.openpty()
    with os.fdopen(secondary, "w") as terminal:
        configure_logging("info", stream=terminal)
        structlog.get_logger("colonnade.tty").info("hello", tools=3)
        logging.getLogger("colonnade.tty").info("from stdlib")
        output = _read_until(primary, "from stdlib")
    os.close(primary)
    assert "hello" in output and "tools" in output and "from stdlib" in output
    assert "\x1b[" in output  # coloured
    with pytest.raises(json.JSONDecodeError):
        json.loads(output.splitlines()[0])


def test_console_can_be_forced_and_is_plain_off_a_terminal(logs: LogCapture) -> None:
    stream = io.StringIO()
    configure_logging("info", stream=stream, renderer="console")
    structlog.get_logger("colonnade.c").info("plain", n=1)
    text = stream.getvalue()
    assert "plain" in text and "n=1" in text and "\x1b[" not in text


async def test_a_closed_stream_never_fails_a_call(logs: LogCapture, catalog: Catalog) -> None:
    stream = io.StringIO()
    configure_logging("info", stream=stream, renderer="json")
    stream.close()
    logging.getLogger("colonnade.c").info("dropped")
    result = await observed(catalog, Answer()).service.call(request())
    assert result.status is CallStatus.SUCCESS


def test_level_names() -> None:
    assert level_number("INFO") == logging.INFO and level_number(logging.DEBUG) == logging.DEBUG
    with pytest.raises(
        ValueError, match="unknown log level 'verbose'; use one of debug, info, warning, error"
    ):
        level_number("verbose")
