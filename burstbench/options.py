"""The contract's option table (clients/options.yaml) and the check the harness makes with it.

Every client command line the harness builds goes through :func:`command`, which checks each
option against the table for that client and role — unknown or misplaced options, missing
values, types, ranges, patterns, URL schemes — and raises :class:`BadOption` (a ValueError,
one line) before anything is started. The clients parse the same names with their languages'
standard parsers and check little themselves (clients/contract.md).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import yaml

from burstbench.paths import CLIENTS

if TYPE_CHECKING:
    from burstbench.clients import Resolved

TABLE = CLIENTS / "options.yaml"
CLIENT_TABLE = CLIENTS / "options.tsv"  # what the clients read: render_for_clients()
ROLES = ("producer", "consumer")
TYPES = ("flag", "int", "number", "string", "url", "urls", "queues", "path")
_URL = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)"
                  r":(?P<port>[0-9]{1,5})(?P<rest>[/?]\S*)?")
_FAILOVER = re.compile(r"failover:\((?P<inner>[^()]+)\)(?P<query>\?\S*)?")


class BadOption(ValueError):
    """A value the table refuses; the message is one line naming client, role and option."""


@dataclass(frozen=True)
class Option:
    """One row of clients/options.yaml."""

    name: str
    type: str
    roles: tuple[str, ...]
    help: str
    required: bool = False
    default: object = None
    min: object = None  # a number, or {role: number}
    max: float | None = None
    above: float | None = None
    pattern: str | None = None
    choices: tuple[str, ...] = ()
    only: tuple[str, ...] = ()
    except_: tuple[str, ...] = ()
    limits: dict | None = None

    def applies(self, client: str, role: str) -> bool:
        """Whether ``client``'s ``role`` program has this option."""
        if role not in self.roles:
            return False
        if self.only and client not in self.only:
            return False
        return client not in self.except_

    def bounds(self, client: str, role: str) -> tuple[float | None, float | None]:
        lo = self.min[role] if isinstance(self.min, dict) else self.min
        hi = self.max
        narrower = (self.limits or {}).get(client, {})
        lo = max(lo, narrower["min"]) if "min" in narrower else lo
        hi = min(hi, narrower["max"]) if "max" in narrower else hi
        return lo, hi


@cache
def table() -> tuple[dict[str, Option], dict[str, tuple[str, ...]]]:
    """The options by name, and the URL schemes by protocol."""
    data = yaml.safe_load(TABLE.read_text())
    opts = {}
    for name, row in data["options"].items():
        row = dict(row)
        roles = row.pop("roles")
        row["roles"] = ROLES if roles == "both" else (roles,)
        for key in ("choices", "only"):
            if key in row:
                row[key] = tuple(row[key])
        if "except" in row:
            row["except_"] = tuple(row.pop("except"))
        opts[name] = Option(name=name, **row)
        if opts[name].type not in TYPES:
            raise ValueError(f"{TABLE}: option {name}: unknown type {opts[name].type!r}")
    schemes = {k: tuple(v) for k, v in data["schemes"].items()}
    return opts, schemes


def options() -> dict[str, Option]:
    return table()[0]


def for_client(client: str, role: str) -> list[str]:
    """The option names ``client``'s ``role`` program takes (what its --help must list)."""
    return [o.name for o in options().values() if o.applies(client, role)]


def check(r: Resolved, role: str, args: list[str], *, complete: bool = True) -> None:
    """Check a client's arguments (``--name value`` and flags) against the table; raise
    BadOption naming the first bad one. ``complete=False`` checks a partial list (the
    required options may be missing)."""
    name = r.client.name
    where = f"{r.label} {role}"
    opts = options()
    given: dict[str, str | None] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("--") or arg == "--":
            raise BadOption(f"{where}: unexpected argument {arg!r}")
        key, eq, value = arg[2:].partition("=")
        o = opts.get(key)
        if o is None or not o.applies(name, role):
            which = "" if o is None else f" (not an option of {name}'s {role})"
            raise BadOption(f"{where}: unknown option --{key}{which}")
        if key in given:
            raise BadOption(f"{where}: --{key} given twice")
        if o.type == "flag":
            if eq:
                raise BadOption(f"{where}: --{key} takes no value")
            given[key] = None
        else:
            if not eq:
                if i + 1 >= len(args):
                    raise BadOption(f"{where}: --{key} needs a value")
                i += 1
                value = args[i]
            given[key] = value
            why = _why_bad(o, name, role, value, r.protocol, given.get("url"))
            if why:
                raise BadOption(f"{where}: --{key} {why}: {value!r}")
        i += 1
    if complete:
        for o in opts.values():
            if o.required and o.applies(name, role) and o.name not in given:
                raise BadOption(f"{where}: missing required option --{o.name}")
    if "failover" in given and "url" in given:
        first = given["url"].split(":", 1)[0]
        for u in given["failover"].split(","):
            if u.split(":", 1)[0] != first:
                raise BadOption(f"{where}: --failover addresses must use --url's scheme: {u!r}")


def command(r: Resolved, role: str, args: list[str]) -> list[str]:
    """The client's command line with ``args``, checked against the table (BadOption). Values
    go as ``--name=value`` (every client's parser takes that form), so that one beginning with
    ``-`` (a generated password may) is never read as an option."""
    check(r, role, args)
    opts = options()
    out, i = [], 0
    while i < len(args):
        a = args[i]
        o = opts.get(a[2:])
        if o is not None and o.type != "flag":
            out.append(f"{a}={args[i + 1]}")
            i += 2
        else:
            out.append(a)
            i += 1
    return r.client.argv(role) + out


