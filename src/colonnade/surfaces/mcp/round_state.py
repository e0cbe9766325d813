"""The `requestState` of an approved call's input round: the gateway's round token and the server's state.

When an approved call's tool asks its caller a question, the approval gate parks an answer round
(`calls/approvals/rounds.py`); its token travels to the caller inside the round's `requestState`,
ahead of the server's own state, and comes back with the caller's answer. Only a state with this
prefix is read as one; the server never sees the prefix or the token, only its own state.
"""

from __future__ import annotations

__all__ = ["APPROVED_PREFIX", "open_state", "seal_state"]

APPROVED_PREFIX = "colonnade-approved:"
_NO_STATE = "-"
_STATE = "="


def seal_state(round_token: str, servers_state: str | None) -> str:
    """The state handed to the caller: the round's token, then the server's state (or that it had none)."""
    tail = _NO_STATE if servers_state is None else _STATE + servers_state
    return f"{APPROVED_PREFIX}{round_token}:{tail}"


def open_state(state: str | None) -> tuple[str, str | None] | None:
    """The round token and the server's own state from a caller's answer; None for any other state."""
    if state is None or not state.startswith(APPROVED_PREFIX):
        return None
    token, _, tail = state.removeprefix(APPROVED_PREFIX).partition(":")
    if not token or tail[:1] not in (_NO_STATE, _STATE):
        return None
    return token, (tail[1:] if tail[:1] == _STATE else None)
