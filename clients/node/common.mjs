// Shared parts of the burstbench Node clients (see clients/contract.md): options, clock,
// JSON lines, stdin gate, slots and records. Connecting is connect.mjs, `wire` (the one place
// another program may change) wire.mjs. Public, documented API of the libraries only; see
// README.md for what each choice is.

import fs from 'node:fs';
import readline from 'node:readline';
import { parseArgs as utilParseArgs } from 'node:util';
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

// ---------------------------------------------------------------------------------------
// options

// The contract's options come from clients/options.tsv, clients/options.yaml resolved for each
// client and role: the parser is util.parseArgs over its rows, each value checked against its
// row (bounds, pattern, choices); what this client cannot do is checked after.

/** The table's rows for `role` of `client`: { option, type, required, default, min, ... }. */
export function table(role, client = wire.name) {
  const [head, ...rows] = fs.readFileSync(new URL('../options.tsv', import.meta.url), 'utf8')
    .split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split('\t'));
  return rows.map((r) => Object.fromEntries(head.map((k, i) => [k, r[i]])))
    .filter((r) => r.client === client && r.role === role);
}

/** `text` for `row`'s option, converted and checked; a bad one exits 2. */
export function checked(row, text) {
  const bad = (why) => fail(2, `--${row.option} ${why}: ${JSON.stringify(text)}`);
  const { type, min, max, above } = row;
  if (type === 'int' || type === 'number') {
    const x = Number(text);
    if (text.trim() === '' || !Number.isFinite(x) || (type === 'int' && !/^-?[0-9]+$/.test(text))) {
      bad(`needs ${type === 'int' ? 'an integer' : 'a number'}`);
    }
    if ((min !== '' && x < Number(min)) || (max !== '' && x > Number(max)) || (above !== '' && !(x > Number(above)))) {
      bad(`must be ${above !== '' ? `> ${above} and <= ${max}` : `${min}..${max}`}`);
    }
    return x;
  }
  const items = type === 'queues' || type === 'urls' ? text.split(',') : [text];
  const whole = new RegExp(`^(?:${row.pattern})$`);
  const choices = row.choices.split(',');
  if (type === 'url' || type === 'urls') {
    if (!items.every((v) => whole.test(v))) bad(`must be an address in ${choices.join(', ')}`);
  } else if (row.choices && !choices.includes(text)) bad(`must be one of ${choices.join(', ')}`);
  else if (row.pattern && !items.every((v) => whole.test(v))) bad(`must match ${row.pattern}`);
  return type === 'queues' ? items : text;
}

const camel = (name) => name.replace(/-([a-z])/g, (_, c) => c.toUpperCase());

export const usage = (role) => `usage: node ${role}.mjs --url URL --destinations Q1[,Q2...] [options]

STOMP client of burstbench (@stomp/stompjs). URL: ws://HOST:PORT/ or wss://HOST:PORT/ (STOMP
over WebSocket), stomp://HOST:PORT (STOMP over TCP), stomp+ssl://HOST:PORT (STOMP over TLS).
Options: clients/contract.md.

${table(role).map((r) => `  ${`--${r.option} ${r.type === 'flag' ? '' : r.type.toUpperCase()}`.padEnd(26)} ${r.help}\n`).join('')}`;

