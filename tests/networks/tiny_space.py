"""A tiny network and its space, small enough that a search takes seconds (the ``tiny``
fixture of tests/conftest.py; not a conftest of its own: store tests import ``conftest`` by
name)."""

from __future__ import annotations

from typing import Any

#: Two conv2d shapes (one used twice) and a dense layer, all small.
TINY: dict[str, Any] = {
    "network": {"name": "tiny", "layers": [
        {"name": "a", "kind": "conv2d", "shape": "1,16,8,8,16,3,3,1,1", "count": 2},
        {"name": "b", "kind": "conv2d", "shape": "1,16,8,8,32,1,1,0,2", "count": 1},
        {"name": "a2", "kind": "conv2d", "shape": "1,16,8,8,16,3,3,1,1", "count": 1},
        {"name": "fc", "kind": "dense", "shape": "1,32,16", "count": 3},
    ]},
    "hardware": {"LOG_BLOCK_IN": [3, 4], "LOG_BLOCK_OUT": [3, 4], "LOG_ACC_BUFF_SIZE": [15],
                 "LOG_WGT_BUFF_SIZE": [15, 16]},
    "objective": {"kind": "area-latency"},
    "inner": {"trials": 7, "min_per_layer": 2},
}
