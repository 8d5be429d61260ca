// Minimal stompjs send loop: node node-send.mjs URL QUEUE COUNT SIZE [SKIP] (ws:// or stomp:// / tcp://)
// (mark_ns: when message SKIP, counted from 0, was handed to publish())
// Public API only, with the stock client's transports and options (clients/node/connect.mjs,
// wire.mjs):
// ws with perMessageDeflate off, or @stomp/tcp-wrapper as it comes; no reconnect, no
// heart-beats; the receipt on the last message ends the send.
import { Client } from '../../clients/node/node_modules/@stomp/stompjs/esm6/index.js';
import { TCPWrapper } from '../../clients/node/node_modules/@stomp/tcp-wrapper/esm6/index.js';
import WebSocket from '../../clients/node/node_modules/ws/wrapper.mjs';
import zlib from 'node:zlib';

const [url, queue, count, size, skip] = [process.argv[2], process.argv[3], +process.argv[4], +process.argv[5],
  +(process.argv[6] ?? 0)];
const off = BigInt(Date.now()) * 1000000n - process.hrtime.bigint();
const u = new URL(url);
const ws = u.protocol.startsWith('ws'); // ActiveMQ's ws transport takes text frames only
const client = new Client({
  webSocketFactory: () => (ws
    ? new WebSocket(url, ['v12.stomp', 'v11.stomp', 'v10.stomp'], { perMessageDeflate: false })
    : new TCPWrapper(u.hostname, +u.port)),
  reconnectDelay: 0, heartbeatIncoming: 0, heartbeatOutgoing: 0, debug: () => {},
});
client.onConnect = async () => {
  // the same message the bench sends: 6 headers, the 6-digit counter, then 'x'; built as the
  // stock producer builds it (a string over ws, over TCP one byte array whose counter digits
  // are rewritten per message: publish() copies it into the frame)
  const tail = 'x'.repeat(Math.max(0, size - 6));
  const nd = Math.min(6, size);
  const bytes = new Uint8Array(size).fill(0x78);
  let first = 0n, mark = 0n;
  client.watchForReceipt('done', async () => {
    // all publish() calls return at once (they only queue): the send ends at the receipt
    const last = process.hrtime.bigint();
    console.log(JSON.stringify({ count, first_ns: String(first + off), mark_ns: String(mark + off),
      last_ns: String(last + off) }));
    await client.deactivate();
  });
  first = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    // a turn of the event loop every 500 messages, as the stock producer takes one: the
    // socket writes out what was queued while the next ones are framed
    if (i % 500 === 0 && i > 0) await new Promise((res) => setImmediate(res));
    if (i === skip) mark = process.hrtime.bigint();
    let text = null;
    if (ws) {
      const digits = String(i % 1000000).padStart(6, '0');
      text = nd === 6 ? digits + tail : digits.slice(0, nd);
    } else {
      let c = i % 1000000;
      for (let k = 5; k >= 0; k--) { if (k < nd) bytes[k] = 48 + (c % 10); c = (c / 10) | 0; }
    }
    const headers = { bb_producer: 'loop', bb_seq: String(i), bb_burst: '0',
      bb_sent_ns: String(process.hrtime.bigint() + off), bb_nonce: 'loop',
      bb_crc32: zlib.crc32(ws ? text : bytes).toString(16).padStart(8, '0') };
    if (i === count - 1) headers.receipt = 'done';
    client.publish({ destination: `/queue/${queue}`, headers, ...(ws ? { body: text } : { binaryBody: bytes }) });
  }
};
client.activate();
