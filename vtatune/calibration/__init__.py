"""Calibration: fitting a board's timing constants to latencies measured on it.

Above the compiler and the simulator (it compiles every record's schedule and times its
program): ``records`` reads measured files (a JSON list, an AutoTVM log), ``prepare`` compiles
the records' programs into cost rows, ``fit`` fits the constants and reports how well they
explain the records, ``profiles`` writes timing files. ``vtatune calibrate`` is its command.
"""

from __future__ import annotations

from vtatune.calibration.fit import (
    BOUNDS,
    CUTOFF_SIGMAS,
    LOSS_SCALE,
    NOISE_FLOOR,
    PRIOR_FACTOR,
    SOLVER,
    Calibration,
    PairAgreement,
    RecordFit,
    calibrate,
    calibrate_prepared,
    errors_with,
    rank_agreement,
)
from vtatune.calibration.prepare import Prepared, only_session, prepare, prepare_counting
from vtatune.calibration.profiles import (
    calibration_block,
    derive,
    dump_timing_file,
    prior_params,
    put_profile,
    read_timing_file,
    timing_profile,
)
from vtatune.calibration.records import (
    MAX_BYTES,
    MAX_SHAPE,
    RECORD_KEYS,
    SHAPE_KEYS,
    TASKS,
    Measured,
    MeasuredRecord,
    display_path,
    read_measured,
    read_records,
    records_from_list,
    records_from_log,
)

__all__ = [
    "BOUNDS", "CUTOFF_SIGMAS", "LOSS_SCALE", "MAX_BYTES", "MAX_SHAPE", "NOISE_FLOOR",
    "PRIOR_FACTOR", "RECORD_KEYS", "SHAPE_KEYS", "SOLVER", "TASKS", "Calibration", "Measured",
    "MeasuredRecord", "PairAgreement", "Prepared", "RecordFit", "calibrate",
    "calibrate_prepared", "calibration_block", "derive", "display_path", "dump_timing_file",
    "errors_with", "only_session", "prepare", "prepare_counting", "prior_params", "put_profile",
    "rank_agreement", "read_measured", "read_records", "read_timing_file", "records_from_list",
    "records_from_log", "timing_profile",
]
