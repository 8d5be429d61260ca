// The contract's options for the Node programs (clients/contract.md, "Arguments").

import fs from 'node:fs';
import { parseArgs as utilParseArgs } from 'node:util';
import { fail, versionLine } from './common.mjs';
import { wire } from './wire.mjs';


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
