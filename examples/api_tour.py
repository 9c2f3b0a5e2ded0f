"""vtatune from Python: run a small joint search, then look at it as pandas tables.

    python examples/api_tour.py [--trials N] [--db PATH] [--workers N]

Runs a joint hardware x schedule search on a dense 16x256x256 layer for the pynq-z1 board
(continued if the study exists), then prints the studies in the database, the trials by
status, the Pareto front with its knee, and the fastest design per GEMM shape.
"""

from __future__ import annotations

import argparse

import vtatune.api as vt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=60)
    ap.add_argument("--db", default=None, help="database (default: vtatune's db/vtatune.sqlite)")
    ap.add_argument("--workers", type=int, default=0, help="0: one per core")
    args = ap.parse_args()

    # 1. a search, exactly as `vtatune search dense --shape 16,256,256 --trials N` runs it
    run = vt.search("dense", shape="16,256,256", trials=args.trials, sampler="xgb", seed=0,
                    db=args.db, workers=args.workers, study="api-tour")
    print(f"study {run.study}: {run.trials} trials, {run.feasible} feasible, "
          f"{run.elapsed_s:.1f} s\n")

    # 2. every study in the database
    print(vt.studies(args.db)[["study", "trials", "feasible", "best_cycles", "best_ms"]]
          .to_string(index=False), "\n")

    # 3. every trial: knobs and hardware decoded, buffer sizes in KiB, status and reason
    trials = vt.trials(run.study, args.db)
    print(trials.groupby("status").size().rename("trials").to_string(), "\n")
    rejected = trials[~trials["feasible"]]
    if len(rejected):
        print("why designs were rejected (first of each status):")
        print(rejected.groupby("status")["reason"].first().to_string(), "\n")

    # 4. the Pareto front (area vs latency), knee marked
    front = vt.front(run.study, args.db)
    cols = ["trial", "hw_name", "batch", "block_in", "block_out", "inp_kib", "wgt_kib",
            "acc_kib", "cycles", "latency_ms", "area_mm2", "efficiency", "knee"]
    print(front[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"), "\n")

    # 5. pandas from here on: the fastest feasible design of each GEMM shape
    ok = trials[trials["feasible"]]
    best = ok.loc[ok.groupby(["batch", "block_in", "block_out"])["cycles"].idxmin()]
    print(best[["batch", "block_in", "block_out", "hw_name", "cycles", "area_mm2"]]
          .to_string(index=False))


if __name__ == "__main__":
    main()
