"""One cost model for every layer of a network on every hardware design.

A network search evaluates each distinct layer (a *unit*) on each design it tries, so what is
learned on one layer and design must carry to the next. The schedule parameterization already
transfers (tile knobs are log-positions in workload units, ``vtatune.search.space``); this
module adds the layer's shape, so one XGBoost model serves all layers:

- **features**: each unit's ``Featurizer`` row (hardware parameters, knob positions and values,
  analytic SRAM fill, DRAM traffic, bounds, area) placed into one column layout shared by all
  units (a column a unit's operator lacks is missing), plus the unit's shape (log2 of every
  shape field, log2 MACs, its operator kind);
- **target**: log2 of the measured latency over the unit's compute bound on that design
  (padded MACs / MACs per cycle) -- how far from peak the schedule runs -- which is comparable
  across layers and designs where raw latencies differ by orders of magnitude. Within one
  (unit, design) the bound is a constant, so ranking by the prediction ranks by latency;
- a feasibility classifier on every observation (SRAM or micro-op overflow, failed compile);
- what is *measured* beats what is predicted: a program's cycles depend on the layer, the GEMM
  shape, the data widths, the micro-op buffer and the knobs, not on the input, weight and
  accumulator buffer sizes (they only decide whether it fits; the compiler's program cache
  rests on the same fact, and the network benchmark checks it on every candidate it can), so
  a candidate whose program was measured on another design is ranked by that measurement.

Candidates whose analytic SRAM footprint overflows a buffer are never proposed: the compile
path's verification would reject them (``schedules.footprint`` equals the compiled bytes, as
tests/compiler check).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Collection, Hashable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from vtatune.compiler.compile import program_hw
from vtatune.hardware.config import BUFFER_KEYS
from vtatune.schedules.knobs import REDUCTION, SPATIAL
from vtatune.search import cost_model as cost_models
from vtatune.search.cost_model.base import CostModel, TrainingSet
from vtatune.search.cost_model.features import Featurizer, HwInfo, Point
from vtatune.search.cost_model.read_memo import ReadMemo
from vtatune.search.space import U_PREFIX

if TYPE_CHECKING:
    from vtatune.hardware.config import HwConfig
    from vtatune.networks.space import NetworkSpace
    from vtatune.workloads.base import Workload

#: Feasible observations (over all units) before the model ranks proposals.
MIN_FEASIBLE = 16
#: Weight of "surely infeasible" in a proposal's cost (the cost model's doubt penalty), in log2
#: latency units (1 = 2x slower).
INFEASIBLE_PENALTY = 1.0
#: Hardware parameters a program's cycles do not depend on (they only decide whether it fits):
#: the buffer sizes but the micro-op buffer's, whose size decides how the instruction stream
#: reloads micro-op kernels.
FIT_ONLY = tuple(k for k in BUFFER_KEYS if k != "LOG_UOP_BUFF_SIZE")


def program_of(sig: str, point: Point) -> Hashable:
    """What a candidate's measured latency depends on: the layer, the hardware but its
    fit-only buffer sizes, and the knobs."""
    return (sig, _program_part(point.hw.hw), tuple(sorted((point.knobs or {}).items())))


def _program_part(hw: HwConfig) -> tuple[int, ...]:
    """The hardware values a program's cycles depend on (``program_of``'s)."""
    return tuple(v for k, v in hw.log_params().items() if k not in FIT_ONLY)


class NetworkFeatures:
    """Feature rows of layer candidates of every unit of a network space, in one layout."""

    def __init__(self, space: NetworkSpace):
        self.space = space
        self.featurizers = {sig: Featurizer(sp) for sig, sp in space.unit_spaces.items()}
        self.kinds = sorted({u.workload.kind for u in space.units})
        names: list[str] = []
        for f in self.featurizers.values():
            names += [n for n in f.names if n not in names]
        self._shape_names: list[str] = []
        for u in space.units:
            self._shape_names += [n for n in _shape_features(u.workload)
                                  if n not in self._shape_names]
        self.names = names + self._shape_names + [f"kind:{k}" for k in self.kinds]
        index = {n: i for i, n in enumerate(self.names)}
        self._columns = {sig: np.array([index[n] for n in f.names])
                         for sig, f in self.featurizers.items()}
        self._shape_rows: dict[str, np.ndarray] = {}
        for u in space.units:
            row = np.full(len(self.names), np.nan, dtype=np.float32)
            for n, v in _shape_features(u.workload).items():
                row[index[n]] = v
            for k in self.kinds:
                row[index[f"kind:{k}"]] = float(u.workload.kind == k)
            self._shape_rows[u.signature] = row
        self._bound_col = {sig: f.names.index("log2:compute_bound_cycles")
                           for sig, f in self.featurizers.items()}
        self._axes_cache: dict[Any, Axes] = {}
        self._tables: dict[Any, ScheduleTable] = {}

    def point(self, sig: str, params: dict[str, Any]) -> Point:
        return self.featurizers[sig].point(params)

    def candidates(self, sig: str, hw_values: dict[str, int]) -> list[Point]:
        """Every schedule of unit ``sig`` on the hardware ``hw_values`` names whose analytic
        SRAM footprint fits (deduplicated, in knob-space order); [] for impossible hardware.

        The points equal ``Featurizer.point`` of their canonical parameters (tested); the knob
        combinations and their log-positions depend only on the knob space and the GEMM
        shape, so they are computed once per (unit, knob space) and reused on every design.
        """
        return list(self.pool(sig, hw_values))

    def pool(self, sig: str, hw_values: dict[str, int]) -> CandidatePool:
        """``candidates`` as a ``CandidatePool``: the same points in the same order, each
        made only when it is taken (a design's units hold ~10^5 candidates, of which a design
        evaluates a few dozen), with feature rows computed for the whole pool at once."""
        f = self.featurizers[sig]
        info = f.hw_info(hw_values)
        if not info.valid:
            return CandidatePool.empty(self, sig, info)
        axes = self._axes(sig, info)
        if not axes.size:
            return CandidatePool.empty(self, sig, info)
        hw_params = {k: info.values[f.hw_keys.index(k)] for k in f.param_space
                     if k in f.space.hw_choices}
        first = dict(a[0] for a in axes.params)
        base = f.point({**hw_params, **first})  # knobs not searched: as point() sets
        assert base.knobs is not None
        fixed = {k: v for k, v in base.knobs.items() if k not in f.space.knobs}
        table = self._table(sig, info, axes, fixed)
        if not len(table.combo):
            return CandidatePool.empty(self, sig, info)
        return CandidatePool(self, sig, info, axes, table, fixed, hw_params,
                             np.flatnonzero(table.fits(info)))

    def _table(self, sig: str, info: HwInfo, axes: Axes, fixed: dict[str, int]
               ) -> ScheduleTable:
        """The legal knob combinations of unit ``sig`` on ``info``'s GEMM shape and widths
        with their hardware-independent features, cached: legality depends on the knob space
        and the GEMM shape only, the features on the widths too (``schedule_part``)."""
        key = (self._combo_key(sig, info), tuple(sorted(fixed.items())), program_hw(info.hw))
        got = self._tables.get(key)
        if got is None:
            got = self._tables[key] = ScheduleTable.build(self.featurizers[sig], info, axes,
                                                          fixed)
        return got

    def _axes(self, sig: str, info: HwInfo) -> Axes:
        """Searched knob values and their canonical parameters (thread counts, tile-knob
        log-positions) on ``info``'s knob space, cached per knob space and GEMM shape."""
        key = self._combo_key(sig, info)
        got = self._axes_cache.get(key)
        if got is None:
            f = self.featurizers[sig]
            ks = info.knob_space
            assert ks is not None
            searched = tuple(f.space.knobs)
            # each knob's (parameter name, value) per value, computed once per axis
            named = tuple(tuple((k, v) if k in f.threads else (U_PREFIX + k, f.u_of(info, k, v))
                                for v in ks.axes[k]) for k in searched)
            got = self._axes_cache[key] = Axes(searched, tuple(tuple(ks.axes[k])
                                                               for k in searched), named)
        return got

    @staticmethod
    def _combo_key(sig: str, info: HwInfo) -> Hashable:
        hw = info.hw
        return (sig, tuple((k, tuple(v)) for k, v in info.knob_space.axes.items()), hw.batch,
                hw.block_in, hw.block_out)

    def matrix(self, sig: str, points: Sequence[Point] | CandidatePool) -> np.ndarray:
        """Rows of ``points`` of unit ``sig`` in the shared layout (float32, NaN missing)."""
        f = self.featurizers[sig]
        x = np.tile(self._shape_rows[sig], (len(points), 1))
        if isinstance(points, CandidatePool):
            if len(points):  # (float64 rows cast to float32, as the list's are)
                x[:, self._columns[sig]] = points.rows()
        elif points:
            x[:, self._columns[sig]] = np.asarray([f.row(p) for p in points], dtype=np.float32)
        return x

    def log2_bound(self, sig: str, point: Point) -> float:
        """log2 of the unit's compute bound (cycles) on ``point``'s hardware."""
        return float(self.featurizers[sig].row(point)[self._bound_col[sig]])


