"""What does rendering a REST answer in envelope version 1 cost next to version 2?

Version 1 is a projection of the pipeline's (version 2) result: one more validated model per
answer. This times `result_response` (what `POST /v1/calls` sends) for a typical read's success
and for a parked approval, in both versions, interleaved in rounds so machine drift hits both
alike; it prints microseconds per answer and the v1/v2 ratio measured in this run.

Run: .venv/bin/python bench/envelope_versions.py [--answers 20000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import UTC, datetime

from rich.console import Console
from rich.table import Table

from colonnade.calls.envelope import CallMetrics, CallResult, CallStatus, EnvelopeVersion, Pending, Provenance
from colonnade.surfaces.rest.render import result_response

PROVENANCE = Provenance(tool_id="acme:crm:get_customer", tool_version="1.0.0", digest="d" * 64)
CUSTOMER = {
    "id": "C-1001",
    "name": "Ada Example",
    "email": "ada@example.com",
    "company": "Example Analytics Ltd",
    "created_at": "2025-01-06T09:00:00Z",
}
RESULTS = {
    "success (read)": CallResult(
        call_id="c1",
        status=CallStatus.SUCCESS,
        output=CUSTOMER,
        metrics=CallMetrics(duration_ms=4.213),
        provenance=PROVENANCE,
    ),
    "pending (approval)": CallResult(
        call_id="c2",
        status=CallStatus.PENDING,
        provenance=PROVENANCE,
        pending=Pending(
            reason="awaiting_approval",
            token="ap_" + "x" * 40,
            expires_at=datetime(2030, 1, 1, tzinfo=UTC),
            next_action="an approver must approve it (POST /v1/approvals/ap_x/approve)",
        ),
    ),
}


def _per_answer_us(result: CallResult, version: EnvelopeVersion, answers: int) -> float:
    started = time.perf_counter()
    for _ in range(answers):
        result_response(result, version=version, tool_id="acme:crm:get_customer")
    return (time.perf_counter() - started) / answers * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    table = Table(title=f"result_response per answer, median of {args.rounds} rounds x {args.answers}")
    for column in ("result", "v2 (us)", "v1 (us)", "v1 / v2"):
        table.add_column(column, justify="right")
    for name, result in RESULTS.items():
        v1: list[float] = []
        v2: list[float] = []
        for _ in range(args.rounds):
            v2.append(_per_answer_us(result, 2, args.answers))
            v1.append(_per_answer_us(result, 1, args.answers))
        one, two = statistics.median(v1), statistics.median(v2)
        table.add_row(name, f"{two:.1f}", f"{one:.1f}", f"{one / two:.2f}")
    Console().print(table)


if __name__ == "__main__":
    main()
