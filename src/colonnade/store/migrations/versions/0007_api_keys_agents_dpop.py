"""API keys (hashed), registered agents and the DPoP proof replay cache.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        sa.Column("owner", sa.Text(), nullable=False),
        sa.Column("tenant", sa.Text(), nullable=True),
        sa.Column("persona", sa.String(length=32), nullable=False),
        sa.Column("team", sa.Text(), nullable=True),
        sa.Column("scopes", _JSON, nullable=False),
        sa.Column("label", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("replaced_by", sa.String(length=32), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
    )
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_api_keys_owner"), ["owner"], unique=False)
        batch_op.create_index(batch_op.f("ix_api_keys_tenant"), ["tenant"], unique=False)

    op.create_table(
        "agents",
        sa.Column("id", sa.String(length=128), nullable=False),
        sa.Column("tenant", sa.Text(), nullable=False),
        sa.Column("owner", sa.Text(), nullable=False),
        sa.Column("allowed_tools", _JSON, nullable=False),
        sa.Column("public_key", _JSON, nullable=True),
        sa.Column("key_thumbprint", sa.String(length=64), nullable=True),
        sa.Column("registered_via", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agents")),
    )
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_agents_tenant"), ["tenant"], unique=False)

    op.create_table(
        "dpop_proofs",
        sa.Column("proof", sa.String(length=64), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("proof", name=op.f("pk_dpop_proofs")),
    )
    with op.batch_alter_table("dpop_proofs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_dpop_proofs_expires_at"), ["expires_at"], unique=False)


def downgrade() -> None:
    op.drop_table("dpop_proofs")
    op.drop_table("agents")
    op.drop_table("api_keys")
