"""The append-only, hash-chained audit log.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "audit_records",
        sa.Column("seq", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("actor", sa.Text(), nullable=True),
        sa.Column("actor_kind", sa.String(length=16), nullable=True),
        sa.Column("tenant", sa.Text(), nullable=True),
        sa.Column("tool", sa.Text(), nullable=True),
        sa.Column("args_hash", sa.String(length=64), nullable=True),
        sa.Column("decision", sa.String(length=8), nullable=True),
        sa.Column("reasons", _JSON, nullable=False),
        sa.Column("outcome", sa.String(length=24), nullable=True),
        sa.Column("code", sa.String(length=64), nullable=True),
        sa.Column("trace_id", sa.Text(), nullable=True),
        sa.Column("call_id", sa.Text(), nullable=True),
        sa.Column("details", _JSON, nullable=False),
        sa.Column("prev_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_audit_records")),
    )
    with op.batch_alter_table("audit_records", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_audit_records_tenant"), ["tenant"], unique=False)


def downgrade() -> None:
    op.drop_table("audit_records")
