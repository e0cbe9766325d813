"""The shared record of a handshake-era MCP session: what it keeps, how it is read back, and when it
goes. In-process shared values (the interface Redis implements too) and a real fan-out-less set-up;
the replicas themselves are in `test_mcp_sessions_across_replicas.py`."""

from __future__ import annotations

import asyncio

from colonnade.shared_state.values import LocalValues
from colonnade.surfaces.mcp.session_records import SessionRecord, SessionRecords

CLIENT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"elicitation": {}},
    "clientInfo": {"name": "records", "version": "1"},
}


def _record(**changes: object) -> SessionRecord:
    base = SessionRecord(
        session_id="a" * 32,
        endpoint="mcp",
        principal="agent:alice",
        owner="agent:alice",
        protocol_version="2025-11-25",
        client=dict(CLIENT),
        requestor={"client_id": "c", "issuer": None, "subject": "alice"},
        opened_by="r1",
    )
    return base.evolve(**changes)


def test_a_record_reads_back_as_written_with_the_client_s_initialize_params() -> None:
    record = _record(log_level="debug", subscriptions=("file:///a",))
    again = SessionRecord.decode(record.encode())
    assert again == record
    params = again.client_params()
    assert params.client_info.name == "records" and params.capabilities.elicitation is not None


def test_stored_bytes_that_are_not_a_record_read_as_no_record() -> None:
    assert SessionRecord.decode(b"not json") is None
    assert SessionRecord.decode(b'{"session_id": "x"}') is None  # fields missing
    broken = _record(client={"capabilities": "none"}).encode()  # not `initialize` params
    assert SessionRecord.decode(broken) is None


async def test_a_record_is_fetched_by_endpoint_and_id_and_gone_once_ended() -> None:
    records = SessionRecords(LocalValues(), ttl_s=60, replica_id="r1")
    record = _record()
    assert await records.put(record) is True
    assert await records.fetch("mcp", record.session_id) == record
    assert await records.fetch("servers/other", record.session_id) is None  # another endpoint's id space
    await records.update("mcp", record.session_id, log_level="warning")
    fetched = await records.fetch("mcp", record.session_id)
    assert fetched is not None and fetched.log_level == "warning"
    await records.end("mcp", record.session_id)
    assert await records.fetch("mcp", record.session_id) is None
    assert records.status()["ended"] == 1 and records.status()["held"] == 0


async def test_a_record_nobody_renews_expires_with_the_idle_timeout() -> None:
    records = SessionRecords(LocalValues(), ttl_s=0.05)
    record = _record()
    await records.put(record)
    await asyncio.sleep(0.1)
    assert await records.fetch("mcp", record.session_id) is None
    assert records.status()["unknown_ids_refused"] == 1


async def test_a_session_forgotten_here_is_never_written_back_by_a_late_renewal() -> None:
    values = LocalValues()
    records = SessionRecords(values, ttl_s=60)
    record = _record()
    await records.put(record)
    await records.end("mcp", record.session_id)
    records.touch("mcp", record.session_id)  # a request that raced the DELETE
    await asyncio.sleep(0)
    assert await values.get(f"mcp-session:mcp:{record.session_id}") is None
