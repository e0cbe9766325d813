"""What a call made from a page answered: its outcome in a line, and the whole envelope.

The try-this-tool form and the contracts page run calls through the pipeline as the visitor; both
show the result the same way, as `POST /v1/calls` returns it, with a pointer to the approvals when
the call waits for a person.
"""

from __future__ import annotations

import json
from typing import Any

from colonnade.calls.envelope import CallResult
from colonnade.surfaces.pages.html import Html, join, tag
from colonnade.surfaces.pages.layout import APPROVALS_PATH

__all__ = ["call_outcome"]


def call_outcome(result: CallResult) -> Html:
    error = result.error
    said: list[Any] = [f"The call answered {result.status.value}"]
    if error is not None:
        said.append(join(": ", tag("code", error.code), f" {error.message}"))
    link = None
    if result.pending is not None and result.pending.reason == "awaiting_approval":
        link = tag(
            "p", "It waits for a person's approval: ", tag("a", "the approvals", href=APPROVALS_PATH), "."
        )
    envelope = json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False)
    return join(
        tag(
            "p",
            *said,
            ".",
            class_="error" if error is not None else "note",
            id="call-result",
            data_status=result.status.value,
        ),
        link,
        tag("pre", tag("code", envelope), class_="envelope", id="call-envelope"),
    )
