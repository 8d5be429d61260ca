#!/usr/bin/env node
// burstbench producer over STOMP (@stomp/stompjs; ws:// or stomp://). See clients/contract.md.

import { crc32 } from 'node:zlib';
import {
  bodyMaker, burstCount, emit, fail, failOnCrash, gate, hr, hrToEpoch, nowNs, stdoutFlushed,
} from './common.mjs';
import { connect, disconnect, Runs } from './connect.mjs';
import { sendWhole } from './failover.mjs';
import { parseArgs } from './options.mjs';
import { Sent } from './records.mjs';
import { CONNECTING_AT_ONCE, eachLimited, slotsOf, slotTicker } from './slots.mjs';
import { wire } from './wire.mjs';

failOnCrash();
const o = parseArgs('producer', process.argv.slice(2));
// bytes a connection may hold unwritten (connect.mjs's Runs): 1 MiB, with N slots
// (--connections) each its share, at least 64 KiB (10,000 slots: 640 MiB, not 10 GiB)
const HIGH_WATER = Math.max(64 * 1024, Math.floor((1024 * 1024) / o.connections));
// --connections N > 1: N slots, each a connection of its own, share this thread
const MANY = o.connections > 1;

const dests = o.destinations.map((d) => `/queue/${d}`);
let textBody = false;               // over ws:// (common.mjs's bodyMaker)
let bodyOf = null;
const count = burstCount(o);
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
  const log = new Sent(MANY);        // bb_sent_ns and when handed over, of each message sent
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
    bodyOf = bodyMaker(o.size, textBody);
  }

  // `startHr`: the slot's (shifted) start, given with several
  async function burst(b, startHr) {
    await sendWhole(o, conn, b, (drops) => attemptBurst(b, drops, startHr), () => aborting,
      () => { sent -= log.resend(b * count); });
  }

  async function attemptBurst(b, drops, start) {
    const base = b * count;
    const bStr = String(b);
    const nsPer = o.rate > 0 ? 1e9 / o.rate : 0;
    const { txBatch: tx, persistent, nonce } = o;
    const receipt = `bb-${id}-${b}`;
    let txId = null;
    let firstNs = 0n;
    let lastNs = 0n;
    const startHr = start ?? hr();
    const startNs = hrToEpoch(startHr);
    const endNs = durationNs > 0n && nsPer === 0 ? startNs + durationNs : 0n; // a timed flood

    let confirmed = false;
    const receiptSeen = new Promise((res) => client.watchForReceipt(receipt, () => { confirmed = true; res(); }));

    const runs = new Runs(conn, count, nsPer, startHr, HIGH_WATER, MANY);
    let i = 0;
    let finished = false;               // the burst's last message is sent
    while (i < count && !aborting) {
      const end = await runs.from(i);
      for (; i < end; i++) {
        const s = base + i;
        if (tx > 0 && i % tx === 0) txId = client.begin(`tx-${id}-${b}-${i}`).id;
        const body = bodyOf(s);
        // CRC-32 of the body's bytes (the string's bytes are its ASCII characters)
        const crc = crc32(body).toString(16).padStart(8, '0');
        const t = nowNs();
        const sentAt = nsPer > 0 ? startNs + BigInt(Math.round(i * nsPer)) : t;
        const headers = {
          bb_producer: id, bb_seq: String(s), bb_burst: bStr, bb_sent_ns: String(sentAt),
          bb_nonce: nonce, bb_crc32: crc,
        };
        if (persistent) headers.persistent = 'true';
        if (txId !== null) headers.transaction = txId;
        const last = i === count - 1 || (endNs > 0n && t >= endNs);
        if (last && tx === 0) headers.receipt = receipt;
        if (textBody) client.publish({ destination: dests[s % dests.length], headers, body });
        else client.publish({ destination: dests[s % dests.length], headers, binaryBody: body });
        log.push(sentAt, t);
        sent++;
        if (i === 0) firstNs = t;
        lastNs = t;
        if (txId !== null && (last || i % tx === tx - 1)) {
          if (last) wire.commitWithReceipt(client, txId, receipt);
          else client.commit(txId);
          txId = null;
        }
        if (last) { i++; finished = true; break; }
        if (runs.full()) { i++; break; }
      }
      if (finished) break;
      if (end) await runs.rest();
    }
    if (aborting) {
      if (txId !== null) client.commit(txId); // what was sent is in the records: let it count
      return;
    }
    while (!confirmed && !aborting && conn.drops === drops) await Promise.race([receiptSeen, waitPoke()]);
    if (conn.drops !== drops) return false;
    if (confirmed) emit({ event: 'burst', id, burst: b, sent: i, first_ns: firstNs, last_ns: lastNs });
    return true;
  }

  const close = async () => { if (client) await disconnect(client, conn); };
  const writeRecords = () => { if (records) log.write(records, id, count); };

  return {
    id, open, burst, close, writeRecords,
    get sent() { return sent; },
    get total() { return sent + log.copies.length; }, // with the copies --failover sent again
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
