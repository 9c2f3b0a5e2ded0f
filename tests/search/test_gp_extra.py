"""``--sampler gp`` needs torch, an opt-in extra: without it, one line saying how to get it."""

from __future__ import annotations

import json
import sys

import pytest

from vtatune.cli.main import main
from vtatune.errors import UserError
from vtatune.search import space as spaces
from vtatune.search.samplers import make


@pytest.fixture
def no_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules makes ``import torch`` raise ImportError, installed or not
    monkeypatch.setitem(sys.modules, "torch", None)


def test_gp_without_torch_says_how_to_install(no_torch) -> None:
    sp = spaces.load("dense", shape="16,64,64")
    with pytest.raises(UserError) as info:
        make("gp", sp, 2, 0)
    msg = str(info.value)
    assert "torch" in msg and "pip install 'vtatune[gp]'" in msg and "GP=1" in msg
    assert "\n" not in msg


def test_search_gp_without_torch_is_one_line_and_stores_nothing(no_torch, capsys, tmp_path
                                                                 ) -> None:
    db = tmp_path / "s.sqlite"
    rc = main(["search", "dense", "--shape", "16,64,64", "--trials", "4", "--sampler", "gp",
               "--workers", "1", "--db", str(db)])
    out, err = capsys.readouterr()
    assert rc == 2
    lines = err.splitlines()  # checked before any progress output
    assert len(lines) == 1 and lines[0].startswith("vtatune: error: sampler 'gp' needs torch")
    assert "vtatune[gp]" in lines[0] and out == ""
    if db.exists():
        assert main(["studies", "--db", str(db), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["studies"] == []
