"""A tiny study of two networks on one accelerator (TINY weight 3, OTHER weight 1, OTHER with
a host operator), for the read side's tests: show, report, compare, export, the API. Not a
conftest: imported by name."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.networks.tiny_space import OTHER, TINY, toml_text

#: OTHER with a host operator (its time is not in the latency).
OTHER_HOST = {**OTHER, "network": {**OTHER["network"], "host_ops": [
    {"op": "MaxPool", "count": 2, "shapes": ["1x16x8x8"]}]}}
WEIGHTS = {"tiny": 3.0, "other": 1.0}


@dataclass(frozen=True)
class MultiStudy:
    db: str
    study: str
    files: tuple[Path, Path]


def make(folder: Path, study: str = "m", weights: tuple[float, float] = (3, 1),
         trials: int = 3, seed: int = 2, db: str | None = None) -> MultiStudy:
    """Search TINY and OTHER_HOST on one accelerator (``trials`` designs, random sampler)."""
    from vtatune.networks import members, runner

    a, b = folder / "tiny.toml", folder / "other.toml"
    a.write_text(toml_text(TINY))
    b.write_text(toml_text(OTHER_HOST))
    sp = members.load_members([str(a), str(b)], list(weights))
    db = db or f"sqlite:///{folder / 'multi.sqlite'}"
    runner.run(sp, sampler="random", trials=trials, study=study, db=db, workers=1, seed=seed,
               warm_start=False)
    return MultiStudy(db, study, (a, b))
