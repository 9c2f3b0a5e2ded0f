"""Everything a user reads back from a results database, as plain JSON (the reference the
migration test compares with).

``pre_alembic.sqlite`` was written by vtatune 0.1.0 (commit ebd9cab, before the schema had
versions) with:

    vtatune search conv2d --trials 4 --workers 1 --seed 0 --study op --db pre_alembic.sqlite
    vtatune search dcgan --trials 2 --layer-trials 2 --workers 1 --seed 0 --study net --db ...
    vtatune search dcgan resnet18 --trials 2 --layer-trials 2 --workers 1 --seed 0 \
        --study multi --db ...

and ``pre_alembic.json`` by ``python read_studies.py pre_alembic.sqlite > pre_alembic.json``
with that same code. The test runs this module's ``read`` with today's code on a copy of the
database and expects the same JSON.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def _plain(obj: Any) -> Any:
    """JSON types: dataclasses as dicts, datetimes as ISO strings."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    return obj


def read(db: str, readonly: bool = True) -> dict[str, Any]:
    """The studies of ``db`` (a path): the store's records, the API's frames and
    ``vtatune show NAME --json`` of each study."""
    import vtatune
    from vtatune import api
    from vtatune.store import Store

    root = str(Path(vtatune.__file__).resolve().parents[1])  # the code under test, in `show`
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [root, *filter(None, [os.environ.get("PYTHONPATH")])])}

    store = Store(f"sqlite:///{db}", readonly=readonly)
    out: dict[str, Any] = {"studies": [], "api_studies": json.loads(
        api.studies(store).to_json(orient="records", date_format="iso"))}
    for info in store.studies():
        study: dict[str, Any] = {"info": _plain(info),
                                 "trials": _plain(store.trials(info.name)),
                                 "network_trials": _plain(store.network_trials(info.name)),
                                 "network_evals": _plain(store.network_evals(info.name))}
        for name in ("trials", "front"):
            frame = getattr(api, name)(info.name, store)
            study[f"api_{name}"] = json.loads(frame.to_json(orient="records",
                                                            date_format="iso"))
        study["show_json"] = json.loads(subprocess.run(
            [sys.executable, "-m", "vtatune", "show", info.name, "--json", "--db", db],
            check=True, capture_output=True, text=True, env=env).stdout)
        out["studies"].append(study)
    store.close()
    return out


if __name__ == "__main__":
    print(json.dumps(read(sys.argv[1]), sort_keys=True))
