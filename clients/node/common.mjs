// Shared parts of the burstbench Node clients (see clients/contract.md): options, clock,
// JSON lines, stdin gate, records, and connecting with @stomp/stompjs over WebSocket (ws)
// or plain TCP (@stomp/tcp-wrapper). Public, documented API of those libraries only; see
// README.md for what each choice is and for `wire`, the one place another program may change.

import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import readline from 'node:readline';
import { parseArgs as utilParseArgs } from 'node:util';
import { Client } from '@stomp/stompjs';
import { TCPWrapper } from '@stomp/tcp-wrapper';
import WebSocket from 'ws';

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

// ---------------------------------------------------------------------------------------
// extension points

/**
 * What the stock programs do where a program may do otherwise: a program that imports this
 * module may replace these entries before it imports producer.mjs or consumer.mjs. The
 * defaults use the public API of stompjs, ws, @stomp/tcp-wrapper and Node only.
 */
export const wire = {
  /** `client` in the --version line */
  name: 'stompjs',
  /** More `new Client({...})` options (documented ones), merged over ours. */
  clientOptions: {},
  /**
   * The socket under @stomp/tcp-wrapper (stomp://, tcp://, stomp+ssl://): what its
   * documented getSocket() makes, with Node's default socket options (Nagle on), or a
   * verified TLS socket (``secure``: its ca, and cert and key for mutual TLS).
   */
  tcpSocket(ep, secure) {
    if (!ep.tls) return net.createConnection(ep.port, ep.host);
    const opts = { port: ep.port, host: ep.host, ...secure };
    if (!net.isIP(ep.host)) opts.servername = ep.host;
    const s = tls.connect(opts);
    s.once('secureConnect', () => { tlsProtocol = s.getProtocol(); });
    return s;
  },
  /**
   * TCP_NODELAY for the ready line. Node has no public getsockopt, so this is what the code
   * that makes the socket sets: ws calls socket.setNoDelay() once the WebSocket is open
   * (ws/lib/websocket.js, setSocket); @stomp/tcp-wrapper's getSocket() is
   * net.createConnection(port, host) and Node's net and tls leave noDelay false.
   */
  socketFacts(conn) {
    return { tcp_nodelay: conn.kind === 'ws', tcp_nodelay_how: 'library', ...tlsFact() };
  },
  /**
   * COMMIT the transaction and get a RECEIPT once the broker has handled it. stompjs's
   * commit() takes no headers, so the receipt rides on the next frame instead: a SUBSCRIBE
   * (to a topic nobody sends to), which the broker handles after the COMMIT, as it handles a
   * connection's frames in order; the subscription is dropped at once.
   */
  commitWithReceipt(client, txId, receipt) {
    client.commit(txId);
    client.subscribe('/topic/burstbench.receipts', () => {}, { id: 'bb-receipt', receipt })
      .unsubscribe();
  },
};

// ---------------------------------------------------------------------------------------
// connecting

// the TLS version the connection negotiated (tls.TLSSocket getProtocol(): "TLSv1.3"), for the
// ready line; null over plain TCP
let tlsProtocol = null;
export function tlsFact() {
  return tlsProtocol ? { tls: tlsProtocol } : {};
}

/** @stomp/tcp-wrapper whose getSocket() (its documented override) is wire.tcpSocket(). */
function tcpWrapper(ep, secure) {
  let socket = null;
  class Wrapper extends TCPWrapper {
    getSocket() {
      socket = wire.tcpSocket(ep, secure);
      return socket;
    }
  }
  const w = new Wrapper(ep.host, ep.port);
  return { stompSocket: w, buffered: () => socket.writableLength };
}

/**
 * The socket stompjs gets for ws:// (webSocketFactory may return any object with the
 * WebSocket interface, IStompSocket): a ws WebSocket whose text messages pass one repair.
 * ActiveMQ's WebSocket transport sends each STOMP frame as one *text* message: a body that
 * is not valid UTF-8 arrives with U+FFFD replacements (longer in UTF-8) but the original
 * byte count in content-length, and stompjs's parser, trusting it, would then lose the
 * following frame. Such a frame (never a bench message) gets its content-length recomputed.
 * ActiveMQ's bug, with a reproducer: docs/findings.md#activemq-ws-content-length
 */
