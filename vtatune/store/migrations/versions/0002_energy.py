"""Energy per candidate and per network trial (issue 33).

``vt_candidates``: ``accelerator_energy_j`` and ``board_energy_j`` (joules per call, the
energy model's central constants) and ``energy`` (JSON: their range, the components and the
model's note). ``vt_network_trials``: ``accelerator_energy_j`` and ``board_energy_j`` per
inference. All nullable: rows stored before read as None (not recomputed).

Revision ID: 0002_vtatune_0.2.0
Revises: 0001_vtatune_0.2.0
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_vtatune_0.2.0"
down_revision = "0001_vtatune_0.2.0"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("vt_candidates", "vt_network_trials"):
        op.add_column(table, sa.Column("accelerator_energy_j", sa.Float(), nullable=True))
        op.add_column(table, sa.Column("board_energy_j", sa.Float(), nullable=True))
    op.add_column("vt_candidates", sa.Column("energy", sa.JSON(), nullable=True))


def downgrade() -> None:
    raise NotImplementedError("vtatune never drops its results")
