#!/usr/bin/env node
// Look at a page as a person would, in headless Chromium (the `browser` of driver.mjs: Debian's
// Chromium, a throwaway profile, stopped with its process group): open URL, then print
// `window[NAME]` as one JSON line every --every seconds and on a `sample` line on stdin;
// `shot PATH` on stdin writes a PNG screenshot; `stop` or end of stdin ends it.
//
//   node look.mjs URL [--name live] [--every 1]
//
// The live view's test and anyone who wants to see ./bench run --live from a terminal use it.

import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const die = (code, msg) => { process.stderr.write(`error: ${msg}\n`); process.exit(code); };
const url = args[0];
if (!url || !/^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(url)) {
  die(2, 'usage: node look.mjs http://127.0.0.1:PORT/ [--name live] [--every S] (loopback pages only)');
}
const opt = (name, dflt) => { const i = args.indexOf(`--${name}`); return i > 0 ? args[i + 1] : dflt; };
const name = opt('name', 'live');
const every = Number(opt('every', '1'));
if (!/^[A-Za-z_$][\w$]*$/.test(name) || !(every >= 0)) die(2, 'bad --name or --every');

// the browser: driver.mjs's `browser` role, our child; its ready line has the DevTools address
const host = spawn(process.execPath, [path.join(HERE, 'driver.mjs'), 'browser', '--id', 'look'],
  { stdio: ['pipe', 'pipe', 'inherit'] });
const early = (c) => die(3, `the browser exited (${c}) before it was ready`);
host.once('exit', early);
const ready = await new Promise((resolve) => {
  const rl = readline.createInterface({ input: host.stdout });
  rl.once('line', (l) => resolve(JSON.parse(l)));
});
host.off('exit', early);
const browser = await puppeteer.connect({ browserWSEndpoint: ready.ws, defaultViewport: { width: 900, height: 700 } });
const page = await browser.newPage();
page.on('console', (m) => process.stderr.write(`page ${m.type()}: ${m.text()}\n`));
await page.goto(url, { waitUntil: 'load' });

const sample = async () => {
  const state = await page.evaluate((n) => JSON.stringify(window[n] ?? null), name);
  process.stdout.write(`{"t_ms":${Date.now()},"state":${state}}\n`);
};
let timer = every > 0 ? setInterval(() => sample().catch(() => {}), every * 1000) : null;
let ending = false;
const end = async () => {
  if (ending) return;
  ending = true;
  if (timer) clearInterval(timer);
  timer = null;
  try { await browser.disconnect(); } catch { /* gone */ }
  host.stdin.end('stop\n');
  await new Promise((res) => host.once('exit', res));
  process.exit(0);
};
// stdin commands run one after the other, in their order
let chain = Promise.resolve();
const then = (f) => { chain = chain.then(f).catch((e) => process.stderr.write(`look: ${e.message}\n`)); };
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const [cmd, ...rest] = line.trim().split(' ');
  if (cmd === 'sample') then(sample);
  else if (cmd === 'shot') {
    then(async () => {
      await page.screenshot({ path: rest.join(' '), fullPage: true });
      process.stdout.write(`{"shot":${JSON.stringify(rest.join(' '))}}\n`);
    });
  } else if (cmd === 'stop') then(end);
});
rl.on('close', () => then(end));
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, end);
