"""Process-wide logging: one line per event, JSON by default, readable on a terminal.

structlog renders every line, with one exception: the per-call line (one per call, the gateway's
hottest) is written by `emit_event` straight to the sink when lines are JSON, with the same fields,
level, logger name, timestamp and secret scrubbing as structlog's chain but a fraction of its cost.
stdlib records (the MCP SDK, uvicorn, `colonnade.*` modules) reach the same processors through one
root handler, keeping the fields they were given with `extra=`. So every line has one shape, and
the same secret scrubbing. Lines go to stderr: in stdio mode stdout is the MCP protocol and must
never carry a byte of log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
import time
from typing import Any, Literal, TextIO

import orjson
import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

from colonnade.observability.redaction import redact_event, scrub_values

__all__ = ["LOG_LEVELS", "Renderer", "configure_logging", "emit_event", "event_enabled", "level_number"]

Renderer = Literal["auto", "json", "console"]

LOG_LEVELS: dict[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}

# HTTP clients log every request URL at INFO, and URLs carry argument values (path and query).
# HTTP clients log URLs (and URLs carry argument values); Alembic narrates every start-up.
_AT_LEAST_WARNING = ("httpx", "httpx2", "httpcore", "httpcore2", "aiohttp", "alembic")
# uvicorn's default logging config gives these handlers of their own and stops propagation; the
# gateway runs uvicorn with `log_config=None`, and this undoes an earlier server's config in-process.
_ROUTED_TO_ROOT = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi")
# uvicorn repeats each message with ANSI colours in this `extra` field.
_NOISE_KEYS = ("color_message",)


class _LineSink:
    """One stream and one lock for both paths, so lines never interleave.

    On the event loop's thread, lines written during one turn of the loop are flushed together at
    its end (one system call for a turn's lines, not one per line); elsewhere each line is flushed
    at once. A line that cannot be written (a closed stream at shutdown) is dropped: logging must
    never fail the call that is being logged.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._lock = threading.Lock()
        self._flush_scheduled = False

    def write(self, line: str) -> None:
        with self._lock:
            try:
                self.stream.write(line + "\n")
            except (OSError, ValueError):
                return
            if self._flush_scheduled:
                return
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
            if loop is None:
                self._flush_now()
            else:
                self._flush_scheduled = True
                loop.call_soon(self._flush)

    def _flush(self) -> None:
        with self._lock:
            self._flush_scheduled = False
            self._flush_now()

    def _flush_now(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.stream.flush()


class _SinkLogger:
    """What structlog calls with a rendered line, whatever the level (filtering happened before)."""

    def __init__(self, sink: _LineSink, name: str | None) -> None:
        self._sink = sink
        self.name = name

    def msg(self, message: str) -> None:
        self._sink.write(message)

    log = debug = info = warn = warning = error = critical = exception = fatal = msg


class _SinkHandler(logging.Handler):
    """The root handler: stdlib records rendered by structlog into the shared sink."""

    def __init__(self, sink: _LineSink, formatter: logging.Formatter) -> None:
        super().__init__()
        self.sink = sink
        self.setFormatter(formatter)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.sink.write(self.format(record))
        except Exception:
            self.handleError(record)


class _Clock:
    """ISO-8601 UTC timestamps as structlog writes them, with the date and time part cached per second."""

    def __init__(self) -> None:
        self._second = -1
        self._prefix = ""

    def now(self) -> str:
        stamp = time.time()
        second = int(stamp)
        if second != self._second:
            self._second, self._prefix = second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        return f"{self._prefix}.{int((stamp - second) * 1_000_000):06d}Z"


class _JsonLines:
    """The per-call fast path: the line structlog's JSON chain would write, built with one encoder call."""

    def __init__(self, sink: _LineSink, threshold: int) -> None:
        self.sink = sink
        self.threshold = threshold
        self._clock = _Clock()

    def emit(self, level: int, logger: str, event: str, fields: dict[str, Any]) -> None:
        line = {"event": event, **fields}
        scrub_values(line)
        bound = structlog.contextvars.get_contextvars()
        if bound.keys() - line.keys():
            line.update(redact_event(None, "", {k: v for k, v in bound.items() if k not in line}))
        line["logger"] = logger
        line["level"] = _LEVEL_NAMES.get(level, "info")
        line["timestamp"] = self._clock.now()
        self.sink.write(orjson.dumps(line, default=repr).decode())


_LEVEL_NAMES = {number: name for name, number in LOG_LEVELS.items()} | {logging.CRITICAL: "critical"}
_fast: _JsonLines | None = None
_threshold = logging.INFO


def event_enabled(level: int) -> bool:
    """Whether a line at `level` would be written (checked before building its fields)."""
    return level >= _threshold


def emit_event(level: int, logger: str, event: str, fields: dict[str, Any]) -> None:
    """One line for a high-volume event: JSON straight to the sink, or through structlog otherwise.

    Field names are the caller's code (none may name a secret); their values are scrubbed.
    """
    if level < _threshold:
        return
    if _fast is not None:
        _fast.emit(level, logger, event, fields)
    else:
        structlog.get_logger(logger).log(level, event, **fields)


def _add_logger_name(logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
    """`structlog.get_logger("colonnade.x")` lines carry `logger` like stdlib records do."""
    name = getattr(logger, "name", None)
    if name:
        event_dict.setdefault("logger", name)
    return event_dict


def _event_from_extra(logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
    """A record whose `extra` names its `event` keeps that name; the formatted text becomes `message`."""
    record = event_dict.get("_record")
    if record is not None and isinstance(getattr(record, "event", None), str):
        event_dict["message"] = event_dict["event"]
    return event_dict


def _drop_noise(logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
    for key in _NOISE_KEYS:
        event_dict.pop(key, None)
    return event_dict


def level_number(level: str | int) -> int:
    """`"info"` -> `logging.INFO`; an unknown name is a clear error, not a silent default."""
    if isinstance(level, int):
        return level
    try:
        return LOG_LEVELS[level.lower()]
    except KeyError:
        raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}") from None


def _renderer(kind: Renderer, stream: TextIO) -> Processor:
    tty = _isatty(stream)
    if kind == "console" or (kind == "auto" and tty):
        return structlog.dev.ConsoleRenderer(colors=tty)
    return structlog.processors.JSONRenderer()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def configure_logging(
    level: str | int = "info", *, stream: TextIO | None = None, renderer: Renderer = "auto"
) -> None:
    """Set up structlog and the stdlib root logger for this process; calling it again replaces both.

    `stream` defaults to stderr. `renderer="auto"` writes JSON lines, or a coloured console
    format when the stream is a terminal.
    """
    global _fast, _threshold
    threshold = level_number(level)
    target = stream if stream is not None else sys.stderr
    sink = _LineSink(target)
    render = _renderer(renderer, target)
    _threshold = threshold
    _fast = _JsonLines(sink, threshold) if isinstance(render, structlog.processors.JSONRenderer) else None
    timestamp = structlog.processors.TimeStamper(fmt="iso", utc=True)
    tail: list[Processor] = [structlog.processors.format_exc_info, redact_event, render]

    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            _add_logger_name,
            structlog.processors.add_log_level,
            timestamp,
            *tail,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(threshold),
        logger_factory=lambda *args: _SinkLogger(sink, str(args[0]) if args else None),
        cache_logger_on_first_use=True,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            _event_from_extra,
            structlog.stdlib.ExtraAdder(),
            _drop_noise,
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.add_logger_name,
            structlog.processors.add_log_level,
            timestamp,
        ],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *tail],
    )
    _route_stdlib(_SinkHandler(sink, formatter), threshold)


def _route_stdlib(handler: _SinkHandler, threshold: int) -> None:
    """Make `handler` the root's only sink handler; library loggers propagate to it."""
    root = logging.getLogger()
    for previous in [h for h in root.handlers if isinstance(h, _SinkHandler)]:
        root.removeHandler(previous)
    root.addHandler(handler)
    root.setLevel(threshold)
    for name in _AT_LEAST_WARNING:
        logging.getLogger(name).setLevel(max(threshold, logging.WARNING))
    for name in _ROUTED_TO_ROOT:
        library = logging.getLogger(name)
        for own in list(library.handlers):
            library.removeHandler(own)
        library.propagate = True
    logging.captureWarnings(True)
