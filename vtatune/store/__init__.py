"""The results store: candidates, trials and studies in SQLite or any SQLAlchemy database.

``Store`` is the one way in; it returns frozen records (``CandidateRecord``, ``TrialRecord``,
``StudyInfo``) and raises ``StoreError`` (a ``UserError``) for a database it cannot use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vtatune.store.records import (
    DETERMINISTIC,
    NETWORK_STATUSES,
    STATUSES,
    TRANSIENT,
    CandidateRecord,
    LayerResult,
    NetworkEval,
    NetworkResult,
    NetworkTrialRecord,
    StudyInfo,
    TrialRecord,
)

if TYPE_CHECKING:
    from vtatune.store.store import (
        Store,
        StoreError,
        database_exists,
        default_url,
        normalize_url,
        sqlite_path,
    )

#: Names of ``vtatune.store.store``, imported on first use: the records alone (all an
#: evaluation worker needs) do not load SQLAlchemy.
_STORE_NAMES = frozenset({"Store", "StoreError", "database_exists", "default_url",
                          "normalize_url", "sqlite_path"})


def __getattr__(name: str) -> Any:
    if name in _STORE_NAMES:
        from vtatune.store import store

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["DETERMINISTIC", "NETWORK_STATUSES", "STATUSES", "TRANSIENT", "CandidateRecord",
           "LayerResult", "NetworkEval", "NetworkResult", "NetworkTrialRecord", "Store",
           "StoreError", "StudyInfo", "TrialRecord", "database_exists", "default_url",
           "normalize_url", "sqlite_path"]
