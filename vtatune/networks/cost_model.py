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

import math
from collections.abc import Hashable, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any

import numpy as np

from vtatune.compiler.compile import program_hw
from vtatune.hardware.config import BUFFER_KEYS
from vtatune.search.cost_model.features import Featurizer, HwInfo, Point
from vtatune.search.cost_model.xgb_model import XGBCostModel
from vtatune.search.space import U_PREFIX

if TYPE_CHECKING:
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
    logs = point.hw.hw.log_params()
    return (sig, tuple(v for k, v in logs.items() if k not in FIT_ONLY),
            tuple(sorted((point.knobs or {}).items())))


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
        self._combo_cache: dict[Any, list[tuple[tuple[int, ...], dict[str, Any]]]] = {}
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
        f = self.featurizers[sig]
        info = f.hw_info(hw_values)
        if not info.valid:
            return []
        combos = self._combos(sig, info)
        if not combos:
            return []
        hw_params = {k: info.values[f.hw_keys.index(k)] for k in f.param_space
                     if k in f.space.hw_choices}
        base = f.point({**hw_params, **combos[0][1]})  # knobs not searched: as point() sets
        assert base.knobs is not None
        fixed = {k: v for k, v in base.knobs.items() if k not in f.space.knobs}
        table = self._table(sig, info, combos, fixed)
        if not table.legal:
            return []
        rows, fits = table.rows(f, info)
        out = []
        for i in np.flatnonzero(fits):
            knobs, ktuple, uparams = table.legal[i]
            p = Point((info.values, ktuple), {**hw_params, **uparams}, info, dict(knobs))
            f.prime(p.key, rows[i].tolist())
            out.append(p)
        return out

    def _table(self, sig: str, info: HwInfo, combos: list[tuple[tuple[int, ...], dict[str, Any]]],
               fixed: dict[str, int]) -> ScheduleTable:
        """The legal knob combinations of unit ``sig`` on ``info``'s GEMM shape and widths
        with their hardware-independent features, cached: legality depends on the knob space
        and the GEMM shape only, the features on the widths too (``schedule_part``)."""

        f = self.featurizers[sig]
        key = (self._combo_key(sig, info), tuple(sorted(fixed.items())), program_hw(info.hw))
        got = self._tables.get(key)
        if got is None:
            ks = info.knob_space
            legal = []
            for values, uparams in combos:
                knobs = {**fixed, **dict(zip(f.space.knobs, values, strict=True))}
                if not ks.problem(knobs):
                    legal.append((knobs, tuple(knobs[n] for n in f.knob_names), uparams))
            got = self._tables[key] = ScheduleTable.build(f, info, legal)
        return got

    def _combos(self, sig: str, info: HwInfo) -> list[tuple[tuple[int, ...], dict[str, Any]]]:
        """Searched knob values and their canonical parameters (thread counts, tile-knob
        log-positions) on ``info``'s knob space, cached per knob space and GEMM shape."""
        import itertools

        f = self.featurizers[sig]
        ks = info.knob_space
        key = self._combo_key(sig, info)
        got = self._combo_cache.get(key)
        if got is None:
            searched = f.space.knobs
            # each knob's (parameter name, value) per value, computed once per axis
            named = [[(k, v) if k in f.threads else (U_PREFIX + k, f.u_of(info, k, v))
                      for v in ks.axes[k]] for k in searched]
            got = [(values, dict(items)) for values, items in zip(
                itertools.product(*(ks.axes[k] for k in searched)),
                itertools.product(*named), strict=True)]
            self._combo_cache[key] = got
        return got

    @staticmethod
    def _combo_key(sig: str, info: HwInfo) -> Hashable:
        hw = info.hw
        return (sig, tuple((k, tuple(v)) for k, v in info.knob_space.axes.items()), hw.batch,
                hw.block_in, hw.block_out)

    def matrix(self, sig: str, points: Sequence[Point]) -> np.ndarray:
        """Rows of ``points`` of unit ``sig`` in the shared layout (float32, NaN missing)."""
        f = self.featurizers[sig]
        x = np.tile(self._shape_rows[sig], (len(points), 1))
        if points:
            x[:, self._columns[sig]] = np.asarray([f.row(p) for p in points], dtype=np.float32)
        return x

    def log2_bound(self, sig: str, point: Point) -> float:
        """log2 of the unit's compute bound (cycles) on ``point``'s hardware."""
        return float(self.featurizers[sig].row(point)[self._bound_col[sig]])


