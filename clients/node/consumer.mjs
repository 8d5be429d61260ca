#!/usr/bin/env node
// burstbench consumer over STOMP (@stomp/stompjs; ws:// or stomp://). See clients/contract.md.

import { crc32 } from 'node:zlib';
import {
  CONNECTING_AT_ONCE, eachLimited, emit, fail, flowControl, gate, hr, hrToEpoch, nowNs,
  parseArgs, slotsOf, slotTicker, stdoutFlushed, writeRecords,
} from './common.mjs';
import { connect, disconnect } from './connect.mjs';
import { wire } from './wire.mjs';
import { performance } from 'node:perf_hooks';

const o = parseArgs('consumer', process.argv.slice(2));

// With transactions every message is acknowledged inside the open transaction (a JMS
// transacted session ignores its ack mode; STOMP auto-ack would ignore the transaction).
const stompAck = o.txBatch > 0 && o.ack === 'auto' ? 'client-individual' : o.ack;
const ackEvery = Math.ceil(o.prefetch / 2); // client (cumulative) mode
const target = !o.gate && o.count > 0 ? o.count * o.bursts : 0; // of all slots together
// --connections N > 1: N slots, each a connection of its own, share this thread
const MANY = o.connections > 1;
const P0 = performance.now();
const H0 = hr(); // performance.now() and hrtime read the same monotonic clock

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

let total = 0;        // bench messages the slots have received together (the stop target)
let stopping = false;
let finishing = false;
let subscribing = 0;  // slots connected whose subscriptions are not confirmed yet
let ticker = null;

process.on('uncaughtException', (e) => fail(1, `internal: ${e && e.stack || e}`));
process.on('unhandledRejection', (e) => fail(1, `internal: ${e && e.stack || e}`));
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => stop());
if (o.gate) gate(() => {}, () => stop());

// the process's connections, one slot each (one: the process itself, as ever)
const slots = slotsOf(o).map(({ id, records }) => consumerSlot(id, records));
if (MANY) ticker = slotTicker(slots, 'received', (s) => s.received);
await eachLimited(slots, CONNECTING_AT_ONCE, (s) => (stopping ? undefined : s.open()));

function stop() {
  if (stopping) return;
  stopping = true;
  if (subscribing > 0) return; // finished once the subscriptions under way are confirmed
  finish();
}

