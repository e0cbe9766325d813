"""Per-user upstream OAuth grants (credential mode user_oauth): the refresh token sealed at rest.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "upstream_grants",
        sa.Column("principal", sa.String(length=300), nullable=False),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("tenant", sa.Text(), nullable=True),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("scopes", _JSON, nullable=False),
        sa.Column("refresh_token", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("principal", "provider", name=op.f("pk_upstream_grants")),
    )


def downgrade() -> None:
    op.drop_table("upstream_grants")
