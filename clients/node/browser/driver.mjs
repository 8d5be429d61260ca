#!/usr/bin/env node
// burstbench's `stompjs:browser` client: the producer or consumer runs as a page (page.js) in
// headless Chromium, with the @stomp/stompjs browser bundle of clients/node/node_modules (the
// Node client's version), over the broker's WebSocket connector. This program is the small
// driver that makes the page a contract process (clients/contract.md): it parses the
// arguments, serves the page on 127.0.0.1, starts Chromium (Debian's package, found at run
// time; nothing downloaded) or opens a tab in a shared one, and passes stdin commands in and
// events, ticks and records out, over the DevTools protocol (puppeteer-core).
//
//   node driver.mjs producer|consumer [contract options]
//   node driver.mjs browser            one Chromium for many tabs: prints its DevTools
//                                      address in `ready`, runs until stdin ends or SIGTERM
//
// BB_BROWSER_WS=ws://127.0.0.1:PORT/devtools/browser/ID makes a producer or consumer a tab of
// that browser instead of starting its own. Every Chromium this program starts gets its own
// throwaway --user-data-dir, its own process group, dies with this program (setpriv's parent
// death signal) and is stopped with its whole group on every exit path.

import { spawn, spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';
import { emit, fail, failOnCrash, gate, nowNs } from '../common.mjs';
import { parseArgs, usage } from '../options.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const NODE_DIR = path.dirname(HERE);
const STOMPJS = path.join(NODE_DIR, 'node_modules', '@stomp', 'stompjs');
const BUNDLE = path.join(STOMPJS, 'bundles', 'stomp.umd.min.js');

const role = process.argv[2];
const argv = process.argv.slice(3);
if (!['producer', 'consumer', 'browser'].includes(role)) {
  fail(2, `first argument must be producer, consumer or browser, got ${JSON.stringify(role ?? '')}`);
}

// ---------------------------------------------------------------------------------------
// Chromium: found at run time, started in a process group of its own

/** The Chromium binary: $BB_CHROMIUM, Debian's /usr/lib/chromium/chromium (what the
 * /usr/bin/chromium wrapper runs), or `chromium` on PATH (burstbench/infra/browser.py: the same). */
function chromiumPath() {
  if (process.env.BB_CHROMIUM) return process.env.BB_CHROMIUM;
  const candidates = ['/usr/lib/chromium/chromium'];
  for (const dir of (process.env.PATH || '').split(':')) candidates.push(path.join(dir, 'chromium'));
  for (const c of candidates) {
    try {
      fs.accessSync(c, fs.constants.X_OK);
      return c;
    } catch { /* next */ }
  }
  return null;
}

function pkgVersion(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

function chromiumVersion(bin) {
  try {
    return execFileSync(bin, ['--version'], { encoding: 'utf8', timeout: 20000, stdio: ['ignore', 'pipe', 'ignore'] })
      .trim();
  } catch (e) {
    return `unknown (${e.code || e.message})`;
  }
}

const FLAGS = [
  '--headless', '--disable-gpu', '--no-first-run', '--no-default-browser-check',
  '--remote-debugging-address=127.0.0.1', '--remote-debugging-port=0',
  '--disable-breakpad',
  // loopback only: nothing of the browser's own calls home
  '--disable-background-networking', '--disable-component-update', '--disable-domain-reliability',
  '--disable-sync', '--disable-extensions', '--no-pings',
  // a tab the harness is not looking at runs at full speed (headless tabs are not all visible)
  '--disable-background-timer-throttling', '--disable-renderer-backgrounding',
  '--disable-backgrounding-occluded-windows',
];

let chrome = null;     // the Chromium child (pid = its process group)
let profile = null;    // the throwaway directory of its --user-data-dir, HOME, ...
let shortTmp = null;   // its TMPDIR when the profile's path is too long for a unix socket
let browser = null;    // puppeteer's Browser
let ownBrowser = false;

/** PIDs of the processes whose command line names our profile directory: Chromium's
 * crash handlers leave its process group (their own session) and exit once the browser is
 * gone; these are killed by PID too, never by name. */
function profilePids() {
  const pids = [];
  if (!profile) return pids;
  for (const d of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      if (fs.readFileSync(`/proc/${d}/cmdline`, 'latin1').includes(profile)) pids.push(Number(d));
    } catch { /* gone */ }
  }
  return pids;
}

/** Kill the Chromium process group at once and remove its profile (any exit path). */
function killBrowser() {
  if (chrome && chrome.exitCode === null && chrome.signalCode === null) {
    try { process.kill(-chrome.pid, 'SIGKILL'); } catch { /* gone */ }
  }
  for (const pid of profilePids()) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
  for (const dir of [profile, shortTmp]) {
    if (!dir) continue;
    try { fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }); } catch { /* best effort */ }
  }
  profile = shortTmp = null;
}
process.on('exit', killBrowser);

