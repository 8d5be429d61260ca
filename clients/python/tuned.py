#!/usr/bin/env python3
"""stomp-py-tuned: the stomp.py producer or consumer with faster paths than the library's
public API. A separately named client (burstbench/clients.py), never a default; the stock
programs run unchanged underneath.

    tuned.py producer.py|consumer.py [contract options...]

What it changes, and why it is faster:
- stomp.py 9.0.0 spends ~20 us parsing each frame (regexes, a re.sub per header, a copy of
  the headers): ``parse_frame`` below gives the same Frame for the frames a broker sends and
  falls back to the library's parser for anything unusual (tests/unit/test_stomp_py_parser.py
  compares the two);
- the library dispatches each frame twice (before_message, message) to every listener under
  a lock: MESSAGE frames go straight to the bench's listener;
- stomp.py leaves its connect timeout on the socket, so every read and write polls first: the
  socket blocks instead (plain sockets only: stomp.py's TLS reads depend on the timeout);
- the cyclic garbage collector is off (the hot loops make no cycles).
"""

from __future__ import annotations

import gc
import re
import runpy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import stomp
import stomp.transport
import stomp.utils

_UNESCAPE = re.compile(r"\\.")


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    if "\\\\" not in text:  # every backslash starts an escape: plain replaces are exact
        return text.replace("\\c", ":").replace("\\n", "\n").replace("\\r", "\r")
    return _UNESCAPE.sub(stomp.utils._unescape_header, text)


def parse_frame(frame: bytes):
    end = frame.find(b"\n\n")
    if end < 0 or b"\r" in frame[:end]:
        return stomp.utils.parse_frame(frame)
    lines = frame[:end].decode().split("\n")
    first = 0
    while first < len(lines) and not lines[first]:
        first += 1
    if first >= len(lines):
        return None
    headers = {}
    for line in lines[first + 1 :]:
        key, sep, value = line.partition(":")
        if not sep or not key:
            continue
        if "\\" in line:
            key, value = _unescape(key), _unescape(value)
        if key not in headers:
            headers[key] = value
    f = stomp.utils.Frame.__new__(stomp.utils.Frame)
    f.cmd, f.headers, f.body = lines[first], headers, frame[end + 2 :]
    f.original_headers = headers  # (the library keeps a copy no one reads)
    return f


def fast_messages(conn, listener) -> None:
    """Parse with parse_frame and give MESSAGE frames to ``listener.on_message`` directly.
    Only with heart-beats off (the clients' setting): stomp.py's heart-beat listener also
    watches messages."""
    stomp.transport.parse_frame = parse_frame
    transport = conn.transport
    library = transport.process_frame
    on_message = listener.on_message

    def process_frame(f, frame_str):
        if f.cmd == "MESSAGE":
            on_message(f)
        else:
            library(f, frame_str)

    transport.process_frame = process_frame


_stock_connect = common.connect


def connect(args, listener=None, slot=None):
    conn, listener = _stock_connect(args, listener, slot)
    sock = getattr(conn.transport, "socket", None)
    if sock is not None and not args.ssl:
        sock.settimeout(None)
    fast_messages(conn, listener)
    return conn, listener


def main() -> None:
    if len(sys.argv) < 2 or Path(sys.argv[1]).name not in ("producer.py", "consumer.py"):
        sys.stderr.write("error: usage: tuned.py producer.py|consumer.py [options]\n")
        sys.exit(2)
    common.CLIENT = "stomp-py-tuned"
    common.connect = connect  # the stock programs import it from common when they start
    gc.disable()
    script = sys.argv.pop(1)
    sys.argv[0] = script
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
