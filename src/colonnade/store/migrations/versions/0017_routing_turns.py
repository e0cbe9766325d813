"""Routing turns: per routed listing, what the session asked, the tools shown, the calls then made.

Revision ID: 0017
Revises: 0015
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0017"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "routing_turns",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("session", sa.String(length=64), nullable=False),
        sa.Column("consumer", sa.Text(), nullable=True),
        sa.Column("tenant", sa.Text(), nullable=True),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("shown", _JSON, nullable=False),
        sa.Column("calls", _JSON, nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("fallback", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_routing_turns")),
    )
    op.create_index(op.f("ix_routing_turns_at"), "routing_turns", ["at"])
    op.create_index(op.f("ix_routing_turns_tenant"), "routing_turns", ["tenant"])


def downgrade() -> None:
    op.drop_index(op.f("ix_routing_turns_tenant"), table_name="routing_turns")
    op.drop_index(op.f("ix_routing_turns_at"), table_name="routing_turns")
    op.drop_table("routing_turns")
