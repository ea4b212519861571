// pulse studio: the router, the API client and the live feed. No framework, no network beyond
// this server: views are plain functions that render into #main (views.js, runs.js).
import { systemView, loopView, tracesView, traceView, conformanceView } from "./views.js";
import { runsView, runView } from "./runs.js";
import { agentView } from "./agent.js";
import { settingsView, managerView } from "./agent-admin.js";

// A token comes in the address's fragment (#token=…, never sent to a server), kept for the tab
// and taken out of the address at once (so it is in no history entry or bookmark).
let token = sessionStorage.getItem("pulse-token");
function takeToken() {
  if (!location.hash.startsWith("#token=")) return false;
  token = decodeURIComponent(location.hash.slice(7));
  sessionStorage.setItem("pulse-token", token);
  history.replaceState(null, "", location.pathname + "#/system");
  return true;
}
takeToken();

export async function api(path, options = {}) {
  const headers = { accept: "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, { method: options.method ?? (options.body !== undefined ? "POST" : "GET"), headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : {};
  } catch {
    data = { error: { message: text } };
  }
  if (!res.ok) throw new Error(data?.error?.message ?? `${res.status} ${res.statusText}`);
  return data;
}

/** Builds an element: h("td", {class: "x", onclick}, "text", child…); text is never parsed as HTML. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) if (c !== undefined && c !== null && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

export function statusChip(status) {
  return h("span", { class: `status ${status}`, "data-status": status }, status);
}

export function setStatusBar(text) {
  document.getElementById("status-bar").textContent = text;
}

// ---- live feed (Server-Sent Events over fetch, so the token can go in a header) ----------------
const listeners = new Set();
export function onLive(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}
let lastId;
function dispatch(type, data) {
  // What this page missed is no longer held by the server: read the view's state again.
  if (type === "reset") return void route();
  // On the agent pages the status bar is the agent's: loops' events do not take it over there.
  if (type === "host" && data?.type && !location.hash.startsWith("#/agent")) setStatusBar(`${new Date().toLocaleTimeString()} · ${data.type} · ${data.loop_id ?? ""}${data.iteration !== undefined ? ` #${data.iteration}` : ""}${data.phase_id ? ` · ${data.phase_id}` : ""}`);
  if (type === "agent") setStatusBar(`${new Date().toLocaleTimeString()} · agent · ${data.text ?? data.type}`);
  if (type === "run") setStatusBar(`${new Date().toLocaleTimeString()} · run ${data.id.slice(0, 8)} ${data.status}`);
  for (const fn of [...listeners]) {
    try {
      fn(type, data);
    } catch (e) {
      console.error(e);
    }
  }
}

// The loop view follows its loop's events; every other view the cards, runs and status changes.
let scope = "";
let aborter = new AbortController();
export function followScope(loopId) {
  if (loopId === scope) return;
  scope = loopId;
  aborter.abort();
}

async function follow() {
  const live = document.getElementById("live");
  for (;;) {
    aborter = new AbortController();
    try {
      const headers = {};
      if (token) headers.authorization = `Bearer ${token}`;
      if (lastId !== undefined) headers["last-event-id"] = String(lastId);
      const res = await fetch(`/api/events${scope ? `?loop=${encodeURIComponent(scope)}` : ""}`, { headers, signal: aborter.signal });
      if (!res.ok || !res.body) throw new Error(`feed: ${res.status}`);
      live.textContent = "live";
      live.className = "live on";
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let end;
        while ((end = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          let id, type = "message", data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith("id: ")) id = Number(line.slice(4));
            else if (line.startsWith("event: ")) type = line.slice(7);
            else if (line.startsWith("data: ")) data += line.slice(6);
          }
          if (id !== undefined) lastId = id;
          if (data) dispatch(type, JSON.parse(data));
        }
      }
    } catch (e) {
      if (aborter.signal.aborted) continue; // a new scope: reconnect at once, from the last event read
      console.warn(e);
    }
    live.textContent = "reconnecting…";
    live.className = "live off";
    await new Promise((r) => setTimeout(r, 1000));
  }
}

// ---- router --------------------------------------------------------------------------------------
let cleanup = [];
async function route() {
  // An address with a token pasted into an open tab: the feed reconnects with it.
  if (takeToken()) aborter.abort();
  for (const fn of cleanup.splice(0)) fn();
  const parts = (location.hash.replace(/^#\/?/, "") || "system").split("/").map(decodeURIComponent);
  const main = document.getElementById("main");
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.nav === (parts[0] === "loop" ? "system" : parts[0] === "trace" ? "traces" : parts[0] === "run" ? "runs" : parts[0]));
  const ctx = { main, api, live: (fn) => cleanup.push(onLive(fn)), onLeave: (fn) => cleanup.push(fn) };
  main.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  followScope(parts[0] === "loop" ? parts[1] ?? "" : "");
  try {
    if (parts[0] === "system") await systemView(ctx);
    else if (parts[0] === "loop") await loopView(ctx, parts[1]);
    else if (parts[0] === "traces") await tracesView(ctx, parts[1] ?? "");
    else if (parts[0] === "trace") await traceView(ctx, parts[1]);
    else if (parts[0] === "runs") await runsView(ctx);
    else if (parts[0] === "run") await runView(ctx, parts[1], parts[2]);
    else if (parts[0] === "conformance") await conformanceView(ctx);
    else if (parts[0] === "agent" && parts[1] === "settings") await settingsView(ctx);
    else if (parts[0] === "agent" && ["guides", "knowledge", "actions"].includes(parts[1])) await managerView(ctx, parts[1], parts[2]);
    else if (parts[0] === "agent") await agentView(ctx, parts[1] === "thread" ? parts[2] : parts[1]);
    else main.replaceChildren(h("p", { class: "error" }, `No such view: ${parts[0]}`));
  } catch (e) {
    main.replaceChildren(h("p", { class: "error", id: "view-error" }, e.message));
  }
}
window.addEventListener("hashchange", route);
route();
follow();
