#!/usr/bin/env node
// stompjs-tuned: the stock Node programs with paths faster than @stomp/stompjs's public API.
//
//   node tuned.mjs producer.mjs|consumer.mjs ARGS...
//
// Installs the paths below, then runs the stock program with ARGS (its options, output and
// exit codes are the stock ones; --version says "stompjs-tuned"). The stock programs name
// none of this: they call `wire` (common.mjs) and Client's methods, replaced here.

import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@stomp/stompjs';
import { tlsFact, wire } from './wire.mjs';

wire.name = 'stompjs-tuned';

// With debug a no-op, stompjs still formats every frame for it (`${frame}`: every header
// escaped again, per frame, both ways); with logRawCommunication it formats the raw chunk
// instead, which costs far less. Nothing is logged either way.
wire.clientOptions = { ...wire.clientOptions, logRawCommunication: true };

// TCP_NODELAY on the STOMP-over-TCP socket (Node leaves Nagle on; ws turns it off itself).
const stockTcpSocket = wire.tcpSocket;
wire.tcpSocket = (ep, secure) => {
  const s = stockTcpSocket(ep, secure);
  s.setNoDelay(true);
  return s;
};
wire.socketFacts = () => ({ tcp_nodelay: true, tcp_nodelay_how: 'library', ...tlsFact() });

// The receipt on the COMMIT frame itself, through stompjs's private _transmit (its commit()
// takes no headers), instead of on a SUBSCRIBE sent after it.
wire.commitWithReceipt = (client, txId, receipt) => {
  const h = client._stompHandler;
  if (!h || typeof h._transmit !== 'function') throw new Error('stompjs internals changed: no _transmit');
  h._transmit({ command: 'COMMIT', headers: { transaction: txId, receipt } });
};

// Corked writes: the first publish() of a run corks the TCP socket under the connection
// (ws's private _socket, or @stomp/tcp-wrapper's private socket), uncorked on the next tick:
// the frames of one run of publish() calls (the producer's chunk of 500) leave in one
// writev instead of one write each.
const netSocket = (client) => {
  const s = client.webSocket;
  if (!s) return null;
  return s.ws ? s.ws._socket : s.socket;
};
const uncork = (s) => s.uncork();
const publish = Client.prototype.publish;
Client.prototype.publish = function publishCorked(params) {
  const s = netSocket(this);
  if (s && !s.writableCorked) {
    s.cork();
    process.nextTick(uncork, s);
  }
  publish.call(this, params);
};

const [program, ...args] = process.argv.slice(2);
if (!program || program.startsWith('--')) {
  process.stderr.write('error: usage: node tuned.mjs producer.mjs|consumer.mjs ARGS...\n');
  process.exit(2);
}
const file = path.resolve(program);
process.argv = [process.argv[0], file, ...args];
await import(pathToFileURL(file).href);
