#!/usr/bin/env node
// burstbench consumer over STOMP (@stomp/stompjs; ws:// or stomp://). See clients/contract.md.

import { crc32 } from 'node:zlib';
import {
  connect, disconnect, emit, fail, gate, hr, hrToEpoch, nowNs, parseArgs, wire, writeRecords,
} from './common.mjs';

const o = parseArgs('consumer', process.argv.slice(2));

// With transactions every message is acknowledged inside the open transaction (a JMS
// transacted session ignores its ack mode; STOMP auto-ack would ignore the transaction).
const stompAck = o.txBatch > 0 && o.ack === 'auto' ? 'client-individual' : o.ack;
const ackEvery = Math.ceil(o.prefetch / 2); // client (cumulative) mode
const target = !o.gate && o.count > 0 ? o.count * o.bursts : 0;

// records, one entry per message carrying the four bench headers: their values as received,
// checked (integers, body digits) when the records are written; bb_nonce and bb_crc32 as
// received (undefined when absent) and the CRC-32 of the body bytes, formatted then too
const rProducer = [];
const rSeq = [];
const rBurst = [];
const rSent = [];
const rRecv = []; // hrtime (BigInt), turned into epoch ns when written
const rBytes = [];
const rHead = []; // the body's first min(6, bytes) bytes as one number
const rRed = [];  // 1 if redelivered
const rDest = []; // index into o.destinations
const rNonce = [];
const rCrcHead = [];
const rCrc = []; // CRC-32 of the body as received (a number)

let received = 0;
let foreign = 0;
let redelivered = 0;
let accepting = true; // false once the final acks are out (client modes): later deliveries go back
let ready = false;
let stopping = false;
let client = null;
let conn = null;
let ticker = null;
const subs = []; // { id, held: last unacked message (client mode), n: unacked count }
let txId = null;
let txCount = 0;
let txSerial = 0;

process.on('uncaughtException', (e) => fail(1, `internal: ${e && e.stack || e}`));
process.on('unhandledRejection', (e) => fail(1, `internal: ${e && e.stack || e}`));
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => stop());
if (o.gate) gate(() => {}, () => stop());

({ client, conn } = await connect(o, { onFatal: (m) => fail(1, m), preReady: () => !ready, onReconnect }));
if (o.txBatch > 0) beginTx();

await new Promise((resolve) => {
  const receipt = `bb-sub-${o.id}`;
  client.watchForReceipt(receipt, resolve);
  o.destinations.forEach((d, di) => {
    const sub = { id: `sub-${di}`, held: null, n: 0 };
    subs.push(sub);
    sub.handler = handler(di, sub);
    const headers = { id: sub.id, ack: stompAck, 'activemq.prefetchSize': String(o.prefetch) };
    if (di === o.destinations.length - 1) headers.receipt = receipt;
    client.subscribe(`/queue/${d}`, sub.handler, headers);
  });
});

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
      { id: sub.id, ack: stompAck, 'activemq.prefetchSize': String(o.prefetch) });
  });
}
conn.cancelTimer();
ready = true;
if (!stopping) {
  emit({ event: 'ready', id: o.id, role: 'consumer', ...wire.socketFacts(conn) });
  ticker = setInterval(() => emit({ event: 'tick', id: o.id, t_ns: nowNs(), received }), 1000);
} else {
  await finish();
}

// ---------------------------------------------------------------------------------------

function handler(di, sub) {
  const mode = stompAck;
  const tx = o.txBatch;
  return (m) => {
    const t = hr();
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
      rProducer.push(p);
      rSeq.push(sq);
      rBurst.push(bu);
      rSent.push(st);
      rRecv.push(t);
      rBytes.push(len);
      rHead.push(head);
      rRed.push(red);
      rDest.push(di);
      rNonce.push(h.bb_nonce);
      rCrcHead.push(h.bb_crc32);
      rCrc.push(crc32(b));
      received++;
    }
    if (mode === 'client-individual') {
      m.ack(txId !== null ? { transaction: txId } : {});
    } else if (mode === 'client') {
      sub.held = m;
      if (++sub.n >= ackEvery) ackHeld(sub);
    }
    if (tx > 0 && ++txCount >= tx) { ackAllHeld(); commitTx(); beginTx(); }
    if (target > 0 && received >= target) stop();
  };
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

function ackHeld(sub) {
  if (sub.held) {
    sub.held.ack(txId !== null ? { transaction: txId } : {});
    sub.held = null;
    sub.n = 0;
  }
}

function ackAllHeld() { for (const s of subs) ackHeld(s); }

function beginTx() {
  txId = client.begin(`tx-${o.id}-${txSerial++}`).id;
  txCount = 0;
}

function commitTx() {
  if (txId !== null) { client.commit(txId); txId = null; }
}

function stop() {
  if (stopping) return;
  stopping = true;
  if (!client) { finish(); return; } // not connected yet
  if (!ready) return; // finished once subscribed
  finish();
}

async function finish() {
  if (ticker) clearInterval(ticker);
  if (client) {
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
  // A message whose bench headers are not integers is foreign after all (it counted towards
  // the --count target while running: only a hand-made message can do that).
  const INT = /^[0-9]+$/;
  const bad = new Set();
  for (let i = 0; i < rSeq.length; i++) {
    if (!INT.test(rSeq[i]) || !INT.test(rBurst[i]) || !INT.test(rSent[i])) bad.add(i);
  }
  received -= bad.size;
  foreign += bad.size;
  for (const i of bad) redelivered -= rRed[i];
  if (o.records) {
    const names = o.destinations;
    const keep = bad.size === 0 ? null : [...rSeq.keys()].filter((i) => !bad.has(i));
    writeRecords(o.records, '#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest' +
      '\tnonce\tcrc32_header\tcrc32_body',
      keep ? keep.length : rSeq.length, (j) => {
        const i = keep ? keep[j] : j;
        return `${rProducer[i]}\t${rSeq[i]}\t${rBurst[i]}\t${rSent[i]}\t${hrToEpoch(rRecv[i])}\t` +
          `${rBytes[i]}\t${bodyOk(Number(rSeq[i]), rBytes[i], rHead[i])}\t${rRed[i]}\t${names[rDest[i]]}\t` +
          `${rNonce[i] ?? '-'}\t${rCrcHead[i] ?? '-'}\t${rCrc[i].toString(16).padStart(8, '0')}\n`;
      });
  }
  emit({ event: 'done', id: o.id, received, foreign, redelivered });
  process.exit(0);
}
