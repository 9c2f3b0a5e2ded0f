"""Mirror a study's trials into an Optuna study in the same database, for ``optuna-dashboard``.

vtatune's store is the source of truth; the Optuna study is a view of it, written by a
background thread (an Optuna RDB write costs ~15 ms on SQLite, so the search loop does not
wait for it). A resumed study's mirror skips trials it already holds (``vtatune_trial`` user
attribute), so the mirror may lag but never duplicates. Losing it loses nothing: the next run
of the study fills in what is missing.
"""

from __future__ import annotations

import threading
from typing import Any

from vtatune.search.samplers import Observation, Params
from vtatune.search.space import SearchSpace

#: User attribute holding vtatune's trial number in the mirrored Optuna trial.
TRIAL_ATTR = "vtatune_trial"


class OptunaMirror:
    """Writes finished trials to the Optuna study ``name`` at ``url`` from a thread."""

    def __init__(self, url: str, name: str, space: SearchSpace, n_objectives: int,
                 flush_s: float = 2.0):
        self.url, self.name, self.space, self.n_objectives = url, name, space, n_objectives
        self.flush_s = flush_s
        self.error: str | None = None
        self._queue: list[tuple[int, Params, Observation, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="optuna-mirror", daemon=True)
        self._thread.start()

    def record(self, number: int, params: Params, obs: Observation,
               attrs: dict[str, Any] | None = None) -> None:
        with self._lock:
            self._queue.append((number, params, obs, attrs or {}))

    def close(self) -> None:
        """Flush what is queued and stop the thread."""
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        import optuna

        from vtatune.search.samplers._optuna import distributions, finished_trial

        try:
            optuna.logging.set_verbosity(optuna.logging.WARNING)
            study = optuna.create_study(storage=self.url, study_name=self.name,
                                        load_if_exists=True,
                                        directions=["minimize"] * self.n_objectives)
            have = {t.user_attrs.get(TRIAL_ATTR) for t in study.get_trials(deepcopy=False)}
            dists = distributions(self.space)
            while True:
                stopping = self._stop.wait(self.flush_s)
                with self._lock:
                    batch, self._queue = self._queue, []
                todo = [finished_trial(dists, p, o, self.n_objectives,
                                       {TRIAL_ATTR: n, **a})
                        for n, p, o, a in batch if n not in have
                        and all(k in dists for k in p)]
                if todo:
                    study.add_trials(todo)
                    have.update(n for n, *_ in batch)
                if stopping:
                    return
        except Exception as exc:  # the dashboard view must never stop a search
            self.error = f"{type(exc).__name__}: {exc}"
