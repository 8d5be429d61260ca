// The live view's page: follows the running point's broker (GET /state says which) with
// @stomp/stompjs over WebSocket, shows the snapshots the harness publishes on its own topic.
// window.live holds what the page shows, for a test to read.
/* global StompJs */
'use strict';

const live = { connected: false, broker: null, snapshots: 0, last: null, byPoint: {}, state: null };
window.live = live;
let client = null;
const fmt = (v) => (v === null || v === undefined ? '-' : Number(v).toLocaleString('en-US', { maximumFractionDigits: 0 }));
const $ = (id) => document.getElementById(id);

function show(s) {
  live.last = s;
  live.byPoint[s.point] = s;
  live.snapshots++;
  $('point').textContent = `point ${s.point}`;
  $('label').textContent = s.label;
  $('burst').textContent = `${s.burst} of ${s.bursts} (${s.confirmed} confirmed)`;
  for (const k of ['sent', 'received', 'in_flight', 'send_rate', 'recv_rate']) $(k).textContent = fmt(s[k]);
  $('status').textContent = s.status;
  $('progress').style.width = `${Math.min(100, (100 * s.received) / Math.max(1, s.target))}%`;
  // what a reader sees, as drawn
  live.shown = {};
  for (const k of ['point', 'burst', 'sent', 'received', 'in_flight', 'send_rate', 'recv_rate', 'status']) {
    live.shown[k] = $(k).textContent;
  }
}

function follow(state) {
  live.state = state;
  const rows = $('points');
  while (rows.rows.length > 1) rows.deleteRow(1);
  for (const p of state.points) {
    const r = rows.insertRow();
    if (p.status !== 'ok') r.className = 'failed';
    for (const v of [p.point, p.status, fmt(p.sent), fmt(p.received), fmt(p.lost), fmt(p.duplicates),
      fmt(p.corrupt), fmt(p.send_msgs_per_s), fmt(p.recv_msgs_per_s)]) r.insertCell().textContent = v;
  }
  if (state.broker_ws === live.broker) return;
  live.broker = state.broker_ws;
  if (client) { client.deactivate(); client = null; live.connected = false; }
  if (!state.broker_ws) { $('conn').textContent = state.note || 'between points'; return; }
  const headers = {};
  if (state.login) { headers.login = state.login; headers.passcode = state.passcode; }
  client = new StompJs.Client({
    brokerURL: state.broker_ws,
    connectHeaders: headers,
    reconnectDelay: 1000,
    debug: () => {},
  });
  client.onConnect = () => {
    live.connected = true;
    $('conn').textContent = `following ${state.broker_ws} ${state.topic}`;
    client.subscribe(state.topic, (m) => show(JSON.parse(m.body)));
  };
  client.onWebSocketClose = () => { live.connected = false; };
  client.activate();
}

async function poll() {
  try {
    const r = await fetch('/state', { cache: 'no-store' });
    follow(await r.json());
  } catch (e) {
    $('conn').textContent = `the run has ended (the harness answers no more: ${e.message})`;
  }
  setTimeout(poll, 500);
}
poll();
