#!/usr/bin/env node
// burstbench producer over STOMP (@stomp/stompjs; ws:// or stomp://). See clients/contract.md.

import { crc32 } from 'node:zlib';
import {
  CONNECTING_AT_ONCE, eachLimited, emit, fail, gate, hr, hrToEpoch, immediate, NsLog, nowNs,
  parseArgs, sleep, SlotNsLog, slotsOf, slotTicker, stdoutFlushed, writeRecords as writeTsv,
} from './common.mjs';
import { connect, disconnect, drained } from './connect.mjs';
import { wire } from './wire.mjs';

const PACER = new Int32Array(new SharedArrayBuffer(4)); // Atomics.wait's cell, never woken

const o = parseArgs('producer', process.argv.slice(2));
const CHUNK = 500;                  // messages between two yields to the event loop
// publish() only queues: above HIGH_WATER bytes not yet written to the network, wait until
// the backlog is down to LOW_WATER. About a socket buffer's worth, as a blocking write holds
// (the other languages' clients): a flood then sends as fast as the broker reads, instead of
// framing seconds of messages ahead on the cores the broker and consumer need (docs/measuring.md)
// With N slots (--connections) each gets its share of that, at least 64 KiB: a flood over
// 10,000 connections then holds some 640 MiB unwritten, not 10 GiB.
const HIGH_WATER = Math.max(64 * 1024, Math.floor((1024 * 1024) / o.connections));
const LOW_WATER = HIGH_WATER / 4;
// --connections N > 1: N slots, each a connection of its own, share this thread
const MANY = o.connections > 1;

const dests = o.destinations.map((d) => `/queue/${d}`);
const nd = dests.length;
const body = new Uint8Array(o.size).fill(0x78); // 'x'; the counter digits are rewritten per message
const ndigits = Math.min(6, o.size);
// ActiveMQ's WebSocket transport reads STOMP from text frames only (binary frames are
// dropped), so over ws:// the body goes as a string; stompjs still adds content-length
// (bytes on the wire and for OpenWire consumers are the same). Over TCP: binary body.
let textBody = false;
const tail = o.size > 6 ? 'x'.repeat(o.size - 6) : '';
// a burst of fixed duration: the messages due before its end, or a flood until it ends
const burstCount = o.duration > 0 ? (o.rate > 0 ? Math.max(1, Math.ceil(o.duration * o.rate)) : Number.MAX_SAFE_INTEGER) : o.count;
const durationNs = BigInt(Math.round(o.duration * 1e9));
let stopping = false;               // stop after the current burst (stdin stop / EOF)
let aborting = false;               // stop now (SIGTERM)
let wakers = [];                    // resolve the waits for a command or signal
let goes = 0;
let opened = false;                 // every slot has connected
let finishing = false;
let ticker = null;

const poke = () => { const w = wakers; wakers = []; for (const f of w) f(); };
const waitPoke = () => new Promise((res) => { wakers.push(res); });

process.on('uncaughtException', (e) => fail(1, `internal: ${e && e.stack || e}`));
process.on('unhandledRejection', (e) => fail(1, `internal: ${e && e.stack || e}`));
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    stopping = aborting = true;
    if (!opened) finish(); // not connected yet: nothing to send, close what is open
    poke();
  });
}
if (o.gate) gate(() => { goes++; poke(); }, () => { stopping = true; poke(); });

// the process's connections, one slot each (one: the process itself, as ever)
const slots = slotsOf(o).map(({ id, records }) => producerSlot(id, records));
if (MANY) ticker = slotTicker(slots, 'sent', (s) => s.sent);
await eachLimited(slots, CONNECTING_AT_ONCE, async (s) => {
  if (finishing) return;
  await s.open();
  if (aborting) await finish();
  emit({ event: 'ready', id: s.id, role: 'producer', ...s.socketFacts() });
});
opened = true;
if (!MANY) {
  ticker = setInterval(() => emit({ event: 'tick', id: o.id, t_ns: nowNs(), sent: slots[0].sent }), 1000);
}