/** Field 22 of /proc/PID/stat (start time in clock ticks since boot), or null when the
 * process is gone (a zombie is gone). */
function startTime(pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ').pop().split(' ');
    return f[0] === 'Z' ? null : f[19];
  } catch {
    return null;
  }
}

/** Remove the profiles of drivers that are gone (killed by SIGKILL: no chance to clean up);
 * a profile's `owner` file names its driver's PID and start time. */
function sweepStaleProfiles() {
  const dirs = [];
  for (const tmp of new Set([os.tmpdir(), '/tmp'])) {
    try {
      for (const n of fs.readdirSync(tmp)) if (n.startsWith('bb-chromium-')) dirs.push(path.join(tmp, n));
    } catch { /* none there */ }
  }
  for (const dir of dirs) {
    try {
      const [pid, started] = fs.readFileSync(path.join(dir, 'owner'), 'utf8').trim().split(' ');
      if (startTime(Number(pid)) === started) continue; // its driver still runs
      fs.rmSync(dir, { recursive: true, force: true });
    } catch { /* not ours to judge (no owner file yet, or not readable) */ }
  }
}

/** Start Chromium; resolves to its DevTools WebSocket address. Exits 3 if it will not start.
 * A Chromium that dies before it listens is started once more (a fresh profile), with what
 * it said on stderr. */
async function launch(timeoutMs, ca = null) {
  const bin = chromiumPath();
  if (!bin) fail(3, 'no Chromium found (install Debian\'s chromium: ./bench setup), or set BB_CHROMIUM');
  sweepStaleProfiles();
  for (let attempt = 1; ; attempt++) {
    const r = await launchOnce(bin, timeoutMs, ca);
    if (r.ws) return r.ws;
    killBrowser();
    if (attempt >= 2) fail(3, `Chromium (${bin}) exited before it listened (${r.why})`);
    process.stderr.write(`Chromium exited before it listened (${r.why}); starting it once more\n`);
  }
}

/**
 * A CA Chromium trusts for wss:// (``--ca FILE``): on Linux it checks certificates against
 * the NSS database in $HOME/.pki/nssdb, here the throwaway profile's own, so the CA goes into
 * that database with NSS's certutil (Debian's libnss3-tools), trusted to issue server
 * certificates ("C,,"), and nowhere else.
 */
function trustCa(home, ca) {
  const db = path.join(home, '.pki', 'nssdb');
  fs.mkdirSync(db, { recursive: true });
  const file = path.join(home, 'bench-ca.pem'); // ca: the PEM's bytes
  fs.writeFileSync(file, ca);
  const certutil = (args) => {
    const r = spawnSync('certutil', ['-d', `sql:${db}`, ...args], { encoding: 'utf8' });
    if (r.error) fail(2, `--ca needs NSS's certutil (Debian package libnss3-tools): ${r.error.code || r.error.message}`);
    if (r.status !== 0) fail(2, `--ca: certutil refused it: ${(r.stderr || r.stdout).trim().split('\n')[0]}`);
  };
  certutil(['-N', '--empty-password']);
  certutil(['-A', '-t', 'C,,', '-n', 'burstbench --ca', '-i', file]);
}

