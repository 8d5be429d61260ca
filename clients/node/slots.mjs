// Many connections in one process (--connections N, clients/contract.md): N slots, each a
// producer or consumer of its own, sharing this thread.

import { emit, nowNs } from './common.mjs';


/**
 * The slots of this process: [{ id, records }]. One connection is the process itself (its
 * --id, --records taken literally); with N > 1 slot i is `ID.i` and writes PATH with {id}
 * replaced by that id.
 */
export function slotsOf(o) {
  if (o.connections === 1) return [{ id: o.id, records: o.records }];
  return Array.from({ length: o.connections }, (_, k) => {
    const id = `${o.id}.${k + 1}`;
    return { id, records: o.records?.replaceAll('{id}', id) };
  });
}

// Connections being opened at once: thousands of sockets opened in one tick outrun the
// broker's accept queue (dropped SYNs come back a second or more later) and would all share
// one --connect-timeout; a bounded number in flight keeps each attempt's clock its own.
export const CONNECTING_AT_ONCE = 64;

/** Call `fn(item, index)` for every item, at most `limit` calls pending at a time. */
export async function eachLimited(items, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const k = next++;
      await fn(items[k], k);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * One timer for every slot's tick line: each second, a line for each slot whose count
 * (`count(slot)`, named `key` in the line) changed since its last line.
 */
export function slotTicker(slots, key, count) {
  const last = new Map();
  return setInterval(() => {
    const t = nowNs();
    for (const s of slots) {
      const n = count(s);
      if (n === (last.get(s) ?? 0)) continue;
      last.set(s, n);
      emit({ event: 'tick', id: s.id, t_ns: t, [key]: n });
    }
  }, 1000);
}
