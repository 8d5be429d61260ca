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

// ---------------------------------------------------------------------------------------
// options

// The contract's options (clients/options.yaml): name, util.parseArgs type, roles, help. The
// harness checks every value against that table; this parser checks types, minimums, --id and
// the URL scheme (what the contract tests ask), and what this client cannot do.
const OPTIONS = [
  ['url', 'string', 'pc', 'URL', 'broker address (required)'],
  ['destinations', 'string', 'pc', 'LIST', 'comma-separated queue names, no /queue/ prefix (required)'],
  ['count', 'string', 'p', 'N', 'messages per burst (default 1000)'],
  ['count', 'string', 'c', 'N', 'stop after N x B bench messages without --gate; 0 = until stopped (default 1000)'],
  ['size', 'string', 'pc', 'BYTES', 'body size in bytes (default 6; consumers ignore it)'],
  ['bursts', 'string', 'pc', 'B', 'number of bursts (default 1)'],
  ['persistent', 'boolean', 'p', '', 'persistent delivery (persistent:true)'],
  ['rate', 'string', 'p', 'R', 'messages/s, 0 = as fast as possible (default 0)'],
  ['duration', 'string', 'p', 'S', 'seconds per burst instead of --count messages, 0 = off (default 0)'],
  ['nonce', 'string', 'p', 'NONCE', 'run nonce stamped on every message as bb_nonce (default 0)'],
  ['ack', 'string', 'c', 'MODE', 'auto | client | client-individual (default auto; dups-ok unsupported)'],
  ['prefetch', 'string', 'c', 'N', 'activemq.prefetchSize (default 1000)'],
  ['window-bytes', 'string', 'c', 'N', 'send consumer-window-size N (Artemis: bytes, -1 = no limit) instead of activemq.prefetchSize'],
  ['tx-batch', 'string', 'pc', 'N', 'STOMP transactions of N messages (default 0 = none)'],
  ['id', 'string', 'pc', 'ID', 'process id [A-Za-z0-9_.-]{1,64} (default p1 / c1)'],
  ['records', 'string', 'pc', 'PATH', 'write raw records (TSV) there at stop'],
  ['gate', 'boolean', 'pc', '', 'read go/stop lines from stdin'],
  ['user', 'string', 'pc', 'U', 'broker user'],
  ['password', 'string', 'pc', 'P', 'broker password (or the environment\'s BB_PASSWORD)'],
  ['ca', 'string', 'pc', 'FILE', "PEM CA that signed the broker's certificate (wss://, stomp+ssl://)"],
  ['cert', 'string', 'pc', 'FILE', 'PEM client certificate for mutual TLS (with --key)'],
  ['key', 'string', 'pc', 'FILE', "the client certificate's PEM private key, unencrypted"],
  ['connect-timeout', 'string', 'pc', 'S', 'give up connecting after S seconds, exit 3 (default 10)'],
  ['failover', 'string', 'pc', 'LIST', "more addresses in --url's scheme: stompjs reconnects by itself"],
  ['connections', 'string', 'pc', 'N', 'N connections, one slot each: ids ID.1..ID.N, --records PATH with {id} (default 1)'],
  ['version', 'boolean', 'pc', '', 'print version JSON and exit'],
  ['help', 'boolean', 'pc', '', 'print this and exit'],
];
const forRole = (role) => OPTIONS.filter((o) => o[2].includes(role[0]));

export const usage = (role) => `usage: node ${role}.mjs --url URL --destinations Q1[,Q2...] [options]

STOMP client of burstbench (@stomp/stompjs). URL: ws://HOST:PORT/ or wss://HOST:PORT/ (STOMP
over WebSocket), stomp://HOST:PORT or tcp://HOST:PORT (STOMP over TCP), stomp+ssl://HOST:PORT
(STOMP over TLS). Options: clients/contract.md.

${forRole(role).map(([n, , , v, h]) => `  ${`--${n} ${v}`.padEnd(22)} ${h}\n`).join('')}`;

const ID_RE = /^[A-Za-z0-9_.-]{1,64}$/;

