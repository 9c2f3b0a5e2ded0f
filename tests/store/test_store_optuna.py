"""Optuna's RDB storage and the store share one database (so optuna-dashboard opens it)."""

from __future__ import annotations

from collections.abc import Callable

import optuna
import pytest
from conftest import WORKLOAD
from sqlalchemy import create_engine, inspect

from vtatune.store import CandidateRecord, Store, sqlite_path

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _optuna_study(url: str, name: str) -> optuna.Study:
    storage = optuna.storages.RDBStorage(url)
    study = optuna.create_study(study_name=name, storage=storage,
                                directions=["minimize", "minimize"], load_if_exists=True)
    study.enqueue_trial({"LOG_BLOCK_IN": 4})
    trial = study.ask()
    trial.suggest_categorical("LOG_BLOCK_IN", [3, 4, 5])
    study.tell(trial, [1.5, 100_000.0])
    return study


@pytest.mark.parametrize("optuna_first", [True, False])
def test_optuna_and_store_in_one_database(url: str, optuna_first: bool,
                                          make_record: Callable[..., CandidateRecord]) -> None:
    if optuna_first:
        path = sqlite_path(url)
        if path is not None:  # Optuna does not make the folder; Store does
            path.parent.mkdir(parents=True)
        _optuna_study(url, "s1")
    store = Store(url)
    info = store.create_or_load_study("s1", WORKLOAD, {}, "tpe", "area-latency", "pynq-z1", 0)
    store.save(make_record(0))
    store.add_trial("s1", 0, make_record(0).key, "tpe", {"LOG_BLOCK_IN": 4}, False)
    if not optuna_first:
        _optuna_study(url, info.optuna_study_name)

    again = optuna.load_study(study_name=info.optuna_study_name, storage=url)
    assert len(again.trials) == 1 and again.trials[0].params == {"LOG_BLOCK_IN": 4}
    assert Store(url).study("s1").n_trials == 1
    engine = create_engine(url)
    tables = set(inspect(engine).get_table_names())
    engine.dispose()
    assert {"vt_studies", "vt_candidates", "vt_trials"} <= tables
    assert {"studies", "trials", "version_info"} <= tables  # Optuna's, untouched
