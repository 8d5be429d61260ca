// Connecting as the contract asks (clients/contract.md) with @stomp/stompjs over WebSocket
// (ws) or plain TCP (@stomp/tcp-wrapper): a bounded connect that exits 3 naming the address,
// and a clean disconnect. With --failover, failover.mjs changes what a drop does.

import { Client } from '@stomp/stompjs';
import { TCPWrapper } from '@stomp/tcp-wrapper';
import WebSocket from 'ws';
import { fail, hr, immediate, pause, sleep } from './common.mjs';
import { failover } from './failover.mjs';
import { noteTlsProtocol, wire } from './wire.mjs';

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
    ws.on('upgrade', (res) => { if (res.socket.getProtocol) noteTlsProtocol(res.socket.getProtocol()); });
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
  const timeoutMs = Math.round(o.connectTimeout * 1000);
  const deadline = Date.now() + timeoutMs;
  const headers = {};
  if (o.user !== undefined) headers.login = o.user;
  if (o.password !== undefined) headers.passcode = o.password;
  const conn = { closing: false, connected: false, kind: ep.kind, buffered: () => 0,
    everConnected: false, drops: 0, reconnects: 0 };
  let lastWhy = 'no answer';
  const again = o.failover ? failover(o, conn, hooks, () => lastWhy) : null;
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
        reconnectDelay: again ? again.delay : 0,
        beforeConnect: () => { if (again) ep = again.next(); },
        heartbeatIncoming: 0,
        heartbeatOutgoing: 0,
        debug: () => {},
        onConnect: () => {
          conn.connected = true;
          conn.buffered = buffered;
          if (again?.connected()) return; // stompjs connected again after a drop
          conn.everConnected = true;
          resolve({ client, conn });
        },
        onStompError: (frame) => {
          const msg = frame.headers.message || 'ERROR frame';
          const detail = frame.body ? frame.body.split('\n')[0].trim().slice(0, 200) : '';
          const why = detail && detail !== msg ? `${msg} (${detail})` : msg;
          if (again?.ignored(msg, why)) return;
          if (!conn.connected || hooks.preReady?.()) giveUp(why, true);
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
          if (again) { again.closed(); return; } // stompjs tries again in reconnectDelay ms
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

const CHUNK = 500; // messages between two yields to the event loop

/**
 * How a burst's messages go out on `conn` from one thread: in runs of at most CHUNK messages,
 * under a rate (`nsPer` ns a message from `startHr`) only those whose intended time has come,
 * and between runs a turn for the event loop. publish() only queues: above `high` bytes not yet
 * written to the network (`full()`), the next run waits until the backlog is down to a quarter
 * of it. About a socket buffer's worth, as a blocking write holds (the other languages'
 * clients): a flood then sends as fast as the broker reads, instead of framing seconds of
 * messages ahead on the cores the broker and consumer need (docs/measuring.md).
 */
export class Runs {
  constructor(conn, count, nsPer, startHr, high, shared) {
    Object.assign(this, { conn, count, nsPer, startHr, high, shared });
  }

  /** The end of the run from message `i`, or 0 after waiting for message `i`'s time. */
  async from(i) {
    const end = Math.min(this.count, i + CHUNK);
    if (this.nsPer === 0) return end;
    const elapsed = Number(hr() - this.startHr);
    const due = Math.floor(elapsed / this.nsPer) + 1; // messages whose intended time has come
    if (due > i) return Math.min(end, due);
    await pause(i * this.nsPer - elapsed, this.shared);
    return 0;
  }

  full() { return this.conn.buffered() > this.high; }

  /** Between two runs. */
  rest() { return this.full() ? drained(this.conn, this.high / 4) : immediate(); }
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
