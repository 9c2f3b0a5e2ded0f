"""Statuses are one str enum whose members read, print and serialize as the words the store,
the bundles and ``--json`` have always used."""

from __future__ import annotations

import json

from vtatune.statuses import (
    CANDIDATE_STATUSES,
    DETERMINISTIC,
    NETWORK_STATUSES,
    TRANSIENT,
    Status,
)
from vtatune.store import records


def test_the_words_are_the_stored_ones() -> None:
    assert CANDIDATE_STATUSES == ("ok", "invalid", "no_fit", "failed", "timeout", "hw_invalid")
    assert DETERMINISTIC == ("ok", "invalid", "no_fit", "hw_invalid")
    assert TRANSIENT == ("failed", "timeout")
    assert NETWORK_STATUSES == ("ok", "hw_invalid", "no_fit", "dominated", "no_schedule",
                                "running")
    assert set(DETERMINISTIC) | set(TRANSIENT) == set(CANDIDATE_STATUSES)
    assert not set(DETERMINISTIC) & set(TRANSIENT)
    # the store's names are these very tuples
    assert records.STATUSES is CANDIDATE_STATUSES and records.TRANSIENT is TRANSIENT


def test_members_format_and_serialize_as_their_words() -> None:
    for s in Status:
        assert s == s.value and f"{s}" == s.value and str(s) == s.value
        assert json.dumps({"status": s}) == json.dumps({"status": s.value})
        assert Status(s.value) is s
    assert ", ".join(TRANSIENT) == "failed, timeout"


def test_a_record_made_with_a_member_stores_its_word(tmp_path) -> None:
    import sqlite3

    rec = records.CandidateRecord(key="k", workload="w", hw_key="h", hw={}, hw_name="n",
                                  knobs={}, status=Status.NO_FIT)
    assert rec.status == "no_fit" and not rec.feasible and rec.reusable
    db = sqlite3.connect(tmp_path / "s.sqlite")
    db.execute("create table t (status text)")
    db.execute("insert into t values (?)", (rec.status,))
    assert db.execute("select status, typeof(status) from t").fetchone() == ("no_fit", "text")
