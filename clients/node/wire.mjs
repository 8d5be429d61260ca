// The one place another program may change how the Node clients talk to the broker
// (`wire`: see README.md), and the TLS fact the ready line reports. The defaults use the
// public API of stompjs, ws, @stomp/tcp-wrapper and Node only.

import net from 'node:net';
import tls from 'node:tls';

// the TLS version the connection negotiated (tls.TLSSocket getProtocol(): "TLSv1.3"), for the
// ready line; null over plain TCP
let tlsProtocol = null;
/** What connect.mjs read from a WebSocket's TLS socket (the TCP path's is read here). */
export function noteTlsProtocol(protocol) {
  tlsProtocol = protocol;
}
export function tlsFact() {
  return tlsProtocol ? { tls: tlsProtocol } : {};
}

// ---------------------------------------------------------------------------------------
// extension points

/**
 * What the stock programs do where a program may do otherwise: a program that imports this
 * module may replace these entries before it imports producer.mjs or consumer.mjs. The
 * defaults use the public API of stompjs, ws, @stomp/tcp-wrapper and Node only.
 */
export const wire = {
  /** `client` in the --version line */
  name: 'stompjs',
  /** More `new Client({...})` options (documented ones), merged over ours. */
  clientOptions: {},
  /**
   * The socket under @stomp/tcp-wrapper (stomp://, tcp://, stomp+ssl://): what its
   * documented getSocket() makes, with Node's default socket options (Nagle on), or a
   * verified TLS socket (``secure``: its ca, and cert and key for mutual TLS).
   */
  tcpSocket(ep, secure) {
    if (!ep.tls) return net.createConnection(ep.port, ep.host);
    const opts = { port: ep.port, host: ep.host, ...secure };
    if (!net.isIP(ep.host)) opts.servername = ep.host;
    const s = tls.connect(opts);
    s.once('secureConnect', () => { tlsProtocol = s.getProtocol(); });
    return s;
  },
  /**
   * TCP_NODELAY for the ready line. Node has no public getsockopt, so this is what the code
   * that makes the socket sets: ws calls socket.setNoDelay() once the WebSocket is open
   * (ws/lib/websocket.js, setSocket); @stomp/tcp-wrapper's getSocket() is
   * net.createConnection(port, host) and Node's net and tls leave noDelay false.
   */
  socketFacts(conn) {
    return { tcp_nodelay: conn.kind === 'ws', tcp_nodelay_how: 'library', ...tlsFact() };
  },
  /**
   * COMMIT the transaction and get a RECEIPT once the broker has handled it. stompjs's
   * commit() takes no headers, so the receipt rides on the next frame instead: a SUBSCRIBE
   * (to a topic nobody sends to), which the broker handles after the COMMIT, as it handles a
   * connection's frames in order; the subscription is dropped at once.
   */
  commitWithReceipt(client, txId, receipt) {
    client.commit(txId);
    client.subscribe('/topic/burstbench.receipts', () => {}, { id: 'bb-receipt', receipt })
      .unsubscribe();
  },
};
