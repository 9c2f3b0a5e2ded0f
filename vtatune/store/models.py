"""SQLAlchemy 2.0 tables of the results store.

Every table is prefixed ``vt_``: the search keeps its Optuna study in the same database (so
``optuna-dashboard`` opens it) and Optuna's own tables (``studies``, ``trials``, ...) must not
clash. The models have their own ``MetaData``; ``create_all`` never touches Optuna's tables.

- ``vt_studies``: one row per study (name unique).
- ``vt_candidates``: one row per evaluated (candidate, evaluation context): unique ``key`` is
  ``candidate_key@context`` (``store.identity``), shared by every study. Rows written before
  contexts existed have no ``context`` and are never served again (they stay for history).
- ``vt_trials``: trial ``number`` of a study, pointing at the candidate it evaluated; unique
  (study_id, number).
- ``vt_claims``: every trial slot of a study, allocated before evaluation (``running``) and
  ``done`` with its trial: how several processes share one study without duplicates.
- ``vt_owners``: the search processes holding slots, with heartbeats; ``vt_mirror_leases``:
  which process writes a study's Optuna mirror.
- ``vt_network_trials``: trial ``number`` of a network study: one hardware design, its
  network totals and the best schedule of every layer (``layers``, JSON); unique
  (study_id, number).
- ``vt_network_evals``: every layer candidate a network trial evaluated or was served, in
  order (``seq``), pointing at the shared ``vt_candidates`` row.

**Adding a column**: add it here (nullable, or with a default the database applies), then
``python -m vtatune.store.migrations new "what changed"`` writes the revision file that brings
existing databases to it (``store.migrations``; a test fails while the two disagree).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

#: Longest candidate key (``workload | hw key | knobs``; about 120 characters in practice).
KEY_LENGTH = 1024


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    """Declarative base with a metadata of its own (never Optuna's)."""

    type_annotation_map = {dict[str, Any]: JSON, datetime: DateTime(timezone=True)}


class StudyRow(Base):
    __tablename__ = "vt_studies"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(255), unique=True)
    workload: Mapped[str] = mapped_column(String(255))
    space: Mapped[dict[str, Any]]
    sampler: Mapped[str] = mapped_column(String(64))
    objective: Mapped[str] = mapped_column(String(64))
    board: Mapped[str] = mapped_column(String(64))
    seed: Mapped[int | None] = mapped_column(BigInteger)
    optuna_study_name: Mapped[str] = mapped_column(String(512))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: What the study is for: workload, board, objective, hardware, knobs, constraints and
    #: the model fingerprint (``runner.study_identity``); a continuation must match it.
    identity: Mapped[dict[str, Any] | None]


class CandidateRow(Base):
    __tablename__ = "vt_candidates"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    #: Row identity: ``candidate_key@context`` (the bare candidate key in rows of version 1).
    key: Mapped[str] = mapped_column(String(KEY_LENGTH), unique=True)
    workload: Mapped[str] = mapped_column(String(255), index=True)
    hw_key: Mapped[str] = mapped_column(String(255))
    hw: Mapped[dict[str, Any]]
    hw_name: Mapped[str] = mapped_column(String(255))
    knobs: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(Text, default="")
    cycles: Mapped[int | None] = mapped_column(BigInteger)
    seconds: Mapped[float | None] = mapped_column(Float)
    counters: Mapped[dict[str, Any]]
    bounds: Mapped[dict[str, Any]]
    efficiency: Mapped[float | None] = mapped_column(Float)
    area_mm2: Mapped[float | None] = mapped_column(Float)
    resources: Mapped[dict[str, Any]]
    compile_ms: Mapped[float | None] = mapped_column(Float)
    sim_ms: Mapped[float | None] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    candidate_key: Mapped[str | None] = mapped_column(String(KEY_LENGTH), index=True)
    context: Mapped[str | None] = mapped_column(String(32), index=True)
    model: Mapped[str | None] = mapped_column(String(32), index=True)
    board: Mapped[str | None] = mapped_column(String(64))
    accelerator_seconds: Mapped[float | None] = mapped_column(Float)
    host_seconds: Mapped[float | None] = mapped_column(Float)
    # energy per call (joules; revision 0002): None in rows stored before it
    accelerator_energy_j: Mapped[float | None] = mapped_column(Float)
    board_energy_j: Mapped[float | None] = mapped_column(Float)
    energy: Mapped[dict[str, Any] | None]


