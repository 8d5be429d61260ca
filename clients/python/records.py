"""The records a client writes at stop (clients/contract.md, "Records"), and what a consumer
keeps of each message until then: the header values, the body or its facts."""

from __future__ import annotations

import operator
import zlib

# bytes: a body up to this size is kept as stomp.py made it (keeping it copies nothing). A larger
# one is copied into one store sized and touched before the consumer is ready (for --count x
# --bursts bodies of --size bytes, at most STORE_MAX), and past the store's end summarised on
# arrival (its length, CRC-32 and first bytes). A kept 1 KiB body object is fresh memory, 0.25
# page faults a message at 3-6 µs each on the bench's VM; its CRC-32 and summary cost 0.8 µs,
# the copy about 0.3 (28955a4:docs/perf.md, "Kept bodies are page faults", "One CPU").
KEEP_BODY = 256
STORE_MAX = 64 << 20  # 65,536 bodies of 1 KiB: memory a sweep of many consumers can afford


def body_store(expect: int, size: int, most: int = STORE_MAX) -> bytearray:
    """The larger bodies' store: ``expect`` bodies of ``size`` bytes, at most ``most`` bytes,
    every page touched now (a fresh page costs its fault later, in the timed messages)."""
    if size <= KEEP_BODY:
        return bytearray()
    store = bytearray(min(expect * size, most))
    for i in range(0, len(store), 4096):
        store[i] = 1
    return store


def body_facts(body: bytes) -> tuple[int, int, bytes]:
    """What the records need of a body: its length, CRC-32 and first 6 bytes."""
    return len(body), zlib.crc32(body), bytes(body[:6])


# the header values a record needs, in its order: one C call for all seven (the dict's own
# lookups), where seven h.get calls cost about 0.3 µs a message more in stomp.py's consumer
_HEAD_KEYS = ("bb_producer", "bb_seq", "bb_burst", "bb_sent_ns", "bb_nonce", "bb_crc32",
              "destination")
heads = operator.itemgetter(*_HEAD_KEYS)
_ABSENT = {"bb_nonce": "-", "bb_crc32": "-"}  # else an empty field: a bench header missing


def heads_of(h: dict) -> tuple[str, ...]:
    """_HEADS of a message that lacks some of them (an absent bench header: foreign)."""
    return tuple(h.get(k, _ABSENT.get(k, "")) for k in _HEAD_KEYS)


def field(value: str) -> str:
    """A received header value as one TSV field (a tab or newline would split the record)."""
    return value.replace("\t", "?").replace("\n", "?").replace("\r", "?")


def records_of(collector) -> tuple[list[str], int, int]:
    """The records' lines of what ``collector`` kept, and its counts of foreign and
    redelivered messages (after the disconnect: nothing comes now)."""
    foreign = redelivered = 0
    lines = []
    at = 0
    for t, head, body in zip(collector.times, collector.heads, collector.bodies, strict=True):
        if type(body) is int:  # in the store
            n, crc, prefix = body_facts(collector.view[at:at + body])
            at += body
        else:
            n, crc, prefix = body if type(body) is tuple else body_facts(body)
        try:
            producer, seq, burst, sent, nonce, hcrc, dest, red = head.split("\t")
            if not producer:
                raise ValueError
            seq, burst, sent = int(seq), int(burst), int(sent)
        except ValueError:  # a value missing, or a tab inside one
            foreign += 1
            continue
        expected = b"%06d" % (seq % 1000000)
        ok = 1 if prefix == expected[: min(6, n)] else 0
        redo = 1 if red == "true" else 0
        redelivered += redo
        dest = dest.removeprefix("/queue/")
        nonce, hcrc = field(nonce), field(hcrc)
        lines.append(f"{producer}\t{seq}\t{burst}\t{sent}\t{t}\t{n}\t{ok}\t{redo}\t{dest}\t"
                     f"{nonce}\t{hcrc}\t{crc:08x}\n")
    return lines, foreign, redelivered


def write_received(path: str, lines: list[str]) -> None:
    with open(path, "w") as f:
        f.write("#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest"
                "\tnonce\tcrc32_header\tcrc32_body\n")
        f.writelines(lines)


def write_sent(path: str, pid: str, count: int, sent) -> None:
    """The producer's records: (seq, bb_sent_ns, handed over) of each message sent."""
    with open(path, "w") as f:
        f.write("#producer\tseq\tburst\tsent_ns\tactual_ns\n")
        f.writelines(f"{pid}\t{s}\t{s // count}\t{t}\t{a}\n" for s, t, a in sent)
