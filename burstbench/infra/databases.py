"""Throwaway database servers for the broker's JDBC store: PostgreSQL and MariaDB.

Each server gets a fresh directory under the work directory, a free loopback port, a generated
password for user ``bench`` and a database ``activemq``; it runs in the foreground under the
``Supervisor`` (so Ctrl-C or even SIGKILL of the harness stops it) and is ready when a real
login with that password succeeds. Nothing of a system-wide server is used: own data
directory, own port, no shared socket, no configuration file read.

Derby needs no server: ``derby_jdbc`` gives the embedded driver's settings.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from burstbench.infra import secret
from burstbench.infra.brokers import free_port, port_accepts
from burstbench.infra.procs import Child, Supervisor, die_with_parent, popen_ids

KINDS = ("postgres", "mariadb")
DB_NAME = "activemq"
DB_USER = "bench"
PG_OS_USER = "postgres"  # PostgreSQL refuses to run as root
PG_FALLBACK_BINDIRS = ("/usr/lib/postgresql/*/bin", "/usr/local/pgsql/bin")
MARIADB_SBIN = ("/usr/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin")


class DatabaseError(RuntimeError):
    """A database server could not be prepared or started."""


@dataclass
class Database:
    """A running throwaway server. ``data_dir`` holds everything of it and goes at ``stop``."""

    kind: str
    host: str
    port: int
    user: str
    password: str
    name: str
    child: Child
    data_dir: Path
    ready_s: float = 0.0  # from start() to the first successful login, initialisation included
    init_s: float = 0.0  # of which initialising the data directory
    wrap: list[str] = field(default_factory=list)
    link: Path | None = None  # workdir entry pointing at data_dir when it had to live elsewhere

    def jdbc(self) -> dict:
        """Settings for ``BrokerSpec.jdbc``: driver, url, user, password and, where ActiveMQ
        does not recognise the driver by itself, the xbean element of its ``adapter``."""
        if self.kind == "postgres":
            return {
                "driver": "org.postgresql.Driver",
                "url": f"jdbc:postgresql://{self.host}:{self.port}/{self.name}",
                "user": self.user,
                "password": self.password,
            }
        # ActiveMQ picks its adapter by the driver's name; "MariaDB Connector/J" is not in
        # activemq-jdbc-store's table and would get the generic DefaultJDBCAdapter
        return {
            "driver": "org.mariadb.jdbc.Driver",
            "url": f"jdbc:mariadb://{self.host}:{self.port}/{self.name}",
            "user": self.user,
            "password": self.password,
            "adapter": "mysql-jdbc-adapter",
        }


def derby_jdbc(data_dir: Path) -> dict:
    """Settings for an embedded Derby store in ``data_dir`` (created on first use)."""
    return {
        "driver": "org.apache.derby.jdbc.EmbeddedDriver",
        "url": f"jdbc:derby:{Path(data_dir).resolve()};create=true",
        "user": "",
        "password": "",
    }


# -- finding the programs -------------------------------------------------------------------
def postgres_bindir() -> Path | None:
    """The directory of ``initdb``/``postgres``/``psql``: ``pg_config --bindir``, else the
    newest Debian-style ``/usr/lib/postgresql/N/bin``."""
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=True
            ).stdout.strip()
            if out and (Path(out) / "postgres").exists():
                return Path(out)
        except (OSError, subprocess.SubprocessError):
            pass
    found = []
    for pattern in PG_FALLBACK_BINDIRS:
        for d in Path("/").glob(pattern.lstrip("/")):
            if (d / "postgres").exists():
                found.append(d)

    def version(d: Path) -> tuple:
        return tuple(int(p) if p.isdigit() else 0 for p in d.parent.name.split("."))

    return max(found, key=version) if found else None


def _mariadb_tools() -> dict[str, str] | None:
    tools = {}
    for name, alts in (
        ("server", ("mariadbd", "mysqld")),
        ("install", ("mariadb-install-db", "mysql_install_db")),
        ("client", ("mariadb", "mysql")),
    ):
        path = None
        for alt in alts:
            path = shutil.which(alt) or next(
                (str(Path(d) / alt) for d in MARIADB_SBIN if (Path(d) / alt).exists()), None
            )
            if path:
                break
        if not path:
            return None
        tools[name] = path
    return tools


def missing(kind: str) -> str | None:
    """Why a ``kind`` server cannot be started here, or None if it can."""
    if kind == "postgres":
        bindir = postgres_bindir()
        if bindir is None:
            return "PostgreSQL server binaries not found (apt-get install postgresql)"
        for prog in ("initdb", "postgres", "psql"):
            if not (bindir / prog).exists():
                return f"{bindir / prog} not found"
        if os.geteuid() == 0:
            try:
                pwd.getpwnam(PG_OS_USER)
            except KeyError:
                return f"running as root and there is no {PG_OS_USER!r} account to run PostgreSQL"
        return None
    if kind == "mariadb":
        if _mariadb_tools() is None:
            return "MariaDB server binaries not found (apt-get install mariadb-server)"
        return None
    return f"unknown database kind {kind!r} (expected one of {', '.join(KINDS)})"


# -- starting and stopping ------------------------------------------------------------------
def start(
    sup: Supervisor,
    kind: str,
    workdir: Path,
    host: str = "127.0.0.1",
    wrap: list[str] | None = None,
    timeout: float = 60,
) -> Database:
    """Initialise a fresh ``kind`` server under ``workdir``, run it under ``sup`` on a free port
    of ``host`` and wait until user ``bench`` can log in to database ``activemq``.

    ``wrap`` prefixes the server's command (e.g. ``ip netns exec NS``); the readiness login
    runs under it too. Retries with a new port if the chosen one was taken meanwhile. If the
    server's account (``postgres`` when running as root) cannot reach ``workdir``, the data
    directory is made in the system temp directory with a symlink to it in ``workdir``: call
    ``stop`` to remove it.
    """
    why = missing(kind)
    if why:
        raise DatabaseError(why)
    t0 = time.monotonic()
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    password = secret.throwaway(24)
    wrap = list(wrap or [])
    run_as = PG_OS_USER if kind == "postgres" and os.geteuid() == 0 else None
    data_dir, link = _fresh_dir(workdir, kind, run_as)
    try:
        prepare = _prepare_postgres if kind == "postgres" else _prepare_mariadb
        argv_for = prepare(data_dir, password, run_as)
        init_s = time.monotonic() - t0
        last = ""
        for attempt in range(3):
            port = free_port(host if not wrap else "127.0.0.1")
            argv = argv_for(host, port)
            if wrap and run_as:
                # the wrapper (ip netns exec) needs root, so drop to the account after it;
                # setpriv re-arms the parent-death signal that the uid change clears
                argv = [
                    "setpriv",
                    f"--reuid={run_as}",
                    f"--regid={run_as}",
                    "--init-groups",
                    "--pdeathsig=KILL",
                    "--",
                    *argv,
                ]
            child = sup.start(
                f"db-{data_dir.name}" + (f"-try{attempt}" if attempt else ""),
                wrap + argv,
                role="database",
                user=None if wrap else run_as,
            )
            db = Database(
                kind=kind,
                host=host,
                port=port,
                user=DB_USER,
                password=password,
                name=DB_NAME,
                child=child,
                data_dir=data_dir,
                init_s=init_s,
                wrap=wrap,
                link=link,
            )
            try:
                _wait_ready(db, t0 + timeout)
            except DatabaseError as e:
                last = str(e)
                _stop_server(sup, db)
                if "in use" not in last.lower():
                    raise
                continue
            db.ready_s = time.monotonic() - t0
            if kind == "mariadb":
                (data_dir / "init.sql").unlink(missing_ok=True)  # it holds the password
            return db
        raise DatabaseError(last)
    except BaseException:
        _remove(data_dir, link)
        raise


def stop(sup: Supervisor, db: Database) -> None:
    """Stop the server (waiting until it has exited) and remove its data directory."""
    _stop_server(sup, db)
    _remove(db.data_dir, db.link)


def login(db: Database, password: str | None = None, timeout: float = 10.0):
    """One real login as ``db.user`` to ``db.name`` over TCP with ``password`` (default: the
    right one) running ``SELECT 1``; returns the client's ``CompletedProcess``."""
    return query(db, "SELECT 1", password, timeout)


