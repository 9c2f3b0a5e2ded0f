"""Features of a sampler proposal for a learned cost model, with fast cached realization.

A proposal (a parameter set of a ``SearchSpace``) is described by

- its raw parameters: hardware log2 values, log2 thread counts, tile-knob log-positions ``u``;
- when its hardware is valid, what it realizes to: every knob (log2), the analytic SRAM
  footprint per scope (log2 bytes and ratio to the buffer's capacity), the micro-op kernel
  against the uop buffer depth, analytic DRAM traffic, output tiles and reduction steps, the
  compute and memory lower bounds (log2 cycles), and per hardware config its MACs per cycle,
  area (log2 mm^2) and largest board-resource utilization.

Derived features of impossible hardware are NaN (XGBoost's missing value).

``SearchSpace.realize`` re-derives the knob space and the template's suggestion on every call
(1-6 ms); ``Featurizer`` caches both per hardware config, which pools of thousands of proposals
need, and otherwise follows ``realize`` step by step with the space's own ``nearest_log`` /
``log_position`` (tests/search/test_xgb_features.py checks that both give the same candidates).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from vtatune import schedules
from vtatune.area import Coefficients
from vtatune.compiler.compile import program_hw
from vtatune.hardware import boards, config
from vtatune.hardware.boards import Board
from vtatune.hardware.config import HwConfig
from vtatune.passes.vta_copy_rules import REFUSED
from vtatune.schedules.knobs import REDUCTION, SPATIAL, Knobs, KnobSpace
from vtatune.search.space import U_PREFIX, SearchSpace, log_position, nearest_legal, nearest_log

Params = dict[str, Any]

#: SRAM scopes whose analytic footprint is compared with the buffer's capacity.
SCOPES = ("inp", "wgt", "acc")
#: Utilization reported for a resource the board lacks entirely but the design needs.
MISSING_RESOURCE_UTILIZATION = 10.0


@dataclass(frozen=True)
class HwInfo:
    """What the featurizer knows of one hardware config (``reason`` non-empty: impossible)."""

    hw: HwConfig
    values: tuple[int, ...]  # the space's hardware parameters, in ``hw_choices`` order
    reason: str = ""
    knob_space: KnobSpace | None = None
    log2_area_mm2: float = math.nan
    compute_bound_cycles: float = math.nan  # padded MACs / MACs per cycle
    compulsory_bytes: int = 0
    features: tuple[float, ...] = (math.nan,) * 4  # the hardware-level feature block

    @property
    def valid(self) -> bool:
        return not self.reason


@dataclass(frozen=True)
class Point:
    """A proposal as the cost model sees it.

    ``key`` identifies the realized candidate (hardware values and knobs) within the space, or
    the rounded parameters when the hardware is impossible. ``params`` are canonical: ``u`` is
    the log-position of the realized knob value and threads are the realized ones, so
    ``space.params_of(candidate) == params``.
    """

    key: Hashable
    params: Params
    hw: HwInfo
    knobs: Knobs | None

    @property
    def valid(self) -> bool:
        return self.knobs is not None


class Featurizer:
    """Realizes parameter sets of ``space`` and turns them into feature rows (cached)."""

    def __init__(self, space: SearchSpace):
        self.space = space
        self.wl = space.workload
        self.board = _board(space.board)
        self.param_space = space.param_space()
        self.hw_keys = tuple(space.hw_choices)
        self.knob_names = tuple(schedules.knob_space(space.workload, space.base_hw).names)
        self.threads = space.thread_knobs
        self.names = self._names()
        self._hw: dict[tuple[int, ...], HwInfo] = {}
        self._suggestion: dict[tuple[int, ...], Knobs] = {}
        self._rows: dict[Hashable, list[float]] = {}
        self._parts: dict[Hashable, tuple[tuple[int, int, int, int], int, int, int]] = {}
        self._points: dict[tuple[Any, ...], Point] = {}

    # ---- realization -----------------------------------------------------------------------
    def hw_info(self, params: Params) -> HwInfo:
        """The (cached) hardware config ``params`` name, as ``space.hardware`` builds it."""
        values = tuple(int(params.get(k, v[0])) for k, v in self.space.hw_choices.items())
        info = self._hw.get(values)
        if info is None:
            info = self._hw[values] = self._make_hw_info(values)
        return info

    def point(self, params: Params) -> Point:
        """Realize ``params`` like ``space.realize`` (cached per hardware; the annealer meets
        the same canonical parameters again and again, so whole points are cached too)."""
        memo = tuple(sorted(params.items()))
        p = self._points.get(memo)
        if p is None:
            p = self._point(params)
            if len(self._points) > 200_000:  # bound memory over very long searches
                self._points.clear()
            self._points[memo] = p
        return Point(p.key, dict(p.params), p.hw, p.knobs)

    def _point(self, params: Params) -> Point:
        info = self.hw_info(params)
        if not info.valid:
            rounded = tuple(sorted((k, round(float(v), 6)) for k, v in params.items()
                                   if k in self.param_space))
            return Point(("invalid", rounded), dict(params), info, None)
        ks = info.knob_space
        assert ks is not None
        knobs = self._defaults(info, params)
        for knob in self.space.knobs:
            if knob in self.threads:
                knobs[knob] = int(params.get(knob, knobs[knob]))
            elif U_PREFIX + knob in params:
                knobs[knob] = nearest_log(ks.axes[knob], float(params[U_PREFIX + knob]),
                                          ks.elements[knob])
        for knob in self.threads:  # as SearchSpace.realize
            why = ks.problem(knobs) if knob in knobs and knobs[knob] > 1 else None
            if why and REFUSED not in why:
                knobs[knob] = 1
        why = ks.problem(knobs)
        if why and REFUSED in why:  # the nearest point VTA's compiler builds
            knobs = nearest_legal(self.wl, info.hw, self.space.stock_vta, knobs,
                                  self.space.knobs) or knobs
        if ks.problem(knobs):  # realize would refuse it too
            rounded = tuple(sorted((k, round(float(v), 6)) for k, v in params.items()))
            return Point(("invalid", rounded), dict(params), info, None)
        key = (info.values, tuple(knobs[n] for n in self.knob_names))
        return Point(key, self._canonical(info, knobs), info, knobs)

    def random_params(self, rng: np.random.Generator) -> Params:
        """Uniform over ``param_space``: categoricals by choice, ``u`` in [0, 1]."""
        out: Params = {}
        for name, (kind, values) in self.param_space.items():
            if kind == "categorical":
                out[name] = values[int(rng.integers(len(values)))]
            else:
                out[name] = float(rng.random())
        return out

    def u_of(self, info: HwInfo, knob: str, value: int) -> float:
        """The log-position parameter of tile knob ``knob`` = ``value`` on ``info``'s hardware."""
        assert info.knob_space is not None
        return log_position(info.knob_space.axes[knob], value, info.knob_space.elements[knob])

    def hw_count(self) -> int:
        """Hardware configs the space names."""
        return math.prod(len(v) for v in self.space.hw_choices.values())

    def enumerate(self, limit: int, hw_limit: int | None = None) -> list[Point] | None:
        """Every realizable candidate (valid hardware) once, or None when there are more than
        ``limit`` (or more than ``hw_limit`` hardware configs, each costing ~1 ms to visit)."""
        import itertools

        if self.hw_count() > (limit if hw_limit is None else hw_limit):
            return None
        combos = list(itertools.product(*self.space.hw_choices.values()))
        infos = [self.hw_info(dict(zip(self.hw_keys, c, strict=True))) for c in combos]
        infos = [i for i in infos if i.valid]
        total = 0
        for info in infos:
            assert info.knob_space is not None
            total += math.prod(len(info.knob_space.axes[k]) for k in self.space.knobs)
        if total > limit:
            return None
        out: dict[Hashable, Point] = {}
        for info in infos:
            assert info.knob_space is not None
            base = dict(zip(self.hw_keys, info.values, strict=True))
            axes = [info.knob_space.axes[k] for k in self.space.knobs]
            for combo in itertools.product(*axes):
                params = dict(base)
                for knob, value in zip(self.space.knobs, combo, strict=True):
                    if knob in self.threads:
                        params[knob] = value
                    else:
                        params[U_PREFIX + knob] = self.u_of(info, knob, value)
                p = self.point(params)
                if p.valid:
                    out.setdefault(p.key, p)
        return list(out.values())

    # ---- features ----------------------------------------------------------------------------
    def row(self, point: Point) -> list[float]:
        """Feature values of ``point`` in ``names`` order (cached by key)."""
        row = self._rows.get(point.key)
        if row is None:
            row = self._row(point)
            self.prime(point.key, row)
        return row

    def prime(self, key: Hashable, row: list[float]) -> None:
        """Cache ``row`` as the features of the point ``key`` (a caller that computed a
        batch of rows at once; they must equal ``_row``'s, as the network tests check)."""
        if len(self._rows) > 500_000:  # bound memory over very long searches
            self._rows.clear()
        self._rows[key] = row

    def forget_rows(self) -> None:
        """Drop cached feature rows (a caller done with a batch of points frees the memory)."""
        self._rows.clear()

    def matrix(self, points: Iterable[Point]) -> np.ndarray:
        """Feature rows of ``points`` as a float32 matrix (NaN: missing)."""
        rows = [self.row(p) for p in points]
        if not rows:
            return np.zeros((0, len(self.names)), dtype=np.float32)
        return np.asarray(rows, dtype=np.float32)

    def schedule_part(self, p: Point) -> tuple[tuple[int, int, int, int], int, int, int]:
        """What a valid point's features take from its schedule: the analytic footprint
        (inp, wgt, acc bytes, micro-ops), DRAM traffic, output tiles and reduction steps.

        They depend on the GEMM shape, the data widths and the knobs, not on buffer sizes,
        so they are computed on the compiler's ``program_hw`` view of the hardware (which
        refuses any use of a buffer size) and cached by it: the designs of a joint or
        network search that differ only in buffer sizes share them."""

        assert p.knobs is not None and p.hw.knob_space is not None
        key = (program_hw(p.hw.hw), p.key[1])
        got = self._parts.get(key)
        if got is None:
            hw, k, ks = key[0], p.knobs, p.hw.knob_space
            fp = self.wl.footprint(hw, k)
            out_tiles = red = 1
            for n in self.knob_names:
                role = ks.role(n)
                if role == REDUCTION:
                    red *= ks.steps(n, k[n])
                elif role == SPATIAL:
                    out_tiles *= ks.steps(n, k[n])
            got = ((fp["inp"], fp["wgt"], fp["acc"], fp["uops"]), self.wl.traffic(hw, k),
                   out_tiles, red)
            if len(self._parts) > 500_000:  # bound memory over very long searches
                self._parts.clear()
            self._parts[key] = got
        return got

    def _names(self) -> list[str]:
        names = [f"param:{n}" for n in self.param_space]
        names += [f"log2:{k}" for k in self.knob_names]
        for s in SCOPES:
            names += [f"log2:{s}_bytes", f"{s}_fill"]
        names += ["log2:uop_kernel", "uop_fill", "max_fill", "log2:traffic_bytes",
                  "log2:traffic/compulsory", "log2:out_tiles", "log2:reduction_steps",
                  "log2:dma_rounds", "log2:memory_bound_cycles", "log2:bound_cycles"]
        names += ["log2:compute_bound_cycles", "log2:macs_per_cycle", "log2:area_mm2",
                  "max_board_utilization"]
        return names

    def _row(self, p: Point) -> list[float]:
        # raw parameters (threads as log2); canonical for valid hardware
        row: list[float] = []
        for name in self.param_space:
            v = p.params.get(name, math.nan)
            row.append(math.log2(v) if name in self.threads and v == v else float(v))
        if p.knobs is None:
            n_derived = len(self.names) - len(row) - len(p.hw.features)
            return row + [math.nan] * n_derived + list(p.hw.features)
        hw, k = p.hw.hw, p.knobs
        fp, traffic, out_tiles, red = self.schedule_part(p)
        row += [math.log2(k[n]) for n in self.knob_names]
        # SRAM footprint against capacity: the feasibility signal
        caps = (hw.inp_buff_bytes, hw.wgt_buff_bytes, hw.acc_buff_bytes)
        fills = []
        for used, cap in zip(fp[:3], caps, strict=True):
            fill = used / cap
            fills.append(fill)
            row += [math.log2(max(used, 1)), fill]
        uop_fill = fp[3] / hw.uop_depth
        row += [math.log2(max(fp[3], 1)), uop_fill, max(*fills, uop_fill)]
        # DRAM traffic, tiling and the bounds it implies
        compute = p.hw.compute_bound_cycles
        memory = traffic / self.board.axi_bytes_per_cycle
        row += [math.log2(traffic), math.log2(traffic / p.hw.compulsory_bytes),
                math.log2(out_tiles), math.log2(red), math.log2(out_tiles * red),
                math.log2(memory), math.log2(max(compute, memory))]
        return row + list(p.hw.features)

    # ---- helpers ---------------------------------------------------------------------------------
    def _make_hw_info(self, values: tuple[int, ...]) -> HwInfo:
        hw = self.space.hardware(dict(zip(self.hw_keys, values, strict=True)))
        reason, area_mm2, util = hardware_facts(hw, self.space.board)
        if not reason and self.space.stock_vta:  # the space's own admissibility (realize's)
            problems = self.space.hardware_problems(hw)
            reason = "hardware: " + "; ".join(problems) if problems else ""
        if reason:
            return HwInfo(hw, values, reason=reason)
        ks = schedules.knob_space(self.wl, hw, self.space.stock_vta)
        compute = self.wl.padded_macs(hw) / hw.macs_per_cycle
        feats = (math.log2(compute), math.log2(hw.macs_per_cycle), math.log2(area_mm2), util)
        return HwInfo(hw, values, knob_space=ks, log2_area_mm2=math.log2(area_mm2),
                      compute_bound_cycles=compute,
                      compulsory_bytes=self.wl.compulsory_bytes(hw), features=feats)

    def _defaults(self, info: HwInfo, params: Params) -> Knobs:
        """Values of knobs ``params`` does not set: the template's suggestion (computed only
        when some such knob has a choice, since it enumerates the knob space)."""
        ks = info.knob_space
        assert ks is not None
        need = False
        for n in self.knob_names:
            given = n in params if n in self.threads else U_PREFIX + n in params
            if not (n in self.space.knobs and given) and len(ks.axes[n]) > 1:
                need = True
                break
        if not need:
            return {n: ks.axes[n][0] for n in self.knob_names}
        if info.values not in self._suggestion:
            self._suggestion[info.values] = schedules.suggest(self.wl, info.hw,
                                                              self.space.stock_vta)
        return dict(self._suggestion[info.values])

    def _canonical(self, info: HwInfo, knobs: Knobs) -> Params:
        ks = info.knob_space
        assert ks is not None
        out: Params = {}
        for name in self.param_space:
            if name in self.space.hw_choices:
                out[name] = info.values[self.hw_keys.index(name)]
            elif name in self.threads:
                out[name] = knobs[name]
            else:
                knob = name[len(U_PREFIX):]
                out[name] = self.u_of(info, knob, knobs[knob])
        return out




@lru_cache(maxsize=16384)
def hardware_facts(hw: HwConfig, board: str) -> tuple[str, float, float]:
    """(why ``hw`` is impossible or "", its area in mm^2, its largest board-resource
    utilization as a fraction) on ``board``. Pure, so cached for the whole process."""
    from vtatune import area

    problems = config.problems_of(hw)
    if problems:
        return "hardware: " + "; ".join(problems), math.nan, math.nan
    b = _board(board)
    report = area.estimate(hw, b, _coefficients())
    util = 0.0
    for use in area.fit(report, b).usage:
        pct = use.utilization_pct
        util = max(util, pct / 100.0 if pct is not None else MISSING_RESOURCE_UTILIZATION)
    return "", report.area_mm2, util


@lru_cache(maxsize=16)
def _board(name: str) -> Board:

    return boards.load(name)


@lru_cache(maxsize=1)
def _coefficients() -> Coefficients:
    from vtatune import area

    return area.load_coefficients()
