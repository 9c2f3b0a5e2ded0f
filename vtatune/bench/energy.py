"""Energy model figures (part of ``make bench``): ResNet-18's energy per inference and average
power on the default design, with the range the constants imply, and what pricing costs.

The layers are the ten ResNet-18 convolutions VTA offloads, each with the schedule measured on
a PYNQ-Z1 (TopHub's ResNet-18 records in ``hwconfigs/timing/measured/``) and run as often as
ResNet-18 runs it (``spaces/resnet18.toml``); time from the board's default timing profile.
Also runs alone: ``python -m vtatune.bench.energy``.
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

from vtatune.paths import project_root

#: VTA's name of the default design (1x16x16, buffers 15/15/18/17) in the measured records.
DEFAULT_DESIGN = "pynq_1x16_i8w8a32_15_15_18_17"
#: ResNet-18 runs these measured shapes (cin, h, cout, k, stride) more than once
#: (spaces/resnet18.toml: conv2_x 4, conv3_x/conv4_x/conv5_x 3); the others once.
RUNS = {(64, 56, 64, 3, 1): 4, (128, 28, 128, 3, 1): 3, (256, 14, 256, 3, 1): 3,
        (512, 7, 512, 3, 1): 3}


def resnet18_records() -> list[dict[str, Any]]:
    path = project_root() / "hwconfigs" / "timing" / "measured" / "vta_pynq_measured.json"
    return [r for r in json.loads(path.read_text())
            if "Resnet-18" in r["source"] and r["model"] == DEFAULT_DESIGN]


def resnet18_energy(board_name: str = "pynq-z1") -> dict[str, Any]:
    """Energy per inference (the offloaded convolutions) and average power, each figure's
    value/low/high, plus the time one ``estimate`` takes per layer program."""
    from vtatune.compiler import compile_candidate
    from vtatune.energy import estimate
    from vtatune.hardware import boards, config
    from vtatune.runtime import build_program
    from vtatune.simulator import simulate
    from vtatune.workloads.conv2d import Conv2d

    hw, board = config.default(), boards.load(board_name)
    cases = ("value", "low", "high")
    acc = dict.fromkeys(cases, 0.0)
    brd = dict.fromkeys(cases, 0.0)
    seconds, runs, price_ms, eval_ms = 0.0, 0, [], []
    for r in resnet18_records():
        s = r["shape"]
        wl = Conv2d.from_shape(",".join(str(s[k]) for k in ("n", "cin", "h", "w", "cout", "kh",
                                                           "kw", "pad", "stride")))
        t0 = time.perf_counter()
        res = compile_candidate(wl, hw, r["knobs"])
        if not res.ok:
            raise RuntimeError(f"measured schedule {r['knobs']} of {wl.signature}: {res.reason}")
        program = build_program(res, wl, hw)
        timing = simulate(program, board)
        eval_ms.append((time.perf_counter() - t0) * 1e3)
        reps = []
        for _ in range(20):
            t1 = time.perf_counter()
            e = estimate(program, timing.cycles, timing.seconds, board)
            reps.append((time.perf_counter() - t1) * 1e3)
        price_ms.append(statistics.median(reps))
        n = RUNS.get((s["cin"], s["h"], s["cout"], s["kh"], s["stride"]), 1)
        runs += n
        seconds += n * timing.seconds
        for c in cases:
            acc[c] += n * e.accelerator_j.pick(c)
            brd[c] += n * e.board_j.pick(c)
    return {"layers": len(price_ms), "runs": runs, "seconds": seconds, "accelerator_j": acc,
            "board_j": brd, "accelerator_w": {c: v / seconds for c, v in acc.items()},
            "board_w": {c: v / seconds for c, v in brd.items()},
            "price_ms": statistics.median(price_ms), "eval_ms": statistics.median(eval_ms)}


def bench_energy() -> list[tuple[str, str]]:
    from vtatune.formats import energy_range, power_range

    r = resnet18_energy()
    what = (f"ResNet-18 on the default design (1x16x16), pynq-z1: its {r['layers']} offloaded "
            f"convolution shapes ({r['runs']} runs per inference) with the schedules measured "
            "on the board, shipped energy constants (value, range from their low and high ends)")
    return [
        (f"{what}: energy per inference, board / accelerator",
         f"{energy_range(r['board_j'])} / {energy_range(r['accelerator_j'])} "
         f"(in {r['seconds'] * 1e3:.1f} ms)"),
        ("  same: average power, board / accelerator (published: ~2 W for the board)",
         f"{power_range(r['board_w'])} / {power_range(r['accelerator_w'])}"),
        ("energy pricing per program (events + constants), median over the layers, against "
         "compiling, building and timing the same program",
         f"{r['price_ms']:.2f} ms vs {r['eval_ms']:.0f} ms "
         f"({100 * r['price_ms'] / r['eval_ms']:.1f}%)"),
    ]


if __name__ == "__main__":
    for name, value in bench_energy():
        print(f"{name}: {value}")
