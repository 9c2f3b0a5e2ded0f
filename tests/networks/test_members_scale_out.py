"""A study of several networks runs on the same slots and takeover as a single network's
(tests/networks/test_network_scale_out.py): a killed process's design of two networks is
finished by another with the layer results it had, and carries both networks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.networks.test_network_scale_out import ROOT, _check_study, kill_mid_design
from tests.networks.tiny_space import OTHER, TINY, toml_text
from vtatune.store import Store


def _set_file(tmp_path: Path, inner_trials: int) -> Path:
    (tmp_path / "tiny.toml").write_text(toml_text(TINY))
    (tmp_path / "other.toml").write_text(toml_text(OTHER))
    s = tmp_path / "pair.toml"
    s.write_text(toml_text({
        "networks": {"members": [{"network": "tiny.toml", "weight": 2},
                                 {"network": "other.toml"}]},
        "hardware": TINY["hardware"], "objective": TINY["objective"],
        "inner": {"trials": inner_trials, "min_per_layer": 2}}))
    return s


def _search(net: Path, db: str, trials: int, seed: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "vtatune", "search", str(net), "--trials", str(trials),
         "--sampler", "random", "--seed", str(seed), "--workers", "1", "--db", db,
         "--study", "k", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True)


def test_a_killed_design_of_two_networks_is_finished_by_another(tmp_path: Path) -> None:
    n = 2
    db = f"sqlite:///{tmp_path / 'shared.sqlite'}"
    net = _set_file(tmp_path, 60)  # designs long enough to be killed in the middle of
    victim = _search(net, db, n, 0)
    running, had = kill_mid_design(victim, db, "k")
    other = _search(net, db, n, 1)
    out, err = other.communicate(timeout=600)
    assert other.returncode == 0, err[-3000:]
    d = json.loads(out)
    assert d["trials"] == n and d["network"] == "tiny+other"
    _check_study(db, "k", n)
    store = Store(db)
    done = {t.number: t for t in store.network_trials("k")}[running.number]
    assert done.hw_key == running.hw_key and done.status == "ok"
    after = store.network_evals("k", running.number)
    assert [(e.seq, e.candidate.key, e.cached) for e in after[:len(had)]] == [
        (e.seq, e.candidate.key, e.cached) for e in had]
    assert len(after) >= 60
    # the finished design carries both networks, its objective their weighted sum
    assert [n.network for n in done.networks] == ["tiny", "other"]
    assert done.seconds == pytest.approx(2 * done.networks[0].seconds
                                         + done.networks[1].seconds)
