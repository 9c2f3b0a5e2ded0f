"""vtatune search: the space file's workload, default study names, refused continuations."""

from __future__ import annotations

import json

from vtatune.cli.main import main


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_a_space_file_searches_its_own_workload(capsys, tmp_path) -> None:
    from vtatune.search.space import spaces_dir

    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    rc, out, err = _run(capsys, "search", "--space", str(spaces_dir() / "dense.toml"),
                        "--trials", "2", "--sampler", "random", "--seed", "0", "--workers", "1",
                        "--db", db, "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["study"].startswith("dense-")
    rc, out, _ = _run(capsys, "show", d["study"], "--db", db, "--json")
    assert json.loads(out)["workload"].startswith("dense")


def test_schedule_only_studies_are_named_by_their_hardware(capsys, tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    names = []
    for hw in ("default", "1x8x8"):
        rc, out, err = _run(capsys, "search", "dense", "--shape", "16,64,64", "--hw", hw,
                            "--trials", "2", "--sampler", "random", "--seed", "0",
                            "--workers", "1", "--db", db, "--json")
        assert rc == 0, err
        names.append(json.loads(out)["study"])
    assert names == ["dense-dense_m16_k64_n64-sched-1x16x16-i32w256a128u32-random",
                     "dense-dense_m16_k64_n64-sched-1x8x8-i16w64a64u16-random"]
    rc, out, _ = _run(capsys, "show", names[1], "--db", db, "--json")
    assert {r["hw_name"] for r in json.loads(out)["top"]} <= {"1x8x8-i16w64a64u16"}


def test_a_continuation_that_differs_is_refused_in_one_line(capsys, tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    base = ["search", "dense", "--shape", "16,64,64", "--trials", "2", "--sampler", "random",
            "--workers", "1", "--db", db, "--study", "mine"]
    rc, _, err = _run(capsys, *base, "--hw", "default")
    assert rc == 0, err
    rc, out, err = _run(capsys, *base, "--hw", "1x8x8")
    assert rc == 2 and out == ""
    assert err.startswith("vtatune: error: study 'mine' is for hardware 1x16x16-i32w256a128u32, "
                          "not 1x8x8-i16w64a64u16: choose another --study")
    assert len(err.strip().splitlines()) == 1
    rc, _, err = _run(capsys, *base, "--hw", "default", "--board", "zcu104")
    assert rc == 2 and "board pynq-z1, not zcu104" in err


def test_default_names_mention_another_board(capsys, tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    rc, out, err = _run(capsys, "search", "dense", "--shape", "16,64,64", "--board", "zcu104",
                        "--trials", "2", "--sampler", "random", "--workers", "1", "--db", db,
                        "--json")
    assert rc == 0, err
    assert json.loads(out)["study"] == "dense-dense_m16_k64_n64-zcu104-random"


def test_a_rerun_with_nothing_to_do_answers_without_workers_or_tvm(tmp_path) -> None:
    # the study already holds --trials: the answer comes from the store alone (no fork
    # server, no TVM import, no sampler), and says so
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    argv = ["search", "dense", "--shape", "16,64,64", "--trials", "2", "--sampler", "random",
            "--seed", "0", "--workers", "1", "--db", db]
    code = ("import sys, json\nfrom multiprocessing import forkserver\n"
            "from vtatune.cli.main import main\n"
            f"rc = main({argv!r})\n"
            "print(json.dumps({'rc': rc, 'tvm': 'tvm' in sys.modules, 'server': "
            "getattr(forkserver._forkserver, '_forkserver_pid', None) is not None}))\n")
    env = {**os.environ, "PYTHONPATH": str(root)}
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, timeout=600)
    assert json.loads(first.stdout.splitlines()[-1])["rc"] == 0, first.stderr
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, timeout=600)
    lines = again.stdout.splitlines()
    assert json.loads(lines[-1]) == {"rc": 0, "tvm": False, "server": False}, again.stderr
    assert any(ln.startswith("nothing new: the study already holds 2 trials") for ln in lines)
