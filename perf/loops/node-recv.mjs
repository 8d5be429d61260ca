// Minimal stompjs receive loop: node node-recv.mjs URL QUEUE COUNT [SKIP] (ws:// or stomp:// / tcp://)
// (mark_ns: when message SKIP, counted from 0, arrived: the end of the warm-up; at_ns: when
// messages 0, EVERY, 2 EVERY... arrived, so that the harness can count what arrived in a span)
// Public API only, with the stock client's transports and options (clients/node/connect.mjs,
// wire.mjs):
// ws with perMessageDeflate off, or @stomp/tcp-wrapper as it comes; no reconnect, no
// heart-beats; ack auto and activemq.prefetchSize 1000, the stock consumer's defaults.
import { Client } from '../../clients/node/node_modules/@stomp/stompjs/esm6/index.js';
import { TCPWrapper } from '../../clients/node/node_modules/@stomp/tcp-wrapper/esm6/index.js';
import WebSocket from '../../clients/node/node_modules/ws/wrapper.mjs';

const [url, queue, count, skip] = [process.argv[2], process.argv[3], +process.argv[4], +(process.argv[5] ?? 0)];
const off = BigInt(Date.now()) * 1000000n - process.hrtime.bigint();
const u = new URL(url);
const client = new Client({
  webSocketFactory: () => (u.protocol.startsWith('ws')
    ? new WebSocket(url, ['v12.stomp', 'v11.stomp', 'v10.stomp'], { perMessageDeflate: false })
    : new TCPWrapper(u.hostname, +u.port)),
  reconnectDelay: 0, heartbeatIncoming: 0, heartbeatOutgoing: 0, debug: () => {},
});
let n = 0, first = 0n, mark = 0n, last = 0n, foreign = 0, bytes = 0;
const EVERY = 1000, at = [];
client.onConnect = () => {
  client.subscribe(`/queue/${queue}`, (m) => {
    last = process.hrtime.bigint();
    // a consumer reads what it received, as the client does: the key headers and the body
    const h = m.headers;
    if (h.bb_seq === undefined || h.bb_producer === undefined || h.bb_sent_ns === undefined) foreign++;
    bytes += m.binaryBody.length;
    if (n === skip) mark = last;
    if (n % EVERY === 0) at.push(last);
    if (n++ === 0) first = last;
    if (n === count) {
      console.log(JSON.stringify({ count: n, first_ns: String(first + off), mark_ns: String(mark + off),
        last_ns: String(last + off), every: EVERY, at_ns: at.map((t) => String(t + off)) }));
      client.deactivate();
    }
  }, { ack: 'auto', 'activemq.prefetchSize': '1000' });
};
client.activate();