function launchOnce(bin, timeoutMs, ca = null) {
  profile = fs.mkdtempSync(path.join(os.tmpdir(), 'bb-chromium-'));
  fs.writeFileSync(path.join(profile, 'owner'), `${process.pid} ${startTime(process.pid)}\n`);
  const flags = [...FLAGS, `--user-data-dir=${path.join(profile, 'data')}`];
  // as root Chromium refuses to start with its sandbox on
  if (process.getuid && process.getuid() === 0) flags.push('--no-sandbox');
  flags.push('about:blank');
  // detached: a process group of its own (Chromium's zygotes and renderers stay in it), so
  // it can be killed whole by its PID; setpriv: SIGKILL when this driver dies, even by SIGKILL
  const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => fs.existsSync(p));
  const [cmd, args] = setpriv ? [setpriv, ['--pdeathsig', 'KILL', '--', bin, ...flags]] : [bin, flags];
  // everything of this browser in the throwaway directory: HOME (its NSS database, caches),
  // CHROME_CONFIG_HOME (the crash handlers' database, named on their command line) and, when
  // the path is short enough for the unix socket Chromium makes there (108 bytes with
  // org.chromium.Chromium.XXXXXX/SingletonSocket), TMPDIR
  for (const d of ['home', 'config', 'tmp']) fs.mkdirSync(path.join(profile, d));
  if (ca) trustCa(path.join(profile, 'home'), ca);
  const env = {
    ...process.env, HOME: path.join(profile, 'home'), CHROME_CONFIG_HOME: path.join(profile, 'config'),
  };
  env.TMPDIR = path.join(profile, 'tmp');
  if (env.TMPDIR.length > 56) {
    shortTmp = fs.mkdtempSync('/tmp/bb-chromium-');
    fs.writeFileSync(path.join(shortTmp, 'owner'), `${process.pid} ${startTime(process.pid)}\n`);
    env.TMPDIR = shortTmp;
  }
  chrome = spawn(cmd, args, { detached: true, stdio: ['ignore', 'ignore', 'pipe'], env });
  const child = chrome;
  return new Promise((resolve) => {
    let err = '';
    let listening = false;
    const last = () => err.split('\n').filter((l) => l.trim() && !l.includes('dbus')).slice(-1)[0] || '';
    const timer = setTimeout(() => fail(3, `Chromium (${bin}) did not start within ${timeoutMs / 1000} s`), timeoutMs);
    child.on('error', (e) => fail(3, `cannot start Chromium (${bin}): ${e.code || e.message}`));
    child.on('exit', (code, sig) => {
      if (!listening) {
        clearTimeout(timer);
        resolve({ why: `${sig || code}: ${last()}` });
      } else if (!closing) {
        fail(1, `Chromium exited (${sig || code}): ${last()}`);
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => {
      err = (err + d).slice(-8192);
      // what Chromium says goes to our log, less its complaints that there is no D-Bus and
      // its DevTools address (which this program uses, and a `browser` prints in its ready)
      for (const line of d.split('\n')) {
        if (line.trim() && !line.includes('dbus') && !line.includes('DevTools listening on')) {
          process.stderr.write(`chromium: ${line}\n`);
        }
      }
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
      if (m && !listening) {
        listening = true;
        clearTimeout(timer);
        resolve({ ws: m[1] });
      }
    });
  });
}

let closing = false;
/** Close the page's browser gracefully (its processes reaped, so their CPU time is ours in
 * wait4), at most 5 s, then kill what is left. */
async function closeBrowser(page) {
  closing = true;
  if (!browser) return killBrowser();
  if (!ownBrowser) {
    try { if (page) await page.close(); } catch { /* gone */ }
    try { await browser.disconnect(); } catch { /* gone */ }
    return undefined;
  }
  const exited = chrome && chrome.exitCode === null && chrome.signalCode === null
    ? new Promise((res) => chrome.once('exit', res)) : Promise.resolve();
  let t;
  const timeout = new Promise((res) => { t = setTimeout(res, 5000); });
  try { await Promise.race([browser.close(), timeout]); } catch { /* killed below */ }
  await Promise.race([exited, timeout]);
  clearTimeout(t);
  return killBrowser();
}

async function openBrowser(timeoutMs, ca) {
  const shared = process.env.BB_BROWSER_WS;  // (started with the same --ca by the harness)
  let endpoint = shared;
  if (!shared) {
    endpoint = await launch(timeoutMs, ca);
    ownBrowser = true;
  }
  try {
    browser = await puppeteer.connect({ browserWSEndpoint: endpoint, defaultViewport: null });
  } catch (e) {
    fail(3, `cannot reach the browser at ${endpoint}: ${e.message}`);
  }
  browser.on('disconnected', () => { if (!closing) fail(1, 'lost the browser (disconnected)'); });
  return shared ? 'shared' : 'own';
}

// ---------------------------------------------------------------------------------------
// `browser`: one Chromium that many producer and consumer tabs share

if (role === 'browser') {
  if (argv.includes('--help')) {
    process.stdout.write('usage: node driver.mjs browser [--id ID] [--ca FILE]\n\nStarts headless Chromium for the tabs of ' +
      'stompjs:browser clients (BB_BROWSER_WS=<the ws address in ready>), trusting the PEM CA FILE for wss://; ' +
      'stops on stdin stop/EOF or SIGTERM.\n');
    process.exit(0);
  }
  const i = argv.indexOf('--id');
  const id = i >= 0 ? argv[i + 1] : 'browser';
  const c = argv.indexOf('--ca');
  const caFile = c >= 0 ? argv[c + 1] : null;
  if (argv.some((a, k) => a.startsWith('--') && !['--id', '--ca'].includes(a) && k !== i + 1 && k !== c + 1)
      || (i >= 0 && !/^[A-Za-z0-9_.-]{1,64}$/.test(id || ''))) {
    fail(2, 'browser takes --id ID and --ca FILE only');
  }
  let ca = null;
  if (c >= 0) {
    try { ca = fs.readFileSync(caFile); } catch (e) { fail(2, `--ca: cannot read ${caFile}: ${e.code || e.message}`); }
  }
  const ws = await launch(30000, ca);
  ownBrowser = true;
  browser = await puppeteer.connect({ browserWSEndpoint: ws, defaultViewport: null });
  emit({ event: 'ready', id, role: 'browser', ws, pid: chrome.pid, version: await browser.version() });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    const chromium = await processInfo();
    await closeBrowser(null);
    emit({ event: 'done', id, chromium });
    process.exit(0);
  };
  for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, stop);
  gate(() => {}, stop);
} else {
  await client();
}

