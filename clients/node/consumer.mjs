#!/usr/bin/env node
// burstbench consumer over STOMP (@stomp/stompjs; ws:// or stomp://). See clients/contract.md.

import {
  emit, fail, failOnCrash, flowControl, gate, hr, hrToEpoch, nowNs, stdoutFlushed,
} from './common.mjs';
import { connect, disconnect } from './connect.mjs';
import { parseArgs } from './options.mjs';
import { Received } from './records.mjs';
import { CONNECTING_AT_ONCE, eachLimited, slotsOf, slotTicker } from './slots.mjs';
import { wire } from './wire.mjs';
import { performance } from 'node:perf_hooks';

failOnCrash();
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

let total = 0;        // bench messages the slots have received together (the stop target)
let stopping = false;
let finishing = false;
let subscribing = 0;  // slots connected whose subscriptions are not confirmed yet
let ticker = null;

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

/**
 * One connection and what it receives: its own stompjs Client, subscriptions (one to every
 * destination), acknowledgements, counts and records.
 */
function consumerSlot(id, records) {
  // sized for its share of the count (it grows if it gets more), from 64 entries for a slot
  const kept = new Received(Math.min(Math.ceil(target / o.connections), 1 << 20), MANY ? 64 : 1 << 16);

  let received = 0;
  let foreign = 0;
  let redelivered = 0;
  let accepting = true; // false once the final acks are out (client modes): later deliveries go back
  let ready = false;
  let client = null;
  let conn = null;
  const subs = []; // one a destination: { id, handler, held, n }
  let txId = null;
  let txCount = 0;
  let txSerial = 0;

  /** Connect, subscribe to every destination, then `ready` (or finish if stopped meanwhile). */
  async function open() {
    ({ client, conn } = await connect({ ...o, id }, { onFatal: fatal, preReady: () => !ready, onReconnect: () => subscribeAll() }));
    subscribing++;
    if (o.txBatch > 0) beginTx();

    await new Promise((resolve) => {
      client.watchForReceipt(`bb-sub-${id}`, resolve);
      subscribeAll(`bb-sub-${id}`);
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
   * SUBSCRIBE to every destination, the last with `receipt`. Again in onConnect after a
   * --failover reconnect, as stompjs's documentation says: what the dropped connection delivered
   * and we had not acknowledged is the broker's to redeliver (an ack of it would be an error).
   */
  function subscribeAll(receipt) {
    o.destinations.forEach((d, di) => {
      const sub = subs[di] ??= { id: `sub-${di}` };
      sub.handler ??= handler(di, sub);
      sub.held = null; // (client mode) the last message not acknowledged yet, and how many
      sub.n = 0;
      const headers = { id: sub.id, ack: stompAck, ...flowControl(o) };
      if (receipt && di === o.destinations.length - 1) headers.receipt = receipt;
      client.subscribe(`/queue/${d}`, sub.handler, headers);
    });
  }

  function handler(di, sub) {
    const mode = stompAck;
    const tx = o.txBatch;
    return (m) => {
      const t = performance.now();
      if (!accepting) return;
      if (kept.keep(m, di, t)) {
        redelivered += m.headers.redelivered === 'true' ? 1 : 0;
        received++;
        total++;
      } else foreign++;
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
    const bad = kept.foreign();
    received -= bad.size;
    foreign += bad.size;
    for (const i of bad) redelivered -= kept.redelivered(i);
    if (records) {
      kept.write(records, o.destinations, bad, (t) => hrToEpoch(H0 + BigInt(Math.round((t - P0) * 1e6))));
    }
  }

  return {
    id, open, close, writeRecords: writeSlotRecords,
    get received() { return received; },
    done: () => emit({ event: 'done', id, received, foreign, redelivered }),
  };
}
