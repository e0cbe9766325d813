"""Parked calls replace commit tokens: one table for every call a stage suspended.

Two-phase commit tokens become parked calls with the reason `prepared`; their states map onto
the general ones (prepared -> parked, committing -> resuming, committed -> resumed,
compensating -> expiring, rolled_back -> expired, failed -> failed).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
_STATES = {
    "prepared": "parked",
    "committing": "resuming",
    "committed": "resumed",
    "compensating": "expiring",
    "rolled_back": "expired",
    "failed": "failed",
}


def upgrade() -> None:
    op.create_table(
        "parked_calls",
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.String(length=24), nullable=False),
        sa.Column("tool", sa.Text(), nullable=False),
        sa.Column("version", sa.Text(), nullable=False),
        sa.Column("principal", sa.Text(), nullable=False),
        sa.Column("input", _JSON, nullable=False),
        sa.Column("input_hash", sa.String(length=64), nullable=False),
        sa.Column("payload", _JSON, nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("deadline", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "reason IN ('prepared', 'awaiting_approval', 'awaiting_input')",
            name=op.f("ck_parked_calls_reason"),
        ),
        sa.CheckConstraint(
            "state IN ('parked', 'resuming', 'resumed', 'expiring', 'expired', 'failed')",
            name=op.f("ck_parked_calls_state"),
        ),
        sa.PrimaryKeyConstraint("token", name=op.f("pk_parked_calls")),
    )
    with op.batch_alter_table("parked_calls", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_parked_calls_deadline"), ["deadline"], unique=False)
        batch_op.create_index(batch_op.f("ix_parked_calls_state"), ["state"], unique=False)

    tokens = sa.table(
        "commit_tokens",
        *(sa.column(name) for name in ("token", "tool", "version", "input", "prepared", "state")),
        *(sa.column(name) for name in ("deadline", "attempts", "created_at", "updated_at")),
    )
    state = sa.case(*((tokens.c.state == old, new) for old, new in _STATES.items()), else_="failed")
    copied = sa.select(
        tokens.c.token,
        sa.literal("prepared"),
        tokens.c.tool,
        tokens.c.version,
        sa.literal("system:two-phase"),
        tokens.c.input,
        sa.literal(""),
        tokens.c.prepared,
        state,
        tokens.c.deadline,
        tokens.c.attempts,
        tokens.c.created_at,
        tokens.c.updated_at,
    )
    parked = sa.table(
        "parked_calls",
        *(sa.column(name) for name in ("token", "reason", "tool", "version", "principal", "input")),
        *(sa.column(name) for name in ("input_hash", "payload", "state", "deadline", "attempts")),
        *(sa.column(name) for name in ("created_at", "updated_at")),
    )
    op.execute(sa.insert(parked).from_select([c.name for c in parked.columns], copied))

    with op.batch_alter_table("commit_tokens", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_commit_tokens_state"))
        batch_op.drop_index(batch_op.f("ix_commit_tokens_deadline"))
    op.drop_table("commit_tokens")


def downgrade() -> None:
    """Back to commit tokens: prepared calls survive; calls parked for other reasons are dropped."""
    op.create_table(
        "commit_tokens",
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("tool", sa.Text(), nullable=False),
        sa.Column("version", sa.Text(), nullable=False),
        sa.Column("input", _JSON, nullable=False),
        sa.Column("prepared", _JSON, nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("deadline", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "state IN ('prepared', 'committing', 'committed', 'compensating', 'rolled_back', 'failed')",
            name=op.f("ck_commit_tokens_state"),
        ),
        sa.PrimaryKeyConstraint("token", name=op.f("pk_commit_tokens")),
    )
    with op.batch_alter_table("commit_tokens", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_commit_tokens_deadline"), ["deadline"], unique=False)
        batch_op.create_index(batch_op.f("ix_commit_tokens_state"), ["state"], unique=False)
    parked = sa.table(
        "parked_calls",
        *(sa.column(name) for name in ("token", "reason", "tool", "version", "input", "payload", "state")),
        *(sa.column(name) for name in ("deadline", "attempts", "created_at", "updated_at")),
    )
    back = {new: old for old, new in _STATES.items()}
    state = sa.case(*((parked.c.state == new, old) for new, old in back.items()), else_="failed")
    copied = sa.select(
        parked.c.token,
        parked.c.tool,
        parked.c.version,
        parked.c.input,
        parked.c.payload,
        state,
        parked.c.deadline,
        parked.c.attempts,
        parked.c.created_at,
        parked.c.updated_at,
    ).where(parked.c.reason == "prepared")
    tokens = sa.table(
        "commit_tokens",
        *(sa.column(name) for name in ("token", "tool", "version", "input", "prepared", "state")),
        *(sa.column(name) for name in ("deadline", "attempts", "created_at", "updated_at")),
    )
    op.execute(sa.insert(tokens).from_select([c.name for c in tokens.columns], copied))
    with op.batch_alter_table("parked_calls", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_parked_calls_state"))
        batch_op.drop_index(batch_op.f("ix_parked_calls_deadline"))
    op.drop_table("parked_calls")