// Every slot sends the burst, their sends interleaved (each yields every CHUNK messages). With
// several slots the burst has one start, and under --rate slot k's schedule is shifted by
// (k-1)/(N*R), so the slots' messages spread over each 1/R instead of leaving together
// (clients/contract.md): message s of slot k is due at start + (s + (k-1)/N)/R.
function burstAll(b) {
  if (!MANY) return slots[0].burst(b);
  const start = hr();
  const shiftNs = o.rate > 0 ? 1e9 / (o.rate * slots.length) : 0;
  return Promise.all(slots.map((s, k) => s.burst(b, start + BigInt(Math.round(k * shiftNs)))));
}
if (o.gate) {
  for (let b = 0; ; b++) {
    while (goes === 0 && !stopping) await waitPoke();
    if (goes === 0 || aborting) break;
    goes--;
    await burstAll(b);
  }
} else {
  for (let b = 0; b < o.bursts && !stopping; b++) await burstAll(b);
}
await finish();

// ---------------------------------------------------------------------------------------

/**
 * One connection and what it sends: its own stompjs Client, id (stamped on its messages) and
 * records. A lost connection fails the process; with several slots every slot's records are
 * written first and the error names the slot.
 */
function producerSlot(id, records) {
  // bb_sent_ns of every message sent, by seq, and when each was handed to stompjs: epoch ns in
  // 64-bit cells, not arrays of strings and bigints (a million live heap objects slow every
  // garbage collection a long run makes)
  const sentNs = MANY ? new SlotNsLog() : new NsLog();
  const actualNs = MANY ? new SlotNsLog() : new NsLog();
  const copies = [];                // --failover: [seq, bb_sent_ns, handed over] of copies sent before
  let sent = 0;
  let client = null;
  let conn = null;

  const onFatal = (msg) => {
    if (!MANY) fail(1, msg);
    for (const s of slots) s.writeRecords();
    fail(1, `slot ${id}: ${msg}`);
  };

  async function open() {
    ({ client, conn } = await connect({ ...o, id }, { onFatal, onDrop: poke }));
    conn.cancelTimer();
    textBody = conn.kind === 'ws';
  }

  // With --failover a burst the dropped connection left unconfirmed goes again, whole, once
  // stompjs has connected again. `startHr`: the slot's (shifted) start, given with several.
  async function burst(b, startHr) {
    for (;;) {
      const drops = conn.drops;
      let done;
      try {
        done = await attemptBurst(b, drops, startHr);
      } catch (e) {
        if (!o.failover || conn.drops === drops && conn.connected) throw e;
        done = false; // publish() on a connection that is gone
      }
      if (done || aborting) return;
      while (!conn.connected && !aborting) await sleep(20);
      process.stderr.write(`burst ${b} unconfirmed when the connection dropped: sending it again\n`);
      for (let s = b * burstCount; s < sentNs.length; s++) copies.push([s, sentNs.at(s), actualNs.at(s)]);
      sent -= sentNs.length - b * burstCount;
      sentNs.truncate(b * burstCount);
      actualNs.truncate(b * burstCount);
    }
  }

  async function attemptBurst(b, drops, start) {
    const count = burstCount;
    const base = b * count;
    const bStr = String(b);
    const rate = o.rate;
    const nsPer = rate > 0 ? 1e9 / rate : 0;
    const tx = o.txBatch;
    const persistent = o.persistent;
    const nonce = o.nonce;
    const receipt = `bb-${id}-${b}`;
    let txId = null;
    let firstNs = 0n;
    let lastNs = 0n;
    const startHr = start ?? hr();
    const startNs = hrToEpoch(startHr);
    const endNs = durationNs > 0n && nsPer === 0 ? startNs + durationNs : 0n; // a timed flood

    let confirmed = false;
    const receiptSeen = new Promise((res) => client.watchForReceipt(receipt, () => { confirmed = true; res(); }));

    let i = 0;
    let finished = false;               // the burst's last message is sent
    while (i < count) {
      if (aborting) break;
      let end = Math.min(count, i + CHUNK);
      if (nsPer > 0) {
        const elapsed = Number(hr() - startHr);
        const due = Math.floor(elapsed / nsPer) + 1; // messages whose intended time has come
        if (due <= i) {
          // Node's timers tick in whole milliseconds: a wait under 1 ms (a message every
          // 0.56 ms at 1,773 msg/s) sleeps in Atomics.wait, which blocks this thread for the
          // fraction without spinning; the event loop gets its turn after each message sent.
          // Slots of one process (MANY) wait on timers only, none blocking the others.
          const waitNs = i * nsPer - elapsed;
          if (MANY) await sleep(Math.ceil(waitNs / 1e6)); // (a wake at or after the time)
          else if (waitNs >= 1e6) await sleep(Math.floor(waitNs / 1e6));
          else Atomics.wait(PACER, 0, 0, waitNs / 1e6);
          continue;
        }
        if (due < end) end = due;
      }
      for (; i < end; i++) {
        const s = base + i;
        if (tx > 0 && i % tx === 0) txId = client.begin(`tx-${id}-${b}-${i}`).id;
        let text = null;
        if (textBody) {
          const digits = String(s % 1000000).padStart(6, '0');
          text = ndigits === 6 ? digits + tail : digits.slice(0, ndigits);
        } else {
          let c = s % 1000000;
          for (let k = 5; k >= 0; k--) { if (k < ndigits) body[k] = 48 + (c % 10); c = (c / 10) | 0; }
        }
        // CRC-32 of the body's bytes (the string's bytes are its ASCII characters)
        const crc = (text === null ? crc32(body) : crc32(text)).toString(16).padStart(8, '0');
        const t = nowNs();
        const sentAt = nsPer > 0 ? startNs + BigInt(Math.round(i * nsPer)) : t;
        const sentStr = String(sentAt);
        const headers = {
          bb_producer: id, bb_seq: String(s), bb_burst: bStr, bb_sent_ns: sentStr,
          bb_nonce: nonce, bb_crc32: crc,
        };
        if (persistent) headers.persistent = 'true';
        if (txId !== null) headers.transaction = txId;
        const last = i === count - 1 || (endNs > 0n && t >= endNs);
        if (last && tx === 0) headers.receipt = receipt;
        if (text !== null) client.publish({ destination: dests[s % nd], headers, body: text });
        else client.publish({ destination: dests[s % nd], headers, binaryBody: body });
        sentNs.push(sentAt);
        actualNs.push(t);
        sent++;
        if (i === 0) firstNs = t;
        lastNs = t;
        if (txId !== null && (last || i % tx === tx - 1)) {
          if (last) wire.commitWithReceipt(client, txId, receipt);
          else client.commit(txId);
          txId = null;
        }
        if (last) { i++; finished = true; break; }
        if (conn.buffered() > HIGH_WATER) { i++; break; }
      }
      if (finished) break;
      if (conn.buffered() > HIGH_WATER) await drained(conn, LOW_WATER);
      else await immediate();
    }
    if (aborting) {
      if (txId !== null) client.commit(txId); // what was sent is in the records: let it count
      return;
    }
    while (!confirmed && !aborting && conn.drops === drops) await Promise.race([receiptSeen, waitPoke()]);
    if (conn.drops !== drops) return false;
    if (confirmed) {
      emit({ event: 'burst', id, burst: b, sent: i, first_ns: firstNs, last_ns: lastNs });
    }
    return true;
  }

  async function close() {
    if (client) await disconnect(client, conn);
  }

  function writeRecords() {
    if (!records) return;
    const count = burstCount;
    writeTsv(records, '#producer\tseq\tburst\tsent_ns\tactual_ns', sentNs.length + copies.length,
      (k) => {
        const [s, t, a] = k < sentNs.length ? [k, sentNs.at(k), actualNs.at(k)] : copies[k - sentNs.length];
        return `${id}\t${s}\t${Math.floor(s / count)}\t${t}\t${a}\n`;
      });
  }

  return {
    id, open, burst, close, writeRecords,
    get sent() { return sent; },
    get total() { return sent + copies.length; }, // with the copies --failover sent again
    socketFacts: () => wire.socketFacts(conn),
  };
}

async function finish() {
  if (finishing) return new Promise(() => {});
  finishing = true;
  if (ticker) clearInterval(ticker);
  await Promise.all(slots.map((s) => s.close()));
  for (const s of slots) s.writeRecords();
  for (const s of slots) emit({ event: 'done', id: s.id, sent: s.total });
  await stdoutFlushed();
  process.exit(0);
}