async function finish(fatalMsg) {
  if (finishing) return;
  finishing = true;
  if (ticker) clearInterval(ticker);
  await Promise.all(slots.map((s) => s.close()));
  for (const s of slots) s.writeRecords();
  if (fatalMsg !== undefined) fail(1, fatalMsg);
  for (const s of slots) s.done();
  await stdoutFlushed();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------

/**
 * One connection and what it receives: its own stompjs Client, subscriptions (one to every
 * destination), acknowledgements, counts and records.
 */
function consumerSlot(id, records) {
  // records, one entry per message carrying the four bench headers, in typed arrays: a kept
  // string or object from stompjs's parser costs the garbage collector far more than the few
  // instructions that turn it into numbers now (a replay of 60k frames through stompjs's parser:
  // +3.0 us/msg against the receive loop with the values kept as received, +0.9 like this).
  // The producer and bb_nonce are kept as indexes into the names seen; a value that is not
  // plain digits (or bb_crc32 not 8 lowercase hex digits) is kept as received in `odd` and
  // judged when the records are written.
  const rec = {
    recv: new Float64Array(0), // performance.now(), turned into epoch ns when written
    head: new Float64Array(0), // the body's first min(6, bytes) bytes as one number
    seq: new Float64Array(0),
    burst: new Float64Array(0),
    sentHi: new Float64Array(0), // bb_sent_ns = sentHi * 1e9 + sentLo, as decimal digits
    sentLo: new Float64Array(0),
    bytes: new Int32Array(0),
    flags: new Int32Array(0), // 1 redelivered, 2 crcH holds bb_crc32, 4 bb_crc32 odd, 8 numbers odd
    dest: new Int32Array(0), // index into o.destinations
    prod: new Int32Array(0), // index into prodNames
    nonce: new Int32Array(0), // index into nonceNames, -1 when absent
    crc: new Uint32Array(0), // CRC-32 of the body as received
    crcH: new Uint32Array(0), // bb_crc32's value
  };
  let nRec = 0;
  const odd = new Map(); // entry -> bb_crc32 as received; -1 - entry -> [bb_seq, bb_burst, bb_sent_ns]
  const prodNames = [];
  const prodIdx = new Map();
  let lastProd = null;
  let lastProdIdx = -1;
  const nonceNames = [];
  const nonceIdx = new Map();
  let lastNonce = null;
  let lastNonceIdx = -1;
  // the smallest size the records grow to: one connection's run is thousands of messages;
  // a slot of thousands gets its share (10,000 slots of 65,536 entries: 50 GB)
  const minCap = MANY ? 64 : 1 << 16;

  function grow(want = 0) {
    const cap = Math.max(want, minCap, rec.recv.length * 2);
    for (const k of Object.keys(rec)) {
      const x = new rec[k].constructor(cap);
      x.set(rec[k]);
      rec[k] = x;
    }
  }
  // When the count is known, the records take their size now and touch it (fill), as the Java
  // consumer's arrays do: grown by doubling while messages flow, they cost 0.05 page faults a
  // message more than the loop, 3-6 us each on the bench's VM (28955a4:docs/perf.md, "Kept bodies are
  // page faults"). A slot of several takes its share of the count (it grows if it gets more).
  if (target > 0) {
    grow(Math.min(MANY ? Math.ceil(target / o.connections) : target, 1 << 20));
    for (const k of Object.keys(rec)) rec[k].fill(0);
  }

  let received = 0;
  let foreign = 0;
  let redelivered = 0;
  let accepting = true; // false once the final acks are out (client modes): later deliveries go back
  let ready = false;
  let client = null;
  let conn = null;
  const subs = []; // { id, held: last unacked message (client mode), n: unacked count }
  let txId = null;
  let txCount = 0;
  let txSerial = 0;

  /** Connect, subscribe to every destination, then `ready` (or finish if stopped meanwhile). */
  async function open() {
    ({ client, conn } = await connect({ ...o, id }, { onFatal: fatal, preReady: () => !ready, onReconnect }));
    subscribing++;
    if (o.txBatch > 0) beginTx();

    await new Promise((resolve) => {
      const receipt = `bb-sub-${id}`;
      client.watchForReceipt(receipt, resolve);
      o.destinations.forEach((d, di) => {
        const sub = { id: `sub-${di}`, held: null, n: 0 };
        subs.push(sub);
        sub.handler = handler(di, sub);
        const headers = { id: sub.id, ack: stompAck, ...flowControl(o) };
        if (di === o.destinations.length - 1) headers.receipt = receipt;
        client.subscribe(`/queue/${d}`, sub.handler, headers);
      });
    });
    conn.cancelTimer();
    ready = true;
    subscribing--;
    if (!stopping) {
      emit({ event: 'ready', id, role: 'consumer', ...wire.socketFacts(conn) });
      if (!MANY) ticker = setInterval(() => emit({ event: 'tick', id, t_ns: nowNs(), received }), 1000);
    } else if (subscribing === 0) {
      await finish();
    }
  }

  /**
   * --failover: stompjs connected again after a drop. What the dropped connection delivered and
   * we had not acknowledged is the broker's to redeliver (an ack of it here would be an error);
   * subscriptions are made again in onConnect, as stompjs's documentation says.
   */
  function onReconnect() {
    o.destinations.forEach((d, di) => {
      const sub = subs[di];
      sub.held = null;
      sub.n = 0;
      client.subscribe(`/queue/${d}`, sub.handler,
        { id: sub.id, ack: stompAck, ...flowControl(o) });
    });
  }

  function handler(di, sub) {
    const mode = stompAck;
    const tx = o.txBatch;
    return (m) => {
      const t = performance.now();
      if (!accepting) return;
      const h = m.headers;
      const p = h.bb_producer;
      const sq = h.bb_seq;
      const bu = h.bb_burst;
      const st = h.bb_sent_ns;
      if (p === undefined || sq === undefined || bu === undefined || st === undefined) {
        foreign++;
      } else {
        const b = m.binaryBody;
        const len = b.length;
        let head = 0;
        for (let k = 0; k < len && k < 6; k++) head = head * 256 + b[k];
        const red = h.redelivered === 'true' ? 1 : 0;
        redelivered += red;
        const n = nRec;
        if (n === rec.recv.length) grow();
        let pi = lastProdIdx;
        if (p !== lastProd) {
          pi = prodIdx.get(p);
          if (pi === undefined) { pi = prodNames.length; prodNames.push(p); prodIdx.set(p, pi); }
          lastProd = p;
          lastProdIdx = pi;
        }
        const nc = h.bb_nonce;
        let ni = -1;
        if (nc !== undefined) {
          ni = lastNonceIdx;
          if (nc !== lastNonce) {
            ni = nonceIdx.get(nc);
            if (ni === undefined) { ni = nonceNames.length; nonceNames.push(nc); nonceIdx.set(nc, ni); }
            lastNonce = nc;
            lastNonceIdx = ni;
          }
        }
        let flags = red;
        const ch = h.bb_crc32;
        if (ch !== undefined) {
          const v = hex8(ch);
          if (v >= 0) { rec.crcH[n] = v; flags |= 2; } else { odd.set(n, ch); flags |= 4; }
        }
        if (digits(sq, 15) && digits(bu, 15) && digits(st, 24)) {
          rec.seq[n] = +sq;
          rec.burst[n] = +bu;
          const L = st.length;
          rec.sentHi[n] = L > 9 ? +st.slice(0, L - 9) : 0;
          rec.sentLo[n] = L > 9 ? +st.slice(L - 9) : +st;
        } else {
          odd.set(-1 - n, [sq, bu, st]);
          flags |= 8;
        }
        rec.recv[n] = t;
        rec.head[n] = head;
        rec.bytes[n] = len;
        rec.flags[n] = flags;
        rec.dest[n] = di;
        rec.prod[n] = pi;
        rec.nonce[n] = ni;
        if (len > 6) rec.crc[n] = crc32(b); // (a body of up to 6 bytes is all in `head`: at stop)
        nRec = n + 1;
        received++;
        total++;
      }
      if (mode === 'client-individual') {
        m.ack(txId !== null ? { transaction: txId } : {});
      } else if (mode === 'client') {
        sub.held = m;
        if (++sub.n >= ackEvery) ackHeld(sub);
      }
      if (tx > 0 && ++txCount >= tx) { ackAllHeld(); commitTx(); beginTx(); }
      if (target > 0 && total >= target) stop();
    };
  }

  function ackHeld(sub) {
    if (sub.held) {
      sub.held.ack(txId !== null ? { transaction: txId } : {});
      sub.held = null;
      sub.n = 0;
    }
  }

  function ackAllHeld() { for (const s of subs) ackHeld(s); }

  function beginTx() {
    txId = client.begin(`tx-${id}-${txSerial++}`).id;
    txCount = 0;
  }

  function commitTx() {
    if (txId !== null) { client.commit(txId); txId = null; }
  }

  /** A dropped connection (without --failover) or the broker's ERROR: what was received is
   * still written, as every client does (every slot's), then exit 1 naming the slot. */
  function fatal(msg) {
    if (finishing) return;
    stopping = true;
    accepting = false;
    client = null; // nothing to acknowledge or disconnect any more
    const why = MANY ? `slot ${id}: ${msg}` : msg;
    finish(why).catch(() => fail(1, why));
  }

  /** Acknowledge what is held (client modes) and disconnect. */
  async function close() {
    if (!client) return;
    if (stompAck !== 'auto') {
      // hand back nothing we recorded: ack what we hold; later deliveries are redelivered
      ackAllHeld();
      commitTx();
      accepting = false;
    }
    // DISCONNECT's receipt comes after the broker handled the acks/commit sent before it.
    // In auto mode, messages already on the way are the broker's "consumed": keep recording.
    await disconnect(client, conn);
  }

  /** Judge what only the end can (odd header values), then write the records. */
  function writeSlotRecords() {
    // A message whose bench headers are not integers is foreign after all (it counted towards
    // the --count target while running: only a hand-made message can do that).
    const INT = /^[0-9]+$/;
    const bad = new Set();
    for (const [k, v] of odd) {
      if (k < 0 && !v.every((x) => INT.test(x))) bad.add(-1 - k);
    }
    received -= bad.size;
    foreign += bad.size;
    for (const i of bad) redelivered -= rec.flags[i] & 1;
    if (records) {
      const names = o.destinations;
      const keep = [];
      for (let i = 0; i < nRec; i++) if (!bad.has(i)) keep.push(i);
      const hex = (v) => v.toString(16).padStart(8, '0');
      writeRecords(records, '#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest' +
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
          const recvNs = hrToEpoch(H0 + BigInt(Math.round((rec.recv[i] - P0) * 1e6)));
          const crcHead = f & 2 ? hex(rec.crcH[i]) : f & 4 ? odd.get(i) : '-';
          const nonce = rec.nonce[i] < 0 ? '-' : nonceNames[rec.nonce[i]];
          return `${prodNames[rec.prod[i]]}\t${seq}\t${burst}\t${sent}\t${recvNs}\t` +
            `${rec.bytes[i]}\t${bodyOk(Number(seq), rec.bytes[i], rec.head[i])}\t${f & 1}\t${names[rec.dest[i]]}\t` +
            `${nonce}\t${crcHead}\t${hex(rec.bytes[i] > 6 ? rec.crc[i] : crc32(headBytes(rec.head[i], rec.bytes[i])))}\n`;
        });
    }
  }

  return {
    id, open, close, writeRecords: writeSlotRecords,
    get received() { return received; },
    done: () => emit({ event: 'done', id, received, foreign, redelivered }),
  };
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