def _why_bad(o: Option, client: str, role: str, value: str, protocol: str,
             url: str | None) -> str | None:
    """Why ``value`` is not good for ``o`` (a phrase), or None."""
    t = o.type
    if t in ("int", "number"):
        try:
            x = int(value) if t == "int" else float(value)
        except ValueError:
            return "must be an integer" if t == "int" else "must be a number"
        if t == "number" and not math.isfinite(x):
            return "must be a finite number"
        lo, hi = o.bounds(client, role)
        if o.above is not None and not x > o.above:
            return f"must be > {_n(o.above)} and <= {_n(hi)}"
        if (lo is not None and x < lo) or (hi is not None and x > hi):
            return f"must be {_n(lo)}..{_n(hi)}"
        return None
    if t == "string":
        if o.choices and value not in o.choices:
            return f"must be one of {', '.join(o.choices)}"
        if o.pattern and not re.fullmatch(o.pattern, value):
            return f"must match {_shown(o.pattern)}"
        return None
    if t == "queues":
        for q in value.split(","):
            if not re.fullmatch(o.pattern, q):
                return f"has a bad queue name {q!r} (names match {o.pattern})"
        return None
    if t == "path":
        return "must not be empty" if not value else None
    if t == "url":
        return _url_bad(value, protocol)
    if t == "urls":
        for u in value.split(","):
            why = _url_bad(u, protocol)
            if why:
                return f"has a bad address {u!r}: {why}"
        return None
    return None


def _url_bad(url: str, protocol: str) -> str | None:
    schemes = table()[1][protocol]
    m = _FAILOVER.fullmatch(url)
    if m:
        if "failover" not in schemes:
            return f"must use {_or(schemes)}"
        for inner in m.group("inner").split(","):
            why = _url_bad(inner, protocol)
            if why:
                return why
        return None
    m = _URL.fullmatch(url)
    if not m:
        return f"must be SCHEME://HOST:PORT with SCHEME {_or(schemes)}"
    if m.group("scheme") not in schemes or m.group("scheme") == "failover":
        return f"must use {_or(schemes)}"
    if not 1 <= int(m.group("port")) <= 65535:
        return "has a port out of 1..65535"
    return None


def _n(x) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _or(schemes) -> str:
    return " or ".join(f"{s}://" if s != "failover" else "failover:(...)" for s in schemes)


def _shown(pattern: str) -> str:
    return pattern.replace("\r", "\\r").replace("\n", "\\n").replace("\0", "\\0")


# -- the table as the clients read it -----------------------------------------------------------
_COLUMNS = ("client", "role", "option", "type", "required", "default", "min", "max", "above",
            "pattern", "choices", "help")


def render_for_clients() -> str:
    """clients/options.tsv: the table resolved for each registered client and role, one row an
    option, in a form every client's language reads without a library (tab-separated, no
    quoting): defaults, bounds and limits for that client and role, and for ``url`` and ``urls``
    the schemes of the client's protocols as the choices and the pattern of one address in
    them. A pattern matches a
    whole value (of ``urls`` and ``queues``: each comma-separated item); control characters are
    written ``\\xHH``, which the four languages' regexes read alike."""
    from burstbench.clients import REGISTRY

    opts, schemes = table()
    lines = [("# clients/options.yaml resolved for each client and role, by "
              "`python -m burstbench.options`; do not edit (clients/contract.md)"),
             "\t".join(_COLUMNS)]
    seen = set()
    for c in REGISTRY:
        if c.name in seen:  # the browser's stompjs shares the stock programs' table
            continue
        seen.add(c.name)
        protocols = list(dict.fromkeys(c.transports.values()))
        for role in ROLES:
            for o in opts.values():
                if not o.applies(c.name, role):
                    continue
                lo, hi = o.bounds(c.name, role) if o.type in ("int", "number") else (None, None)
                default = o.default[role] if isinstance(o.default, dict) else o.default
                pattern, choices = o.pattern or "", o.choices
                if o.type in ("url", "urls"):  # the choices are the schemes
                    choices = tuple(s for p in protocols for s in schemes[p])
                    pattern = _address_pattern(choices)
                row = (c.name, role, o.name, o.type, "1" if o.required else "0",
                       "" if default is None else _n(default) if o.type in ("int", "number")
                       else str(default),
                       "" if lo is None else _n(lo), "" if hi is None else _n(hi),
                       "" if o.above is None else _n(o.above), _escaped(pattern),
                       ",".join(choices), o.help)
                lines.append("\t".join(row))
    return "\n".join(lines) + "\n"


def _address_pattern(schemes: list[str]) -> str:
    """One broker address in ``schemes``: SCHEME://HOST:PORT[/...], or failover:(A,B...)[?...]
    of such addresses when ``failover`` is one of them."""
    plain = [re.escape(s) for s in schemes if s != "failover"]
    one = (f"(?:{'|'.join(plain)})://(?:\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9_.-]+):[0-9]{{1,5}}"
           "(?:[/?][^\\s,()]*)?")
    if "failover" in schemes:
        return f"{one}|failover:\\({one}(?:,{one})*\\)(?:\\?\\S*)?"
    return one


def _escaped(pattern: str) -> str:
    return re.sub(r"[\x00-\x1f]", lambda m: f"\\x{ord(m.group()):02x}", pattern)


if __name__ == "__main__":  # python -m burstbench.options: write clients/options.tsv
    CLIENT_TABLE.write_text(render_for_clients())
    print(f"wrote {CLIENT_TABLE}")