/** Parse argv for `role` with util.parseArgs; exits 2 on any problem, 0 after --help/--version. */
export function parseArgs(role, argv) {
  const rows = table(role);
  const config = {};
  for (const r of rows) config[r.option] = { type: r.type === 'flag' ? 'boolean' : 'string' };
  // util.parseArgs takes a value that starts with a dash only as --name=VALUE: a negative
  // number after an option that takes a value (--window-bytes -1) is joined to it here
  const args = [];
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].startsWith('--') ? argv[i].slice(2) : null;
    if (config[name]?.type === 'string' && /^-[0-9]/.test(argv[i + 1] ?? '')) {
      args.push(`${argv[i]}=${argv[++i]}`);
    } else args.push(argv[i]);
  }
  let raw;
  try {
    raw = utilParseArgs({ args, options: config, strict: true, allowPositionals: false }).values;
  } catch (e) {
    fail(2, e.message);
  }
  if (raw.help) { process.stdout.write(usage(role)); process.exit(0); }
  if (raw.version) { process.stdout.write(versionLine() + '\n'); process.exit(0); }
  const o = { role };
  for (const r of rows) {
    const text = raw[r.option] ?? (r.default !== '' ? r.default : undefined);
    if (r.type === 'flag') o[camel(r.option)] = !!raw[r.option];
    else if (text !== undefined) o[camel(r.option)] = checked(r, text);
    else if (r.required === '1') fail(2, `missing required option --${r.option}`);
  }
  o.endpoint = parseUrl(o.url);
  // the password from the environment keeps it off the process list
  if (o.user !== undefined && o.password === undefined) o.password = process.env.BB_PASSWORD;
  // each slot writes a file of its own: PATH with {id} replaced by the slot's id
  if (o.connections > 1 && o.records !== undefined && !o.records.includes('{id}')) {
    fail(2, `--records ${JSON.stringify(o.records)} with --connections ${o.connections} must contain {id} ` +
      '(replaced by each slot\'s id)');
  }
  if ((raw.cert === undefined) !== (raw.key === undefined)) fail(2, '--cert and --key must be given together');
  for (const name of ['ca', 'cert', 'key']) {
    if (raw[name] === undefined) continue;
    try {
      o[name] = fs.readFileSync(raw[name]);
    } catch (e) {
      fail(2, `--${name}: cannot read ${raw[name]}: ${e.code || e.message}`);
    }
  }
  // what a TLS socket is given: the CA to verify the broker with, and the client's own
  // certificate and key for a broker that asks for one (mutual TLS)
  o.tls = {};
  for (const name of ['ca', 'cert', 'key']) if (o[name] !== undefined) o.tls[name] = o[name];
  o.endpoints = [o.endpoint];
  if (raw.failover !== undefined) {
    for (const u of raw.failover.split(',')) {
      const ep = parseUrl(u);
      if (ep.kind !== o.endpoint.kind || ep.tls !== o.endpoint.tls) {
        fail(2, `--failover addresses must use --url's scheme, got ${JSON.stringify(u)}`);
      }
      o.endpoints.push(ep);
    }
    if (o.txBatch > 0) fail(2, '--failover with --tx-batch is not supported by this client');
    if (o.connections > 1) fail(2, '--failover with --connections N > 1 is not supported by this client');
  }
  o.failover = o.endpoints.length > 1;
  if (o.ack === 'dups-ok') fail(2, '--ack dups-ok: not a mode of the STOMP client (auto, client, client-individual)');
  return o;
}

const SCHEMES = ['ws', 'wss', 'stomp', 'stomp+ssl', 'tcp'];

export function parseUrl(url) {
  const m = /^(ws|wss|stomp|stomp\+ssl|tcp):\/\/(\[[^\]]+\]|[^/:?#\s]+):([0-9]{1,5})(\/[^\s]*)?$/.exec(url);
  if (!m) {
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url);
    if (scheme && !SCHEMES.includes(scheme[1].toLowerCase())) {
      fail(2, `--url scheme ${scheme[1]}: not spoken by this client (use ws://, wss://, stomp://, stomp+ssl:// or tcp://)`);
    }
    fail(2, `--url must look like ws://HOST:PORT/ or stomp://HOST:PORT, got ${JSON.stringify(url)}`);
  }
  const port = Number(m[3]);
  if (port < 1 || port > 65535) fail(2, `--url port out of range: ${m[3]}`);
  const ws = m[1] === 'ws' || m[1] === 'wss';
  return {
    kind: ws ? 'ws' : 'tcp',
    tls: m[1] === 'wss' || m[1] === 'stomp+ssl',
    url: ws ? url : `${m[1]}://${m[2]}:${port}`,
    host: m[2].replace(/^\[|\]$/g, ''),
    port,
  };
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
// many connections in one process (--connections N, clients/contract.md): N slots

/**
 * The slots of this process: [{ id, records }]. One connection is the process itself (its
 * --id, --records taken literally); with N > 1 slot i is `ID.i` and writes PATH with {id}
 * replaced by that id.
 */
export function slotsOf(o) {
  if (o.connections === 1) return [{ id: o.id, records: o.records }];
  return Array.from({ length: o.connections }, (_, k) => {
    const id = `${o.id}.${k + 1}`;
    return { id, records: o.records?.replaceAll('{id}', id) };
  });
}

// Connections being opened at once: thousands of sockets opened in one tick outrun the
// broker's accept queue (dropped SYNs come back a second or more later) and would all share
// one --connect-timeout; a bounded number in flight keeps each attempt's clock its own.
export const CONNECTING_AT_ONCE = 64;

/** Call `fn(item, index)` for every item, at most `limit` calls pending at a time. */
export async function eachLimited(items, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const k = next++;
      await fn(items[k], k);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * One timer for every slot's tick line: each second, a line for each slot whose count
 * (`count(slot)`, named `key` in the line) changed since its last line.
 */
export function slotTicker(slots, key, count) {
  const last = new Map();
  return setInterval(() => {
    const t = nowNs();
    for (const s of slots) {
      const n = count(s);
      if (n === (last.get(s) ?? 0)) continue;
      last.set(s, n);
      emit({ event: 'tick', id: s.id, t_ns: t, [key]: n });
    }
  }, 1000);
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