class ActiveMQWebSocket {
  constructor(url, protocols, options) {
    const ws = new WebSocket(url, protocols, options);
    this.ws = ws;
    // ws's 'upgrade' event: the HTTP response, on the (TLS) socket the WebSocket will use
    ws.on('upgrade', (res) => { if (res.socket.getProtocol) tlsProtocol = res.socket.getProtocol(); });
    this.onopen = this.onclose = this.onerror = this.onmessage = null;
    ws.onopen = (evt) => this.onopen?.(evt);
    ws.onclose = (evt) => this.onclose?.(evt);
    ws.onerror = (evt) => this.onerror?.(evt);
    ws.onmessage = (evt) => {
      const d = evt.data;
      this.onmessage?.(typeof d === 'string' && d.indexOf('\uFFFD') >= 0 ? { data: fixLength(d) } : evt);
    };
  }

  get url() { return this.ws.url; }
  get readyState() { return this.ws.readyState; }
  get binaryType() { return this.ws.binaryType; }
  set binaryType(t) { this.ws.binaryType = t; }
  get bufferedAmount() { return this.ws.bufferedAmount; }
  send(data) { this.ws.send(data); }
  close(code, reason) { this.ws.close(code, reason); }
  terminate() { this.ws.terminate(); }
}

function fixLength(d) {
  const h = d.indexOf('\n\n');
  if (h < 0) return d;
  const head = d.slice(0, h);
  const end = d.endsWith('\0') ? d.length - 1 : d.length;
  const len = Buffer.byteLength(d.slice(h + 2, end));
  return head.replace(/(^|\n)content-length:[^\n]*/, `$1content-length:${len}`) + d.slice(h);
}

// TLS errors that mean "the broker's certificate did not verify": exit 3 at once, no retry
const CERT_ERROR = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_TLS_|ERR_SSL_|HOSTNAME|ALTNAME/;

/**
 * Connect with stompjs (no reconnect, no heartbeats). Retries refused connections until
 * --connect-timeout; exits 3 naming the address when that passes or the broker refuses the
 * login. Resolves to { client, conn } once CONNECTED; `conn.buffered()` is the bytes sent
 * but not yet written to the network (ws's bufferedAmount, the TCP socket's writableLength).
 * After that, a lost connection or an ERROR frame calls `hooks.onFatal(msg)` unless
 * `conn.closing` was set.
 */