@dataclass(frozen=True)
class Axes:
    """The searched knobs of one unit on one knob space and GEMM shape: each knob's values
    and the parameter (name, value) each value realizes to (a thread count, or a tile knob's
    log-position). A combination is its index in the product of the axes (knob-space order)."""

    names: tuple[str, ...]
    values: tuple[tuple[int, ...], ...]
    params: tuple[tuple[tuple[str, Any], ...], ...]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(v) for v in self.values)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def at(self, combos: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per axis, the value index of each combination in ``combos``."""
        if not self.names:
            return ()
        return np.unravel_index(combos, self.shape)

    def combo_of(self, knobs: dict[str, int]) -> int | None:
        """The combination of ``knobs``' searched values (None: a value not on its axis)."""
        idx = []
        for name, values in zip(self.names, self.values, strict=True):
            v = knobs.get(name)
            if v not in values:
                return None
            idx.append(values.index(v))
        return int(np.ravel_multi_index(idx, self.shape)) if idx else 0


class ScheduleTable:
    """The legal schedules of one unit on one GEMM shape and set of widths (their axis
    combinations, in knob-space order), with the part of their feature rows
    (``Featurizer._row``) no buffer size changes, as arrays; ``rows`` completes them for one
    design in a few vectorized steps."""

    def __init__(self, axes: Axes, fixed: dict[str, int], combo: np.ndarray,
                 footprint: np.ndarray, logs: np.ndarray):
        self.axes = axes
        self.fixed = fixed  # the knobs not searched
        self.combo = combo  # (n,) ascending combination indices of the legal schedules
        self.footprint = footprint  # (n, 4): inp, wgt, acc bytes, micro-ops
        #: (n, 11): log2 of the four footprints, then of traffic, traffic / compulsory, out
        #: tiles, reduction steps, both, memory bound, the larger bound (``math.log2``, as
        #: ``Featurizer._row``: numpy's log2 may differ in the last bit)
        self.logs = logs

    @classmethod
    def build(cls, f: Featurizer, info: HwInfo, axes: Axes, fixed: dict[str, int],
              memo: bool = True) -> ScheduleTable:
        """Legal: what ``KnobSpace.problem`` accepts of ``{**fixed, **searched}``. Its
        checks of the knob names and of each value alone are made once per axis value; the
        constraint between knobs is asked per combination. The operator's footprint and
        traffic are asked through a ``ReadMemo`` (``memo``; the same values, tested)."""
        ks = info.knob_space
        assert ks is not None
        hw = program_hw(info.hw)  # footprint and traffic read no buffer size
        names = set(fixed) | set(axes.names)

        def bad(name: str, v: int) -> bool:  # KnobSpace.problem's check of one value
            if ks.legal is not None:
                return bool(ks.legal(name, v))
            return v not in ks.axes[name]

        allowed: list[list[int]] = []
        if names == set(ks.axes) and not any(bad(n, v) for n, v in fixed.items()):
            allowed = [[i for i, v in enumerate(values) if not bad(name, v)]
                       for name, values in zip(axes.names, axes.values, strict=True)]
        else:
            allowed = [[] for _ in axes.names] or [[]]
        # loop trips per knob: constant for the fixed ones, per value for the searched ones
        roles = {n: ks.role(n) for n in f.knob_names}
        red0 = out0 = 1
        for n, v in fixed.items():
            if roles.get(n) == REDUCTION:
                red0 *= ks.steps(n, v)
            elif roles.get(n) == SPATIAL:
                out0 *= ks.steps(n, v)
        steps = [[ks.steps(n, v) if roles.get(n) in (REDUCTION, SPATIAL) else 1
                  for v in values] for n, values in zip(axes.names, axes.values, strict=True)]
        is_red = [roles.get(n) == REDUCTION for n in axes.names]
        compute, compulsory = info.compute_bound_cycles, info.compulsory_bytes
        axi = f.board.axi_bytes_per_cycle
        log2 = math.log2
        wl = f.wl

        def footprint(k: dict[str, int]) -> dict[str, int]:
            return wl.footprint(hw, k)

        def traffic(k: dict[str, int]) -> int:
            return wl.traffic(hw, k)

        footprint_of: Callable[[dict[str, int]], dict[str, int]] = footprint
        traffic_of: Callable[[dict[str, int]], int] = traffic
        if memo:
            footprint_of, traffic_of = ReadMemo(footprint), ReadMemo(traffic)
        shape = axes.shape
        strides = [math.prod(shape[j + 1:]) for j in range(len(shape))]
        combo: list[int] = []
        fps: list[tuple[int, int, int, int]] = []
        logs: list[list[float]] = []
        for idx in itertools.product(*allowed):
            knobs = dict(fixed)
            red, out_tiles = red0, out0
            flat = 0
            for j, i in enumerate(idx):
                knobs[axes.names[j]] = axes.values[j][i]
                if is_red[j]:
                    red *= steps[j][i]
                else:
                    out_tiles *= steps[j][i]
                flat += i * strides[j]
            if ks.constraint(dict(knobs)) is not None:
                continue
            fp = footprint_of(knobs)
            moved = traffic_of(knobs)
            f4 = (a, b, c, d) = (fp["inp"], fp["wgt"], fp["acc"], fp["uops"])
            memory = moved / axi
            combo.append(flat)
            fps.append(f4)
            logs.append([log2(max(a, 1)), log2(max(b, 1)), log2(max(c, 1)), log2(max(d, 1)),
                         log2(moved), log2(moved / compulsory), log2(out_tiles), log2(red),
                         log2(out_tiles * red), log2(memory), log2(max(compute, memory))])
        n = len(combo)
        return cls(axes, dict(fixed), np.asarray(combo, dtype=np.int64),
                   np.asarray(fps, dtype=float).reshape(n, 4),
                   np.asarray(logs, dtype=float).reshape(n, 11))

    def fits(self, info: HwInfo) -> np.ndarray:
        """Whether each schedule's analytic footprint fits ``info``'s buffers."""
        hw = info.hw
        caps = np.array([hw.inp_buff_bytes, hw.wgt_buff_bytes, hw.acc_buff_bytes],
                        dtype=float)
        return (self.footprint[:, :3] <= caps).all(axis=1)

    def entry_of(self, combo: int) -> int | None:
        """The table's row of a combination (None: not legal)."""
        i = int(np.searchsorted(self.combo, combo))
        return i if i < len(self.combo) and int(self.combo[i]) == combo else None

    def rows(self, f: Featurizer, info: HwInfo, entries: np.ndarray) -> np.ndarray:
        """Feature rows (float64, in ``f.names`` order) of the schedules ``entries`` on
        ``info``'s design."""
        hw = info.hw
        n = len(entries)
        axes = self.axes
        at = axes.at(self.combo[entries])
        params = np.full((n, len(f.param_space)), np.nan)
        cols = {name: j for j, name in enumerate(f.param_space)}
        log2 = math.log2
        for j, named in enumerate(axes.params):
            name = named[0][0]
            col = np.array([log2(v) if name in f.threads else float(v) for _, v in named])
            params[:, cols[name]] = col[at[j]]
        for j, name in enumerate(f.param_space):
            if name in f.space.hw_choices:
                params[:, j] = float(info.values[f.hw_keys.index(name)])
        log2_knobs = np.empty((n, len(f.knob_names)))
        for j, name in enumerate(f.knob_names):
            if name in axes.names:
                a = axes.names.index(name)
                log2_knobs[:, j] = np.array([log2(v) for v in axes.values[a]])[at[a]]
            else:
                log2_knobs[:, j] = log2(self.fixed[name])
        fp, logs = self.footprint[entries], self.logs[entries]
        caps = np.array([hw.inp_buff_bytes, hw.wgt_buff_bytes, hw.acc_buff_bytes],
                        dtype=float)
        fills = fp[:, :3] / caps
        uop_fill = fp[:, 3] / hw.uop_depth
        blocks = [params, log2_knobs]
        for s in range(3):
            blocks += [logs[:, s:s + 1], fills[:, s:s + 1]]
        blocks += [logs[:, 3:4], uop_fill[:, None],
                   np.maximum(fills.max(axis=1), uop_fill)[:, None], logs[:, 4:]]
        blocks.append(np.tile(np.asarray(info.features, dtype=float), (n, 1)))
        return np.hstack(blocks)


class CandidatePool:
    """The candidates of one unit on one design not yet taken, in proposal order (knob-space
    order until reordered): a sequence of ``Point``s made when they are read, each one's
    feature row primed into its featurizer then (``Featurizer.prime``), as
    ``NetworkFeatures.candidates``' points are."""

    def __init__(self, features: NetworkFeatures, sig: str, info: HwInfo, axes: Axes | None,
                 table: ScheduleTable | None, fixed: dict[str, int],
                 hw_params: dict[str, Any], entries: np.ndarray):
        self.features = features
        self.sig = sig
        self.info = info
        self.axes = axes
        self.table = table
        self.fixed = fixed
        self.hw_params = hw_params
        self.entries = entries  # the table's rows, in proposal order

    @classmethod
    def empty(cls, features: NetworkFeatures, sig: str, info: HwInfo) -> CandidatePool:
        return cls(features, sig, info, None, None, {}, {}, np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.entries)

    def __bool__(self) -> bool:
        return len(self.entries) > 0

    def __getitem__(self, i: int) -> Point:
        return self._point(int(self.entries[i]))

    def __iter__(self) -> Iterator[Point]:
        if not len(self.entries):
            return
        rows = self.rows()
        for e, row in zip(self.entries, rows, strict=True):
            yield self._point(int(e), row)

    def pop(self, i: int) -> Point:
        """Take the ``i``-th candidate out of the pool."""
        e = int(self.entries[i])
        self.entries = np.delete(self.entries, i)
        return self._point(e)

    def rows(self) -> np.ndarray:
        """The pool's feature rows (float64, ``Featurizer.names`` order)."""
        assert self.table is not None
        return self.table.rows(self.features.featurizers[self.sig], self.info, self.entries)

    def reordered(self, order: np.ndarray) -> CandidatePool:
        """The pool in the order ``order`` (positions of its candidates)."""
        return CandidatePool(self.features, self.sig, self.info, self.axes, self.table,
                             self.fixed, self.hw_params, self.entries[order])

    def index_of(self, knobs: dict[str, int]) -> int | None:
        """The position of the candidate whose knobs equal ``knobs`` (None: not here)."""
        if self.table is None or self.axes is None:
            return None
        if set(knobs) != set(self.fixed) | set(self.axes.names) or any(
                knobs[k] != v for k, v in self.fixed.items()):
            return None
        combo = self.axes.combo_of(knobs)
        e = None if combo is None else self.table.entry_of(combo)
        if e is None:
            return None
        at = np.flatnonzero(self.entries == e)
        return int(at[0]) if len(at) else None

    def without(self, keys: Collection[Hashable]) -> CandidatePool:
        """The pool less the candidates whose point keys are ``keys``."""
        if not keys or not len(self.entries):
            return self
        f = self.features.featurizers[self.sig]
        drop = []
        for key in keys:
            if not (isinstance(key, tuple) and len(key) == 2 and key[0] == self.info.values
                    and isinstance(key[1], tuple) and len(key[1]) == len(f.knob_names)):
                continue
            i = self.index_of(dict(zip(f.knob_names, key[1], strict=True)))
            if i is not None:
                drop.append(int(self.entries[i]))
        if not drop:
            return self
        return CandidatePool(self.features, self.sig, self.info, self.axes, self.table,
                             self.fixed, self.hw_params,
                             self.entries[~np.isin(self.entries, drop)])

    def _point(self, e: int, row: np.ndarray | None = None) -> Point:
        assert self.table is not None and self.axes is not None
        f = self.features.featurizers[self.sig]
        axes = self.axes
        knobs = dict(self.fixed)
        uparams: dict[str, Any] = {}
        for j, i in enumerate(axes.at(self.table.combo[e:e + 1])):
            i = int(i[0])
            knobs[axes.names[j]] = axes.values[j][i]
            name, value = axes.params[j][i]
            uparams[name] = value
        ktuple = tuple(knobs[n] for n in f.knob_names)
        p = Point((self.info.values, ktuple), {**self.hw_params, **uparams}, self.info,
                  dict(knobs))
        if row is None:
            row = self.table.rows(f, self.info, np.array([e]))[0]
        f.prime(p.key, row.tolist())
        return p


class NetworkCostModel:
    """Learns log2(latency / compute bound) of layer candidates across units and designs, and
    P(feasible); ranks a unit's candidates on one design (see the module docstring)."""

    def __init__(self, features: NetworkFeatures, seed: int | None = None,
                 cost_model: str = "xgb"):
        self.features = features
        self.rng = np.random.default_rng(seed)
        # feature rows, feasible, log2(latency / compute bound): a ``CostModel`` by name
        self.train = TrainingSet(cost_models.make(cost_model, "reg",
                                                  infeasible_penalty=INFEASIBLE_PENALTY))
        self._keys: set[tuple[str, Hashable]] = set()
        self._measured: dict[Hashable, float] = {}  # program -> log2(latency / bound)
        #: the same by (unit, ``_program_part``): sorted knobs -> log2(latency / bound)
        self._measured_by: dict[Hashable, dict[Hashable, float]] = {}

    @property
    def model(self) -> CostModel:
        return self.train.model

    @property
    def version(self) -> int:
        """Fits so far (a ranking is redone when it changes)."""
        return self.train.version

    @property
    def observations(self) -> int:
        return len(self.train)

    @property
    def ready(self) -> bool:
        return self.version > 0

    def observe(self, sig: str, point: Point, latency_s: float | None, clock_hz: float
                ) -> None:
        """A measured candidate of unit ``sig`` (``latency_s`` None: infeasible). A candidate
        observed twice counts once."""
        if (sig, point.key) in self._keys or not point.valid:
            return
        self._keys.add((sig, point.key))
        ok = latency_s is not None and latency_s > 0 and math.isfinite(latency_s)
        y = math.log2(latency_s * clock_hz) - self.features.log2_bound(sig, point) if ok \
            else math.nan
        self.train.add(self.features.matrix(sig, [point])[0], ok, y)
        if ok:
            program = program_of(sig, point)
            self._measured[program] = y
            self._measured_by.setdefault(program[:2], {})[program[2]] = y

    def stale(self, every: int) -> bool:
        """Worth refitting: ``every`` new observations (or 10% more) since the last fit."""
        t = self.train
        return sum(t.feasible) >= MIN_FEASIBLE and t.new >= max(every, t.fitted_at // 10)

    def fit(self) -> None:
        self.train.fit(np.vstack(self.train.items), self.rng)

    def rank(self, sig: str, points: Sequence[Point] | CandidatePool
             ) -> list[Point] | CandidatePool:
        """``points`` best first: predicted log2 inefficiency, penalized when probably
        infeasible; a candidate whose program was measured (on any design) by that. A
        ``CandidatePool`` (one design's) is ranked from its rows as a whole, without making
        its points, and comes back as one."""
        if not points:
            return points if isinstance(points, CandidatePool) else []
        x = self.features.matrix(sig, points)
        pred, p = self.model.predict(x)
        if isinstance(points, CandidatePool):
            measured = self._measured_by.get((sig, _program_part(points.info.hw)), {})
            for knobs, y in measured.items():
                i = points.index_of(dict(knobs))
                if i is not None:
                    pred[i], p[i] = y, 1.0
        else:
            for i, point in enumerate(points):
                y = self._measured.get(program_of(sig, point))
                if y is not None:
                    pred[i], p[i] = y, 1.0
        order = np.argsort(pred + self.model.penalty(p), kind="stable")
        if isinstance(points, CandidatePool):
            return points.reordered(order)
        return [points[int(i)] for i in order]


def _shape_features(wl: Workload) -> dict[str, float]:
    """log2 of every positive integer field of a workload's shape, and of its MACs."""
    out = {"shape:log2_macs": math.log2(max(wl.macs, 1))}
    for f in fields(wl):
        v = getattr(wl, f.name)
        if isinstance(v, int) and not isinstance(v, bool):
            out[f"shape:{wl.kind}.{f.name}"] = math.log2(v + 1)
    return out
