// The records a client writes when it stops (clients/contract.md, "Records") and what it keeps
// until then: a producer's send times, a consumer's facts of each message in typed arrays.

import fs from 'node:fs';
import { crc32 } from 'node:zlib';

/** An append-only list of epoch nanoseconds (bigint) in 64-bit cells, `block` to a block. */
export class NsLog {
  constructor(block = 65536) { this.block = block; this.blocks = []; this.length = 0; }
  push(v) {
    const b = Math.floor(this.length / this.block);
    if (b === this.blocks.length) this.blocks.push(new BigInt64Array(this.block));
    this.blocks[b][this.length % this.block] = v;
    this.length++;
  }
  at(i) { return this.blocks[Math.floor(i / this.block)][i % this.block]; }
  truncate(n) { this.length = Math.min(this.length, n); }
}

/** Write `header` then `n` lines made by `line(i)` (each ending in \n), in big chunks. */
export function writeRecords(path, header, n, line) {
  const fd = fs.openSync(path, 'w');
  try {
    fs.writeSync(fd, header + '\n');
    let buf = '';
    for (let i = 0; i < n; i++) {
      buf += line(i);
      if (buf.length > 1 << 20) { fs.writeSync(fd, buf); buf = ''; }
    }
    if (buf) fs.writeSync(fd, buf);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A producer's records: bb_sent_ns of every message sent, by seq, and when each was handed to
 * stompjs, as epoch ns in 64-bit cells, not arrays of strings and bigints (a million live heap
 * objects slow every garbage collection a long run makes). A slot of a process of many takes
 * blocks of 1,024 cells (8 KiB): blocks of 65,536 are 512 KiB, two a slot (10,000: 10 GiB).
 */
export class Sent {
  constructor(small) {
    this.sentNs = new NsLog(small ? 1024 : 65536);
    this.actualNs = new NsLog(small ? 1024 : 65536);
    this.copies = []; // --failover: [seq, bb_sent_ns, handed over] of copies sent before
  }
  get length() { return this.sentNs.length; }
  push(sentAt, t) { this.sentNs.push(sentAt); this.actualNs.push(t); }
  /** Keep the first `n` as copies sent before (a burst sent again whole): how many they were. */
  resend(n) {
    const { sentNs, actualNs } = this;
    const gone = sentNs.length - n;
    for (let s = n; s < sentNs.length; s++) this.copies.push([s, sentNs.at(s), actualNs.at(s)]);
    sentNs.truncate(n);
    actualNs.truncate(n);
    return gone;
  }
  write(path, id, count) {
    const { sentNs, actualNs, copies } = this;
    writeRecords(path, '#producer\tseq\tburst\tsent_ns\tactual_ns', sentNs.length + copies.length,
      (k) => {
        const [s, t, a] = k < sentNs.length ? [k, sentNs.at(k), actualNs.at(k)] : copies[k - sentNs.length];
        return `${id}\t${s}\t${Math.floor(s / count)}\t${t}\t${a}\n`;
      });
  }
}

/** True if s is 1 to max decimal digits. */
function digits(s, max) {
  const n = s.length;
  if (n === 0 || n > max) return false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** The value of 8 lowercase hex digits, else -1. */
function hex8(s) {
  if (s.length !== 8) return -1;
  let v = 0;
  for (let i = 0; i < 8; i++) {
    const c = s.charCodeAt(i);
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/** Index of `name` in `names` (added if new), `cache` holding the last one looked up. */
function indexOf(names, index, cache, name) {
  if (name === cache.name) return cache.i;
  let i = index.get(name);
  if (i === undefined) { i = names.length; names.push(name); index.set(name, i); }
  cache.name = name;
  cache.i = i;
  return i;
}

/**
 * A consumer's records, one entry per message carrying the four bench headers, in typed arrays:
 * a kept string or object from stompjs's parser costs the garbage collector far more than the few
 * instructions that turn it into numbers now (a replay of 60k frames through stompjs's parser:
 * +3.0 us/msg against the receive loop with the values kept as received, +0.9 like this).
 * The producer and bb_nonce are kept as indexes into the names seen; a value that is not plain
 * digits (or bb_crc32 not 8 lowercase hex digits) is kept as received in `odd` and judged when
 * the records are written. `expect` > 0: the entries are sized now and touched (fill), as the
 * Java consumer's arrays are: grown by doubling while messages flow, they cost 0.05 page faults
 * a message more than the loop, 3-6 us each on the bench's VM (28955a4:docs/perf.md, "Kept
 * bodies are page faults"). `least`: the size they grow from.
 */
export class Received {
  constructor(expect, least) {
    this.rec = {
      recv: new Float64Array(0), // performance.now(), turned into epoch ns when written
      head: new Float64Array(0), // the body's first min(6, bytes) bytes as one number
      seq: new Float64Array(0),
      burst: new Float64Array(0),
      sentHi: new Float64Array(0), // bb_sent_ns = sentHi * 1e9 + sentLo, as decimal digits
      sentLo: new Float64Array(0),
      bytes: new Int32Array(0),
      flags: new Int32Array(0), // 1 redelivered, 2 crcH holds bb_crc32, 4 bb_crc32 odd, 8 numbers odd
      dest: new Int32Array(0), // index into the destinations
      prod: new Int32Array(0), // index into prodNames
      nonce: new Int32Array(0), // index into nonceNames, -1 when absent
      crc: new Uint32Array(0), // CRC-32 of the body as received
      crcH: new Uint32Array(0), // bb_crc32's value
    };
    this.n = 0;
    this.least = least;
    this.odd = new Map(); // entry -> bb_crc32 as received; -1 - entry -> [bb_seq, bb_burst, bb_sent_ns]
    this.prodNames = [];
    this.prodIdx = new Map();
    this.lastProd = { name: null, i: -1 };
    this.nonceNames = [];
    this.nonceIdx = new Map();
    this.lastNonce = { name: null, i: -1 };
    if (expect > 0) {
      this.grow(expect);
      for (const k of Object.keys(this.rec)) this.rec[k].fill(0);
    }
  }

  grow(want = 0) {
    const { rec } = this;
    const cap = Math.max(want, this.least, rec.recv.length * 2);
    for (const k of Object.keys(rec)) {
      const x = new rec[k].constructor(cap);
      x.set(rec[k]);
      rec[k] = x;
    }
  }

  /** Keep message `m` (received at `t`, performance.now()) of destination `di`; false if it is
   * not a bench message (a header missing). */
  keep(m, di, t) {
    const h = m.headers;
    const p = h.bb_producer;
    const sq = h.bb_seq;
    const bu = h.bb_burst;
    const st = h.bb_sent_ns;
    if (p === undefined || sq === undefined || bu === undefined || st === undefined) return false;
    const b = m.binaryBody;
    const len = b.length;
    let head = 0;
    for (let k = 0; k < len && k < 6; k++) head = head * 256 + b[k];
    const n = this.n;
    if (n === this.rec.recv.length) this.grow();
    const { rec } = this;
    const nc = h.bb_nonce;
    let flags = h.redelivered === 'true' ? 1 : 0;
    const ch = h.bb_crc32;
    if (ch !== undefined) {
      const v = hex8(ch);
      if (v >= 0) { rec.crcH[n] = v; flags |= 2; } else { this.odd.set(n, ch); flags |= 4; }
    }
    if (digits(sq, 15) && digits(bu, 15) && digits(st, 24)) {
      rec.seq[n] = +sq;
      rec.burst[n] = +bu;
      const L = st.length;
      rec.sentHi[n] = L > 9 ? +st.slice(0, L - 9) : 0;
      rec.sentLo[n] = L > 9 ? +st.slice(L - 9) : +st;
    } else {
      this.odd.set(-1 - n, [sq, bu, st]);
      flags |= 8;
    }
    rec.recv[n] = t;
    rec.head[n] = head;
    rec.bytes[n] = len;
    rec.flags[n] = flags;
    rec.dest[n] = di;
    rec.prod[n] = indexOf(this.prodNames, this.prodIdx, this.lastProd, p);
    rec.nonce[n] = nc === undefined ? -1 : indexOf(this.nonceNames, this.nonceIdx, this.lastNonce, nc);
    if (len > 6) rec.crc[n] = crc32(b); // (a body of up to 6 bytes is all in `head`: at stop)
    this.n = n + 1;
    return true;
  }

  /** The entries whose bench headers are not integers after all: foreign (they counted
   * towards the --count target while running: only a hand-made message can do that). */
  foreign() {
    const INT = /^[0-9]+$/;
    const bad = new Set();
    for (const [k, v] of this.odd) {
      if (k < 0 && !v.every((x) => INT.test(x))) bad.add(-1 - k);
    }
    return bad;
  }

  redelivered(i) { return this.rec.flags[i] & 1; }

  /** Write the entries but those in `bad`; `toEpoch(t)` turns a receive time into epoch ns. */
  write(path, names, bad, toEpoch) {
    const { rec, odd } = this;
    const keep = [];
    for (let i = 0; i < this.n; i++) if (!bad.has(i)) keep.push(i);
    const hex = (v) => v.toString(16).padStart(8, '0');
    writeRecords(path, '#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest' +
      '\tnonce\tcrc32_header\tcrc32_body',
      keep.length, (j) => {
        const i = keep[j];
        const f = rec.flags[i];
        let seq, burst, sent;
        if (f & 8) {
          [seq, burst, sent] = odd.get(-1 - i);
        } else {
          seq = rec.seq[i];
          burst = rec.burst[i];
          const hi = rec.sentHi[i];
          sent = hi > 0 ? `${hi}${String(rec.sentLo[i]).padStart(9, '0')}` : String(rec.sentLo[i]);
        }
        const crcHead = f & 2 ? hex(rec.crcH[i]) : f & 4 ? odd.get(i) : '-';
        const nonce = rec.nonce[i] < 0 ? '-' : this.nonceNames[rec.nonce[i]];
        return `${this.prodNames[rec.prod[i]]}\t${seq}\t${burst}\t${sent}\t${toEpoch(rec.recv[i])}\t` +
          `${rec.bytes[i]}\t${bodyOk(Number(seq), rec.bytes[i], rec.head[i])}\t${f & 1}\t${names[rec.dest[i]]}\t` +
          `${nonce}\t${crcHead}\t${hex(rec.bytes[i] > 6 ? rec.crc[i] : crc32(headBytes(rec.head[i], rec.bytes[i])))}\n`;
      });
  }
}

/** The body of `len` <= 6 bytes back from its `head` number. */
function headBytes(head, len) {
  const b = Buffer.alloc(len);
  for (let k = len - 1; k >= 0; k--) { b[k] = head % 256; head = Math.floor(head / 256); }
  return b;
}

/** 1 if the first min(6, len) body bytes (`head`) are the counter digits of `seq`. */
function bodyOk(seq, len, head) {
  if (len === 0) return 0;
  const n = len < 6 ? len : 6;
  const digits = String(seq % 1000000).padStart(6, '0');
  let want = 0;
  for (let k = 0; k < n; k++) want = want * 256 + digits.charCodeAt(k);
  return head === want ? 1 : 0;
}
