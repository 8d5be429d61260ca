"""Brokers the harness did not start (``--broker-url``): their URLs, what they say they are,
and a second witness of their counters.

An outside broker is used as it is: never configured, started or stopped. The counters of
the run's queues, the witness beside the clients' records, come from the first source it
offers:

- ``jolokia``: the broker's admin URL given with ``--broker-admin`` (Jolokia, HTTP POST with the
  console's user and password, as ActiveMQ Classic's and Artemis's consoles ship it);
- ``statistics-plugin``: Classic's ``statisticsBrokerPlugin``, asked over STOMP;
- ``none``: a stock broker offers neither without an admin URL; the point is then judged on
  the clients' exact accounting alone and says "no second witness".

A witness the point has and that disagrees fails it; the lack of one never does.

A secured broker is reached with its own login and trust: ``--user`` (the password from
``--password-file`` or BURSTBENCH_PASSWORD, handed to the clients in their environment, never
on a command line nor in a result) and ``--ca`` (the bundle its certificates are checked
against). ``--tls`` and ``--auth`` say what the connections use, so they are refused unless the
URLs and the login make them true; a point records what its connections used.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from burstbench.errors import OutsideError
from burstbench.infra.jolokia import Jolokia

WITNESSES = ("launcher", "jolokia", "statistics-plugin", "none")

_SCHEMES = {"tcp": "openwire", "ssl": "openwire", "nio": "openwire", "failover": "openwire",
            "stomp": "stomp", "stomp+ssl": "stomp", "ws": "ws", "wss": "ws"}


@dataclass
class External:
    """A broker given by ``--broker-url``: used, never configured, started or stopped."""

    name: str
    urls: dict[str, str]  # protocol -> URL
    version: str = "unknown"
    product: str = "unknown"  # "ActiveMQ Classic" or "ActiveMQ Artemis" when it says so
    statistics: dict = field(default_factory=dict)
    admin: Jolokia | None = None
    witness: str = "none"  # which of WITNESSES reads its counters
    child: None = None
    ca: str | None = None  # the CA bundle its TLS certificates are checked against
    cert: tuple[str, str] | None = None  # the clients' certificate and key (mutual TLS)

    def url_for(self, protocol: str) -> str:
        from burstbench.infra.brokers import BrokerError

        try:
            return self.urls[protocol]
        except KeyError:
            raise BrokerError(f"external broker {self.name} has no {protocol} URL "
                              f"(give one in --broker-url)") from None

    def store_bytes(self) -> int:
        return 0

    def describe(self) -> dict:
        """What the result file says of it (no credentials)."""
        return {"urls": self.urls, "version": self.version, "product": self.product,
                "statistics": self.statistics, "witness": self.witness,
                **({"admin": self.admin.url} if self.admin else {})}

    def queue_counts(self, prefix: str, user: str | None = None,
                     password: str | None = None, queues: int = 0) -> dict | None:
        """The run's queues' counters from its witness, ``{"error": ...}`` when a witness it
        has cannot be read, None when it has none. ``queues``: how many the run has, when
        known (the statistics plugin's replies have no end marker)."""
        if self.witness == "jolokia":
            return self.admin.queue_counts(prefix)
        if self.witness == "statistics-plugin":
            return plugin_queue_counts(self, prefix, user, password, queues=queues)
        return None


def parse_external(name: str, text: str) -> External:
    """``tcp://h:61616,stomp://h:61613,ws://h:61614/`` -> an External (ValueError if bad)."""
    urls: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        scheme = part.split("://", 1)[0].split(":", 1)[0].lower()
        if "://" not in part and not part.startswith("failover:"):
            raise ValueError(f"--broker-url: {part!r} is not a URL (scheme://host:port)")
        proto = _SCHEMES.get(scheme)
        if proto is None:
            raise ValueError(f"--broker-url: unknown scheme {scheme!r} in {part!r} "
                             f"(known: {', '.join(_SCHEMES)})")
        if proto in urls:
            raise ValueError(f"--broker-url: two {proto} URLs for one broker: {text!r}")
        urls[proto] = part
    if not urls:
        raise ValueError("--broker-url: empty")
    return External(name=name, urls=urls)


_TLS_SCHEMES = ("ssl", "stomp+ssl", "wss", "https")


def is_tls(url: str) -> bool:
    """Whether a broker URL connects over TLS (``failover:(...)``: every address in it)."""
    if url.startswith("failover:"):
        inner = url.removeprefix("failover:").strip("()").split("?")[0]
        return all(is_tls(u.strip()) for u in inner.split(",") if u.strip())
    return url.split("://", 1)[0].lower() in _TLS_SCHEMES


def _secret(path: str, env: str) -> str | None:
    """A password from the file ``path`` (its line), else the environment variable ``env``,
    else None: never from a command line."""
    import os
    from pathlib import Path

    return Path(path).read_text().strip("\r\n") if path else os.environ.get(env)


def login_password(spec) -> str | None:
    """The ``--user``'s password: from ``--password-file``, else BURSTBENCH_PASSWORD."""
    return _secret(spec.password_file, "BURSTBENCH_PASSWORD")


def external(name: str, text: str, spec) -> External:
    """``parse_external`` with the point's trust and client certificate on it."""
    ext = parse_external(name, text)
    ext.ca = spec.ca or None
    ext.cert = (spec.cert, spec.key) if spec.cert else None
    return ext


def check_login(spec) -> None:
    """ValueError (one line) unless the point's login and trust options make sense: they are
    for ``--broker-url`` brokers; ``--tls`` there needs TLS URLs only and ``--auth`` a
    ``--user``, whose password must be there. The labels then say what the connections use:
    a point on TLS URLs is a TLS point, one with a ``--user`` a point with a login."""
    from pathlib import Path

    if not spec.broker_urls:
        if spec.user or spec.password_file or spec.ca or spec.cert or spec.key:
            raise ValueError("--user, --password-file, --ca, --cert and --key are for a broker "
                             "given with --broker-url (the bench's own brokers: --auth and "
                             "--tls)")
        return
    if bool(spec.cert) != bool(spec.key):
        raise ValueError("--cert and --key must be given together")
    for opt, f in (("--password-file", spec.password_file), ("--ca", spec.ca),
                   ("--cert", spec.cert), ("--key", spec.key)):
        if f and not Path(f).is_file():
            raise ValueError(f"{opt}: no such file: {f}")
    urls = [u for text in spec.broker_urls for u in parse_external("x", text).urls.values()]
    plain = [u for u in urls if not is_tls(u)]
    if spec.tls and plain:
        raise ValueError(f"--tls with --broker-url: {plain[0]} is not a TLS URL (give the "
                         "broker's ssl://, stomp+ssl:// and wss:// URLs, and --ca if its CA is "
                         "not in the system's trust store)")
    if spec.auth and not spec.user:
        raise ValueError("--auth with --broker-url: the bench cannot make up a login for a "
                         "broker it did not start: give --user (its password from "
                         "--password-file or BURSTBENCH_PASSWORD)")
    if spec.user and login_password(spec) is None:
        raise ValueError(f"--user {spec.user}: no password (give --password-file FILE or set "
                         "BURSTBENCH_PASSWORD)")
    for opt, given in (("--ca", spec.ca), ("--cert", spec.cert)):
        if given and not any(is_tls(u) for u in urls):
            raise ValueError(f"{opt}: none of the --broker-url URLs is a TLS one (ssl://, "
                             "stomp+ssl://, wss://)")
    spec.tls = not plain
    spec.auth = bool(spec.user)


def connections(urls: list[str], user: str | None, trust: str,
                cert: str | None = None, tls_said: dict[str, str | None] | None = None) -> dict:
    """What the point's connections used, by scheme: TLS or not, a login or not, what the
    clients checked the broker's certificate against (``trust``, when a URL is TLS), whether
    they showed a certificate of their own, and the TLS versions the clients said their
    connections negotiated (``tls_said``: client -> its ready line's ``tls``), with the clients
    that said none (a browser page cannot see its socket)."""
    schemes = sorted({u.split("://", 1)[0].split("(", 1)[0].lower() for u in urls})
    tls = any(is_tls(u) for u in urls)
    out = {"schemes": schemes, "tls": bool(urls) and all(is_tls(u) for u in urls),
           "login": user is not None, "trust": trust if tls else None,
           "client_certificate": bool(cert) and tls}
    if tls and tls_said is not None:
        # Perl's IO::Socket::SSL says TLSv1_3 where Python, Node and Java say TLSv1.3
        said = {c: v.replace("_", ".") for c, v in tls_said.items() if v}
        out["tls_versions"] = sorted(set(said.values()))
        out["tls_unreported"] = sorted(c for c in tls_said if c not in said)
    return out


def check_admin_url(text: str) -> None:
    """ValueError (one line) unless ``text`` is an http(s) URL without a password in it."""
    u = urlsplit(text)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ValueError(f"--broker-admin: {text!r} is not an http:// or https:// URL "
                         "(e.g. http://127.0.0.1:8161/api/jolokia)")
    if u.password is not None or u.username is not None:
        raise ValueError("--broker-admin: give the user with --admin-user and the password in "
                         "a file (--admin-password-file) or BURSTBENCH_ADMIN_PASSWORD, not in "
                         "the URL (it would be written to the result)")


def admins(spec) -> list[Jolokia]:
    """The point's ``--broker-admin`` endpoints, in the order of its brokers, with the console
    user and its password (from ``--admin-password-file``, else BURSTBENCH_ADMIN_PASSWORD;
    never from the command line, never recorded)."""
    password = _secret(spec.admin_password_file, "BURSTBENCH_ADMIN_PASSWORD")
    return [Jolokia(url, spec.admin_user or None, password, ca=spec.ca or None)
            for url in spec.broker_admin]


def preflight(spec) -> None:
    """Before a run starts: every admin URL answers and takes the console's login, and every
    broker with a STOMP URL takes the clients' login (and, over TLS, its certificate checks
    out against ``--ca`` or the system's trust store); OutsideError, one line, otherwise, so
    that a wrong password or CA costs no run."""
    for admin in admins(spec):
        admin.connect()
    try:
        pw = login_password(spec) if spec.user else None
    except OSError as e:
        raise OutsideError(f"--password-file: {e.strerror}: {spec.password_file}") from None
    for i, text in enumerate(spec.broker_urls):
        check_stomp_login(external(f"#{i + 1}", text, spec), spec.user or None, pw)


def check_stomp_login(ext: External, user: str | None, password: str | None,
                      timeout: float = 10.0) -> None:
    """A STOMP connection to the broker with the clients' login, then gone; OutsideError
    naming the URL and the broker's own words when it refuses the login, or stomp.py's when
    the connection itself fails (nothing to try without a STOMP URL: the clients then find
    out). stomp.py's log lines are kept for that one line, not printed."""
    import contextlib
    import logging

    import stomp

    url = ext.urls.get("stomp")
    if not url:
        return
    said: list[str] = []
    logged: list[str] = []

    state = {"connected": False, "gone": False}

    class L(stomp.ConnectionListener):
        def on_error(self, frame):
            said.append(frame.headers.get("message") or str(frame.body)[:200])

        def on_connected(self, frame):
            state["connected"] = True

        def on_disconnected(self):
            state["gone"] = True

    class Keep(logging.Handler):
        def emit(self, record):
            if record.levelno >= logging.WARNING:
                logged.append(record.getMessage())

    log = logging.getLogger("stomp.py")
    keep, propagate = Keep(), log.propagate
    log.addHandler(keep)
    log.propagate = False
    try:
        conn = _stats_connection(urlsplit(url), timeout, L(), ext.ca, ext.cert)
        try:
            # stomp.py's own wait has no end when TLS is closed under it (a broker asking for
            # a client certificate): wait here, up to ``timeout``
            conn.connect(user, password, wait=False)
            deadline = time.monotonic() + timeout
            while not (state["connected"] or state["gone"] or said):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no answer to CONNECT in {timeout:g} s")
                time.sleep(0.05)
            if not state["connected"]:
                raise stomp.exception.ConnectFailedException()
        except Exception as e:  # noqa: BLE001 - whatever it was, the broker cannot be used so
            with contextlib.suppress(Exception):
                conn.disconnect()
            time.sleep(0.2)  # the ERROR frame's words arrive with the close
            if said:
                raise OutsideError(f"--broker-url {url}: the broker refused the login"
                                   + (f" of user {user!r}" if user else "")
                                   + f": {said[0]}") from None
            why = logged[-1] if logged else f"{type(e).__name__}: {e}".rstrip(": ")
            if "CERTIFICATE_VERIFY_FAILED" in why or "certificate verify failed" in why:
                why += " (give the CA bundle that signed it with --ca)"
            elif ext.cert is None and is_tls(url):
                why += (" (a broker that asks for the client's certificate closes a "
                        "connection without one: give --cert and --key)")
            raise OutsideError(f"--broker-url {url}: cannot connect: {why}") from None
        conn.disconnect()
    finally:
        log.removeHandler(keep)
        log.propagate = propagate


def inspect(ext: External, admin: Jolokia | None, user: str | None = None,
            password: str | None = None, timeout: float = 5.0) -> None:
    """What the broker says it is, and which witness reads its counters: Jolokia when an admin
    URL is given (OutsideError when it cannot be read: the user asked for it), else the
    statistics plugin when the broker answers it, else none."""
    _stomp_inspect(ext, user, password, timeout, ask_plugin=admin is None)
    if admin is not None:
        admin.connect()
        ext.admin, ext.witness, ext.product = admin, "jolokia", admin.product
        if ext.version == "unknown" and admin.version:
            ext.version = admin.version
    elif ext.statistics.get("brokerName"):
        ext.witness = "statistics-plugin"
    else:
        ext.witness = "none"


# -- Classic's statistics plugin, over STOMP ------------------------------------------------
_STAT_KEYS = {"enqueueCount": "enqueued", "dequeueCount": "dequeued",
              "dispatchCount": "dispatched", "inflightCount": "inflight",
              "expiredCount": "expired", "size": "size", "consumerCount": "consumers",
              "producerCount": "producers"}


def _stomp_inspect(ext: External, user, password, timeout: float, ask_plugin: bool) -> None:
    """The broker's version (STOMP CONNECTED ``server`` header) and, when asked, whether it
    runs the statistics plugin. A broker without the plugin receives the question as an
    ordinary message: it is sent to expire with the wait, so nothing of it stays behind."""
    import stomp

    url = ext.urls.get("stomp")
    if not url:
        return
    got: dict = {}

    class L(stomp.ConnectionListener):
        def on_connected(self, frame):
            got["server"] = frame.headers.get("server", "")

        def on_message(self, frame):
            got["stats"] = frame.body

    conn = _stats_connection(urlsplit(url), timeout, L(), ext.ca, ext.cert)
    try:
        conn.connect(user, password, wait=True)
        server = got.get("server", "")
        if "/" in server:
            product, rest = server.split("/", 1)
            ext.version = rest.split()[0] if rest.split() else "unknown"
            ext.product = "ActiveMQ Artemis" if "artemis" in product.lower() else "ActiveMQ Classic"
        if ask_plugin:
            conn.subscribe("/temp-queue/bb-stats", id="s", ack="auto")
            conn.send("/queue/ActiveMQ.Statistics.Broker", "",
                      headers={"reply-to": "/temp-queue/bb-stats",
                               "transformation": "jms-map-xml", **_expires(timeout)})
            deadline = time.monotonic() + timeout
            while "stats" not in got and time.monotonic() < deadline:
                time.sleep(0.05)
            if "stats" in got:
                ext.statistics = _map_message(got["stats"])
        conn.disconnect()
    except Exception as e:  # noqa: BLE001 - whatever failed, the figures are just unknown
        ext.statistics = {"error": f"{type(e).__name__}: {e}"}


def _expires(timeout: float) -> dict:
    return {"expires": str(int((time.time() + timeout) * 1000))}


def plugin_queue_counts(ext: External, prefix: str, user: str | None = None,
                        password: str | None = None, timeout: float = 5.0,
                        queues: int = 0) -> dict:
    """The run's queues' counters through the statistics plugin
    (``ActiveMQ.Statistics.Destination.<prefix>>``: one reply per queue, no end marker: the
    replies are awaited until ``queues`` have come, or until none came for 0.5 s). Same shape
    as a started broker's ``stats`` line; ``{"error": ...}`` when it cannot."""
    import stomp

    url = ext.urls.get("stomp")
    if not url:
        return {"error": "no stomp:// URL to ask the statistics plugin through"}
    replies: list = []

    class L(stomp.ConnectionListener):
        def on_message(self, frame):
            replies.append(_map_message(frame.body))

    conn = _stats_connection(urlsplit(url), timeout, L(), ext.ca, ext.cert)
    try:
        conn.connect(user, password, wait=True)
        conn.subscribe("/temp-queue/bb-qstats", id="s", ack="auto")
        conn.send(f"/queue/ActiveMQ.Statistics.Destination.{prefix}>", "",
                  headers={"reply-to": "/temp-queue/bb-qstats", "transformation": "jms-map-xml",
                           **_expires(timeout)})
        # one reply per queue, no end marker: wait until they stop coming
        deadline, last, seen = time.monotonic() + timeout, time.monotonic(), 0
        while time.monotonic() < deadline and (not replies or time.monotonic() - last < 0.5):
            if queues and len(replies) >= queues:
                break
            if len(replies) != seen:
                seen, last = len(replies), time.monotonic()
            time.sleep(0.05)
        conn.disconnect()
    except Exception as e:  # noqa: BLE001 - unreadable counters are reported, not fatal
        return {"error": f"statistics plugin: {type(e).__name__}: {e}"}
    queues = {}
    for r in replies:
        name = str(r.get("destinationName", "")).removeprefix("queue://")
        if name.startswith(prefix):
            queues[name] = {ours: int(r.get(theirs, 0)) for theirs, ours in _STAT_KEYS.items()}
    if not queues:
        return {"error": "the statistics plugin did not answer for the run's queues"}
    return {"queues": queues, "bridges": []}


def _stats_connection(u, timeout: float, listener, ca: str | None = None,
                      cert: tuple[str, str] | None = None):
    """A stomp.py connection (not yet connected) to an external broker's STOMP URL ``u``
    (urlsplit), for asking its statistics plugin; ``listener`` gets the replies. Over TLS the
    broker is checked against ``ca`` (else the system's trust store)."""
    import stomp

    conn = stomp.Connection11([(u.hostname, u.port)], reconnect_attempts_max=1,
                              timeout=timeout)
    if u.scheme == "stomp+ssl":
        conn.set_ssl(for_hosts=[(u.hostname, u.port)], ca_certs=ca,
                     cert_file=cert[0] if cert else None, key_file=cert[1] if cert else None)
    conn.set_listener("stats", listener)
    return conn


def _map_message(body) -> dict:
    """A JMS MapMessage as ActiveMQ's STOMP ``jms-map-xml`` transformation renders it."""
    import xml.etree.ElementTree as ET

    text = body.decode() if isinstance(body, bytes) else str(body)
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return {"raw": text[:2000]}
    out: dict = {}
    for entry in root.findall("entry"):
        key, value = list(entry)[:2]
        v = value.text or ""
        if value.tag in ("long", "int", "short"):
            out[key.text] = int(v)
        elif value.tag in ("double", "float"):
            out[key.text] = float(v)
        else:
            out[key.text] = v
    return out
