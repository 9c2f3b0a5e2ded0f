"""The results store: candidates, trials and studies in SQLite or any SQLAlchemy database.

``Store`` is the one way in; it returns frozen records (``CandidateRecord``, ``TrialRecord``,
``StudyInfo``) and raises ``StoreError`` (a ``UserError``) for a database it cannot use.
"""

from __future__ import annotations

from vtatune.store.records import (
    DETERMINISTIC,
    NETWORK_STATUSES,
    STATUSES,
    TRANSIENT,
    CandidateRecord,
    LayerResult,
    NetworkEval,
    NetworkTrialRecord,
    StudyInfo,
    TrialRecord,
)
from vtatune.store.store import (
    Store,
    StoreError,
    database_exists,
    default_url,
    normalize_url,
    sqlite_path,
)

__all__ = ["DETERMINISTIC", "NETWORK_STATUSES", "STATUSES", "TRANSIENT", "CandidateRecord",
           "LayerResult", "NetworkEval", "NetworkTrialRecord", "Store", "StoreError", "StudyInfo",
           "TrialRecord", "database_exists", "default_url", "normalize_url", "sqlite_path"]
