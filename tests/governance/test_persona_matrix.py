"""The persona x tool matrix end to end: real tokens, the real gateway, REST and MCP, a real backend.

Every cell is called on both surfaces; a cell that is refused never reaches the backend, and the
backend's ledger holds exactly the writes the matrix allows.
"""

from __future__ import annotations

from typing import Any

import pytest

from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.support.governed import Governed

OK, APPROVAL, HIDDEN = "ok", "pending", "I-REQ-UNKNOWN-TOOL"
FORBIDDEN, UNSUBSCRIBED = "A-AUTH-FORBIDDEN", "A-AUTH-SUBSCRIPTION-REQUIRED"
# (persona, tenant, team) -> api -> (read_item, write_item, drop_item)
PERSONAS: dict[tuple[str, str, str | None], dict[str, tuple[str, str, str]]] = {
    ("admin", "acme", None): {
        "acme:items": (OK, OK, APPROVAL),
        "acme:lab": (OK, OK, APPROVAL),
        "globex:items": (HIDDEN, HIDDEN, HIDDEN),
    },
    ("product_owner", "acme", "team-a"): {
        "acme:items": (OK, OK, APPROVAL),
        "acme:lab": (OK, OK, APPROVAL),
        "globex:items": (HIDDEN, HIDDEN, HIDDEN),
    },
    ("developer", "acme", "team-a"): {
        "acme:items": (OK, FORBIDDEN, FORBIDDEN),
        "acme:lab": (OK, OK, APPROVAL),
        "globex:items": (HIDDEN, HIDDEN, HIDDEN),
    },
    ("consumer", "acme", None): {
        "acme:items": (UNSUBSCRIBED, UNSUBSCRIBED, UNSUBSCRIBED),
        "acme:lab": (UNSUBSCRIBED, UNSUBSCRIBED, UNSUBSCRIBED),
        "globex:items": (HIDDEN, HIDDEN, HIDDEN),
    },
    ("security", "acme", None): {
        "acme:items": (OK, FORBIDDEN, FORBIDDEN),
        "acme:lab": (OK, FORBIDDEN, FORBIDDEN),
        "globex:items": (HIDDEN, HIDDEN, HIDDEN),
    },
    ("admin", "globex", None): {
        "acme:items": (HIDDEN, HIDDEN, HIDDEN),
        "acme:lab": (HIDDEN, HIDDEN, HIDDEN),
        "globex:items": (OK, OK, APPROVAL),
    },
}
ARGUMENTS = {
    "read_item": {"item_id": "I-1"},
    "write_item": {"item_id": "I-2", "value": "changed"},
    "drop_item": {"item_id": "I-2"},
}
CELLS = [
    (who, f"{api}:{tool}", expected)
    for who, row in PERSONAS.items()
    for api, outcomes in row.items()
    for tool, expected in zip(ARGUMENTS, outcomes, strict=True)
]


def _rest_outcome(result: dict[str, Any]) -> str:
    if result["status"] in ("success", "pending"):
        return OK if result["status"] == "success" else APPROVAL
    return str(result["error"]["code"])


def _mcp_outcome(result: Any) -> str:
    envelope = (result.meta or {})[RESULT_META_KEY]
    if envelope["status"] == "pending":
        return APPROVAL
    return OK if not result.is_error else str(envelope["error"]["code"])


@pytest.mark.parametrize(
    ("who", "tool", "expected"), CELLS, ids=[f"{c[0][0]}@{c[0][1]}-{c[1]}" for c in CELLS]
)
async def test_cell_on_rest_and_mcp(
    governed: Governed, who: tuple[str, str, str | None], tool: str, expected: str
) -> None:
    persona, tenant, team = who
    token = governed.token(persona, tenant=tenant, team=team, sub=f"{persona}-{tenant}")
    effects, hits = len(governed.effects()), len(governed.backend_hits())
    arguments = ARGUMENTS[tool.rsplit(":", 1)[1]]
    status, rest = governed.call(token, tool, **arguments)
    assert status == 200 and _rest_outcome(rest) == expected, rest
    async with governed.mcp(token) as client:
        wire = tool.replace(":", "__")
        assert _mcp_outcome(await client.call_tool(wire, arguments)) == expected
    reached = len(governed.backend_hits()) - hits
    wrote = len(governed.effects()) - effects
    assert reached == (2 if expected == OK else 0)
    assert wrote == (2 if expected == OK and tool.endswith("write_item") else 0)
    if expected == HIDDEN:  # a hidden tool is answered exactly like a missing one
        assert rest["provenance"] is None and tool not in str(
            rest["error"].get("details", {}).get("did_you_mean")
        )
