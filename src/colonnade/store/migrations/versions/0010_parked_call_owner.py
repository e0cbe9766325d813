"""Parked calls remember the call that parked them and the tenant of the principal that did.

A resume is bound to who parked the call: the principal's key alone does not say its tenant (two
tenants may each have a `user:alice`), and refusals are audited with the parked call's own id.
Rows parked before this revision have neither: only a principal without a tenant can resume them,
and the rest expire (rolled back) at their deadline, as prepared calls do within a minute by default.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("parked_calls") as batch:
        batch.add_column(sa.Column("call_id", sa.Text(), nullable=True))
        batch.add_column(sa.Column("tenant", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("parked_calls") as batch:
        batch.drop_column("tenant")
        batch.drop_column("call_id")
