"""Throwaway passwords for what the harness starts itself: a keystore, a broker's user, an
Artemis cluster, a database.

Hex only. Such a password goes on command lines (keytool reads an argument beginning with
``-J`` as an option for its own JVM, whatever option it follows; argparse reads one beginning
with ``-`` as an option), into XML, JDBC URLs and URIs, where letters and digits need no
quoting. ``secrets.token_urlsafe`` draws ``-`` and ``_`` too: one keystore password in 4,096
began with ``-J`` and failed a TLS point."""

from __future__ import annotations

import secrets


def throwaway(nbytes: int = 18) -> str:
    """A fresh password of ``2 * nbytes`` hex digits (``nbytes`` random bytes)."""
    return secrets.token_hex(nbytes)
