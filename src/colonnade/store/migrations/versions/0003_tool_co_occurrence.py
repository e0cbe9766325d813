"""Tool co-occurrence learned by the router: sessions per tool and per pair of tools.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tool_uses",
        sa.Column("tool", sa.Text(), nullable=False),
        sa.Column("uses", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("tool", name=op.f("pk_tool_uses")),
    )
    op.create_table(
        "tool_pairs",
        sa.Column("given", sa.Text(), nullable=False),
        sa.Column("other", sa.Text(), nullable=False),
        sa.Column("together", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("given", "other", name=op.f("pk_tool_pairs")),
    )


def downgrade() -> None:
    op.drop_table("tool_pairs")
    op.drop_table("tool_uses")