function int(name, v, min, dflt) {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!/^-?[0-9]+$/.test(v) || n < min) fail(2, `--${name} needs an integer >= ${min}, got ${JSON.stringify(v)}`);
  return n;
}

function num(name, v, dflt) {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) fail(2, `--${name} needs a number, got ${JSON.stringify(v)}`);
  return n;
}

/** Parse argv for `role` with util.parseArgs; exits 2 on any problem, 0 after --help/--version. */
export function parseArgs(role, argv) {
  const config = {};
  for (const [name, type] of forRole(role)) config[name] = { type };
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
  for (const name of ['url', 'destinations']) {
    if (raw[name] === undefined) fail(2, `missing required option --${name}`);
  }
  const producer = role === 'producer';
  const o = {
    role, url: raw.url, endpoint: parseUrl(raw.url), destinations: raw.destinations.split(','),
    count: int('count', raw.count, producer ? 1 : 0, 1000), size: int('size', raw.size, 1, 6),
    bursts: int('bursts', raw.bursts, 1, 1), txBatch: int('tx-batch', raw['tx-batch'], 0, 0),
    id: raw.id ?? (producer ? 'p1' : 'c1'), records: raw.records, gate: !!raw.gate,
    // the password from the environment keeps it off the process list
    user: raw.user,
    password: raw.password ?? (raw.user !== undefined ? process.env.BB_PASSWORD : undefined),
    connectTimeout: num('connect-timeout', raw['connect-timeout'], 10),
    connections: int('connections', raw.connections, 1, 1),
  };
  if (!ID_RE.test(o.id)) fail(2, `--id must match [A-Za-z0-9_.-]{1,64}, got ${JSON.stringify(o.id)}`);
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
  if (producer) {
    o.persistent = !!raw.persistent;
    o.rate = num('rate', raw.rate, 0);
    o.duration = num('duration', raw.duration, 0);
    o.nonce = raw.nonce ?? '0';
  } else {
    o.ack = raw.ack ?? 'auto';
    if (!['auto', 'client', 'client-individual'].includes(o.ack)) {
      fail(2, `--ack ${o.ack}: not a mode of the STOMP client (auto, client, client-individual)`);
    }
    o.prefetch = int('prefetch', raw.prefetch, 1, 1000);
    o.windowBytes = int('window-bytes', raw['window-bytes'], -1, undefined);
  }
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

export const immediate = () => new Promise((res) => setImmediate(res));
export const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

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

// ---------------------------------------------------------------------------------------
// records

/** An append-only list of epoch nanoseconds (bigint) in 64-bit cells, 65,536 to a block. */
export class NsLog {
  constructor() { this.blocks = []; this.length = 0; }
  push(v) {
    const b = Math.floor(this.length / 65536);
    if (b === this.blocks.length) this.blocks.push(new BigInt64Array(65536));
    this.blocks[b][this.length % 65536] = v;
    this.length++;
  }
  at(i) { return this.blocks[Math.floor(i / 65536)][i % 65536]; }
  truncate(n) { this.length = Math.min(this.length, n); }
}

/** NsLog in blocks of 1,024 cells (8 KiB), for the slots of a process of many: blocks of
 * 65,536 cells are 512 KiB, two a slot at its first message (10,000 slots: 10 GiB). */
export class SlotNsLog extends NsLog {
  push(v) {
    const b = Math.floor(this.length / 1024);
    if (b === this.blocks.length) this.blocks.push(new BigInt64Array(1024));
    this.blocks[b][this.length % 1024] = v;
    this.length++;
  }
  at(i) { return this.blocks[Math.floor(i / 1024)][i % 1024]; }
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

/** The SUBSCRIBE header that bounds what the broker pushes ahead: ActiveMQ Classic's
 * activemq.prefetchSize (messages), or with --window-bytes Artemis's consumer-window-size. */
export function flowControl(o) {
  return o.windowBytes === undefined ? { 'activemq.prefetchSize': String(o.prefetch) }
    : { 'consumer-window-size': String(o.windowBytes) };
}
