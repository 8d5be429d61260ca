"""An outside broker's counters over its Jolokia (``--broker-admin``): ActiveMQ Classic's and
Artemis's MBeans for the run's queues, read with the broker's own login."""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from burstbench.errors import OutsideError

# -- Jolokia ----------------------------------------------------------------------------------
_CLASSIC = "org.apache.activemq"


_ARTEMIS = "org.apache.activemq.artemis"


_CLASSIC_ATTRS = {"EnqueueCount": "enqueued", "DequeueCount": "dequeued",
                  "DispatchCount": "dispatched", "InFlightCount": "inflight",
                  "ExpiredCount": "expired", "QueueSize": "size",
                  "ConsumerCount": "consumers", "ProducerCount": "producers"}


# Artemis counts per queue: added, acknowledged, being delivered (not yet acknowledged),
# expired, left, and killed (sent to the dead-letter address after too many deliveries)
_ARTEMIS_ATTRS = {"MessagesAdded": "enqueued", "MessagesAcknowledged": "dequeued",
                  "DeliveringCount": "inflight", "MessagesExpired": "expired",
                  "MessageCount": "size", "ConsumerCount": "consumers",
                  "MessagesKilled": "killed"}


_ARTEMIS_ADDRESS_ATTRS = {"RoutingTypes": "routing", "RoutedMessageCount": "routed",
                          "UnRoutedMessageCount": "unrouted"}


