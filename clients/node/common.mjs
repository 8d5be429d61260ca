// Shared parts of the burstbench Node clients (see clients/contract.md): versions, clock,
// JSON lines, bodies, pacing, the stdin gate. The options are options.mjs, connecting
// connect.mjs, --failover failover.mjs, --connections slots.mjs, records records.mjs, `wire`
// (the one place another program may change) wire.mjs. Public, documented API of the
// libraries only; see README.md for what each choice is.

import fs from 'node:fs';
import readline from 'node:readline';
import { wire } from './wire.mjs';

// stompjs's parser reports exceptions thrown by frame handlers with console.log; stdout
// carries JSON lines only, so anything printed that way goes to stderr.
console.log = (...a) => console.error(...a);

// ---------------------------------------------------------------------------------------
// versions

function pkgVersion(spec) {
  try {
    const entry = new URL(import.meta.resolve(spec));
    // walk up from the resolved entry point to the package's own package.json
    let dir = new URL('.', entry);
    for (let i = 0; i < 5; i++) {
      const p = new URL('package.json', dir);
      if (fs.existsSync(p)) {
        const j = JSON.parse(fs.readFileSync(p, 'utf8'));
        if (j.name === spec && j.version) return j.version;
      }
      dir = new URL('..', dir);
    }
  } catch { /* fall through */ }
  return 'unknown';
}

export function versionLine() {
  return JSON.stringify({
    client: wire.name,
    library: `@stomp/stompjs ${pkgVersion('@stomp/stompjs')}`,
    runtime: `node ${process.version}`,
    transports: {
      ws: `ws ${pkgVersion('ws')} (perMessageDeflate off)`,
      stomp: `@stomp/tcp-wrapper ${pkgVersion('@stomp/tcp-wrapper')}`,
    },
  });
}

// ---------------------------------------------------------------------------------------
// clock: ns since the epoch = hrtime + one offset taken at start, aligned on Date.now()
// millisecond edges so it is within a few microseconds of the wall clock other processes read.
// One edge is not enough: a process descheduled between seeing the edge and reading the
// monotonic clock takes an offset too small by the time it was away (a browser consumer on
// a busy machine once stamped receipts 4.4 ms before the Java producer's sends). Each error
// there only lowers an estimate, so the largest of a few edges is the one to keep.

export function epochOffset(wallMs, monoNs, edges = 5) {
  let best = null;
  for (let i = 0; i < edges; i++) {
    const d0 = wallMs();
    let d;
    while ((d = wallMs()) === d0) { /* spin to the next millisecond edge (<= 1 ms) */ }
    const est = BigInt(d) * 1000000n - monoNs();
    if (best === null || est > best) best = est;
  }
  return best;
}

const HR_OFFSET = epochOffset(Date.now, process.hrtime.bigint);
export const hr = process.hrtime.bigint;
export const hrToEpoch = (h) => h + HR_OFFSET;
export const nowNs = () => process.hrtime.bigint() + HR_OFFSET;

// ---------------------------------------------------------------------------------------
// output

/** One JSON line on stdout; BigInt values are written as JSON integers. */
export function emit(obj) {
  let s = '{';
  let first = true;
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    s += (first ? '' : ',') + JSON.stringify(k) + ':' +
      (typeof v === 'bigint' ? v.toString() : JSON.stringify(v));
    first = false;
  }
  process.stdout.write(s + '}\n');
}

/**
 * Resolves once every line written to stdout so far has left the process, or after `ms`
 * (a reader that has stopped reading). A process of many slots ends with thousands of lines,
 * more than a pipe holds, and what still waits in the stream when process.exit() runs is lost.
 */
export function stdoutFlushed(ms = 10000) {
  if (process.stdout.writableLength === 0) return Promise.resolve();
  return new Promise((res) => {
    const t = setTimeout(res, ms);
    process.stdout.write('', () => { clearTimeout(t); res(); });
  });
}

let failed = false;
/** One `error:` line on stderr, then exit with `code`. */
export function fail(code, msg) {
  if (failed) return;
  failed = true;
  process.stderr.write(`error: ${String(msg).replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(code);
}

/** An exception nothing caught is the client's bug: one line and exit 1, as every failure. */
export function failOnCrash() {
  process.on('uncaughtException', (e) => fail(1, `internal: ${e && e.stack || e}`));
  process.on('unhandledRejection', (e) => fail(1, `internal: ${e && e.stack || e}`));
}

/** Messages in a burst: --count, or with --duration those due before its end (open loop),
 * or without a rate a flood the end cuts short. */
export const burstCount = (o) => (o.duration > 0
  ? (o.rate > 0 ? Math.max(1, Math.ceil(o.duration * o.rate)) : Number.MAX_SAFE_INTEGER) : o.count);

export const immediate = () => new Promise((res) => setImmediate(res));
export const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

const PACER = new Int32Array(new SharedArrayBuffer(4)); // Atomics.wait's cell, never woken

/**
 * Wait `ns` nanoseconds before a paced send. Node's timers tick in whole milliseconds: a wait
 * under 1 ms (a message every 0.56 ms at 1,773 msg/s) sleeps in Atomics.wait, which blocks this
 * thread for the fraction without spinning; the event loop gets its turn after each message
 * sent. Slots of one process (`shared`) wait on timers only, none blocking the others.
 */
export async function pause(ns, shared) {
  if (shared) await sleep(Math.ceil(ns / 1e6)); // (a wake at or after the time)
  else if (ns >= 1e6) await sleep(Math.floor(ns / 1e6));
  else Atomics.wait(PACER, 0, 0, ns / 1e6);
}

/**
 * Message `seq`'s body (clients/contract.md): its counter's last 6 digits (the first `size` of
 * them when shorter), then 'x' up to `size` bytes. A string when `text`: ActiveMQ's WebSocket
 * transport reads STOMP from text frames only (binary frames are dropped), so over ws:// the
 * body goes as a string; stompjs still adds content-length (bytes on the wire and for OpenWire
 * consumers are the same). Else, over TCP, one byte array rewritten at each call.
 */
export function bodyMaker(size, text) {
  const nd = Math.min(6, size);
  if (text) {
    const tail = size > 6 ? 'x'.repeat(size - 6) : '';
    return (seq) => {
      const digits = String(seq % 1000000).padStart(6, '0');
      return nd === 6 ? digits + tail : digits.slice(0, nd);
    };
  }
  const body = new Uint8Array(size).fill(0x78); // 'x'
  return (seq) => {
    let c = seq % 1000000;
    for (let k = 5; k >= 0; k--) { if (k < nd) body[k] = 48 + (c % 10); c = (c / 10) | 0; }
    return body;
  };
}

// ---------------------------------------------------------------------------------------
// stdin gate: go / stop / end of file

export function gate(onGo, onStop) {
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  rl.on('line', (line) => {
    const l = line.trim();
    if (l === 'go') onGo();
    else if (l === 'stop') onStop();
    else if (l !== '') process.stderr.write(`ignoring stdin line ${JSON.stringify(l.slice(0, 80))}\n`);
  });
  rl.on('close', onStop);
  return rl;
}

/** The SUBSCRIBE header that bounds what the broker pushes ahead: ActiveMQ Classic's
 * activemq.prefetchSize (messages), or with --window-bytes Artemis's consumer-window-size. */
export function flowControl(o) {
  return o.windowBytes === undefined ? { 'activemq.prefetchSize': String(o.prefetch) }
    : { 'consumer-window-size': String(o.windowBytes) };
}
