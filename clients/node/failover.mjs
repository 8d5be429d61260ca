// --failover (clients/contract.md, "Failover") with stompjs's own reconnects: stompjs tries
// again every reconnectDelay ms by itself, beforeConnect picks the next address in turn, the
// program subscribes again in onConnect (stompjs's documented pattern: hooks.onReconnect). A
// drop after which no address answers within --connect-timeout ends the client with exit 1.

import { emit, fail, nowNs, sleep } from './common.mjs';

/**
 * What connect() does differently with --failover, for one connection `conn`: `delay` for
 * stompjs's reconnectDelay, `next()` the address to try, `connected()` on each CONNECTED
 * (true when it was a reconnection), `ignored(msg, why)` for an ERROR frame that the drop
 * explains, `closed()` when the socket closed. `why()` is the last socket error.
 */
export function failover(o, conn, hooks, why) {
  const eps = o.endpoints;
  let tries = 0; // connection attempts since the last CONNECTED: picks the address
  let giveUp = null;
  return {
    delay: 200,
    next: () => eps[tries++ % eps.length],
    connected() {
      tries = 0;
      if (!conn.everConnected) return false;
      clearTimeout(giveUp);
      conn.reconnects++;
      emit({ event: 'reconnected', id: o.id, t_ns: nowNs(), n: conn.reconnects });
      hooks.onReconnect?.();
      return true;
    },
    ignored(msg, text) {
      // an ack of a message the dropped connection delivered, refused on the new one
      if (!conn.everConnected || !/\bACK\b/i.test(msg)) return false;
      process.stderr.write(`ignoring the broker's error after a reconnect: ${text}\n`);
      return true;
    },
    closed() {
      if (!conn.connected) return; // an attempt that found no broker: stompjs tries again
      conn.connected = false;
      conn.drops++;
      giveUp = setTimeout(() => fail(1, `lost the connection to ${o.url} and could not `
        + `reconnect within ${o.connectTimeout} s: ${why()}`), Math.round(o.connectTimeout * 1000));
      hooks.onDrop?.();
    },
  };
}

/**
 * A producer's burst `b`: `attempt(drops)` sends it and resolves true once the broker confirmed
 * it, false when the connection dropped first (`conn.drops` grew). With --failover a burst the
 * dropped connection left unconfirmed goes again, whole, once stompjs has connected again
 * (`redo()` first keeps what was sent as copies); without, a drop fails the client.
 */
export async function sendWhole(o, conn, b, attempt, aborting, redo) {
  for (;;) {
    const drops = conn.drops;
    let done;
    try {
      done = await attempt(drops);
    } catch (e) {
      if (!o.failover || conn.drops === drops && conn.connected) throw e;
      done = false; // publish() on a connection that is gone
    }
    if (done || aborting()) return;
    while (!conn.connected && !aborting()) await sleep(20);
    process.stderr.write(`burst ${b} unconfirmed when the connection dropped: sending it again\n`);
    redo();
  }
}