// ---------------------------------------------------------------------------------------
// producer / consumer

function versionLine() {
  const bin = chromiumPath();
  return JSON.stringify({
    client: 'stompjs',
    library: `@stomp/stompjs ${pkgVersion(STOMPJS)} (browser bundle)`,
    runtime: `${bin ? chromiumVersion(bin) : 'no Chromium found'} headless, driven by puppeteer-core ` +
      `${pkgVersion(path.join(NODE_DIR, 'node_modules', 'puppeteer-core'))} on node ${process.version}`,
    transports: { browser: 'the browser\'s WebSocket (ws://, wss://)' },
  });
}

function helpText() {
  return usage(role)
    .replace(/^usage: node \S+/, `usage: node browser/driver.mjs ${role}`)
    .replace(/STOMP client of burstbench[\s\S]*?\n\n/,
      'STOMP client of burstbench: @stomp/stompjs in a page of headless Chromium, over the\n' +
      'browser\'s WebSocket. URL: ws://HOST:PORT/ or wss://HOST:PORT/ (Chromium\'s trust store, or --ca).\n' +
      'BB_BROWSER_WS=ws://... (a `driver.mjs browser`): run as a tab of that browser.\n\n')
    .replace(/( *--ca FILE +)[^\n]*\n/, "$1PEM CA for wss://, put in the throwaway Chromium profile's NSS database\n")
    .replace(/( *--cert FILE +)[^\n]*\n/, "$1refused (exit 2): a page cannot be given a client certificate\n")
    .replace(/( *--connections N +)[^\n]*\n/, '$11 only (a page is one connection; more: exit 2)\n');
}