class ScheduleTable:
    """The legal schedules of one unit on one GEMM shape and set of widths, with the part of
    their feature rows (``Featurizer._row``) no buffer size changes, as arrays; ``rows``
    completes them for one design in a few vectorized steps."""

    def __init__(self, legal: list[tuple[dict[str, int], tuple[int, ...], dict[str, Any]]],
                 params: np.ndarray, log2_knobs: np.ndarray, footprint: np.ndarray,
                 logs: np.ndarray):
        self.legal = legal
        self.params = params  # (n, len(param_space)); hardware columns NaN, set per design
        self.log2_knobs = log2_knobs
        self.footprint = footprint  # (n, 4): inp, wgt, acc bytes, micro-ops
        #: (n, 11): log2 of the four footprints, then of traffic, traffic / compulsory, out
        #: tiles, reduction steps, both, memory bound, the larger bound (``math.log2``, as
        #: ``Featurizer._row``: numpy's log2 may differ in the last bit)
        self.logs = logs

    @classmethod
    def build(cls, f: Featurizer, info: HwInfo,
              legal: list[tuple[dict[str, int], tuple[int, ...], dict[str, Any]]]
              ) -> ScheduleTable:
        n, names = len(legal), list(f.param_space)
        params = np.full((n, len(names)), np.nan)
        log2_knobs = np.empty((n, len(f.knob_names)))
        footprint = np.empty((n, 4))
        logs = np.empty((n, 11))
        cols = {name: j for j, name in enumerate(names)}
        # the bounds depend on the GEMM shape and widths (the table's key), not the buffers
        compute, compulsory = info.compute_bound_cycles, info.compulsory_bytes
        axi = f.board.axi_bytes_per_cycle
        log2 = math.log2
        for i, (knobs, ktuple, uparams) in enumerate(legal):
            for name, v in uparams.items():
                params[i, cols[name]] = log2(v) if name in f.threads else float(v)
            log2_knobs[i] = [log2(v) for v in ktuple]
            fp, traffic, out_tiles, red = f.schedule_part(
                Point((info.values, ktuple), uparams, info, knobs))
            footprint[i] = fp
            memory = traffic / axi
            logs[i] = [*(log2(max(v, 1)) for v in fp), log2(traffic),
                       log2(traffic / compulsory), log2(out_tiles), log2(red),
                       log2(out_tiles * red), log2(memory), log2(max(compute, memory))]
        return cls(legal, params, log2_knobs, footprint, logs)

    def rows(self, f: Featurizer, info: HwInfo) -> tuple[np.ndarray, np.ndarray]:
        """(feature rows of every schedule on ``info``'s design, in ``f.names`` order;
        whether its analytic footprint fits the design's buffers)."""
        hw = info.hw
        n = len(self.legal)
        params = self.params.copy()
        for j, name in enumerate(f.param_space):
            if name in f.space.hw_choices:
                params[:, j] = float(info.values[f.hw_keys.index(name)])
        fp, logs = self.footprint, self.logs
        caps = np.array([hw.inp_buff_bytes, hw.wgt_buff_bytes, hw.acc_buff_bytes],
                        dtype=float)
        fills = fp[:, :3] / caps
        uop_fill = fp[:, 3] / hw.uop_depth
        blocks = [params, self.log2_knobs]
        for s in range(3):
            blocks += [logs[:, s:s + 1], fills[:, s:s + 1]]
        blocks += [logs[:, 3:4], uop_fill[:, None],
                   np.maximum(fills.max(axis=1), uop_fill)[:, None], logs[:, 4:]]
        blocks.append(np.tile(np.asarray(info.features, dtype=float), (n, 1)))
        return np.hstack(blocks), (fp[:, :3] <= caps).all(axis=1)


class NetworkCostModel:
    """Learns log2(latency / compute bound) of layer candidates across units and designs, and
    P(feasible); ranks a unit's candidates on one design (see the module docstring)."""

    def __init__(self, features: NetworkFeatures, seed: int | None = None):
        self.features = features
        self.rng = np.random.default_rng(seed)
        self.model = XGBCostModel("reg", infeasible_penalty=INFEASIBLE_PENALTY)
        self._rows: list[np.ndarray] = []
        self._ok: list[bool] = []
        self._y: list[float] = []
        self._keys: set[tuple[str, Hashable]] = set()
        self._measured: dict[Hashable, float] = {}  # program -> log2(latency / bound)
        self.version = 0  # increases with every fit
        self._fitted_at = 0

    @property
    def observations(self) -> int:
        return len(self._rows)

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
        self._rows.append(self.features.matrix(sig, [point])[0])
        ok = latency_s is not None and latency_s > 0 and math.isfinite(latency_s)
        self._ok.append(ok)
        y = math.log2(latency_s * clock_hz) - self.features.log2_bound(sig, point) if ok \
            else math.nan
        self._y.append(y)
        if ok:
            self._measured[program_of(sig, point)] = y

    def stale(self, every: int) -> bool:
        """Worth refitting: ``every`` new observations (or 10% more) since the last fit."""
        new = len(self._rows) - self._fitted_at
        return sum(self._ok) >= MIN_FEASIBLE and new >= max(every, self._fitted_at // 10)

    def fit(self) -> None:
        x = np.vstack(self._rows)
        ok = np.asarray(self._ok, dtype=bool)
        seed = int(self.rng.integers(2**31))
        self.model.fit(x, np.asarray(self._y), ok, seed=seed)
        self._fitted_at = len(self._rows)
        self.version += 1

    def rank(self, sig: str, points: Sequence[Point]) -> list[Point]:
        """``points`` best first: predicted log2 inefficiency, penalized when probably
        infeasible; a candidate whose program was measured (on any design) by that."""
        if not points:
            return []
        x = self.features.matrix(sig, points)
        pred, p = self.model.predict(x)
        for i, point in enumerate(points):
            y = self._measured.get(program_of(sig, point))
            if y is not None:
                pred[i], p[i] = y, 1.0
        order = np.argsort(pred + self.model.penalty(p), kind="stable")
        return [points[int(i)] for i in order]


def _shape_features(wl: Workload) -> dict[str, float]:
    """log2 of every positive integer field of a workload's shape, and of its MACs."""
    out = {"shape:log2_macs": math.log2(max(wl.macs, 1))}
    for f in fields(wl):
        v = getattr(wl, f.name)
        if isinstance(v, int) and not isinstance(v, bool):
            out[f"shape:{wl.kind}.{f.name}"] = math.log2(v + 1)
    return out
