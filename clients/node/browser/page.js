// burstbench producer and consumer as a web page: @stomp/stompjs in the browser, the way its
// users use it (the library's UMD bundle, `new StompJs.Client({...})`, publish / subscribe /
// ack / begin / commit over the browser's own WebSocket). The driver (driver.mjs) hands the
// parsed options in through `bb.start(role, opts)`, takes events through `bbEmit` (a function
// it exposes to the page) and reads the records out at the end; see clients/contract.md.
// Plain script, no module: it runs in any page that loaded the bundle first.
/* global StompJs */
'use strict';

(() => {
  const emit = (ev) => window.bbEmit(JSON.stringify(ev));
  const fatal = (code, msg) => {
    if (bb.failed) return;
    bb.failed = true;
    window.bbEmit(JSON.stringify({ event: 'fatal', code, msg: String(msg) }));
  };

  // -------------------------------------------------------------------------------------
  // clock: ns since the epoch = performance.now() + one offset taken on Date.now()
  // millisecond edges, the largest of five (as epochOffset in ../common.mjs, which says why)
  const OFFSET = (() => {
    let best = null;
    for (let i = 0; i < 5; i++) {
      const d0 = Date.now();
      let d;
      while ((d = Date.now()) === d0) { /* spin to the next millisecond edge (<= 1 ms) */ }
      const est = BigInt(d) * 1000000n - BigInt(Math.round(performance.now() * 1e6));
      if (best === null || est > best) best = est;
    }
    return best;
  })();
  const toEpoch = (ms) => BigInt(Math.round(ms * 1e6)) + OFFSET;
  const nowNs = () => toEpoch(performance.now());

  // -------------------------------------------------------------------------------------
  // CRC-32 (IEEE, zlib's) of bytes, or of a string's char codes (the bench's ASCII bodies)
  const CRC_TABLE = (() => {
    const t = new Int32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      t[n] = c;
    }
    return t;
  })();
  function crc32(data) {
    let c = -1;
    if (typeof data === 'string') {
      for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data.charCodeAt(i)) & 0xff] ^ (c >>> 8);
    } else {
      for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]) & 0xff] ^ (c >>> 8);
    }
    return (c ^ -1) >>> 0;
  }
  const hex8 = (n) => n.toString(16).padStart(8, '0');

  // -------------------------------------------------------------------------------------
  // connecting

  /**
   * The socket stompjs gets (its documented `webSocketFactory`, any object with the
   * WebSocket interface): the browser's WebSocket, every event passed through, one repair.
   * ActiveMQ sends each STOMP frame as one *text* message: a body that is not valid UTF-8
   * arrives with U+FFFD replacements but the original byte count in content-length, and
   * stompjs's parser, trusting it, would lose the next frame; such a frame (never a bench
   * message) gets its content-length recomputed. ActiveMQ's bug, with a reproducer:
   * docs/findings.md#activemq-ws-content-length
   */
  class ActiveMQWebSocket {
    constructor(url, protocols) {
      const ws = new WebSocket(url, protocols);
      this.ws = ws;
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
  }

  const utf8 = new TextEncoder();
  function fixLength(d) {
    const h = d.indexOf('\n\n');
    if (h < 0) return d;
    const head = d.slice(0, h);
    const end = d.endsWith('\0') ? d.length - 1 : d.length;
    const len = utf8.encode(d.slice(h + 2, end)).length;
    return head.replace(/(^|\n)content-length:[^\n]*/, `$1content-length:${len}`) + d.slice(h);
  }

  /**
   * Connect (no reconnect, no heartbeats), retrying a refused connection until the connect
   * timeout; exit 3 (through the driver) when it passes or the broker refuses the login.
   * Resolves to { client, conn } once CONNECTED; `conn.buffered()` is the WebSocket's
   * bufferedAmount. After that a lost connection or an ERROR frame is fatal (exit 1) unless
   * `conn.closing` was set.
   */
  function connect(o, preReady = () => false) {
    const deadline = Date.now() + o.connectTimeoutMs;
    const headers = {};
    if (o.user !== undefined) headers.login = o.user;
    if (o.password !== undefined) headers.passcode = o.password;
    const conn = { closing: false, connected: false, buffered: () => 0 };
    let lastWhy = 'no answer';
    const giveUp = (why, refused = false) => fatal(3, refused
      ? `cannot connect to ${o.url}: broker refused: ${why}`
      : `cannot connect to ${o.url} within ${o.connectTimeoutS} s: ${why}`);
    const timer = setTimeout(() => giveUp(lastWhy), o.connectTimeoutMs);
    conn.cancelTimer = () => clearTimeout(timer);
    return new Promise((resolve) => {
      const attempt = () => {
        let socket = null;
        const client = new StompJs.Client({
          webSocketFactory: () => {
            socket = new ActiveMQWebSocket(o.url, ['v12.stomp', 'v11.stomp', 'v10.stomp']);
            return socket;
          },
          connectHeaders: headers,
          reconnectDelay: 0,
          heartbeatIncoming: 0,
          heartbeatOutgoing: 0,
          debug: () => {},
          onConnect: () => {
            conn.connected = true;
            conn.buffered = () => socket.bufferedAmount;
            resolve({ client, conn });
          },
          onStompError: (frame) => {
            const msg = frame.headers.message || 'ERROR frame';
            const detail = frame.body ? frame.body.split('\n')[0].trim().slice(0, 200) : '';
            const why = detail && detail !== msg ? `${msg} (${detail})` : msg;
            if (!conn.connected || preReady()) giveUp(why, true);
            else if (!conn.closing) fatal(1, `broker error: ${why}`);
          },
          // the browser tells a page nothing about why a WebSocket failed (no code, no
          // errno): "refused or unreachable" is all there is to say
          onWebSocketError: () => { lastWhy = 'connection refused or unreachable'; },
          onWebSocketClose: (evt) => {
            if (conn.closing) return;
            if (!conn.connected) {
              if (evt && evt.code && evt.code !== 1000 && evt.code !== 1006) lastWhy = `closed (${evt.code})`;
              if (deadline - Date.now() > 250) setTimeout(attempt, 200);
              return;
            }
            const code = evt && evt.code && evt.code !== 1000 && evt.code !== 1006
              ? ` (close code ${evt.code}${evt.reason ? ` ${evt.reason}` : ''})` : '';
            fatal(1, `lost connection to ${o.url}${code}`);
          },
        });
        client.activate();
      };
      attempt();
    });
  }

  /** DISCONNECT and wait for its receipt (at most `ms`), then drop the socket. */
  async function disconnect(client, conn, ms = 10000) {
    conn.closing = true;
    let t;
    const timeout = new Promise((res) => { t = setTimeout(() => res('timeout'), ms); });
    const r = await Promise.race([client.deactivate().then(() => 'ok', () => 'ok'), timeout]);
    clearTimeout(t);
    if (r === 'timeout') {
      try { await client.deactivate({ force: true }); } catch { /* gone anyway */ }
    }
  }

  // a yield to the event loop without the 4 ms clamp of nested timers
  const channel = new MessageChannel();
  const yields = [];
  channel.port1.onmessage = () => yields.shift()?.();
  const immediate = () => new Promise((res) => { yields.push(res); channel.port2.postMessage(0); });
  const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

  // -------------------------------------------------------------------------------------
  // producer

  const CHUNK = 500; // messages between two yields to the event loop
  // publish() only queues: above HIGH_WATER bytes not yet written to the network, wait until
  // the backlog is down to LOW_WATER
  const HIGH_WATER = 64 * 1024 * 1024;
  const LOW_WATER = 16 * 1024 * 1024;

  function producer(o) {
    const dests = o.destinations.map((d) => `/queue/${d}`);
    const nd = dests.length;
    const ndigits = Math.min(6, o.size);
    // ActiveMQ's WebSocket transport reads STOMP from text frames only: the body is a string
    // (digits and 'x'); stompjs adds content-length, so the bytes are the same on the wire
    const tail = o.size > 6 ? 'x'.repeat(o.size - 6) : '';
    const sentNs = [];
    let sent = 0;
    let client = null;
    let conn = null;
    let stopping = false;
    let aborting = false;
    let goes = 0;
    let wake = null;
    const poke = () => { if (wake) { const w = wake; wake = null; w(); } };
    const waitPoke = () => new Promise((res) => { wake = res; });

    async function burst(b) {
      const count = o.count;
      const base = b * count;
      const bStr = String(b);
      const nsPer = o.rate > 0 ? 1e9 / o.rate : 0;
      const tx = o.txBatch;
      const receipt = `bb-${o.id}-${b}`;
      let txId = null;
      let firstNs = 0n;
      let lastNs = 0n;
      const startMs = performance.now();
      const startNs = toEpoch(startMs);
      let confirmed = false;
      const receiptSeen = new Promise((res) => client.watchForReceipt(receipt, () => { confirmed = true; res(); }));

      let i = 0;
      while (i < count) {
        if (aborting) break;
        let end = Math.min(count, i + CHUNK);
        if (nsPer > 0) {
          const elapsed = (performance.now() - startMs) * 1e6;
          const due = Math.floor(elapsed / nsPer) + 1; // messages whose intended time has come
          if (due <= i) {
            await sleep(Math.floor((i * nsPer - elapsed) / 1e6));
            continue;
          }
          if (due < end) end = due;
        }
        for (; i < end; i++) {
          const s = base + i;
          if (tx > 0 && i % tx === 0) txId = client.begin(`tx-${o.id}-${b}-${i}`).id;
          const digits = String(s % 1000000).padStart(6, '0');
          const text = ndigits === 6 ? digits + tail : digits.slice(0, ndigits);
          const t = nowNs();
          const sentStr = nsPer > 0 ? String(startNs + BigInt(Math.round(i * nsPer))) : String(t);
          const headers = {
            bb_producer: o.id, bb_seq: String(s), bb_burst: bStr, bb_sent_ns: sentStr,
            bb_nonce: o.nonce, bb_crc32: hex8(crc32(text)),
          };
          if (o.persistent) headers.persistent = 'true';
          if (txId !== null) headers.transaction = txId;
          const last = i === count - 1;
          if (last && tx === 0) headers.receipt = receipt;
          client.publish({ destination: dests[s % nd], headers, body: text });
          sentNs.push(sentStr);
          sent++;
          if (i === 0) firstNs = t;
          lastNs = t;
          if (txId !== null && (last || i % tx === tx - 1)) {
            client.commit(txId);
            // commit() takes no headers: the receipt rides on the next frame, a SUBSCRIBE to
            // a topic nobody sends to, which the broker handles after the COMMIT
            if (last) {
              client.subscribe('/topic/burstbench.receipts', () => {}, { id: 'bb-receipt', receipt })
                .unsubscribe();
            }
            txId = null;
          }
          if (conn.buffered() > HIGH_WATER) { i++; break; }
        }
        if (conn.buffered() > HIGH_WATER) {
          while (conn.buffered() > LOW_WATER && !aborting) await sleep(1);
        } else {
          await immediate();
        }
      }
      if (aborting) {
        if (txId !== null) client.commit(txId); // what was sent is in the records: let it count
        return;
      }
      while (!confirmed && !aborting) await Promise.race([receiptSeen, waitPoke()]);
      if (confirmed) {
        emit({ event: 'burst', id: o.id, burst: b, sent: i, first_ns: String(firstNs), last_ns: String(lastNs) });
      }
    }

    async function run() {
      ({ client, conn } = await connect(o));
      conn.cancelTimer();
      emit({ event: 'ready', id: o.id, role: 'producer' });
      if (o.gate) {
        for (let b = 0; ; b++) {
          while (goes === 0 && !stopping) await waitPoke();
          if (goes === 0 || aborting) break;
          goes--;
          await burst(b);
        }
      } else {
        for (let b = 0; b < o.bursts && !stopping; b++) await burst(b);
      }
      await disconnect(client, conn);
      emit({ event: 'finished' });
    }

    return {
      run,
      go() { goes++; poke(); },
      stop() { stopping = true; poke(); },
      abort() { stopping = aborting = true; poke(); },
      count: () => sent,
      counts: () => ({ sent }),
      recordCount: () => sentNs.length,
      /** producer records lines [from, to) */
      records(from, to) {
        let s = '';
        for (let i = from; i < to; i++) s += `${o.id}\t${i}\t${Math.floor(i / o.count)}\t${sentNs[i]}\n`;
        return s;
      },
    };
  }

  // -------------------------------------------------------------------------------------
  // consumer

  function consumer(o) {
    // with transactions every message is acknowledged inside the open transaction
    const stompAck = o.txBatch > 0 && o.ack === 'auto' ? 'client-individual' : o.ack;
    const ackEvery = Math.ceil(o.prefetch / 2); // client (cumulative) mode
    const target = !o.gate && o.count > 0 ? o.count * o.bursts : 0;
    // records: the header values as received, checked when written (as the Node client)
    const r = {
      producer: [], seq: [], burst: [], sent: [], recv: [], bytes: [], head: [], red: [],
      dest: [], nonce: [], crcHead: [], crc: [],
    };
    let received = 0;
    let foreign = 0;
    let redelivered = 0;
    let accepting = true;
    let ready = false;
    let stopping = false;
    let finished = false;
    let client = null;
    let conn = null;
    const subs = [];
    let txId = null;
    let txCount = 0;
    let txSerial = 0;
    let bad = null; // records whose headers are not integers (foreign after all)

    const beginTx = () => { txId = client.begin(`tx-${o.id}-${txSerial++}`).id; txCount = 0; };
    const commitTx = () => { if (txId !== null) { client.commit(txId); txId = null; } };
    const ackHeld = (sub) => {
      if (sub.held) {
        sub.held.ack(txId !== null ? { transaction: txId } : {});
        sub.held = null;
        sub.n = 0;
      }
    };
    const ackAllHeld = () => { for (const s of subs) ackHeld(s); };

    function handler(di, sub) {
      const tx = o.txBatch;
      return (m) => {
        const t = performance.now();
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
          r.producer.push(p);
          r.seq.push(sq);
          r.burst.push(bu);
          r.sent.push(st);
          r.recv.push(t);
          r.bytes.push(len);
          r.head.push(head);
          r.red.push(red);
          r.dest.push(di);
          r.nonce.push(h.bb_nonce);
          r.crcHead.push(h.bb_crc32);
          r.crc.push(crc32(b));
          received++;
        }
        if (stompAck === 'client-individual') {
          m.ack(txId !== null ? { transaction: txId } : {});
        } else if (stompAck === 'client') {
          sub.held = m;
          if (++sub.n >= ackEvery) ackHeld(sub);
        }
        if (tx > 0 && ++txCount >= tx) { ackAllHeld(); commitTx(); beginTx(); }
        if (target > 0 && received >= target) stop();
      };
    }

    function bodyOk(seq, len, head) {
      if (len === 0) return 0;
      const n = len < 6 ? len : 6;
      const digits = String(seq % 1000000).padStart(6, '0');
      let want = 0;
      for (let k = 0; k < n; k++) want = want * 256 + digits.charCodeAt(k);
      return head === want ? 1 : 0;
    }

    async function finish() {
      if (finished) return;
      finished = true;
      if (client) {
        if (stompAck !== 'auto') {
          // hand back nothing we recorded: ack what we hold; later deliveries are redelivered
          ackAllHeld();
          commitTx();
          accepting = false;
        }
        await disconnect(client, conn);
      }
      const INT = /^[0-9]+$/;
      bad = new Set();
      for (let i = 0; i < r.seq.length; i++) {
        if (!INT.test(r.seq[i]) || !INT.test(r.burst[i]) || !INT.test(r.sent[i])) bad.add(i);
      }
      received -= bad.size;
      foreign += bad.size;
      for (const i of bad) redelivered -= r.red[i];
      emit({ event: 'finished' });
    }

    function stop() {
      if (stopping) return;
      stopping = true;
      if (ready) finish();
    }

    async function run() {
      ({ client, conn } = await connect(o, () => !ready));
      if (o.txBatch > 0) beginTx();
      await new Promise((resolve) => {
        const receipt = `bb-sub-${o.id}`;
        client.watchForReceipt(receipt, resolve);
        o.destinations.forEach((d, di) => {
          const sub = { id: `sub-${di}`, held: null, n: 0 };
          subs.push(sub);
          const headers = { id: sub.id, ack: stompAck, ...(o.windowBytes === undefined
            ? { 'activemq.prefetchSize': String(o.prefetch) }
            : { 'consumer-window-size': String(o.windowBytes) }) };
          if (di === o.destinations.length - 1) headers.receipt = receipt;
          client.subscribe(`/queue/${d}`, handler(di, sub), headers);
        });
      });
      conn.cancelTimer();
      ready = true;
      if (stopping) {
        finish();
      } else {
        emit({ event: 'ready', id: o.id, role: 'consumer' });
      }
    }

    let kept = null;
    return {
      run,
      go() {},
      stop,
      abort: stop,
      count: () => received,
      counts: () => ({ received, foreign, redelivered }),
      recordCount() {
        kept = bad.size === 0 ? null : [...r.seq.keys()].filter((i) => !bad.has(i));
        return kept ? kept.length : r.seq.length;
      },
      records(from, to) {
        let s = '';
        for (let j = from; j < to; j++) {
          const i = kept ? kept[j] : j;
          s += `${r.producer[i]}\t${r.seq[i]}\t${r.burst[i]}\t${r.sent[i]}\t${toEpoch(r.recv[i])}\t` +
            `${r.bytes[i]}\t${bodyOk(Number(r.seq[i]), r.bytes[i], r.head[i])}\t${r.red[i]}\t` +
            `${o.destinations[r.dest[i]]}\t${r.nonce[i] ?? '-'}\t${r.crcHead[i] ?? '-'}\t${hex8(r.crc[i])}\n`;
        }
        return s;
      },
    };
  }

  // -------------------------------------------------------------------------------------
  // what the driver calls

  const bb = {
    failed: false,
    role: null,
    nowNs: () => String(nowNs()),
    start(role, o) {
      bb.role = role === 'producer' ? producer(o) : consumer(o);
      bb.role.run().catch((e) => fatal(1, `internal: ${e && e.stack || e}`));
    },
  };
  window.addEventListener('error', (e) => fatal(1, `internal: ${e.message}`));
  window.addEventListener('unhandledrejection', (e) => fatal(1, `internal: ${e.reason && e.reason.stack || e.reason}`));
  window.bb = bb;
})();
