#!/usr/bin/env node
// burstbench consumer over STOMP (@stomp/stompjs; ws:// or stomp://). See clients/contract.md.

import {
  connect, disconnect, emit, fail, gate, hr, hrToEpoch, nowNs, parseArgs, writeRecords,
} from './common.mjs';

const o = parseArgs('consumer', process.argv.slice(2));

// With transactions every message is acknowledged inside the open transaction (a JMS
// transacted session ignores its ack mode; STOMP auto-ack would ignore the transaction).
const stompAck = o.txBatch > 0 && o.ack === 'auto' ? 'client-individual' : o.ack;
const ackEvery = Math.ceil(o.prefetch / 2); // client (cumulative) mode
const target = !o.gate && o.count > 0 ? o.count * o.bursts : 0;

// records, one entry per bench message
const rProducer = [];
const rSeq = [];
const rBurst = [];
const rSent = [];
const rRecv = []; // hrtime (BigInt), turned into epoch ns when written
const rBytes = [];
const rFlags = []; // body_ok * 2 + redelivered
const rDest = [];  // index into o.destinations

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

({ client, conn } = await connect(o, { onFatal: (m) => fail(1, m), preReady: () => !ready }));
if (o.txBatch > 0) beginTx();

const INT = /^[0-9]+$/;
await new Promise((resolve) => {
  const receipt = `bb-sub-${o.id}`;
  client.watchForReceipt(receipt, resolve);
  o.destinations.forEach((d, di) => {
    const sub = { id: `sub-${di}`, held: null, n: 0 };
    subs.push(sub);
    const headers = { id: sub.id, ack: stompAck, 'activemq.prefetchSize': String(o.prefetch) };
    if (di === o.destinations.length - 1) headers.receipt = receipt;
    client.subscribe(`/queue/${d}`, handler(di, sub), headers);
  });
});
conn.cancelTimer();
ready = true;
if (!stopping) {
  emit({ event: 'ready', id: o.id, role: 'consumer' });
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
    if (p === undefined || sq === undefined || bu === undefined || st === undefined ||
        !INT.test(sq) || !INT.test(bu) || !INT.test(st)) {
      foreign++;
    } else {
      const b = m.binaryBody;
      const len = b.length;
      let ok = len > 0 ? 1 : 0;
      const nd = len < 6 ? len : 6;
      let c = Number(sq) % 1000000;
      for (let k = 5; k >= 0; k--) {
        if (k < nd && b[k] !== 48 + (c % 10)) ok = 0;
        c = (c / 10) | 0;
      }
      const red = h.redelivered === 'true' ? 1 : 0;
      redelivered += red;
      rProducer.push(p);
      rSeq.push(sq);
      rBurst.push(bu);
      rSent.push(st);
      rRecv.push(t);
      rBytes.push(len);
      rFlags.push(ok * 2 + red);
      rDest.push(di);
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
  if (o.records) {
    const names = o.destinations;
    writeRecords(o.records, '#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest',
      rSeq.length, (i) => {
        const f = rFlags[i];
        return `${rProducer[i]}\t${rSeq[i]}\t${rBurst[i]}\t${rSent[i]}\t${hrToEpoch(rRecv[i])}\t` +
          `${rBytes[i]}\t${f >> 1}\t${f & 1}\t${names[rDest[i]]}\n`;
      });
  }
  emit({ event: 'done', id: o.id, received, foreign, redelivered });
  process.exit(0);
}