class Jolokia:
    """A broker's Jolokia endpoint (HTTP POST, JSON), as its web console reaches it.

    Both consoles check the request's ``Origin`` against their own host (Jolokia's CORS
    strict checking), so the request says it comes from the admin URL's own origin, as the
    console's page does.
    """

    def __init__(self, url: str, user: str | None = None, password: str | None = None,
                 timeout: float = 5.0, ca: str | None = None):
        self.url = url if url.endswith("/") else url + "/"
        self.user, self.password, self.timeout, self.ca = user, password, timeout, ca
        u = urlsplit(self.url)
        self.origin = f"{u.scheme}://{u.netloc}"
        self.product = "unknown"
        self.version = ""

    def post(self, body):
        """One request or a list of them; Jolokia's reply (OutsideError on HTTP or JSON
        failure, naming the URL and what it answered)."""
        headers = {"Content-Type": "application/json", "Origin": self.origin}
        if self.user is not None:
            token = base64.b64encode(f"{self.user}:{self.password or ''}".encode()).decode()
            headers["Authorization"] = f"Basic {token}"
        req = urllib.request.Request(self.url, data=json.dumps(body).encode(),
                                     headers=headers, method="POST")
        ctx = (ssl.create_default_context(cafile=self.ca) if self.url.startswith("https")
               else None)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=ctx) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            why = {401: "the login was refused (give --admin-user and its password)",
                   403: "forbidden (the user lacks the console's admin role, or Jolokia's "
                        "access policy refuses this origin)",
                   404: "no Jolokia there (Classic: /api/jolokia, Artemis: /console/jolokia)"}
            raise OutsideError(f"--broker-admin {self.url}: HTTP {e.code}: "
                               f"{why.get(e.code, e.reason)}") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise OutsideError(f"--broker-admin {self.url}: {reason}") from None
        except ValueError:
            raise OutsideError(f"--broker-admin {self.url}: the answer is not Jolokia's "
                               "JSON") from None

    def connect(self) -> None:
        """Which ActiveMQ answers, and its version (OutsideError when neither does)."""
        replies = self.post([
            {"type": "read", "mbean": f"{_CLASSIC}:type=Broker,brokerName=*",
             "attribute": ["BrokerVersion"]},
            {"type": "read", "mbean": f"{_ARTEMIS}:broker=*", "attribute": ["Version"]},
        ])
        for reply, product, attr in zip(replies, ("ActiveMQ Classic", "ActiveMQ Artemis"),
                                        ("BrokerVersion", "Version")):
            value = reply.get("value") if reply.get("status") == 200 else None
            if value:
                self.product = product
                self.version = str(next(iter(value.values())).get(attr, ""))
                return
        raise OutsideError(f"--broker-admin {self.url}: Jolokia answers but shows no ActiveMQ "
                           f"broker ({_first_error(replies)})")

    def queue_counts(self, prefix: str) -> dict:
        """The counters of the run's queues (names starting with ``prefix``), in the shape of
        a started broker's ``stats`` line; ``{"error": ...}`` when they cannot be read.

        Artemis: the run's *addresses* (a STOMP name the broker kept as it came, such as
        ``/queue/bb.x.q0``, included), every queue bound to them, whatever its name (a STOMP
        subscription on a multicast address is a queue of its own), and what each address
        routed to none of them: so a point can say where its messages were copied or dropped.
        """
        try:
            if self.product == "ActiveMQ Artemis":
                return self._artemis_counts(prefix)
            pattern = (f"{_CLASSIC}:type=Broker,brokerName=*,destinationType=Queue,"
                       "destinationName=*")
            queues = {}
            for keys, values in self._read(pattern, _CLASSIC_ATTRS):
                name = _stripped(keys.get("destinationName", ""))
                if name.startswith(prefix):
                    queues[name] = values
            return {"queues": queues, "bridges": []}
        except OutsideError as e:
            return {"error": f"jolokia: {e}"}

    def _artemis_counts(self, prefix: str) -> dict:
        addresses = {}
        for keys, values in self._read(f"{_ARTEMIS}:broker=*,component=addresses,address=*",
                                       _ARTEMIS_ADDRESS_ATTRS, raw=True):
            if _stripped(keys.get("address", "")).startswith(prefix):
                addresses[keys["address"]] = {
                    "routing": ",".join(sorted(values.get("RoutingTypes") or [])).lower(),
                    "routed": int(values.get("RoutedMessageCount") or 0),
                    "unrouted": int(values.get("UnRoutedMessageCount") or 0)}
        queues = {}
        pattern = (f"{_ARTEMIS}:broker=*,component=addresses,address=*,subcomponent=queues,"
                   "routing-type=*,queue=*")
        for keys, values in self._read(pattern, _ARTEMIS_ATTRS):
            address, queue = keys.get("address", ""), keys.get("queue", "")
            if address in addresses:
                queues[address if queue == address else f"{address} -> {queue}"] = values
        for addr, a in addresses.items():
            a["queues"] = sum(1 for q in queues if q.split(" -> ")[0] == addr)
        return {"queues": queues, "bridges": [], "addresses": addresses}

    def _read(self, pattern: str, attrs: dict, raw: bool = False):
        """(the MBean's keys, its values) for every MBean matching ``pattern``; values named
        as ours (``attrs``) and counted, or as Jolokia gave them (``raw``)."""
        reply = self.post({"type": "read", "mbean": pattern, "attribute": list(attrs)})
        if reply.get("status") == 404:  # nothing matches the pattern
            return []
        if reply.get("status") != 200:
            raise OutsideError(str(reply.get("error", reply.get("status"))))
        return [(_mbean_keys(mbean), values if raw else
                 {ours: int(values.get(theirs) or 0) for theirs, ours in attrs.items()})
                for mbean, values in (reply.get("value") or {}).items()]


def _stripped(name: str) -> str:
    """A destination's name without the STOMP or URL prefix a broker may have kept."""
    for p in ("/queue/", "/topic/", "queue://", "topic://"):
        name = name.removeprefix(p)
    return name


def _mbean_keys(name: str) -> dict[str, str]:
    """``domain:k=v,k2="a,b"`` -> its keys, quotes removed (Artemis quotes its values)."""
    _, _, props = name.partition(":")
    out, key, val, quoted, in_val = {}, "", "", False, False
    for ch in props + ",":
        if in_val:
            if ch == '"':
                quoted = not quoted
            elif ch == "," and not quoted:
                out[key] = val
                key, val, in_val = "", "", False
            else:
                val += ch
        elif ch == "=":
            in_val = True
        else:
            key += ch
    return out


def _first_error(replies) -> str:
    for r in replies if isinstance(replies, list) else [replies]:
        if r.get("error"):
            return str(r["error"])[:200]
    return "no error given"
