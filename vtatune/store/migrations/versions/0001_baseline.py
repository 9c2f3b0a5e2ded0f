"""Baseline: the store's tables as vtatune 0.1.0 left them (frozen here: later changes are
later revisions, never edits of this file).

A database of vtatune 0.1.x has no version table and may lack tables, columns and indexes its
version did not have yet; this revision adds whatever of the tables below is missing (every
column 0.1.x added later is nullable) and the database is stamped with it. On an empty
database it creates every table.

Revision ID: 0001_vtatune_0.2.0
Revises: (none)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from vtatune.store.migrations import ensure

revision = "0001_vtatune_0.2.0"
down_revision = None
branch_labels = None
depends_on = None

metadata = sa.MetaData()

sa.Table(
    'vt_candidates', metadata,
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=1024), nullable=False),
    sa.Column('workload', sa.String(length=255), nullable=False),
    sa.Column('hw_key', sa.String(length=255), nullable=False),
    sa.Column('hw', sa.JSON(), nullable=False),
    sa.Column('hw_name', sa.String(length=255), nullable=False),
    sa.Column('knobs', sa.JSON(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('cycles', sa.BigInteger(), nullable=True),
    sa.Column('seconds', sa.Float(), nullable=True),
    sa.Column('counters', sa.JSON(), nullable=False),
    sa.Column('bounds', sa.JSON(), nullable=False),
    sa.Column('efficiency', sa.Float(), nullable=True),
    sa.Column('area_mm2', sa.Float(), nullable=True),
    sa.Column('resources', sa.JSON(), nullable=False),
    sa.Column('compile_ms', sa.Float(), nullable=True),
    sa.Column('sim_ms', sa.Float(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('candidate_key', sa.String(length=1024), nullable=True),
    sa.Column('context', sa.String(length=32), nullable=True),
    sa.Column('model', sa.String(length=32), nullable=True),
    sa.Column('board', sa.String(length=64), nullable=True),
    sa.Column('accelerator_seconds', sa.Float(), nullable=True),
    sa.Column('host_seconds', sa.Float(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('key'),
    sa.Index('ix_vt_candidates_candidate_key', 'candidate_key'),
    sa.Index('ix_vt_candidates_context', 'context'),
    sa.Index('ix_vt_candidates_model', 'model'),
    sa.Index('ix_vt_candidates_workload', 'workload'),
)

sa.Table(
    'vt_mirror_leases', metadata,
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('study', sa.String(length=255), nullable=False),
    sa.Column('owner', sa.String(length=255), nullable=False),
    sa.Column('expires', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('study'),
)

sa.Table(
    'vt_owners', metadata,
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('owner', sa.String(length=255), nullable=False),
    sa.Column('host', sa.String(length=255), nullable=False),
    sa.Column('pid', sa.BigInteger(), nullable=False),
    sa.Column('proc_start', sa.BigInteger(), nullable=True),
    sa.Column('heartbeat', sa.Float(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('owner'),
)

sa.Table(
    'vt_studies', metadata,
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('workload', sa.String(length=255), nullable=False),
    sa.Column('space', sa.JSON(), nullable=False),
    sa.Column('sampler', sa.String(length=64), nullable=False),
    sa.Column('objective', sa.String(length=64), nullable=False),
    sa.Column('board', sa.String(length=64), nullable=False),
    sa.Column('seed', sa.BigInteger(), nullable=True),
    sa.Column('optuna_study_name', sa.String(length=512), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('identity', sa.JSON(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name'),
)

sa.Table(
    'vt_claims', metadata,
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('study_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('candidate_key', sa.String(length=1024), nullable=False),
    sa.Column('params', sa.JSON(), nullable=False),
    sa.Column('owner', sa.String(length=255), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['study_id'], ['vt_studies.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('study_id', 'candidate_key', name='uq_vt_claims_study_candidate'),
    sa.UniqueConstraint('study_id', 'number', name='uq_vt_claims_study_number'),
    sa.Index('ix_vt_claims_owner', 'owner'),
    sa.Index('ix_vt_claims_state', 'state'),
)

sa.Table(
    'vt_network_evals', metadata,
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('study_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('seq', sa.Integer(), nullable=False),
    sa.Column('candidate_id', sa.Integer(), nullable=False),
    sa.Column('cached', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['candidate_id'], ['vt_candidates.id'], ),
    sa.ForeignKeyConstraint(['study_id'], ['vt_studies.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('study_id', 'number', 'seq', name='uq_vt_network_evals_study_number_seq'),
    sa.Index('ix_vt_network_evals_candidate_id', 'candidate_id'),
)

sa.Table(
    'vt_network_trials', metadata,
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('study_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('hw_key', sa.String(length=255), nullable=False),
    sa.Column('hw', sa.JSON(), nullable=False),
    sa.Column('hw_name', sa.String(length=255), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('area_mm2', sa.Float(), nullable=True),
    sa.Column('cycles', sa.BigInteger(), nullable=True),
    sa.Column('seconds', sa.Float(), nullable=True),
    sa.Column('bound_cycles', sa.Float(), nullable=True),
    sa.Column('layers', sa.JSON(), nullable=False),
    sa.Column('resources', sa.JSON(), nullable=False),
    sa.Column('params', sa.JSON(), nullable=False),
    sa.Column('sampler', sa.String(length=64), nullable=False),
    sa.Column('evaluated', sa.Integer(), nullable=False),
    sa.Column('cached', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('accelerator_seconds', sa.Float(), nullable=True),
    sa.Column('host_seconds', sa.Float(), nullable=True),
    sa.ForeignKeyConstraint(['study_id'], ['vt_studies.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('study_id', 'number', name='uq_vt_network_trials_study_number'),
)

sa.Table(
    'vt_trials', metadata,
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('study_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('candidate_id', sa.Integer(), nullable=False),
    sa.Column('sampler', sa.String(length=64), nullable=False),
    sa.Column('params', sa.JSON(), nullable=False),
    sa.Column('cached', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['candidate_id'], ['vt_candidates.id'], ),
    sa.ForeignKeyConstraint(['study_id'], ['vt_studies.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('study_id', 'number', name='uq_vt_trials_study_number'),
    sa.Index('ix_vt_trials_candidate_id', 'candidate_id'),
)


def upgrade() -> None:
    ensure(op.get_bind(), metadata.sorted_tables)


def downgrade() -> None:
    raise NotImplementedError("vtatune never drops its results")
