"""The state of the gateway's own alerts (firing, resolved), one row per rule and subject, and the
snapshots of failed calls (envelope, redacted arguments) the platform's error tools read.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "platform_alerts",
        sa.Column("rule", sa.String(length=64), nullable=False),
        sa.Column("subject", sa.String(length=512), nullable=False),
        sa.Column("tenant", sa.Text(), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("threshold", sa.Float(), nullable=True),
        sa.Column("fired_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("state IN ('firing', 'resolved')", name=op.f("ck_platform_alerts_state")),
        sa.PrimaryKeyConstraint("rule", "subject", name=op.f("pk_platform_alerts")),
    )
    with op.batch_alter_table("platform_alerts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_platform_alerts_tenant"), ["tenant"], unique=False)

    op.create_table(
        "error_snapshots",
        sa.Column("call_id", sa.String(length=128), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("tenant", sa.Text(), nullable=True),
        sa.Column("tool", sa.Text(), nullable=False),
        sa.Column("actor", sa.Text(), nullable=False),
        sa.Column("code", sa.String(length=64), nullable=False),
        sa.Column("trace_id", sa.String(length=64), nullable=False),
        sa.Column("arguments", _JSON, nullable=False),
        sa.Column("envelope", _JSON, nullable=False),
        sa.PrimaryKeyConstraint("call_id", name=op.f("pk_error_snapshots")),
    )
    with op.batch_alter_table("error_snapshots", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_error_snapshots_at"), ["at"], unique=False)
        batch_op.create_index(batch_op.f("ix_error_snapshots_tenant"), ["tenant"], unique=False)


def downgrade() -> None:
    op.drop_table("error_snapshots")
    op.drop_table("platform_alerts")
