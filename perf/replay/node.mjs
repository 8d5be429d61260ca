// Replay of 60,000 MESSAGE frames through @stomp/stompjs's own Parser and FrameImpl (as the
// client builds them) into handlers, CPU ns per message (process.cpuUsage), alternating, median
// of 12. The handlers are copies, not imports (the consumer is a script): `loop` is
// perf/loops/node-recv.mjs's, `cur` the consumer's record keeping before commit a26d4be
// (strings and BigInts kept in arrays), `v20` after it (typed arrays); the other variants
// isolate single costs (v10: one parser string kept, v14: the headers object kept, v6: typed
// arrays without the header strings). Run: node perf/replay/node.mjs loop cur v20
import { Parser, FrameImpl } from '../../clients/node/node_modules/@stomp/stompjs/esm6/index.js';
import { crc32 } from 'node:zlib';
import { performance } from 'node:perf_hooks';
const N = 60000;
function frames(size) {
  const parts = [];
  for (let i = 0; i < N; i++) {
    const body = String(i % 1000000).padStart(6, '0') + 'x'.repeat(Math.max(0, size - 6));
    parts.push(`MESSAGE\ncontent-length:${body.length}\nexpires:0\ndestination:/queue/q\nsubscription:sub-0\npriority:4\nbb_producer:p0\nbb_seq:${i}\nbb_burst:0\nbb_sent_ns:${1763800000000000000n + BigInt(i)}\nbb_nonce:abcdef0123456789\nbb_crc32:0badf00d\nmessage-id:ID:host-1234-1:1:1:1:${i}\ntimestamp:1763800000000\n\n${body}\0`);
  }
  const buf = Buffer.from(parts.join(''));
  const chunks = [];
  for (let k = 0; k < buf.length; k += 65536) chunks.push(buf.subarray(k, k + 65536));
  return chunks;
}
function makeLoop() {
  let n = 0, first = 0n, last = 0n, foreign = 0, bytes = 0;
  return (m) => {
    last = process.hrtime.bigint();
    const h = m.headers;
    if (h.bb_seq === undefined || h.bb_producer === undefined || h.bb_sent_ns === undefined) foreign++;
    bytes += m.binaryBody.length;
    if (n++ === 0) first = last;
  };
}
function makeCur() {
  const rProducer = [], rSeq = [], rBurst = [], rSent = [], rRecv = [], rBytes = [], rHead = [], rRed = [], rDest = [], rNonce = [], rCrcHead = [], rCrc = [];
  let received = 0, foreign = 0, redelivered = 0; const di = 0;
  return (m) => {
    const t = process.hrtime.bigint();
    const h = m.headers;
    const p = h.bb_producer, sq = h.bb_seq, bu = h.bb_burst, st = h.bb_sent_ns;
    if (p === undefined || sq === undefined || bu === undefined || st === undefined) { foreign++; } else {
      const b = m.binaryBody; const len = b.length; let head = 0;
      for (let k = 0; k < len && k < 6; k++) head = head * 256 + b[k];
      const red = h.redelivered === 'true' ? 1 : 0; redelivered += red;
      rProducer.push(p); rSeq.push(sq); rBurst.push(bu); rSent.push(st); rRecv.push(t); rBytes.push(len);
      rHead.push(head); rRed.push(red); rDest.push(di); rNonce.push(h.bb_nonce); rCrcHead.push(h.bb_crc32); rCrc.push(crc32(b));
      received++;
    }
  };
}
function makeV2() {
  // one object per message with the raw values; time as a double
  const recs = [];
  let received = 0, foreign = 0;
  return (m) => {
    const t = performance.now();
    const h = m.headers;
    const b = m.binaryBody;
    recs.push([t, h, b.length, crc32(b), b.length >= 6 ? b.subarray(0, 6) : b]);
    received++;
  };
}
function makeV3() {
  // typed arrays for numbers, strings kept
  let cap = 1 << 16, n = 0;
  let rRecv = new Float64Array(cap), rBytes = new Int32Array(cap), rCrc = new Uint32Array(cap), rHead = new Float64Array(cap);
  const rStr = [];
  let foreign = 0;
  return (m) => {
    const t = performance.now();
    const h = m.headers;
    const p = h.bb_producer, sq = h.bb_seq, bu = h.bb_burst, st = h.bb_sent_ns;
    if (p === undefined || sq === undefined || bu === undefined || st === undefined) { foreign++; return; }
    const b = m.binaryBody; const len = b.length; let head = 0;
    for (let k = 0; k < len && k < 6; k++) head = head * 256 + b[k];
    if (n === cap) { cap *= 2; const g = (A, a) => { const x = new A(cap); x.set(a); return x; };
      rRecv = g(Float64Array, rRecv); rBytes = g(Int32Array, rBytes); rCrc = g(Uint32Array, rCrc); rHead = g(Float64Array, rHead); }
    rRecv[n] = t; rBytes[n] = len; rCrc[n] = crc32(b); rHead[n] = head;
    rStr.push(p, sq, bu, st, h.bb_nonce, h.bb_crc32, h.redelivered);
    n++;
  };
}
function makeNoCrc() {
  const rCrc = []; let n = 0;
  const cur = makeCur();
  return (m) => { const b = m.binaryBody; n += b.length; };
}
function makeCrcOnly() {
  let x = 0;
  return (m) => { const b = m.binaryBody; x ^= crc32(b); };
}
function makeCrcJs() {
  const T = new Int32Array(256);
  for (let i = 0; i < 256; i++) { let c = i; for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; T[i] = c; }
  let x = 0;
  return (m) => { const b = m.binaryBody; let c = -1; for (let i = 0; i < b.length; i++) c = T[(c ^ b[i]) & 0xff] ^ (c >>> 8); x ^= ~c; };
}
function makeV4() {
  let cap = 1 << 16, n = 0;
  let rRecv = new Float64Array(cap), rHead = new Float64Array(cap), rBytes = new Int32Array(cap), rCrc = new Uint32Array(cap), rSmall = new Int32Array(cap);
  const rStr = [];
  let foreign = 0, redelivered = 0; const di = 0;
  const grow = (A, a) => { const x = new A(cap); x.set(a); return x; };
  return (m) => {
    const t = performance.now();
    const h = m.headers;
    const p = h.bb_producer, sq = h.bb_seq, bu = h.bb_burst, st = h.bb_sent_ns;
    if (p === undefined || sq === undefined || bu === undefined || st === undefined) { foreign++; return; }
    const b = m.binaryBody; const len = b.length; let head = 0;
    for (let k = 0; k < len && k < 6; k++) head = head * 256 + b[k];
    const red = h.redelivered === 'true' ? 1 : 0; redelivered += red;
    if (n === cap) { cap *= 2; rRecv = grow(Float64Array, rRecv); rHead = grow(Float64Array, rHead); rBytes = grow(Int32Array, rBytes); rCrc = grow(Uint32Array, rCrc); rSmall = grow(Int32Array, rSmall); }
    rRecv[n] = t; rHead[n] = head; rBytes[n] = len; rCrc[n] = crc32(b); rSmall[n] = di * 2 + red;
    rStr.push(p, sq, bu, st, h.bb_nonce, h.bb_crc32);
    n++;
  };
}
function makeV5() {
  let cap = 1 << 16, n = 0;
  let rRecv = new Float64Array(cap), rHead = new Float64Array(cap), rBytes = new Int32Array(cap), rCrc = new Uint32Array(cap), rSmall = new Int32Array(cap);
  const rStr = [];
  let foreign = 0, redelivered = 0; const di = 0;
  const grow = (A, a) => { const x = new A(cap); x.set(a); return x; };
  return (m) => {
    const t = performance.now();
    const h = m.headers;
    const p = h.bb_producer, sq = h.bb_seq, bu = h.bb_burst, st = h.bb_sent_ns;
    if (p === undefined || sq === undefined || bu === undefined || st === undefined) { foreign++; return; }
    const b = m.binaryBody; const len = b.length; let head = 0;
    for (let k = 0; k < len && k < 6; k++) head = head * 256 + b[k];
    const red = h.redelivered === 'true' ? 1 : 0; redelivered += red;
    if (n === cap) { cap *= 2; rRecv = grow(Float64Array, rRecv); rHead = grow(Float64Array, rHead); rBytes = grow(Int32Array, rBytes); rCrc = grow(Uint32Array, rCrc); rSmall = grow(Int32Array, rSmall); }
    rRecv[n] = t; rHead[n] = head; rBytes[n] = len; rCrc[n] = 0; rSmall[n] = di * 2 + red;
    rStr.push(p, sq, bu, st, h.bb_nonce, h.bb_crc32);
    n++;
  };
}
function makeV6() {
  let cap = 1 << 16, n = 0;
  let rRecv = new Float64Array(cap), rHead = new Float64Array(cap), rBytes = new Int32Array(cap), rCrc = new Uint32Array(cap), rSmall = new Int32Array(cap);
  const rStr = [];
  let foreign = 0, redelivered = 0; const di = 0;
  const grow = (A, a) => { const x = new A(cap); x.set(a); return x; };
  return (m) => {
    const t = performance.now();
    const h = m.headers;
    const p = h.bb_producer, sq = h.bb_seq, bu = h.bb_burst, st = h.bb_sent_ns;
    if (p === undefined || sq === undefined || bu === undefined || st === undefined) { foreign++; return; }
    const b = m.binaryBody; const len = b.length; let head = 0;
    for (let k = 0; k < len && k < 6; k++) head = head * 256 + b[k];
    const red = h.redelivered === 'true' ? 1 : 0; redelivered += red;
    if (n === cap) { cap *= 2; rRecv = grow(Float64Array, rRecv); rHead = grow(Float64Array, rHead); rBytes = grow(Int32Array, rBytes); rCrc = grow(Uint32Array, rCrc); rSmall = grow(Int32Array, rSmall); }
    rRecv[n] = t; rHead[n] = head; rBytes[n] = len; rCrc[n] = crc32(b); rSmall[n] = di * 2 + red;
    
    n++;
  };
}
function makeV7() {
  let cap = 1 << 16, n = 0;
  let rRecv = new Float64Array(cap), rHead = new Float64Array(cap), rBytes = new Int32Array(cap), rCrc = new Uint32Array(cap), rSmall = new Int32Array(cap);
  const rStr = [];
  let foreign = 0, redelivered = 0; const di = 0;
  const grow = (A, a) => { const x = new A(cap); x.set(a); return x; };
  return (m) => {
    const t = 0;
    const h = m.headers;
    const p = h.bb_producer, sq = h.bb_seq, bu = h.bb_burst, st = h.bb_sent_ns;
    if (p === undefined || sq === undefined || bu === undefined || st === undefined) { foreign++; return; }
    const b = m.binaryBody; const len = b.length; let head = 0;
    for (let k = 0; k < len && k < 6; k++) head = head * 256 + b[k];
    const red = h.redelivered === 'true' ? 1 : 0; redelivered += red;
    if (n === cap) { cap *= 2; rRecv = grow(Float64Array, rRecv); rHead = grow(Float64Array, rHead); rBytes = grow(Int32Array, rBytes); rCrc = grow(Uint32Array, rCrc); rSmall = grow(Int32Array, rSmall); }
    rRecv[n] = t; rHead[n] = head; rBytes[n] = len; rCrc[n] = crc32(b); rSmall[n] = di * 2 + red;
    rStr.push(p, sq, bu, st, h.bb_nonce, h.bb_crc32);
    n++;
  };
}
function makeV8() {
  let cap = 1 << 16, n = 0;
  let rRecv = new Float64Array(cap), rHead = new Float64Array(cap), rBytes = new Int32Array(cap), rCrc = new Uint32Array(cap), rSmall = new Int32Array(cap);
  let rSeq = new Float64Array(cap), rBurst = new Float64Array(cap), rSent = new BigInt64Array(cap), rProd = new Int32Array(cap), rNonce = new Int32Array(cap), rCrcH = new Uint32Array(cap);
  const odd = new Map();
  const INT = /^[0-9]{1,15}$/, SENT = /^[0-9]{1,18}$/, HEX = /^[0-9a-f]{8}$/;
  const prodNames = [], prodIdx = new Map(); let lastP = null, lastPi = -1;
  const nonceNames = [], nonceIdx = new Map(); let lastN = null, lastNi = -1;
  let foreign = 0, redelivered = 0; const di = 0;
  const grow = (A, a) => { const x = new A(cap); x.set(a); return x; };
  return (m) => {
    const t = performance.now();
    const h = m.headers;
    const p = h.bb_producer, sq = h.bb_seq, bu = h.bb_burst, st = h.bb_sent_ns;
    if (p === undefined || sq === undefined || bu === undefined || st === undefined) { foreign++; return; }
    const b = m.binaryBody; const len = b.length; let head = 0;
    for (let k = 0; k < len && k < 6; k++) head = head * 256 + b[k];
    const red = h.redelivered === 'true' ? 1 : 0; redelivered += red;
    if (n === cap) { cap *= 2; rRecv = grow(Float64Array, rRecv); rHead = grow(Float64Array, rHead); rBytes = grow(Int32Array, rBytes); rCrc = grow(Uint32Array, rCrc); rSmall = grow(Int32Array, rSmall);
      rSeq = grow(Float64Array, rSeq); rBurst = grow(Float64Array, rBurst); rSent = grow(BigInt64Array, rSent); rProd = grow(Int32Array, rProd); rNonce = grow(Int32Array, rNonce); rCrcH = grow(Uint32Array, rCrcH); }
    let pi;
    if (p === lastP) pi = lastPi; else { pi = prodIdx.get(p); if (pi === undefined) { pi = prodNames.length; prodNames.push(p); prodIdx.set(p, pi); } lastP = p; lastPi = pi; }
    const nc = h.bb_nonce; let ni = -1;
    if (nc !== undefined) { if (nc === lastN) ni = lastNi; else { ni = nonceIdx.get(nc); if (ni === undefined) { ni = nonceNames.length; nonceNames.push(nc); nonceIdx.set(nc, ni); } lastN = nc; lastNi = ni; } }
    const ch = h.bb_crc32; let flags = di * 8 + red;
    if (ch === undefined) {} else if (HEX.test(ch)) { rCrcH[n] = parseInt(ch, 16); flags |= 2; } else { flags |= 4; odd.set(n, [ch]); }
    if (INT.test(sq) && INT.test(bu) && SENT.test(st)) { rSeq[n] = +sq; rBurst[n] = +bu; rSent[n] = BigInt(st); } else { flags |= 6; odd.set(n, [sq, bu, st, ch]); }
    rRecv[n] = t; rHead[n] = head; rBytes[n] = len; rCrc[n] = crc32(b); rSmall[n] = flags; rProd[n] = pi; rNonce[n] = ni;
    n++;
  };
}
function makeV9() {
  let n = 0, first = 0n, last = 0n, foreign = 0, bytes = 0; let sink = 0;
  return (m) => {
    last = process.hrtime.bigint();
    const h = m.headers;
    if (h.bb_seq === undefined || h.bb_producer === undefined || h.bb_sent_ns === undefined) foreign++;
    const a = h.bb_nonce, c = h.bb_crc32, d = h.bb_burst;
    sink += a.length + c.length + d.length;
    bytes += m.binaryBody.length;
    if (n++ === 0) first = last;
  };
}
function makeV10() {
  const keep = [];
  let n = 0, first = 0n, last = 0n, foreign = 0, bytes = 0;
  return (m) => {
    last = process.hrtime.bigint();
    const h = m.headers;
    if (h.bb_seq === undefined || h.bb_producer === undefined || h.bb_sent_ns === undefined) foreign++;
    keep.push(h.bb_seq);
    bytes += m.binaryBody.length;
    if (n++ === 0) first = last;
  };
}
function makeV12() {
  const keep = [];
  let n = 0, first = 0n, last = 0n, foreign = 0, bytes = 0;
  return (m) => {
    last = process.hrtime.bigint();
    const h = m.headers;
    if (h.bb_seq === undefined || h.bb_producer === undefined || h.bb_sent_ns === undefined) foreign++;
    keep.push(String(n * 7 + 1000000000));
    bytes += m.binaryBody.length;
    if (n++ === 0) first = last;
  };
}
function makeV13() {
  const keep = new Float64Array(1 << 17);
  let n = 0, first = 0n, last = 0n, foreign = 0, bytes = 0;
  return (m) => {
    last = process.hrtime.bigint();
    const h = m.headers;
    const s = h.bb_sent_ns;
    if (h.bb_seq === undefined || h.bb_producer === undefined || s === undefined) foreign++;
    keep[n] = +s.slice(0, 10) + +s.slice(10) + +h.bb_seq + +h.bb_burst;
    bytes += m.binaryBody.length;
    if (n++ === 0) first = last;
  };
}
function makeV14() {
  let cap = 1 << 16, n = 0;
  let rRecv = new Float64Array(cap), rHead = new Float64Array(cap), rBytes = new Int32Array(cap), rCrc = new Uint32Array(cap), rSmall = new Int32Array(cap);
  const rStr = [];
  let foreign = 0, redelivered = 0; const di = 0;
  const grow = (A, a) => { const x = new A(cap); x.set(a); return x; };
  return (m) => {
    const t = performance.now();
    const h = m.headers;
    const p = h.bb_producer, sq = h.bb_seq, bu = h.bb_burst, st = h.bb_sent_ns;
    if (p === undefined || sq === undefined || bu === undefined || st === undefined) { foreign++; return; }
    const b = m.binaryBody; const len = b.length; let head = 0;
    for (let k = 0; k < len && k < 6; k++) head = head * 256 + b[k];
    const red = h.redelivered === 'true' ? 1 : 0; redelivered += red;
    if (n === cap) { cap *= 2; rRecv = grow(Float64Array, rRecv); rHead = grow(Float64Array, rHead); rBytes = grow(Int32Array, rBytes); rCrc = grow(Uint32Array, rCrc); rSmall = grow(Int32Array, rSmall); }
    rRecv[n] = t; rHead[n] = head; rBytes[n] = len; rCrc[n] = crc32(b); rSmall[n] = di * 2 + red; rStr.push(h);
    
    n++;
  };
}
function makeV20() {
  let cap = 1 << 16, n = 0;
  const T = { f64: ['recv', 'head', 'seq', 'burst', 'sentHi', 'sentLo'], i32: ['bytes', 'flags', 'prod', 'nonce'], u32: ['crc', 'crcH'] };
  const a = {};
  for (const k of T.f64) a[k] = new Float64Array(cap);
  for (const k of T.i32) a[k] = new Int32Array(cap);
  for (const k of T.u32) a[k] = new Uint32Array(cap);
  const odd = new Map();
  const prodNames = [], prodIdx = new Map(); let lastP = null, lastPi = -1;
  const nonceNames = [], nonceIdx = new Map(); let lastN = null, lastNi = -1;
  let foreign = 0, redelivered = 0; const di = 0;
  const digits = (s, max) => { const L = s.length; if (L === 0 || L > max) return false; for (let i = 0; i < L; i++) { const c = s.charCodeAt(i); if (c < 48 || c > 57) return false; } return true; };
  const hex8 = (s) => { if (s.length !== 8) return -1; let v = 0; for (let i = 0; i < 8; i++) { const c = s.charCodeAt(i); const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1; if (d < 0) return -1; v = v * 16 + d; } return v; };
  return (m) => {
    const t = performance.now();
    const h = m.headers;
    const p = h.bb_producer, sq = h.bb_seq, bu = h.bb_burst, st = h.bb_sent_ns;
    if (p === undefined || sq === undefined || bu === undefined || st === undefined) { foreign++; return; }
    const b = m.binaryBody; const len = b.length; let head = 0;
    for (let k = 0; k < len && k < 6; k++) head = head * 256 + b[k];
    const red = h.redelivered === 'true' ? 1 : 0; redelivered += red;
    if (n === cap) { cap *= 2; for (const k in a) { const x = new a[k].constructor(cap); x.set(a[k]); a[k] = x; } }
    let pi;
    if (p === lastP) pi = lastPi; else { pi = prodIdx.get(p); if (pi === undefined) { pi = prodNames.length; prodNames.push(p); prodIdx.set(p, pi); } lastP = p; lastPi = pi; }
    const nc = h.bb_nonce; let ni = -1;
    if (nc !== undefined) { if (nc === lastN) ni = lastNi; else { ni = nonceIdx.get(nc); if (ni === undefined) { ni = nonceNames.length; nonceNames.push(nc); nonceIdx.set(nc, ni); } lastN = nc; lastNi = ni; } }
    const ch = h.bb_crc32; let flags = red;
    if (ch !== undefined) { const v = hex8(ch); if (v >= 0) { a.crcH[n] = v; flags |= 2; } else { flags |= 4; odd.set(n, ch); } }
    if (digits(sq, 15) && digits(bu, 15) && digits(st, 24)) {
      a.seq[n] = +sq; a.burst[n] = +bu; const L = st.length;
      if (L > 9) { a.sentHi[n] = +st.slice(0, L - 9); a.sentLo[n] = +st.slice(L - 9); } else { a.sentHi[n] = 0; a.sentLo[n] = +st; }
    } else { flags |= 8; odd.set(-1 - n, [sq, bu, st]); }
    a.recv[n] = t; a.head[n] = head; a.bytes[n] = len; a.crc[n] = crc32(b); a.flags[n] = flags; a.prod[n] = pi; a.nonce[n] = ni;
    n++;
  };
}
const makers = { v20: makeV20,  v14: makeV14,  v12: makeV12, v13: makeV13,  v9: makeV9, v10: makeV10,  v8: makeV8,  v5: makeV5, v6: makeV6, v7: makeV7,  v4: makeV4,  nocrc: makeNoCrc, crc: makeCrcOnly, crcjs: makeCrcJs,  loop: makeLoop, cur: makeCur, v2: makeV2, v3: makeV3 };
const which = process.argv.slice(2);
for (const size of [6, 1024]) {
  const chunks = frames(size);
  const res = {}; for (const k of which) res[k] = [];
  for (let rep = 0; rep < 13; rep++) {
    const order = rep % 2 ? [...which].reverse() : which;
    for (const k of order) {
      const cb = makers[k]();
      const parser = new Parser((raw) => cb(FrameImpl.fromRawFrame(raw, true)), () => {});
      const c0 = process.cpuUsage();
      for (const c of chunks) parser.parseChunk(c);
      const c1 = process.cpuUsage(c0);
      if (rep > 0) res[k].push((c1.user + c1.system) * 1000 / N);
    }
  }
  const med = (a) => a.sort((x, y) => x - y)[a.length >> 1];
  console.log(size, Object.fromEntries(Object.entries(res).map(([k, v]) => [k, Math.round(med(v))])));
}
