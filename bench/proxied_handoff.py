"""How `/mcp` hands a downstream server's answer to the SDK: a `CallToolResult` model, or the dict.

In one process, through the SDK runner's own serialisation (`ServerRunner._serialize`, what every
handler result goes through): (old) the rendered answer validated into `CallToolResult`, which the
runner dumps, sieves for the caller's version and stamps with a deep copy of `serverInfo`; (new)
the rendered dict with the model's one default (`render.model_defaults`) and the surface's
once-made `serverInfo` stamp, which the runner sieves. Both must serialise to the same result
(checked before timing). The two alternate in `--runs` runs of `--calls` answers; medians.

Run: .venv/bin/python bench/proxied_handoff.py [--calls 5000] [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import timeit
from typing import Any

import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.lowlevel.server import Server
from mcp.server.runner import ServerRunner

from colonnade.calls.envelope import CallMetrics, CallResult, CallStatus, Provenance
from colonnade.surfaces.mcp.render import model_defaults, render_answer

ANSWER: dict[str, Any] = {"content": [{"type": "text", "text": "ping"}]}
RESULT = CallResult(
    call_id="c" * 36,
    status=CallStatus.SUCCESS,
    output={"content": ANSWER["content"]},
    metrics=CallMetrics(duration_ms=1.2),
    provenance=Provenance(tool_id="default:echo:echo", tool_version="1.0.0", digest="sha256:" + "0" * 64),
)


def measure(server: Server[Any], version: str, calls: int, runs: int) -> tuple[float, float]:
    """Median microseconds per answer: the model hand-off, the dict hand-off."""
    stamp = server.server_info_stamp
    runner = ServerRunner(server, Connection.from_envelope(version, {"name": "c", "version": "1"}, {}), None)
    legacy = version != "2026-07-28"

    def old() -> dict[str, Any]:
        rendered = render_answer(RESULT, ANSWER, legacy=legacy)
        return runner._serialize("tools/call", version, types.CallToolResult.model_validate(rendered))

    def new() -> dict[str, Any]:
        rendered = render_answer(RESULT, ANSWER, legacy=legacy)
        assert isinstance(rendered, dict)
        body = model_defaults(rendered)
        if not legacy:
            body["_meta"][types.SERVER_INFO_META_KEY] = stamp
        return runner._serialize("tools/call", version, body)

    if old() != new():
        raise SystemExit(f"{version}: the two hand-offs serialise differently:\n{old()}\n{new()}")
    before, after = [], []
    for _ in range(runs):
        before.append(timeit.timeit(old, number=calls) / calls * 1e6)
        after.append(timeit.timeit(new, number=calls) / calls * 1e6)
    return statistics.median(before), statistics.median(after)


def main(calls: int, runs: int) -> None:
    server: Server[Any] = Server("colonnade", version="0.1.0")
    for version in ("2026-07-28", "2025-11-25"):
        model, plain = measure(server, version, calls, runs)
        print(
            f"{version}: model {model:.1f} us, dict {plain:.1f} us per answer "
            f"(median of {runs} alternating runs of {calls}); the same serialised result"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=5000, help="answers per run (default 5000)")
    parser.add_argument("--runs", type=int, default=7, help="alternating runs of each (default 7)")
    arguments = parser.parse_args()
    main(arguments.calls, arguments.runs)
