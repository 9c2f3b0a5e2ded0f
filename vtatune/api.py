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
  ``host_seconds``, ``accelerator_energy_j`` and ``board_energy_j`` -- joules per call, the
  energy model's estimate, empty for trials stored before energy --, ``compile_ms``,
  ``sim_ms``, ...);
- ``key`` (the candidate's identity in the store), ``created_at``.

``front`` has the same columns for the front's trials (by increasing area) plus ``knee``; the
front is over the study's objective (area and latency, or with energy:
``vtatune.search.objectives``).

A network study (``search("resnet18")``, or a space file with a ``[network]`` table) is one
trial per hardware design with every layer's schedule tuned. Its ``trials`` and ``front`` have
one row per design: ``trial``, ``status`` (``vtatune.store.records.NETWORK_STATUSES``),
``reason``, ``feasible``, ``hw_name``, the decoded hardware, then the network totals
(``cycles``, ``latency_ms`` per network run end to end, ``accelerator_seconds``,
``host_seconds``, ``area_mm2``, ``efficiency`` = ``bound_cycles`` / ``cycles``,
``accelerator_energy_j`` and ``board_energy_j`` per inference), the board
resources, ``layers`` (how many), ``layer_evaluations`` and ``layer_cached`` (layer candidates
compiled or served from the store for the design), ``sampler``, ``key`` (the hardware's key),
``created_at``. ``layers(study)`` has one row per design and layer: what each layer got on it.
A study of several networks (one accelerator for all): ``latency_ms`` is the weighted sum of
the networks' latencies (the objective), followed by ``<network>_weight`` and
``<network>_latency_ms`` per network; ``layers`` adds ``network`` and ``weight``.

Importing this module is light: pandas, TVM and the store load on first use.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vtatune.statuses import Status

if TYPE_CHECKING:
    import pandas as pd

    from vtatune.reports.study import Study
    from vtatune.store import Store
    from vtatune.store.records import NetworkTrialRecord, TrialRecord

__all__ = ["SearchSummary", "front", "layers", "open_store", "search", "studies", "trials"]

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
    #: candidates (a network search: hardware designs) in the space when the search
    #: enumerated it, else None (as the CLI's ``--json`` ``space_size``)
    space_size: int | None = None
    #: a network search: the network's name (``evaluated`` and ``cached`` then count layer
    #: candidates, ``trials`` hardware designs); None for a single-operator search
    network: str | None = None
    #: the least latency of a feasible trial, end to end (seconds per call; a network
    #: search: per network run)
    best_seconds: float | None = None
    #: the least accelerator energy of a feasible trial (joules per call; a network search:
    #: per inference); None without energy
    best_accelerator_energy_j: float | None = None


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

    from vtatune.reports.study import load

    loaded = load(study, open_store(db))
    return _TRIAL_FRAMES[loaded.kind](pd, list(loaded.trials))


def front(study: str, db: str | Store | None = None) -> pd.DataFrame:
    """The Pareto front of ``study`` (feasible trials non-dominated in area and the study's
    latency -- end to end per call unless it was made with ``latency="accelerator"`` -- by
    increasing area; ``show``'s front), with a ``knee`` column (``vtatune.reports.knee``)."""
    import pandas as pd

    from vtatune.reports.study import load

    loaded = load(study, open_store(db))
    return _FRONTS[loaded.kind](pd, loaded)


def _operator_front(pd: Any, study: Study) -> pd.DataFrame:
    """An operator study's front (``show``'s), its knee the report's."""
    from vtatune.reports.data import front_points, knee

    info, records = study.info, study.operator_trials
    points = front_points(info, records)
    k = knee(points)
    by_number = {t.number: t for t in records}
    df = _trials_frame(pd, [by_number[p.trial] for p in points])
    df["knee"] = [k is not None and p.trial == k.trial for p in points]
    return df


def layers(study: str, db: str | Store | None = None) -> pd.DataFrame:
    """A network study's layers: one row per design (trial) and layer, in trial order and the
    network's layer order: ``trial``, ``hw_name``, ``design_status``, ``layer`` (its name),
    ``workload``, ``count`` (runs per network run), ``status`` (``ok`` or, without a feasible
    schedule, its most frequent failure), ``cycles`` and ``latency_ms`` (one run of the
    layer; ``latency_ms`` end to end = ``accelerator_seconds`` + ``host_seconds``),
    ``total_ms`` (count x latency_ms), ``share`` (of the design's network latency),
    and, for a study of several networks, ``network`` and ``weight`` (each network's layers
    under its own names, ``share`` of that network's latency),
    ``bound_cycles``, ``efficiency`` (bound / cycles), ``trials`` (evaluations its shape got
    on the design), one column per schedule knob of the layer's pick, ``key`` (the pick's
    candidate key). ``UserError`` for a single-operator study."""
    import pandas as pd

    from vtatune.errors import UserError
    from vtatune.escaping import shown
    from vtatune.reports.study import load

    loaded = load(study, open_store(db))
    if loaded.kind == "operator":
        raise UserError(f"study {shown(loaded.name)} is a single-operator study: it has no "
                        "layers (read its trials with trials())")
    return _layers_frame(pd, loaded.designs)


def search(workload: str | Sequence[str] = "conv2d", *, weights: Sequence[float] | None = None,
           layer: str | None = None, shape: str | None = None,
           space: str | None = None, hw: str | None = None, board: str | None = None,
           trials: int = 100, sampler: str | None = None, objective: str | None = None,
           study: str | None = None, db: str | None = None, workers: int = 1,
           seed: int | None = None, timeout: float = 120.0, warm_start: bool = True,
           passes: str | None = None, latency: str | None = None,
           layer_trials: int | None = None, inner_sampler: str | None = None,
           stock_vta: bool = False) -> SearchSummary:
    """Run (or continue) a study as ``vtatune search`` does, with the same defaults for the
    space file, the sampler (``vtatune.studies``) and the study name; nothing is printed.
    ``workers`` evaluation processes (``0``: one per core); ``passes``: a user pass file's
    path (``--passes``); ``latency``: ``end-to-end`` or ``accelerator`` (``--latency``;
    default: the space's); ``stock_vta``: only designs stock VTA builds (``--stock-vta``).

    ``workload`` (or ``space``) may name a network (``resnet18``, a space file with a
    ``[network]`` table): a trial is then one hardware design with every layer tuned
    (``layer_trials`` layer evaluations per design, ``inner_sampler`` ``xgb`` or ``random``:
    ``--layer-trials``, ``--inner-sampler``); read it with ``trials``, ``front`` and
    ``layers``. A list of networks (or a network-set file) designs one accelerator for all
    of them, ``weights`` (one positive number per network; 1 each by default) weighting
    their latencies in the objective, as ``vtatune search A B --weights 3,1``."""
    from vtatune import studies

    job = studies.plan_search(workload, weights=weights, space=space, layer=layer, shape=shape,
                              hw=hw, board=board, trials=trials, sampler=sampler,
                              objective=objective, study=study, workers=workers, seed=seed,
                              timeout=timeout, latency=latency, passes=passes,
                              layer_trials=layer_trials, inner_sampler=inner_sampler,
                              stock_vta=stock_vta)
    job.check(db)  # an in-memory database, a study made for something else: one line
    res = job.run(trials=trials, db=db, workers=workers, seed=seed, timeout=timeout,
                  warm_start=warm_start)
    return SearchSummary(study=res.study, db=res.db, trials=res.trials,
                         new_trials=res.new_trials, evaluated=res.evaluated, cached=res.cached,
                         feasible=res.feasible, best_cycles=res.best_cycles,
                         elapsed_s=res.elapsed_s, exhausted=res.exhausted,
                         space_size=res.space_size, best_seconds=res.best_seconds,
                         best_accelerator_energy_j=res.best_energy_j,
                         network=job.space.network.name if job.network else None)


# ---- records -> rows ---------------------------------------------------------------------------

def _trials_frame(pd: Any, records: list[TrialRecord]) -> pd.DataFrame:
    rows = [_row(t) for t in records]
    knob_names = sorted({k for t in records for k in t.candidate.knobs})
    kinds = next((_kinds_of(t.candidate.resources) for t in records if t.candidate.resources),
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
    row.update(_hw_columns(c.hw))
    row.update(c.knobs)
    bounds = [v for v in (c.bounds or {}).values() if _is_number(v)]
    row.update(cycles=c.cycles, latency_ms=None if c.seconds is None else 1e3 * c.seconds,
               area_mm2=c.area_mm2, efficiency=c.efficiency,
               bound_cycles=max(bounds) if bounds else None)
    row.update(_resource_columns(c.resources or {}))
    for f in dataclasses.fields(c):  # fields other engineers add later show up as they are
        v = getattr(c, f.name)
        if f.name not in _NOT_SCALAR and (v is None or isinstance(v, int | float | str | bool)):
            row[f.name] = v
    row.update(key=c.key, created_at=t.created_at)
    return row


# ---- network studies: one row per design, one per design and layer ---------------------------

_DESIGN_RESULTS = ("cycles", "latency_ms", "accelerator_seconds", "host_seconds", "area_mm2",
                   "efficiency", "bound_cycles", "accelerator_energy_j", "board_energy_j")


def _designs_frame(pd: Any, records: list[NetworkTrialRecord]) -> pd.DataFrame:
    rows = [_design_row(t) for t in records]
    kinds = next((_kinds_of(t.resources) for t in records if t.resources), ("lut", "bram36"))
    resources = [kinds[0], "ff", kinds[1], "uram", "dsp", "fits"]
    # several networks: latency_ms is the weighted sum (the objective); each network's
    # weight and latency follow it
    nets = next(([n.network for n in t.networks] for t in records if t.networks), [])
    per_net = [c for n in nets for c in (f"{n}_weight", f"{n}_latency_ms")]
    cols = ["trial", "status", "reason", "feasible", "hw_name", *_HW_COLUMNS,
            *_DESIGN_RESULTS[:2], *per_net, *_DESIGN_RESULTS[2:], *resources, "layers",
            "layer_evaluations", "layer_cached", "sampler", "key", "created_at"]
    return _frame(pd, rows, cols, ints=(*_HW_COLUMNS, "cycles"))


def _design_row(t: NetworkTrialRecord) -> dict[str, Any]:
    row: dict[str, Any] = {"trial": t.number, "status": t.status, "reason": t.reason,
                           "feasible": t.feasible, "hw_name": t.hw_name or t.hw_key}
    row.update(_hw_columns(t.hw))
    row.update(cycles=t.cycles, latency_ms=None if t.seconds is None else 1e3 * t.seconds,
               accelerator_seconds=t.accelerator_seconds, host_seconds=t.host_seconds,
               area_mm2=t.area_mm2,
               efficiency=(t.bound_cycles / t.cycles) if t.bound_cycles and t.cycles else None,
               bound_cycles=t.bound_cycles, accelerator_energy_j=t.accelerator_energy_j,
               board_energy_j=t.board_energy_j)
    for n in t.networks or ():
        row[f"{n.network}_weight"] = n.weight
        row[f"{n.network}_latency_ms"] = None if n.seconds is None else 1e3 * n.seconds
    row.update(_resource_columns(t.resources))
    row.update(layers=len(t.layers), layer_evaluations=t.evaluated, layer_cached=t.cached,
               sampler=t.sampler, key=t.hw_key, created_at=t.created_at)
    return row


def _layers_frame(pd: Any, records: list[NetworkTrialRecord]) -> pd.DataFrame:
    rows = []
    multi = any(t.networks for t in records)
    for t in records:
        # several networks: each network's layers under its own names, its share of that
        # network's latency
        groups = [(n.network, n.weight, n.seconds, n.layers) for n in t.networks] \
            if t.networks else [("", 1.0, t.seconds, t.layers)]
        for network, weight, seconds, net_layers in groups:
            rows += _layer_rows(t, net_layers, seconds,
                                {"network": network, "weight": weight} if multi else {})
    knob_names = sorted({k for t in records for la in t.layers for k in la.knobs})
    cols = ["trial", "hw_name", "design_status", *(("network", "weight") if multi else ()),
            "layer", "workload", "count", "status",
            "cycles", "latency_ms", "accelerator_seconds", "host_seconds", "total_ms", "share",
            "bound_cycles", "efficiency", "accelerator_energy_j", "board_energy_j", "trials",
            *knob_names, "key"]
    return _frame(pd, rows, cols, ints=("cycles", *knob_names))


def _layer_rows(t: NetworkTrialRecord, net_layers: Any, seconds: float | None,
                extra: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for la in net_layers:
        one_ms = None if la.seconds is None else 1e3 * la.seconds
        rows.append({
            "trial": t.number, "hw_name": t.hw_name or t.hw_key, "design_status": t.status,
            **extra, "layer": la.name, "workload": la.workload, "count": la.count,
            "status": la.status, "cycles": la.cycles, "latency_ms": one_ms,
            "accelerator_seconds": la.accelerator_seconds,
            "host_seconds": la.host_seconds,
            "total_ms": None if one_ms is None else la.count * one_ms,
            # as show --json: this layer's runs over its network's latency
            "share": (la.count * la.seconds / seconds)
            if la.seconds is not None and seconds else None,
            "bound_cycles": la.bound_cycles,
            "efficiency": (la.bound_cycles / la.cycles)
            if la.bound_cycles and la.cycles else None,
            "accelerator_energy_j": la.accelerator_energy_j,
            "board_energy_j": la.board_energy_j,
            "trials": la.trials, **la.knobs, "key": la.key})
    return rows


def _network_front(pd: Any, study: Study) -> pd.DataFrame:
    """The front ``show`` gives a network study (finished ``ok`` designs non-dominated in
    area and network latency, by increasing area), its knee the report's."""
    from vtatune.hardware import boards
    from vtatune.networks.summary import front_trials
    from vtatune.reports.data import knee, network_point

    info = study.info
    designs = front_trials([t for t in study.designs if t.status != Status.RUNNING],
                           info.objective)
    try:
        clock = boards.device(info.board).clock_mhz
    except Exception:  # noqa: BLE001 - the knee needs no clock (area and latency only)
        clock = 1.0
    k = knee([network_point(t, clock) for t in designs])
    df = _designs_frame(pd, designs)
    df["knee"] = [k is not None and t.number == k.trial for t in designs]
    return df


#: A study's trials as a frame (a network study's: its designs), for each kind of study.
_TRIAL_FRAMES: dict[str, Callable[[Any, list[Any]], pd.DataFrame]] = {
    "operator": _trials_frame, "network": _designs_frame}

#: A study's front as a frame, for each kind of study.
_FRONTS: dict[str, Callable[[Any, Study], pd.DataFrame]] = {"operator": _operator_front,
                                                            "network": _network_front}


def _hw_columns(hw: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for col, (key, how) in _HW_COLUMNS.items():
        v = hw.get(key)
        out[col] = None if v is None else (1 << v if how == "pow2" else (1 << v) / 1024)
    return out


def _kinds_of(res: dict[str, Any]) -> tuple[str, str]:
    """The board family's logic and block-RAM units: (lut or alm, bram36 or m10k)."""
    return str(res.get("logic_kind", "lut")), str(res.get("bram_kind", "bram36"))


def _resource_columns(res: dict[str, Any]) -> dict[str, Any]:
    logic, bram = _kinds_of(res)
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
    from vtatune.reports.study import best_ms

    return best_ms(info, store)
