"""The vault organ: store, retrieve and delete blobs by key; `similarity.search` finds texts like a query.

Text travels as UTF-8, anything else as base64. Storing under an existing key replaces the blob
(so repeating a store changes nothing more: idempotent); deleting is destructive, and the gateway
asks a human to approve it like any destructive tool.
"""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from colonnade.organs import FunctionOrgan, FunctionSlo, OrganError, StimulusContext
from examples.organs.vault.blobs import store_for
from examples.organs.vault.similarity import similarity

__all__ = ["Blob", "Deleted", "Stored", "organ"]

KEY = r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$"
MAX_CONTENT = 1_048_576

Key = Annotated[str, Field(pattern=KEY, description="The blob's key, e.g. notes/2026-11-04.txt.")]

organ = FunctionOrgan(
    "vault",
    version="1.0.0",
    description="A blob store kept in SQLite: store, retrieve and delete blobs by key, and find stored "
    "texts similar to a query.",
    division="storage",
    subsystem="blobs",
    tags=["storage", "blobs", "sqlite", "key-value", "similarity-search"],
    author="Colonnade examples",
    entrypoint="examples.organs.vault:organ",
)
organ.add_sub_organ(similarity)


class Stored(BaseModel):
    key: str
    size: int = Field(description="Bytes stored.")
    sha256: str
    media_type: str
    replaced: bool = Field(description="A blob was stored under this key before.")


class Blob(BaseModel):
    key: str
    content: str
    encoding: Literal["utf-8", "base64"]
    media_type: str
    size: int
    sha256: str
    stored_at: str = Field(description="When it was stored (ISO 8601, UTC).")


class Deleted(BaseModel):
    key: str
    deleted: bool = Field(description="False when no blob had this key (deleting again changes nothing).")


@organ.function(
    tags=["blobs", "write"],
    examples=[
        {
            "description": "A text note",
            "input": {"key": "notes/welcome.txt", "content": "Welcome to the vault."},
            "output": {"key": "notes/welcome.txt", "size": 21, "media_type": "text/plain"},
        },
        {
            "description": "Bytes as base64",
            "input": {
                "key": "img/dot.png",
                "content": "iVBORw0KGgo=",
                "encoding": "base64",
                "media_type": "image/png",
            },
        },
    ],
    side_effects=["write"],
    idempotent=True,
    slo=FunctionSlo(p95_latency_ms=50, max_error_rate=0.001, queue_cap=8),
)
def store(
    key: Key,
    content: Annotated[str, Field(max_length=2 * MAX_CONTENT, description="The blob: text, or base64.")],
    context: StimulusContext,
    media_type: Annotated[str, Field(max_length=100, description="What the blob is.")] = "text/plain",
    encoding: Annotated[Literal["utf-8", "base64"], Field(description="How `content` is written.")] = "utf-8",
) -> Stored:
    """Store a blob under a key, replacing what the key held; text as UTF-8, bytes as base64."""
    data = _decode(content, encoding)
    if len(data) > MAX_CONTENT:
        raise OrganError("Rejected", f"the blob has {len(data)} bytes; the vault keeps at most {MAX_CONTENT}")
    row, replaced = store_for(context.data_dir).put(key, data, media_type, is_text=encoding == "utf-8")
    return Stored(key=key, size=len(data), sha256=row.sha256, media_type=media_type, replaced=replaced)


@organ.function(
    tags=["blobs", "read"],
    examples=[
        {
            "description": "A stored note",
            "input": {"key": "notes/welcome.txt"},
            "output": {"key": "notes/welcome.txt", "content": "Welcome to the vault.", "encoding": "utf-8"},
        },
        {
            "description": "A key that was never stored answers NotFound",
            "input": {"key": "notes/missing.txt"},
        },
    ],
    side_effects=["read"],
    idempotent=True,
    slo=FunctionSlo(p95_latency_ms=20, max_error_rate=0.001, queue_cap=32),
)
def retrieve(key: Key, context: StimulusContext) -> Blob:
    """Read the blob stored under a key (text as UTF-8, bytes as base64); NotFound when there is none."""
    row = store_for(context.data_dir).get(key)
    if row is None:
        raise OrganError("NotFound", f"the vault has no blob under the key '{key}'", key=key)
    return Blob(
        key=row.key,
        content=row.content.decode("utf-8") if row.is_text else base64.b64encode(row.content).decode("ascii"),
        encoding="utf-8" if row.is_text else "base64",
        media_type=row.media_type,
        size=len(row.content),
        sha256=row.sha256,
        stored_at=datetime.fromtimestamp(row.stored_at, UTC).isoformat(),
    )


@organ.function(
    tags=["blobs", "delete"],
    examples=[
        {
            "description": "Remove a note",
            "input": {"key": "notes/welcome.txt"},
            "output": {"key": "notes/welcome.txt", "deleted": True},
        },
        {
            "description": "Deleting twice changes nothing",
            "input": {"key": "notes/welcome.txt"},
            "output": {"deleted": False},
        },
    ],
    side_effects=["delete"],
    idempotent=True,
    slo=FunctionSlo(p95_latency_ms=50, max_error_rate=0.001, queue_cap=4),
)
def delete(key: Key, context: StimulusContext) -> Deleted:
    """Delete the blob stored under a key for good; deleting a key that holds nothing changes nothing."""
    return Deleted(key=key, deleted=store_for(context.data_dir).delete(key))


def _decode(content: str, encoding: str) -> bytes:
    if encoding == "utf-8":
        return content.encode("utf-8")
    try:
        return base64.b64decode(content, validate=True)
    except (binascii.Error, ValueError):
        raise OrganError("Rejected", "content is not valid base64 (encoding: base64)") from None