def query(db: Database, sql: str, password: str | None = None, timeout: float = 10.0):
    """Run ``sql`` with the command-line client over TCP as ``db.user``; returns the
    ``CompletedProcess`` (rows on stdout, tab-separated, no headers)."""
    pw = db.password if password is None else password
    env = {**os.environ}
    # passwords go through the environment, never the command line (visible in ps)
    if db.kind == "postgres":
        argv = [str(postgres_bindir() / "psql"), "-X", "-w", "-A", "-t", "-F", "\t"]
        argv += ["-h", db.host, "-p", str(db.port), "-U", db.user, "-d", db.name, "-c", sql]
        env.update(PGPASSWORD=pw, PGCONNECT_TIMEOUT=str(max(2, int(timeout))), PGSSLMODE="disable")
    else:
        argv = [_mariadb_tools()["client"], "--no-defaults", "--protocol=TCP", "-N", "-s"]
        argv += ["-h", db.host, "-P", str(db.port), "-u", db.user, "-D", db.name]
        argv += [f"--connect-timeout={max(2, int(timeout))}", "-e", sql]
        env["MYSQL_PWD"] = pw
    return subprocess.run(
        db.wrap + argv,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        preexec_fn=die_with_parent, check=False,
    )


# -- PostgreSQL -----------------------------------------------------------------------------
def _prepare_postgres(data_dir: Path, password: str, run_as: str | None):
    bindir = postgres_bindir()
    pgdata = data_dir / "data"
    pwfile = data_dir / "pwfile"
    try:
        _write_private(pwfile, password + "\n", run_as)
        _run(
            [
                str(bindir / "initdb"),
                "-D",
                str(pgdata),
                "-U",
                DB_USER,
                f"--pwfile={pwfile}",
                "--auth-host=scram-sha-256",
                "--auth-local=scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-instructions",
                # initdb's own fsync of a directory thrown away afterwards buys nothing; the
                # server itself runs with fsync=on
                "--no-sync",
            ],
            "initdb",
            run_as,
        )
    finally:
        pwfile.unlink(missing_ok=True)
    # single-user mode: the database exists before any port is open
    out = _run(
        [str(bindir / "postgres"), "--single", "-j", "-D", str(pgdata), "postgres"],
        "postgres --single",
        run_as,
        input=f"CREATE DATABASE {DB_NAME} OWNER {DB_USER};\n",
    )
    if "ERROR" in out:
        raise DatabaseError(f"creating database {DB_NAME} failed: {out[-1000:]}")

    def argv_for(host: str, port: int) -> list[str]:
        return [
            str(bindir / "postgres"),
            "-D",
            str(pgdata),
            "-p",
            str(port),
            "-h",
            host,
            # no Unix socket at all: nothing shared with a system server, no path-length limit
            "-k",
            "",
            # durability as in production, whatever a default says
            "-c",
            "fsync=on",
            "-c",
            "synchronous_commit=on",
            "-c",
            "full_page_writes=on",
            "-c",
            "wal_sync_method=fdatasync",
            "-c",
            "max_connections=100",
            "-c",
            "shared_buffers=128MB",
            "-c",
            "logging_collector=off",
            "-c",
            "log_destination=stderr",
        ]

    return argv_for