/** A small HTTP server on 127.0.0.1 for the page, its script and the stompjs bundle. */
function servePage() {
  const files = {
    '/page.html': [path.join(HERE, 'page.html'), 'text/html; charset=utf-8'],
    '/page.js': [path.join(HERE, 'page.js'), 'text/javascript; charset=utf-8'],
    '/stompjs/stomp.umd.min.js': [BUNDLE, 'text/javascript; charset=utf-8'],
  };
  const server = http.createServer((req, res) => {
    const f = files[req.url.split('?')[0]];
    if (!f) { res.writeHead(req.url === '/favicon.ico' ? 204 : 404); res.end(); return; }
    // cross-origin isolated: the page's performance.now() then ticks in 5 us, not 100 us
    res.writeHead(200, {
      'content-type': f[1], 'cache-control': 'no-store',
      'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp',
    });
    fs.createReadStream(f[0]).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function client() {
  if (argv.includes('--help')) { process.stdout.write(helpText()); process.exit(0); }
  if (argv.includes('--version')) { process.stdout.write(versionLine() + '\n'); process.exit(0); }
  const o = parseArgs(role, argv);
  if (o.endpoint.kind !== 'ws') {
    fail(2, `--url ${o.url}: stompjs in the browser speaks ws:// and wss:// only`);
  }
  if (o.cert) fail(2, '--cert: a page cannot be given a client certificate (mutual TLS)');
  if (o.connections > 1) fail(2, `--connections ${o.connections}: a page is one connection (1 only)`);
  if (!fs.existsSync(BUNDLE)) fail(3, `no stompjs bundle at ${BUNDLE}: run ./bench setup`);

  const pageOpts = {
    url: o.url, destinations: o.destinations, count: o.count, size: o.size, bursts: o.bursts,
    txBatch: o.txBatch, id: o.id, gate: o.gate, user: o.user, password: o.password,
    connectTimeoutMs: Math.round(o.connectTimeout * 1000), connectTimeoutS: o.connectTimeout,
    persistent: o.persistent, rate: o.rate, nonce: o.nonce, ack: o.ack, prefetch: o.prefetch,
    windowBytes: o.windowBytes,
  };

  let page = null;
  let started = false;
  let finishing = false;
  let ticker = null;
  let mode = null;

  const finish = async () => {
    if (finishing) return;
    finishing = true;
    if (ticker) clearInterval(ticker);
    let counts = role === 'producer' ? { sent: 0 } : { received: 0, foreign: 0, redelivered: 0 };
    let tab = null;
    let chromium = null;
    if (started) {
      counts = await page.evaluate(() => window.bb.role.counts());
      tab = await tabMetrics(page);
      chromium = await processInfo(); // a shared browser's: every tab's renderer still there
      if (o.records) await writeRecords(page, o.records);
    } else if (o.records) {
      fs.writeFileSync(o.records, role === 'producer' ? '#producer\tseq\tburst\tsent_ns\n'
        : '#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest\tnonce\tcrc32_header\tcrc32_body\n');
    }
    await closeBrowser(page);
    emit({ event: 'done', id: o.id, ...counts, ...(tab ? { browser: mode, tab } : {}), ...(chromium ? { chromium } : {}) });
    process.exit(0);
  };

  const onPage = (line) => {
    let ev;
    try { ev = JSON.parse(line); } catch { return; }
    if (ev.event === 'fatal') {
      if (ev.code === 1 && finishing) return;
      fail(ev.code, ev.msg);
    } else if (ev.event === 'ready') {
      // Chromium sets TCP_NODELAY on every client socket it opens
      // (net/socket/tcp_socket_posix.cc, SetDefaultOptionsForClient)
      emit({ ...ev, tcp_nodelay: true, tcp_nodelay_how: 'library', browser: mode });
      ticker = setInterval(async () => {
        try {
          const n = await page.evaluate(() => window.bb.role.count());
          if (!finishing) emit({ event: 'tick', id: o.id, t_ns: nowNs(), [role === 'producer' ? 'sent' : 'received']: n });
        } catch { /* closing */ }
      }, 1000);
    } else if (ev.event === 'burst') {
      emit({ ...ev, first_ns: BigInt(ev.first_ns), last_ns: BigInt(ev.last_ns) });
    } else if (ev.event === 'finished') {
      finish().catch((e) => fail(1, `internal: ${e && e.stack || e}`));
    }
  };

  let pendingGoes = 0;
  let pendingStop = false;
  let signalled = false;
  for (const sig of ['SIGTERM', 'SIGINT']) {
    process.on(sig, () => {
      if (signalled) return;
      signalled = true;
      if (!started) { finish(); return; }
      page.evaluate(() => window.bb.role.abort()).catch(() => {});
    });
  }
  failOnCrash();
  if (o.gate) {
    gate(() => { if (started) page.evaluate(() => window.bb.role.go()).catch(() => {}); else pendingGoes++; },
      () => { if (started) page.evaluate(() => window.bb.role.stop()).catch(() => {}); else pendingStop = true; });
  }
  const server = await servePage();
  server.unref();
  mode = await openBrowser(Math.max(30000, pageOpts.connectTimeoutMs), o.ca);
  if (signalled) return finish();
  page = await browser.newPage();
  page.on('console', (m) => process.stderr.write(`page ${m.type()}: ${m.text()}\n`));
  page.on('pageerror', (e) => fail(1, `internal (page): ${e.message}`));
  page.on('error', (e) => fail(1, `the page crashed: ${e.message}`));
  await page.exposeFunction('bbEmit', onPage);
  await page.goto(`http://127.0.0.1:${server.address().port}/page.html`, { waitUntil: 'load' });
  if (signalled) return finish();
  await page.evaluate((r, opts) => window.bb.start(r, opts), role, pageOpts);
  started = true;
  for (; pendingGoes > 0; pendingGoes--) await page.evaluate(() => window.bb.role.go());
  if (pendingStop) await page.evaluate(() => window.bb.role.stop());
  return undefined;
}

/** The tab's own figures from Chromium (Performance.getMetrics): main-thread task and script
 * seconds, JS heap. */
async function tabMetrics(page) {
  try {
    const m = await page.metrics();
    return {
      task_s: Number(m.TaskDuration.toFixed(3)),
      script_s: Number(m.ScriptDuration.toFixed(3)),
      js_heap_mb: Number((m.JSHeapUsedSize / 1048576).toFixed(1)),
    };
  } catch {
    return null;
  }
}

/** Chromium's processes with their CPU seconds so far (SystemInfo.getProcessInfo on the
 * browser target): which kind (browser, renderer, gpu, utility) and PID. */
async function processInfo() {
  // asked once more after a failure: three tabs of one shared Chromium finishing together on a
  // loaded machine saw one ask fail (clean-clone CI of b28bda8); what failed is reported
  let err = null;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const cdp = await browser.target().createCDPSession();
      const { processInfo: list } = await cdp.send('SystemInfo.getProcessInfo');
      await cdp.detach();
      return list.map((p) => ({ type: p.type, pid: p.id, cpu_s: Number(p.cpuTime.toFixed(3)) }));
    } catch (e) {
      err = e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return [{ error: String(err.message || err).slice(0, 200) }];
}

/** The page's records, fetched in chunks, written as the contract's TSV. */
async function writeRecords(page, file) {
  const header = role === 'producer' ? '#producer\tseq\tburst\tsent_ns'
    : '#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest\tnonce\tcrc32_header\tcrc32_body';
  const n = await page.evaluate(() => window.bb.role.recordCount());
  const fd = fs.openSync(file, 'w');
  try {
    fs.writeSync(fd, header + '\n');
    const CH = 50000;
    for (let i = 0; i < n; i += CH) {
      fs.writeSync(fd, await page.evaluate((a, b) => window.bb.role.records(a, b), i, Math.min(n, i + CH)));
    }
  } finally {
    fs.closeSync(fd);
  }
}
