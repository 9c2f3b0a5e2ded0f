"""A throwaway PostgreSQL server for tests and benchmarks: ``initdb`` in a temporary folder,
``pg_ctl start`` on 127.0.0.1 and a free port, ``stop`` removes everything.

``initdb`` refuses to run as root, so as root the server runs as an unprivileged user
(``postgres`` when the Debian package made it, else ``nobody``) via ``setpriv``-like privilege
dropping in the child (``subprocess``'s ``user``/``group``). The server binaries are found on
``PATH`` or in ``/usr/lib/postgresql/<version>/bin`` (Debian's ``postgresql-NN`` packages).

    with PgServer() as pg:
        url = pg.create_database("scratch")   # postgresql+psycopg://...@127.0.0.1:PORT/scratch
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

#: Database user the server is initialized with (no password: trust on 127.0.0.1 only).
SUPERUSER = "vtatune"


class PgServerError(RuntimeError):
    """The server could not be found, initialized or started (the message says why)."""


def find_bin(name: str) -> str:
    """Path of a PostgreSQL server program (``initdb``, ``pg_ctl``, ``postgres``)."""
    found = shutil.which(name)
    if found:
        return found
    for path in sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True):
        return path
    raise PgServerError(f"{name} not found on PATH or in /usr/lib/postgresql/*/bin "
                        "(install the postgresql server package, e.g. postgresql-15)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _unprivileged() -> tuple[int, int] | None:
    """(uid, gid) to run the server as, or None to run as ourselves (not root)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pw = pwd.getpwnam(name)
        except KeyError:
            continue
        return pw.pw_uid, pw.pw_gid
    raise PgServerError("running as root and no unprivileged user (postgres, nobody) exists")


class PgServer:
    """One PostgreSQL server in a temporary folder (see the module docstring)."""

    def __init__(self, base: str | Path | None = None):
        self.port = 0
        self._base = Path(tempfile.mkdtemp(prefix="vtatune-pg-", dir=base))
        self.datadir = self._base / "data"
        self.socketdir = self._base / "run"
        self._user = _unprivileged()
        self.started = False

    def _run(self, args: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        extra: dict[str, Any] = {}
        if self._user is not None:
            extra = {"user": self._user[0], "group": self._user[1], "extra_groups": []}
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C"
        return subprocess.run(args, capture_output=True, text=True, env=env, cwd=self._base,
                              **extra, **kw)

    def start(self) -> PgServer:
        """initdb + pg_ctl start; ``PgServerError`` with the server's own message on failure."""
        self.socketdir.mkdir(parents=True, exist_ok=True)
        if self._user is not None:
            self._base.chmod(0o755)
            for p in (self._base, self.socketdir):
                os.chown(p, *self._user)
        res = self._run([find_bin("initdb"), "-D", str(self.datadir), "-U", SUPERUSER,
                         "--auth=trust", "--no-sync", "-E", "UTF8"], timeout=120)
        if res.returncode != 0:
            raise PgServerError(f"initdb failed: {res.stderr.strip() or res.stdout.strip()}")
        last = ""
        for _ in range(5):  # a port taken between choosing and binding: try another
            self.port = _free_port()
            opts = (f"-h 127.0.0.1 -p {self.port} -k {self.socketdir} -c fsync=off "
                    "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
            res = self._run([find_bin("pg_ctl"), "-D", str(self.datadir), "-o", opts, "-w",
                             "-t", "60", "-l", str(self._base / "server.log"), "start"],
                            timeout=90)
            if res.returncode == 0:
                self.started = True
                return self
            last = res.stderr.strip() or res.stdout.strip()
            log = self._base / "server.log"
            if log.exists():
                last += " | " + log.read_text()[-500:]
        raise PgServerError(f"pg_ctl start failed: {last}")

    def url(self, database: str = "postgres") -> str:
        """SQLAlchemy URL of ``database`` on this server."""
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Create database ``name`` (a plain identifier) and return its URL."""
        import psycopg

        if not name.replace("_", "").isalnum():
            raise ValueError(f"not a plain database name: {name!r}")
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user={SUPERUSER} "
                             "dbname=postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        """Stop the server (immediately) and remove its folder."""
        if self.started:
            self._run([find_bin("pg_ctl"), "-D", str(self.datadir), "-m", "immediate", "-w",
                       "stop"], timeout=60)
            self.started = False
        shutil.rmtree(self._base, ignore_errors=True)

    def kill(self) -> None:
        """Stop the server abruptly, keeping its data (a server that goes away)."""
        if self.started:
            self._run([find_bin("pg_ctl"), "-D", str(self.datadir), "-m", "immediate", "-w",
                       "stop"], timeout=60)
            self.started = False

    def restart(self) -> None:
        """Start the stopped server again on the same port and data."""
        opts = (f"-h 127.0.0.1 -p {self.port} -k {self.socketdir} -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        res = self._run([find_bin("pg_ctl"), "-D", str(self.datadir), "-o", opts, "-w", "-t",
                         "60", "-l", str(self._base / "server.log"), "start"], timeout=90)
        if res.returncode != 0:
            raise PgServerError(f"pg_ctl start failed: {res.stderr.strip()}")
        self.started = True

    def __enter__(self) -> PgServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def wait_ready(url: str, timeout_s: float = 30.0) -> None:
    """Block until ``url`` accepts connections."""
    import psycopg

    deadline = time.monotonic() + timeout_s
    conninfo = url.replace("postgresql+psycopg://", "postgresql://")
    while True:
        try:
            psycopg.connect(conninfo, connect_timeout=2).close()
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