export function connect(o, hooks = {}) {
  let ep = o.endpoint;
  let tries = 0; // --failover: connection attempts since the last CONNECTED (picks the address)
  let giveUpTimer = null;
  const timeoutMs = Math.round(o.connectTimeout * 1000);
  const deadline = Date.now() + timeoutMs;
  const headers = {};
  if (o.user !== undefined) headers.login = o.user;
  if (o.password !== undefined) headers.passcode = o.password;
  const conn = { closing: false, connected: false, kind: ep.kind, buffered: () => 0,
    everConnected: false, drops: 0, reconnects: 0 };
  let lastWhy = 'no answer';
  const giveUp = (why, refused = false) => fail(3, refused
    ? `cannot connect to ${ep.url}: broker refused: ${why}`
    : `cannot connect to ${ep.url} within ${o.connectTimeout} s: ${why}`);
  const timer = setTimeout(() => giveUp(lastWhy), timeoutMs);
  conn.cancelTimer = () => clearTimeout(timer);

  return new Promise((resolve) => {
    const attempt = () => {
      let buffered = null;
      const client = new Client({
        webSocketFactory: () => {
          if (ep.kind === 'ws') {
            // ws's documented options; no permessage-deflate offer: frames go uncompressed, as over TCP
            const opts = { perMessageDeflate: false, handshakeTimeout: Math.max(1, deadline - Date.now()) };
            if (ep.tls) Object.assign(opts, o.tls);
            const s = new ActiveMQWebSocket(ep.url, ['v12.stomp', 'v11.stomp', 'v10.stomp'], opts);
            buffered = () => s.bufferedAmount;
            return s;
          }
          const t = tcpWrapper(ep, o.tls);
          buffered = t.buffered;
          return t.stompSocket;
        },
        connectHeaders: headers,
        // --failover: stompjs reconnects by itself (also while first connecting)
        reconnectDelay: o.failover ? 200 : 0,
        // (a program with its own parser, the Pi worker, has o.endpoint alone)
        beforeConnect: () => { const eps = o.endpoints || [o.endpoint]; ep = eps[tries++ % eps.length]; },
        heartbeatIncoming: 0,
        heartbeatOutgoing: 0,
        debug: () => {},
        onConnect: () => {
          conn.connected = true;
          conn.buffered = buffered;
          tries = 0;
          if (conn.everConnected) { // stompjs connected again after a drop (--failover)
            clearTimeout(giveUpTimer);
            conn.reconnects++;
            emit({ event: 'reconnected', id: o.id, t_ns: nowNs(), n: conn.reconnects });
            hooks.onReconnect?.();
            return;
          }
          conn.everConnected = true;
          resolve({ client, conn });
        },
        onStompError: (frame) => {
          const msg = frame.headers.message || 'ERROR frame';
          const detail = frame.body ? frame.body.split('\n')[0].trim().slice(0, 200) : '';
          const why = detail && detail !== msg ? `${msg} (${detail})` : msg;
          if (conn.everConnected && o.failover && /\bACK\b/i.test(msg)) { // an ack that raced the drop
            process.stderr.write(`ignoring the broker's error after a reconnect: ${why}\n`);
          } else if (!conn.connected || hooks.preReady?.()) giveUp(why, true);
          else if (!conn.closing) hooks.onFatal?.(`broker error: ${why}`);
        },
        onWebSocketError: (evt) => {
          // ws: ErrorEvent { error, message }; tcp-wrapper: { message: Error }
          const e = evt && (evt.error instanceof Error ? evt.error : evt.message);
          lastWhy = e ? (e.code ? `${e.code}${e.message && !e.message.includes(e.code) ? ` (${e.message})` : ''}`
            : e.message || String(e)) : 'socket error';
          if (!conn.connected && ep.tls && e && CERT_ERROR.test(`${e.code || ''} ${e.message || e}`)) {
            fail(3, `cannot connect to ${ep.url}: the broker's certificate did not verify: ${lastWhy}`);
          }
        },
        onWebSocketClose: (evt) => {
          if (conn.closing) return;
          if (o.failover) { // stompjs tries again in reconnectDelay ms
            if (conn.connected) {
              conn.connected = false;
              conn.drops++;
              giveUpTimer = setTimeout(() => fail(1, `lost the connection to ${o.url} and could not `
                + `reconnect within ${o.connectTimeout} s: ${lastWhy}`), timeoutMs);
              hooks.onDrop?.();
            }
            return;
          }
          if (!conn.connected) {
            if (evt && evt.code && evt.code !== 1000 && evt.code !== 1006 && lastWhy === 'no answer') {
              lastWhy = `closed (${evt.code})`;
            }
            const left = deadline - Date.now();
            if (left > 250) setTimeout(attempt, 200);
            return;
          }
          const code = evt && evt.code && evt.code !== 1000 && evt.code !== 1006 ? ` (close code ${evt.code}${evt.reason ? ` ${evt.reason}` : ''})` : '';
          hooks.onFatal?.(`lost connection to ${ep.url}${code}`);
        },
        ...wire.clientOptions,
      });
      client.activate();
    };
    attempt();
  });
}

/** Resolves once `conn.buffered()` is at most `low` bytes (checked every millisecond). */
export async function drained(conn, low) {
  while (conn.buffered() > low && !conn.closing && conn.connected) await sleep(1);
}

/** Disconnect cleanly (DISCONNECT + receipt), at most `ms`, then drop the socket. */
export async function disconnect(client, conn, ms = 10000) {
  conn.closing = true;
  let t;
  const timeout = new Promise((res) => { t = setTimeout(() => res('timeout'), ms); });
  const r = await Promise.race([client.deactivate().then(() => 'ok', () => 'ok'), timeout]);
  clearTimeout(t);
  if (r === 'timeout') {
    try { await client.deactivate({ force: true }); } catch { /* gone anyway */ }
  }
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