# -- MariaDB --------------------------------------------------------------------------------
def _prepare_mariadb(data_dir: Path, password: str, run_as: str | None):
    tools = _mariadb_tools()
    datadir = data_dir / "data"
    root = ["--user=root"] if os.geteuid() == 0 else []
    _run(
        [
            tools["install"],
            "--no-defaults",
            f"--datadir={datadir}",
            *root,
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
        ],
        "mariadb-install-db",
        None,
    )
    # run at every start of the server, hence idempotent. The install creates root accounts
    # without a password for 127.0.0.1 and ::1: drop every account but the internal one,
    # root@localhost (reachable only through the socket in our 0700 directory) and ours.
    init = data_dir / "init.sql"
    q = password.replace("\\", "\\\\").replace("'", "\\'")
    _write_private(
        init,
        "\n".join(
            [
                ("DELETE FROM mysql.global_priv WHERE NOT (User = 'mariadb.sys'"
                " OR (User = 'root' AND Host = 'localhost'));"),
                "DELETE FROM mysql.proxies_priv WHERE NOT (User = 'root' AND Host = 'localhost');",
                "FLUSH PRIVILEGES;",
                f"CREATE DATABASE IF NOT EXISTS {DB_NAME};",
                f"CREATE USER IF NOT EXISTS '{DB_USER}'@'127.0.0.1' IDENTIFIED BY '{q}';",
                f"CREATE USER IF NOT EXISTS '{DB_USER}'@'%' IDENTIFIED BY '{q}';",
                f"GRANT ALL ON {DB_NAME}.* TO '{DB_USER}'@'127.0.0.1';",
                f"GRANT ALL ON {DB_NAME}.* TO '{DB_USER}'@'%';",
                "",
            ]
        ),
        None,
    )

    def argv_for(host: str, port: int) -> list[str]:
        return [
            tools["server"],
            "--no-defaults",
            f"--datadir={datadir}",
            f"--port={port}",
            f"--bind-address={host}",
            # relative to the data directory (the server's working directory): short enough
            # for a socket path wherever the work directory is
            "--socket=mariadbd.sock",
            f"--pid-file={datadir / 'mariadbd.pid'}",
            *root,
            "--skip-log-bin",
            "--skip-name-resolve",
            f"--init-file={init}",
            "--innodb-flush-log-at-trx-commit=1",
            "--innodb-buffer-pool-size=128M",
        ]

    return argv_for


