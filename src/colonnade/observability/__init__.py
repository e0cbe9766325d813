"""Logs, traces and metrics: one JSON line, spans and a few Prometheus series per call; OTLP export."""

from colonnade.observability.logging import configure_logging
from colonnade.observability.metrics import GatewayMetrics
from colonnade.observability.redaction import InputFingerprint
from colonnade.observability.tracing import build_tracer_provider, console_exporter

__all__ = [
    "GatewayMetrics",
    "InputFingerprint",
    "build_tracer_provider",
    "configure_logging",
    "console_exporter",
]