class TrialRow(Base):
    __tablename__ = "vt_trials"
    __table_args__ = (UniqueConstraint("study_id", "number", name="uq_vt_trials_study_number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("vt_studies.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    candidate_id: Mapped[int] = mapped_column(ForeignKey("vt_candidates.id"), index=True)
    sampler: Mapped[str] = mapped_column(String(64))
    params: Mapped[dict[str, Any]]
    cached: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    candidate: Mapped[CandidateRow] = relationship(lazy="joined", innerjoin=True)


class ClaimRow(Base):
    """A trial slot of a study: allocated (``running``) before its candidate is evaluated, so
    two processes never evaluate one candidate for one study, and ``done`` once its trial is
    stored. Unique (study, number) and (study, candidate_key); a slot whose outcome was
    transient frees its candidate (``candidate_key`` becomes ``key#number``)."""

    __tablename__ = "vt_claims"
    __table_args__ = (
        UniqueConstraint("study_id", "number", name="uq_vt_claims_study_number"),
        UniqueConstraint("study_id", "candidate_key", name="uq_vt_claims_study_candidate"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("vt_studies.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    candidate_key: Mapped[str] = mapped_column(String(KEY_LENGTH))
    params: Mapped[dict[str, Any]]
    owner: Mapped[str] = mapped_column(String(255), index=True)
    state: Mapped[str] = mapped_column(String(16), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class OwnerRow(Base):
    """A search process working on a study; alive while its heartbeat is fresh (or, seen from
    the same host, while its process exists)."""

    __tablename__ = "vt_owners"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    owner: Mapped[str] = mapped_column(String(255), unique=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(BigInteger)
    proc_start: Mapped[int | None] = mapped_column(BigInteger)
    #: Seconds since the epoch on the database server's clock (one clock for every host).
    heartbeat: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class MirrorLeaseRow(Base):
    """Which process writes a study's Optuna mirror, until when (database clock, seconds)."""

    __tablename__ = "vt_mirror_leases"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    study: Mapped[str] = mapped_column(String(255), unique=True)
    owner: Mapped[str] = mapped_column(String(255))
    expires: Mapped[float] = mapped_column(Float)


class NetworkTrialRow(Base):
    __tablename__ = "vt_network_trials"
    __table_args__ = (UniqueConstraint("study_id", "number",
                                       name="uq_vt_network_trials_study_number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("vt_studies.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    hw_key: Mapped[str] = mapped_column(String(255))
    hw: Mapped[dict[str, Any]]
    hw_name: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(Text, default="")
    area_mm2: Mapped[float | None] = mapped_column(Float)
    cycles: Mapped[int | None] = mapped_column(BigInteger)
    seconds: Mapped[float | None] = mapped_column(Float)
    bound_cycles: Mapped[float | None] = mapped_column(Float)
    layers: Mapped[dict[str, Any]]  # {"layers": [...]}: JSON columns hold objects here
    resources: Mapped[dict[str, Any]]
    params: Mapped[dict[str, Any]]
    sampler: Mapped[str] = mapped_column(String(64))
    evaluated: Mapped[int] = mapped_column(Integer, default=0)
    cached: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # the split of ``seconds`` (added later: nullable, migrated into older databases)
    accelerator_seconds: Mapped[float | None] = mapped_column(Float)
    host_seconds: Mapped[float | None] = mapped_column(Float)
    # energy per inference (joules; revision 0002): None in rows stored before it
    accelerator_energy_j: Mapped[float | None] = mapped_column(Float)
    board_energy_j: Mapped[float | None] = mapped_column(Float)


class NetworkEvalRow(Base):
    __tablename__ = "vt_network_evals"
    __table_args__ = (UniqueConstraint("study_id", "number", "seq",
                                       name="uq_vt_network_evals_study_number_seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("vt_studies.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    seq: Mapped[int] = mapped_column(Integer)
    candidate_id: Mapped[int] = mapped_column(ForeignKey("vt_candidates.id"), index=True)
    cached: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


#: Every table of the store, in creation order.
TABLES = [StudyRow.__table__, CandidateRow.__table__, TrialRow.__table__, ClaimRow.__table__,
          OwnerRow.__table__, MirrorLeaseRow.__table__, NetworkTrialRow.__table__,
          NetworkEvalRow.__table__]
