"""vtatune from Python: run searches, and read studies, trials and fronts as pandas DataFrames.

    import vtatune.api as vt

    result = vt.search("conv2d", layer="C8", trials=50)    # what `vtatune search` does
    vt.studies()                                           # one row per study
    trials = vt.trials(result.study)                       # one row per trial, any status
    front = vt.front(result.study)                         # the Pareto front, knee marked

Every function takes ``db``: a SQLAlchemy URL, a ``.sqlite`` path, or None for the CLI's
default database (``db/vtatune.sqlite`` of the checkout, or of the current directory).
Reading never creates a database. Bad input raises ``vtatune.errors.UserError`` with the
one-line message the CLI prints.

Columns of ``trials`` and ``front`` (units in the names where they have one):

- ``trial``, ``status`` (``ok`` is feasible; see ``vtatune.store.records.STATUSES``),
  ``reason`` (why not), ``cached`` (served from the store), ``feasible``;
- hardware, decoded: ``hw_name``, ``batch``, ``block_in``, ``block_out``, ``inp_bits``,
  ``wgt_bits``, ``acc_bits``, ``inp_kib``, ``wgt_kib``, ``acc_kib``, ``uop_kib``;
- one column per schedule knob (``tile_h``, ``oc_nthread``, ...; missing where a trial had
  none);
- results: ``cycles``, ``latency_ms`` (per call, end to end: accelerator + host),
  ``area_mm2``, ``efficiency`` (0..1, the larger physical lower bound / cycles),
  ``bound_cycles``, the board resources (``lut`` or ``alm``, ``ff``, ``bram36`` or ``m10k``,
  ``uram``, ``dsp``, ``fits``), and the record's other scalar fields (``accelerator_seconds``,
  ``host_seconds``, ``compile_ms``, ``sim_ms``, ...);
- ``key`` (the candidate's identity in the store), ``created_at``.

``front`` has the same columns for the front's trials (by increasing area) plus ``knee``.

Importing this module is light: pandas, TVM and the store load on first use.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from vtatune.store import Store
    from vtatune.store.records import CandidateRecord, TrialRecord

__all__ = ["SearchSummary", "front", "open_store", "search", "studies", "trials"]

#: Hardware columns decoded from the stored LOG_* parameters: column -> (key, how).
_HW_COLUMNS = {
    "batch": ("LOG_BATCH", "pow2"), "block_in": ("LOG_BLOCK_IN", "pow2"),
    "block_out": ("LOG_BLOCK_OUT", "pow2"), "inp_bits": ("LOG_INP_WIDTH", "pow2"),
    "wgt_bits": ("LOG_WGT_WIDTH", "pow2"), "acc_bits": ("LOG_ACC_WIDTH", "pow2"),
    "inp_kib": ("LOG_INP_BUFF_SIZE", "kib"), "wgt_kib": ("LOG_WGT_BUFF_SIZE", "kib"),
    "acc_kib": ("LOG_ACC_BUFF_SIZE", "kib"), "uop_kib": ("LOG_UOP_BUFF_SIZE", "kib"),
}

#: Record fields that are shown decoded (or not at all) rather than as they are stored.
_NOT_SCALAR = {"key", "workload", "hw_key", "hw", "hw_name", "knobs", "status", "reason",
               "cycles", "seconds", "efficiency", "area_mm2", "created_at"}


@dataclass(frozen=True)
class SearchSummary:
    """What ``search`` did: the study it ran (read it with ``trials``/``front``), where, and
    how it went. ``best_cycles`` is None while no trial is feasible."""

    study: str
    db: str
    trials: int
    new_trials: int
    evaluated: int
    cached: int
    feasible: int
    best_cycles: int | None
    elapsed_s: float
    exhausted: bool
    #: candidates in the space when the search enumerated it (it ran out of unseen ones),
    #: else None (as the CLI's ``--json`` ``space_size``)
    space_size: int | None = None


def open_store(db: str | Store | None = None, *, create: bool = False) -> Store:
    """The results store at ``db`` (an opened ``Store`` is passed through). Without
    ``create``, a SQLite file that does not exist is an error rather than a new database."""
    from vtatune.store import Store, StoreError, database_exists, normalize_url

    if isinstance(db, Store):
        return db
    if not create and not database_exists(db):
        raise StoreError(f"no database at {normalize_url(db)}")
    return Store(db)


def studies(db: str | Store | None = None) -> pd.DataFrame:
    """One row per study: ``study``, ``workload``, ``objective``, ``sampler``, ``board``,
    ``seed``, ``trials``, ``feasible``, ``best_cycles``, ``best_ms`` (the least latency in the
    study's measure, as ``show`` and the reports give it: ms per call end to end by default,
    the accelerator's cycles at the board's clock for ``--latency accelerator`` studies),
    ``created_at``."""
    import pandas as pd

    store = open_store(db)
    rows = [{"study": i.name, "workload": i.workload, "objective": i.objective,
             "sampler": i.sampler, "board": i.board, "seed": i.seed, "trials": i.n_trials,
             "feasible": i.n_feasible, "best_cycles": i.best_cycles,
             "best_ms": _best_ms(store, i), "created_at": i.created_at}
            for i in store.studies()]
    cols = ["study", "workload", "objective", "sampler", "board", "seed", "trials", "feasible",
            "best_cycles", "best_ms", "created_at"]
    return _frame(pd, rows, cols, ints=("seed", "best_cycles"))


def trials(study: str, db: str | Store | None = None) -> pd.DataFrame:
    """Every trial of ``study`` in order, any status (columns: see the module's doc)."""
    import pandas as pd

    store = open_store(db)
    return _trials_frame(pd, store.trials(store.study(study).name))


def front(study: str, db: str | Store | None = None) -> pd.DataFrame:
    """The Pareto front of ``study`` (feasible trials non-dominated in area and the study's
    latency -- end to end per call unless it was made with ``latency="accelerator"`` -- by
    increasing area; ``show``'s front), with a ``knee`` column (``vtatune.reports.knee``)."""
    import pandas as pd

    from vtatune.reports.data import front_points, knee

    store = open_store(db)
    info = store.study(study)
    records = store.trials(info.name)
    points = front_points(info, records)
    k = knee(points)
    by_number = {t.number: t for t in records}
    df = _trials_frame(pd, [by_number[p.trial] for p in points])
    df["knee"] = [k is not None and p.trial == k.trial for p in points]
    return df


def search(workload: str = "conv2d", *, layer: str | None = None, shape: str | None = None,
           space: str | None = None, hw: str | None = None, board: str | None = None,
           trials: int = 100, sampler: str = "xgb", objective: str | None = None,
           study: str | None = None, db: str | None = None, workers: int = 1,
           seed: int | None = None, timeout: float = 120.0, warm_start: bool = True,
           passes: str | None = None, latency: str | None = None) -> SearchSummary:
    """Run (or continue) a study as ``vtatune search`` does, with the same defaults for the
    space file and the study name; nothing is printed. ``workers`` evaluation processes
    (``0``: one per core); ``passes``: a user pass file's path (``--passes``); ``latency``:
    ``end-to-end`` or ``accelerator`` (``--latency``; default: the space's)."""
    import os

    from vtatune.cli.options import refuse_memory_db
    from vtatune.cli.search import DEFAULT_SAMPLER, _default_space, _study_name
    from vtatune.errors import UserError
    from vtatune.search import runner
    from vtatune.search import space as spaces
    from vtatune.search.samplers import names, require
    from vtatune.workloads import registry

    registry.get(workload)  # an unknown operator: UserError naming the known ones
    sampler = sampler or DEFAULT_SAMPLER
    if sampler not in names():
        raise UserError(f"unknown sampler {sampler!r} (known: {', '.join(names())})")
    require(sampler)
    _check_search_numbers(trials=trials, workers=workers, seed=seed, timeout=timeout)
    refuse_memory_db(db)  # the results would vanish with the connection
    if latency is not None and latency not in spaces.LATENCIES:
        raise UserError(f"latency must be one of {', '.join(spaces.LATENCIES)}, got "
                        f"{latency!r}")
    if hw is not None and objective is None:
        objective = "latency"
    from vtatune.passes.user import resolve

    sp = spaces.load(space or _default_space(workload, hw), layer=layer, shape=shape,
                     workload=workload, hw=hw, board=board, objective=objective,
                     passes=resolve(passes), latency=latency)
    name = study or _study_name(sp, sampler, hw, default_space=space is None)
    runner.check_study(sp, name, db)  # a study made for something else: one line
    res = runner.run(sp, sampler=sampler, trials=trials, study=name, db=db,
                     workers=workers or os.cpu_count() or 1, seed=seed, timeout=timeout,
                     warm_start=warm_start)
    return SearchSummary(study=res.study, db=res.db, trials=res.trials,
                         new_trials=res.new_trials, evaluated=res.evaluated, cached=res.cached,
                         feasible=res.feasible, best_cycles=res.best_cycles,
                         elapsed_s=res.elapsed_s, exhausted=res.exhausted,
                         space_size=res.space_size)


# ---- records -> rows ---------------------------------------------------------------------------

def _trials_frame(pd: Any, records: list[TrialRecord]) -> pd.DataFrame:
    rows = [_row(t) for t in records]
    knob_names = sorted({k for t in records for k in t.candidate.knobs})
    kinds = next(((_kinds(t.candidate)) for t in records if t.candidate.resources),
                 ("lut", "bram36"))
    resources = [kinds[0], "ff", kinds[1], "uram", "dsp", "fits"]
    known = {*_FIRST, *_HW_COLUMNS, *knob_names, *_RESULTS, *resources, "key", "created_at"}
    extra = sorted({k for r in rows for k in r} - known)
    cols = [*_FIRST, *_HW_COLUMNS, *knob_names, *_RESULTS, *resources, *extra, "key",
            "created_at"]
    return _frame(pd, rows, cols, ints=(*_HW_COLUMNS, *knob_names, "cycles"))


_FIRST = ("trial", "status", "reason", "feasible", "cached", "hw_name")
_RESULTS = ("cycles", "latency_ms", "area_mm2", "efficiency", "bound_cycles")


def _row(t: TrialRecord) -> dict[str, Any]:
    c = t.candidate
    row: dict[str, Any] = {"trial": t.number, "status": c.status, "reason": c.reason,
                           "feasible": c.feasible, "cached": t.cached,
                           "hw_name": c.hw_name or c.hw_key}
    for col, (key, how) in _HW_COLUMNS.items():
        v = c.hw.get(key)
        row[col] = None if v is None else (1 << v if how == "pow2" else (1 << v) / 1024)
    row.update(c.knobs)
    bounds = [v for v in (c.bounds or {}).values() if _is_number(v)]
    row.update(cycles=c.cycles, latency_ms=None if c.seconds is None else 1e3 * c.seconds,
               area_mm2=c.area_mm2, efficiency=c.efficiency,
               bound_cycles=max(bounds) if bounds else None)
    row.update(_resources(c))
    for f in dataclasses.fields(c):  # fields other engineers add later show up as they are
        v = getattr(c, f.name)
        if f.name not in _NOT_SCALAR and (v is None or isinstance(v, int | float | str | bool)):
            row[f.name] = v
    row.update(key=c.key, created_at=t.created_at)
    return row


def _kinds(c: CandidateRecord) -> tuple[str, str]:
    """The board family's logic and block-RAM units: (lut or alm, bram36 or m10k)."""
    res = c.resources or {}
    return str(res.get("logic_kind", "lut")), str(res.get("bram_kind", "bram36"))


def _resources(c: CandidateRecord) -> dict[str, Any]:
    res = c.resources or {}
    logic, bram = _kinds(c)
    out = {logic: res.get(logic), "ff": res.get("ff"), bram: res.get(bram),
           "uram": res.get("uram"), "dsp": res.get("dsp")}
    out = {k: (float(v) if _is_number(v) else None) for k, v in out.items()}
    out["fits"] = res.get("fits") if isinstance(res.get("fits"), bool) else None
    return out


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _frame(pd: Any, rows: list[dict[str, Any]], cols: list[str], ints: tuple[str, ...] = ()
           ) -> pd.DataFrame:
    """A DataFrame with ``cols`` in order; integer columns with gaps stay integers (Int64)."""
    df = pd.DataFrame(rows, columns=cols)
    for col in ints:
        if col in df.columns:
            df[col] = df[col].astype("Int64")
    return df


def _best_ms(store: Store, info: Any) -> float | None:
    """The least latency of ``info``'s study in its own measure (see ``studies``)."""
    if (info.space or {}).get("latency") == "accelerator":
        return _ms(info.best_cycles, info.board)
    if info.is_network:
        times = [t.seconds for t in store.network_trials(info.name) if t.status == "ok"]
    else:
        times = [t.candidate.seconds for t in store.trials(info.name) if t.candidate.feasible]
    times = [s for s in times if s is not None]
    return 1e3 * min(times) if times else None


def _ms(cycles: int | None, board: str) -> float | None:
    if cycles is None:
        return None
    from vtatune.errors import UserError
    from vtatune.hardware import boards

    try:
        return cycles / (boards.load(board).clock_mhz * 1e3)
    except UserError:  # a board this install does not know: no clock, no milliseconds
        return None


def _check_search_numbers(**values: float | None) -> None:
    """The ranges ``vtatune search`` checks its options against (finite, in range), as a
    ``UserError`` naming the argument."""
    import typer

    from vtatune.cli.options import (
        SEED_MAX,
        TIMEOUT_MAX_S,
        TRIALS_MAX,
        WORKERS_MAX,
        finite_in,
        int_in,
    )
    from vtatune.errors import UserError

    checks = {"trials": int_in(1, TRIALS_MAX), "workers": int_in(0, WORKERS_MAX),
              "seed": int_in(0, SEED_MAX), "timeout": finite_in(0.0, TIMEOUT_MAX_S)}
    for name, value in values.items():
        try:
            checks[name](value)  # type: ignore[arg-type]
        except typer.BadParameter as exc:
            raise UserError(f"{name} {exc.message}") from None
