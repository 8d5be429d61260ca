#!/usr/bin/env node
// burstbench Pi worker (@stomp/stompjs over stomp:// or ws://): Leibniz chunks from a work
// queue, partial sums to a results queue. The format: "Pi workers" in clients/contract.md.

import { emit, fail, versionLine } from './common.mjs';
import { parseUrl } from './options.mjs';
import { connect, disconnect } from './connect.mjs';

const USAGE = `usage: node pi-worker.mjs --url stomp://HOST:PORT --work QUEUE --results QUEUE [options]

burstbench Pi worker (@stomp/stompjs). URL: stomp://HOST:PORT (STOMP over TCP) or
ws://HOST:PORT/ (STOMP over WebSocket).

  --url URL              broker address (required)
  --work QUEUE           queue the work messages come from (required)
  --results QUEUE        queue the partial sums go to (required)
  --id ID                worker id [A-Za-z0-9_.-]{1,64} (default w1)
  --prefetch N           activemq.prefetchSize (default 1000)
  --user U --password P  broker credentials
  --connect-timeout S    give up connecting after S seconds, exit 3 (default 10)
  --version              print version JSON and exit
  --help                 print this and exit
`;

const VALUE = new Set(['url', 'work', 'results', 'id', 'prefetch', 'user', 'password', 'connect-timeout']);
const QUEUE_RE = /^[A-Za-z0-9_.:>*$-]{1,200}$/;

function parse(argv) {
  const raw = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help') { process.stdout.write(USAGE); process.exit(0); }
    if (a === '--version') { process.stdout.write(versionLine() + '\n'); process.exit(0); }
    if (!a.startsWith('--') || a === '--') fail(2, `unexpected argument ${JSON.stringify(a)}`);
    const eq = a.indexOf('=');
    const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
    if (!VALUE.has(name)) fail(2, `unknown option --${name}`);
    if (eq >= 0) {
      raw[name] = a.slice(eq + 1);
    } else {
      const v = argv[i + 1];
      if (v === undefined || v.startsWith('--')) fail(2, `--${name} needs a value`);
      raw[name] = v;
      i++;
    }
  }
  for (const r of ['url', 'work', 'results']) {
    if (raw[r] === undefined) fail(2, `missing required option --${r}`);
  }
  for (const q of ['work', 'results']) {
    if (!QUEUE_RE.test(raw[q])) fail(2, `bad queue name for --${q}: ${JSON.stringify(raw[q])}`);
  }
  const o = { url: raw.url, endpoint: parseUrl(raw.url), work: raw.work, results: raw.results };
  o.id = raw.id ?? 'w1';
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(o.id)) fail(2, `--id must match [A-Za-z0-9_.-]{1,64}, got ${JSON.stringify(o.id)}`);
  o.prefetch = raw.prefetch === undefined ? 1000 : Number(raw.prefetch);
  if (!/^[0-9]+$/.test(raw.prefetch ?? '1000') || o.prefetch < 1 || o.prefetch > 2 ** 31 - 1) {
    fail(2, `--prefetch needs an integer >= 1, got ${JSON.stringify(raw.prefetch)}`);
  }
  o.connectTimeout = raw['connect-timeout'] === undefined ? 10 : Number(raw['connect-timeout']);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(raw['connect-timeout'] ?? '10') || !(o.connectTimeout > 0)) {
    fail(2, `--connect-timeout needs a number > 0, got ${JSON.stringify(raw['connect-timeout'])}`);
  }
  o.user = raw.user;
  o.password = raw.password;
  return o;
}

/** Sum of (-1)^k / (2k+1) for k in [start, start+n), term by term in that order. */
function chunkSum(start, n) {
  let s = 0.0;
  const end = start + n;
  for (let k = start; k < end; k++) {
    const term = 1.0 / (2.0 * k + 1.0);
    if (k % 2 === 1) s -= term; else s += term;
  }
  return s;
}

const o = parse(process.argv.slice(2));
let chunks = 0;
let foreign = 0;
let stopping = false;
let ready = false;
let client = null;
let conn = null;

process.on('uncaughtException', (e) => fail(1, `internal: ${e && e.stack || e}`));

async function finish() {
  if (stopping) return;
  stopping = true;
  if (client) await disconnect(client, conn);
  emit({ event: 'done', id: o.id, chunks, foreign });
  process.exit(0);
}

process.on('SIGTERM', finish);

const onMessage = (m) => {
  if (stopping) return;
  const h = m.headers;
  if (h.pi_cmd === 'stop') { finish(); return; }
  const ok = h.pi_cmd === 'work' && /^[0-9]{1,18}$/.test(h.pi_chunk ?? '') &&
    /^[0-9]{1,15}$/.test(h.pi_start ?? '') && /^[0-9]{1,15}$/.test(h.pi_elements ?? '') &&
    Number(h.pi_elements) >= 1;
  if (!ok) { foreign++; return; }
  const s = chunkSum(Number(h.pi_start), Number(h.pi_elements));
  client.publish({
    destination: `/queue/${o.results}`,
    body: s.toPrecision(17),
    headers: { pi_chunk: h.pi_chunk, pi_worker: o.id },
  });
  chunks++;
};

({ client, conn } = await connect(o, {
  onFatal: (msg) => { if (!stopping) fail(1, msg); },
  preReady: () => !ready,
}));
const receipt = `${o.id}-subscribed`;
const subscribed = new Promise((resolve) => client.watchForReceipt(receipt, resolve));
client.subscribe(`/queue/${o.work}`, onMessage, {
  ack: 'auto', 'activemq.prefetchSize': String(o.prefetch), receipt,
});
await subscribed;
conn.cancelTimer();
ready = true;
if (!stopping) emit({ event: 'ready', id: o.id, role: 'pi-worker' });
