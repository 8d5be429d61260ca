// Minimal stompjs send loop: node node-send.mjs URL QUEUE COUNT SIZE (ws:// or stomp:// / tcp://)
import { Client } from '../../clients/node/node_modules/@stomp/stompjs/esm6/index.js';
import { TCPWrapper } from '../../clients/node/node_modules/@stomp/tcp-wrapper/esm6/index.js';
import WebSocket from '../../clients/node/node_modules/ws/wrapper.mjs';

const [url, queue, count, size] = [process.argv[2], process.argv[3], +process.argv[4], +process.argv[5]];
const off = BigInt(Date.now()) * 1000000n - process.hrtime.bigint();
const u = new URL(url);
const ws = u.protocol.startsWith('ws'); // ActiveMQ's ws transport takes text frames only
const client = new Client({
  webSocketFactory: () => (ws
    ? new WebSocket(url, ['v12.stomp', 'v11.stomp', 'v10.stomp'], { perMessageDeflate: false })
    : new TCPWrapper(u.hostname, +u.port)),
  reconnectDelay: 0, heartbeatIncoming: 0, heartbeatOutgoing: 0, debug: () => {},
});
client.onConnect = () => {
  const body = ws ? { body: 'x'.repeat(size) } : { binaryBody: new TextEncoder().encode('x'.repeat(size)) };
  let first = 0n, last = 0n;
  client.watchForReceipt('done', async () => {
    console.log(JSON.stringify({ count, first_ns: String(first + off), last_ns: String(last + off) }));
    await client.deactivate();
  });
  for (let i = 0; i < count; i++) {
    last = process.hrtime.bigint();
    if (i === 0) first = last;
    client.publish({ destination: `/queue/${queue}`, ...body, headers: i === count - 1 ? { receipt: 'done' } : {} });
  }
};
client.activate();
