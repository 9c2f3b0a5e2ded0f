"""Read-only databases: readers never write, never create files, work in read-only folders."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import WORKLOAD, record

from vtatune.store import Store, StoreError

ROOT = Path(__file__).parents[2]


def _fill(url: str) -> None:
    store = Store(url)
    store.create_or_load_study("s", WORKLOAD, {}, "random", "area-latency", "pynq-z1", 0)
    for i in range(3):
        rec = record(i)
        store.save(rec)
        store.add_trial("s", i, rec.key, "random", {"i": i}, False)
    store.close()


def _beside(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir())


def test_a_reader_creates_no_file_beside_the_database(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    _fill(f"sqlite:///{path}")
    assert _beside(path) == ["r.sqlite"]
    store = Store(f"sqlite:///{path}", readonly=True)
    assert [s.n_trials for s in store.studies()] == [3]
    assert len(store.trials("s")) == 3 and store.lookup(record(1).key) is not None
    store.close()
    assert _beside(path) == ["r.sqlite"]


def test_a_reader_sees_a_live_writer(tmp_path: Path) -> None:
    path = tmp_path / "live.sqlite"
    url = f"sqlite:///{path}"
    _fill(url)
    writer = Store(url)
    writer.save(record(10))  # the writer keeps the file open: -wal/-shm exist
    assert Path(f"{path}-wal").exists()
    reader = Store(url, readonly=True)
    assert reader.lookup(record(10).key) is not None
    writer.save(record(11))
    assert reader.lookup(record(11).key) is not None  # not a stale immutable snapshot


def test_a_reader_refuses_to_write(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    _fill(f"sqlite:///{path}")
    with pytest.raises(StoreError, match="read-only"):
        Store(f"sqlite:///{path}", readonly=True).save(record(5))


def test_a_missing_database_is_not_created_by_a_reader(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot open"):
        Store(f"sqlite:///{tmp_path / 'nope.sqlite'}", readonly=True)
    assert not any(tmp_path.iterdir())


#: Linux capabilities that let root ignore file permissions (capability.h).
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER = 1, 2, 3
PR_CAPBSET_DROP = 24


def _bound_by_permissions() -> None:
    """In the child, before exec: drop the capabilities that let root ignore permissions, so
    a read-only file or folder is read-only to it as to any user."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@pytest.fixture()
def locked_folder() -> Iterator[tuple[Path, bool]]:
    """A database (mode 444) in a folder (mode 555) its reader cannot write.

    As root (CI), permissions do not bind: the reader runs without the capabilities that
    override them.
    """
    base = Path(tempfile.mkdtemp(prefix="vt-ro-"))
    base.chmod(0o755)
    folder = base / "db"
    folder.mkdir()
    path = folder / "ro.sqlite"
    _fill(f"sqlite:///{path}")
    path.chmod(0o444)
    folder.chmod(0o555)
    try:
        yield path, os.geteuid() == 0
    finally:
        folder.chmod(0o755)
        shutil.rmtree(base)


def _vtatune(args: list[str], root: bool) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "vtatune", *args], capture_output=True,
                          text=True, env=env, timeout=120,
                          preexec_fn=_bound_by_permissions if root else None)


def test_studies_and_show_in_a_read_only_folder(locked_folder) -> None:
    path, user = locked_folder
    db = f"sqlite:///{path}"
    for args in (["studies", "--db", db], ["show", "s", "--db", db],
                 ["studies", "--db", db, "--json"]):
        res = _vtatune(args, user)
        assert res.returncode == 0, res.stderr
        assert "error" not in res.stderr
    assert _beside(path) == ["ro.sqlite"]
    # a writer gets one clear line, not a traceback
    res = _vtatune(["search", "dense", "--shape", "16,64,64", "--trials", "1", "--db", db,
                    "--study", "s2", "--workers", "1"], user)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.startswith("vtatune: error:") and len(res.stderr.splitlines()) == 1


@pytest.fixture()
def locked_file() -> Iterator[tuple[Path, bool]]:
    """A database (mode 444) in a folder its reader can write (as ``locked_folder``)."""
    base = Path(tempfile.mkdtemp(prefix="vt-ro-"))
    base.chmod(0o755)
    path = base / "ro.sqlite"
    _fill(f"sqlite:///{path}")
    path.chmod(0o444)
    try:
        yield path, os.geteuid() == 0
    finally:
        shutil.rmtree(base)


@pytest.mark.parametrize("target", [["dense", "--shape", "16,64,64"], ["resnet18"]])
def test_a_search_on_a_read_only_file_is_one_line(locked_file, target) -> None:
    path, user = locked_file
    before = path.read_bytes()
    res = _vtatune(["search", *target, "--trials", "1", "--db", str(path), "--workers", "1"],
                   user)
    # refused before the progress header: one line, naming the database
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.startswith(f"vtatune: error: database 'sqlite:///{path}'")
    assert "readonly" in res.stderr and len(res.stderr.splitlines()) == 1
    assert path.read_bytes() == before
    # reading it is fine
    res = _vtatune(["studies", "--db", str(path)], user)
    assert res.returncode == 0 and not res.stderr, res.stderr


def test_check_writable(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'w.sqlite'}"
    _fill(url)
    Store(url).check_writable()  # a writable file: nothing raised, nothing changed
    assert [s.n_trials for s in Store(url).studies()] == [3]
    with pytest.raises(StoreError, match="read-only"):
        Store(url, readonly=True).check_writable()