# -- helpers --------------------------------------------------------------------------------
def _fresh_dir(workdir: Path, kind: str, owner: str | None) -> tuple[Path, Path | None]:
    """A new 0700 directory for the server, owned by ``owner``. It is under ``workdir`` if
    ``owner`` can reach that; otherwise (e.g. pytest's 0700 /tmp/pytest-of-root) it is under
    the system temp directory and ``workdir`` gets a symlink to it."""
    if owner is None or _reachable(workdir, owner):
        d = Path(tempfile.mkdtemp(prefix=f"{kind}-", dir=workdir))
        link = None
    else:
        base = Path(tempfile.gettempdir())
        if not _reachable(base, owner):
            raise DatabaseError(f"user {owner} can reach neither {workdir} nor {base}")
        d = Path(tempfile.mkdtemp(prefix=f"burstbench-{kind}-", dir=base))
        link = workdir / d.name
        link.symlink_to(d, target_is_directory=True)
    if owner is not None:
        pw = pwd.getpwnam(owner)
        os.chown(d, pw.pw_uid, pw.pw_gid)
    return d, link


def _reachable(path: Path, user: str) -> bool:
    r = subprocess.run(
        ["test", "-x", str(path)],
        user=user,
        group=pwd.getpwnam(user).pw_gid,
        extra_groups=[],
        capture_output=True,
        timeout=10, check=False,
    )
    return r.returncode == 0


def _write_private(path: Path, text: str, owner: str | None) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    if owner is not None:
        pw = pwd.getpwnam(owner)
        os.chown(path, pw.pw_uid, pw.pw_gid)


def _run(argv: list[str], what: str, user: str | None, input: str | None = None) -> str:
    ids = popen_ids(user)
    try:
        r = subprocess.run(
            argv,
            input=input,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=None if input is not None else subprocess.DEVNULL,
            preexec_fn=die_with_parent,
            **ids, check=False,
        )
    except FileNotFoundError as e:
        raise DatabaseError(f"{what}: {e.filename} not found") from e
    except subprocess.TimeoutExpired as e:
        raise DatabaseError(f"{what} did not finish in {e.timeout:.0f} s") from e
    if r.returncode != 0:
        raise DatabaseError(f"{what} failed ({r.returncode}): {(r.stderr or r.stdout)[-2000:]}")
    return r.stdout + r.stderr


def _wait_ready(db: Database, deadline: float) -> None:
    last = ""
    while True:
        if not db.child.alive():
            time.sleep(0.1)  # let the stderr reader catch the last lines
            raise DatabaseError(
                f"{db.kind} exited with {db.child.returncode} before ready: {_why(db.child)} "
                f"(log: {db.child.log_path})"
            )
        if time.monotonic() > deadline:
            raise DatabaseError(
                f"{db.kind} not ready in time ({last.strip()[-300:]}) (log: {db.child.log_path})"
            )
        # a cheap TCP connect first; a login only once something listens
        if db.wrap or port_accepts(db.host, db.port, timeout=0.2):
            try:
                r = login(db, timeout=max(2.0, min(10.0, deadline - time.monotonic())))
                if r.returncode == 0 and r.stdout.strip() == "1":
                    return
                last = r.stderr
            except subprocess.TimeoutExpired:
                last = "login timed out"
        time.sleep(0.1)


def _why(child: Child) -> str:
    for line in reversed(child.stderr_tail):
        low = line.lower()
        if "address already in use" in low:
            return "port in use: " + line
    for line in reversed(child.stderr_tail):
        if "ERROR" in line or "FATAL" in line:
            return line
    return child.last_error()


def _stop_server(sup: Supervisor, db: Database) -> None:
    if db.child.alive() and db.kind == "postgres":
        # SIGINT is PostgreSQL's fast shutdown (SIGTERM, the Supervisor's, is the smart one
        # that waits for clients); the Supervisor's stop then only waits and reaps
        try:
            os.kill(db.child.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 10
        while db.child.alive() and time.monotonic() < deadline:
            time.sleep(0.02)
    sup.stop(db.child)
    deadline = time.monotonic() + 5
    while db.child.alive() and time.monotonic() < deadline:
        time.sleep(0.02)


def _remove(data_dir: Path, link: Path | None) -> None:
    shutil.rmtree(data_dir, ignore_errors=True)
    if link is not None:
        try:
            link.unlink()
        except FileNotFoundError:
            pass
