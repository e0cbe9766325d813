"""The rolled-up metrics history: per replica, per bucket (one minute, five minutes), per tool and
per API, calls, errors and a fixed-bucket latency histogram.

Revision ID: 0013
Revises: 0011
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0013"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "metrics_rollups",
        sa.Column("resolution_s", sa.Integer(), nullable=False),
        sa.Column("start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("dimension", sa.String(length=16), nullable=False),
        sa.Column("subject", sa.String(length=512), nullable=False),
        sa.Column("replica", sa.String(length=128), nullable=False),
        sa.Column("calls", sa.BigInteger(), nullable=False),
        sa.Column("errors", sa.BigInteger(), nullable=False),
        sa.Column("histogram", _JSON, nullable=False),
        sa.PrimaryKeyConstraint(
            "resolution_s", "start", "dimension", "subject", "replica", name=op.f("pk_metrics_rollups")
        ),
    )


def downgrade() -> None:
    op.drop_table("metrics_rollups")
