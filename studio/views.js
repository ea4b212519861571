// The loop views: System (diagram and cards), Loop (timeline, telemetry, controls), Traces and
// Trace, and Conformance. Each renders from the API, then follows the live feed.
import { h, statusChip, setStatusBar } from "./app.js";

const ms = (v) => (v === undefined || v === null ? "–" : v < 1000 ? `${Math.round(v)} ms` : `${(v / 1000).toFixed(2)} s`);
const cadenceText = (c) => `${c.type}${Object.keys(c.params ?? {}).length ? ` ${Object.entries(c.params).map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`).join(" ")}` : ""}`;

/** Coalesces re-renders to one per frame, however many events arrive. */
function throttled(fn) {
  let queued = false;
  return () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      fn();
    });
  };
}

// ---- System ----------------------------------------------------------------------------------------
export async function systemView(ctx) {
  const data = await ctx.api("/api/system");
  const cards = new Map(data.loops.map((l) => [l.id, l]));
  const diagram = h("div", { class: "diagram", id: "diagram" });
  diagram.innerHTML = data.svg; // our own diagram library's SVG (every label escaped there)
  const grid = h("div", { class: "grid", id: "loop-cards" });
  const clusters = new Map();
  for (const g of diagram.querySelectorAll("g.cluster")) {
    const title = g.querySelector("text")?.textContent ?? "";
    for (const id of cards.keys()) if (title.startsWith(id)) clusters.set(id, g);
  }
  const render = () => {
    grid.replaceChildren(
      ...[...cards.values()].map((l) =>
        h("div", { class: "card", "data-loop": l.id },
          h("div", {}, h("a", { href: `#/loop/${encodeURIComponent(l.id)}`, class: "loop-link" }, h("strong", {}, l.id)), " ", statusChip(l.status)),
          l.name ? h("div", { class: "muted" }, l.name) : null,
          h("div", {}, "cadence: ", h("code", {}, cadenceText(l.cadence))),
          h("div", { class: "last" }, "last iteration: ", l.last ? [h("a", { href: `#/trace/${l.last.trace_id}` }, `#${l.last.iteration}`), " ", statusChip(l.last.status), " ", ms(l.last.duration_ms)] : "none yet"),
          h("div", { class: "muted" }, `${l.iterations} iterations`),
        ),
      ),
    );
    for (const [id, g] of clusters) {
      g.classList.remove("live-running", "live-paused", "live-stopped", "live-degraded");
      g.classList.add(`live-${cards.get(id).status}`);
    }
  };
  const later = throttled(render);
  ctx.main.replaceChildren(h("h1", {}, "System"), data.loops.length ? diagram : h("p", { class: "muted" }, "No loops are hosted here (pulse studio manifests… hosts them)."), h("h2", {}, "Loops"), grid);
  render();
  ctx.live((type, e) => {
    // The server sends every loop's card at most twice a second, and status changes as they come.
    if (type === "cards") for (const c of e.loops) cards.set(c.id, c);
    else if (type === "host" && e.type === "loop.status_changed" && cards.has(e.loop_id)) cards.get(e.loop_id).status = e.status;
    else if (type === "host" && e.type === "signal.delivered") return flashEdge(diagram, clusters, e);
    else return;
    later();
  });
}

/**
 * Which loaded loops each connection edge joins: the loop whose box (the smallest, for nested
 * loops) holds the centre of the edge's first and last node. Graphviz names an edge by its nodes
 * only, so this is read off the drawing once it is laid out.
 */
function connectionEdges(diagram, clusters) {
  const boxes = [...clusters].map(([id, g]) => [id, g.getBBox()]);
  const loopAt = (node) => {
    if (!node) return undefined;
    const b = node.getBBox();
    const [x, y] = [b.x + b.width / 2, b.y + b.height / 2];
    let best;
    for (const [id, c] of boxes) if (x >= c.x && x <= c.x + c.width && y >= c.y && y <= c.y + c.height && (!best || c.width * c.height < best[1].width * best[1].height)) best = [id, c];
    return best?.[0];
  };
  const nodes = new Map([...diagram.querySelectorAll("g.node")].map((n) => [n.querySelector("title")?.textContent, n]));
  return [...diagram.querySelectorAll("g.edge.connection")].map((g) => {
    const [from, to] = (g.querySelector("title")?.textContent ?? "").split("->");
    const edge = { g, from: loopAt(nodes.get(from)), to: loopAt(nodes.get(to)) };
    g.dataset.from = edge.from ?? "";
    g.dataset.to = edge.to ?? "";
    return edge;
  });
}

/** Lights up the edge the signal travelled: from its loop to the loop it was delivered to. */
function flashEdge(diagram, clusters, e) {
  diagram.edges ??= connectionEdges(diagram, clusters);
  for (const { g, from, to } of diagram.edges) if (from === e.loop_id && to === e.to_loop) flash(g);
}

function flash(g) {
  g.classList.remove("flash");
  void g.getBoundingClientRect(); // restart the animation for a signal that follows closely
  g.classList.add("flash");
  g.dataset.signals = String(Number(g.dataset.signals ?? 0) + 1);
  clearTimeout(g.flashTimer);
  g.flashTimer = setTimeout(() => g.classList.remove("flash"), 600);
}

/**
 * The route phases' max κ by bucket as a bar chart (a bar per bucket, its count above it), built
 * as elements: no chart library, nothing fetched.
 */
function kappaChart(dist) {
  const entries = Object.entries(dist ?? {});
  const total = entries.reduce((n, [, v]) => n + v, 0);
  if (!total) return h("span", { class: "muted", id: "kappa-chart" }, "no route phase has reported κ yet");
  const max = Math.max(...entries.map(([, v]) => v));
  return h("div", { class: "kappa-chart", id: "kappa-chart", role: "img", "aria-label": `κ distribution: ${entries.map(([k, v]) => `${k} ${v}`).join(", ")}` },
    ...entries.map(([bucket, v]) => h("div", { class: "kappa-bar", "data-bucket": bucket, "data-count": v, title: `κ ${bucket}: ${v} of ${total}` },
      h("span", { class: "count" }, String(v)),
      h("span", { class: "fill", style: `height: ${Math.round((v / max) * 60)}px` }),
      h("span", { class: "bucket" }, bucket))));
}

// ---- Loop ------------------------------------------------------------------------------------------
export async function loopView(ctx, loopId) {
  const data = await ctx.api(`/api/loops/${encodeURIComponent(loopId)}`);
  const card = data.card;
  const rows = new Map(data.rows.map((r) => [r.trace_id, r]));
  const statusEl = h("span", { id: "loop-status" }, statusChip(card.status));
  const message = h("span", { class: "muted", id: "control-message" });
  const act = (action) => async () => {
    message.textContent = `${action}…`;
    try {
      const r = await ctx.api(`/api/loops/${encodeURIComponent(loopId)}/${action}`, { body: {} });
      statusEl.replaceChildren(statusChip(r.status));
      message.textContent = action === "trigger" && r.iteration !== undefined ? `iteration #${r.iteration} ${r.result}` : `${action}: the loop is ${r.status}`;
    } catch (e) {
      message.textContent = e.message;
      message.className = "error";
    }
  };
  const controls = h("div", { class: "controls" },
    h("button", { id: "pause", onclick: act("pause") }, "Pause"),
    h("button", { id: "resume", onclick: act("resume") }, "Resume"),
    h("button", { id: "stop", onclick: act("stop") }, "Stop"),
    h("button", { id: "trigger", onclick: act("trigger") }, "Trigger an iteration"),
    message,
  );
  const telemetry = h("div", { id: "telemetry" });
  const timeline = h("div", { id: "timeline" });
  const renderTelemetry = (t, p, circuits) => {
    telemetry.replaceChildren(
      h("dl", { class: "kv" },
        h("dt", {}, "iterations"), h("dd", { id: "iteration-count" }, String(t.iteration_count)),
        h("dt", {}, "closure rate"), h("dd", { id: "closure-rate" }, `${(t.closure_rate * 100).toFixed(1)} %`),
        h("dt", {}, "statuses"), h("dd", {}, Object.entries(t.iteration_statuses).map(([k, v]) => `${k} ${v}`).join(", ") || "–"),
        h("dt", {}, "κ distribution"), h("dd", {}, kappaChart(t.kappa_distribution)),
        h("dt", {}, "circuits"), h("dd", { id: "circuits" }, Object.keys(circuits).length ? Object.entries(circuits).map(([slot, s]) => h("span", {}, `${slot} `, statusChip(s), " ")) : "all closed"),
      ),
      h("table", { id: "phase-stats" },
        h("tr", {}, h("th", {}, "phase"), h("th", {}, "runs"), h("th", {}, "p50"), h("th", {}, "p95"), h("th", {}, "statuses")),
        card.phases.map((ph) => h("tr", {}, h("td", {}, ph.id), h("td", {}, String(t.phases[ph.id]?.count ?? 0)), h("td", {}, ms(p[ph.id]?.p50)), h("td", {}, ms(p[ph.id]?.p95)), h("td", {}, Object.entries(t.phases[ph.id]?.statuses ?? {}).map(([k, v]) => `${k} ${v}`).join(", ")))),
      ),
    );
  };
  const renderTimeline = () => {
    const list = [...rows.values()].sort((a, b) => b.started_at - a.started_at).slice(0, 100);
    timeline.replaceChildren(
      h("table", { id: "iterations" },
        h("tr", {}, h("th", {}, "#"), h("th", {}, "status"), h("th", {}, "duration"), card.phases.map((ph) => h("th", {}, `${ph.id} (${ph.kind})`)), h("th", {}, "trace")),
        list.map((r) =>
          h("tr", { class: "clickable iteration-row", "data-iteration": r.iteration, onclick: () => (location.hash = `#/trace/${r.trace_id}`) },
            h("td", {}, `#${r.iteration}`),
            h("td", {}, statusChip(r.status)),
            h("td", {}, ms(r.duration_ms)),
            card.phases.map((ph) => {
              const c = [...r.phases].reverse().find((x) => x.phase_id === ph.id);
              return c ? h("td", { class: `cell ${c.status}`, title: c.error ? c.error.message : c.signature ?? "" }, `${c.status} ${ms(c.duration_ms)}`) : h("td", { class: "cell none" }, "");
            }),
            h("td", {}, h("code", {}, r.trace_id.slice(0, 12))),
          ),
        ),
      ),
    );
  };
  ctx.main.replaceChildren(
    h("h1", {}, `Loop ${card.id} `, statusEl),
    h("div", { class: "muted" }, `${card.name ?? ""} · cadence ${cadenceText(card.cadence)} · ${card.file ?? ""}`),
    controls,
    h("h2", {}, "Telemetry"), telemetry,
    h("h2", {}, "Iterations"), timeline,
  );
  renderTelemetry(data.telemetry, data.percentiles, data.circuits);
  renderTimeline();
  const later = throttled(renderTimeline);
  let refetch;
  ctx.onLeave(() => clearTimeout(refetch));
  ctx.live((type, e) => {
    if (type !== "host" || e.loop_id !== loopId) return;
    if (e.type === "loop.status_changed") statusEl.replaceChildren(statusChip(e.status));
    if (e.type === "iteration.started") rows.set(e.trace_id, { trace_id: e.trace_id, iteration: e.iteration, status: "running", started_at: e.at, phases: [] });
    const r = rows.get(e.trace_id);
    // The server sends an iteration's cells with its end (phases' starts and completions are not sent one by one).
    if (r && e.type === "iteration.finished") Object.assign(r, { status: e.status, duration_ms: e.duration_ms, phases: e.phases ?? r.phases });
    if (r && e.type.startsWith("phase.")) {
      let c = [...r.phases].reverse().find((x) => x.phase_id === e.phase_id && (x.status === "running" || x.status === "retrying"));
      if (!c) r.phases.push((c = { phase_id: e.phase_id, status: "running" }));
      c.status = { "phase.started": "running", "phase.retrying": "retrying", "phase.completed": e.replayed ? "replayed" : "completed", "phase.failed": "failed", "phase.skipped": "skipped" }[e.type] ?? c.status;
      if (e.duration_ms !== undefined) c.duration_ms = e.duration_ms;
      if (e.signature) c.signature = e.signature;
      if (e.error) c.error = e.error;
    }
    later();
    // Telemetry and percentiles are the server's: read again at most twice a second.
    if (e.type === "iteration.finished" || e.type === "circuit.state_changed") {
      clearTimeout(refetch);
      refetch = setTimeout(async () => {
        const d = await ctx.api(`/api/loops/${encodeURIComponent(loopId)}`).catch(() => undefined);
        if (d) renderTelemetry(d.telemetry, d.percentiles, d.circuits);
      }, 500);
    }
  });
}

// ---- Traces ----------------------------------------------------------------------------------------
function searchBox(q) {
  const input = h("input", { type: "text", id: "trace-search", placeholder: "trace id, loop id or text in an output", value: q, size: 48 });
  const go = () => (location.hash = input.value.trim().match(/^[0-9a-f]{32}$/) ? `#/trace/${input.value.trim()}` : `#/traces/${encodeURIComponent(input.value.trim())}`);
  input.addEventListener("keydown", (e) => e.key === "Enter" && go());
  return h("div", { class: "controls" }, input, h("button", { id: "trace-go", onclick: go }, "Search"));
}

export async function tracesView(ctx, q) {
  const { traces } = await ctx.api(`/api/traces?q=${encodeURIComponent(q)}`);
  ctx.main.replaceChildren(
    h("h1", {}, "Traces"),
    searchBox(q),
    traces.length === 0 ? h("p", { class: "muted" }, "No iteration held here matches (an exact trace id also reads the store's audit trail).") :
    h("table", { id: "trace-list" },
      h("tr", {}, h("th", {}, "trace"), h("th", {}, "loop"), h("th", {}, "#"), h("th", {}, "status"), h("th", {}, "duration"), h("th", {}, "started")),
      traces.map((t) => h("tr", { class: "clickable", onclick: () => (location.hash = `#/trace/${t.trace_id}`) }, h("td", {}, h("code", {}, t.trace_id)), h("td", {}, t.loop_id), h("td", {}, `#${t.iteration}`), h("td", {}, statusChip(t.status)), h("td", {}, ms(t.duration_ms)), h("td", {}, new Date(t.started_at).toLocaleTimeString()))),
    ),
  );
}

function expandable(text, id) {
  if (text === undefined || text === null) return h("span", { class: "muted" }, "–");
  if (text.length <= 160) return h("code", { id }, text);
  return h("details", { id }, h("summary", {}, h("code", {}, `${text.slice(0, 160)}…`)), h("pre", {}, text));
}

export async function traceView(ctx, traceId) {
  const { row, audit, journal } = await ctx.api(`/api/traces/${encodeURIComponent(traceId)}`);
  // What the phases asked of their substrates (memory, policy…), as the store's audit trail records it.
  const substrate = audit.filter((a) => a.event.event_type.startsWith("substrate."));
  const calls = (phaseId) => substrate.filter((a) => a.event.phase_id === phaseId).length;
  const head = row
    ? h("dl", { class: "kv" }, h("dt", {}, "loop"), h("dd", {}, h("a", { href: `#/loop/${encodeURIComponent(row.loop_id)}` }, row.loop_id)), h("dt", {}, "iteration"), h("dd", {}, `#${row.iteration} (workspace ${row.workspace_id})`), h("dt", {}, "status"), h("dd", { id: "trace-status" }, statusChip(row.status)), h("dt", {}, "duration"), h("dd", {}, ms(row.duration_ms)), h("dt", {}, "cause"), h("dd", {}, h("code", {}, JSON.stringify(row.cause ?? {}))))
    : h("p", { class: "muted", id: "trace-from-store" }, `This iteration is no longer held in memory: ${journal ? "its phases' outputs are read back from the store's journal, and its audit events from the audit trail" : "what the store's audit trail keeps of it is below"}.`);
  ctx.main.replaceChildren(
    h("h1", {}, "Trace ", h("code", {}, traceId)),
    searchBox(""),
    head,
    row ? h("h2", {}, "Phases") : null,
    row ? h("table", { id: "trace-phases" },
      h("tr", {}, h("th", {}, "phase"), h("th", {}, "status"), h("th", {}, "attempt"), h("th", {}, "duration"), h("th", {}, "signature"), h("th", {}, "substrate calls"), h("th", {}, "input"), h("th", {}, "output")),
      row.phases.map((c, i) => h("tr", { "data-phase": c.phase_id }, h("td", {}, c.phase_id, c.routed_to ? ` → ${c.routed_to}` : ""), h("td", {}, statusChip(c.status), c.error ? h("div", { class: "error" }, `${c.error.code}: ${c.error.message}`) : null), h("td", {}, String(c.attempt)), h("td", {}, ms(c.duration_ms)), h("td", {}, h("code", { class: "signature" }, c.signature ?? "–")), h("td", { class: "substrate-calls" }, String(calls(c.phase_id))), h("td", {}, expandable(c.input, `input-${i}`)), h("td", {}, expandable(c.output, `output-${i}`)))),
    ) : null,
    !row && journal ? [h("h2", {}, "Phases (from the store)"), h("table", { id: "trace-phases" },
      h("tr", {}, h("th", {}, "phase"), h("th", {}, "status"), h("th", {}, "signature"), h("th", {}, "substrate calls"), h("th", {}, "input"), h("th", {}, "output")),
      journal.phases.map((c, i) => h("tr", { "data-phase": c.phase_id }, h("td", {}, c.phase_id, c.next ? ` → ${c.next}` : ""), h("td", {}, statusChip(c.status)), h("td", {}, h("code", { class: "signature" }, c.signature)), h("td", { class: "substrate-calls" }, String(calls(c.phase_id))), h("td", {}, expandable(i === 0 ? journal.input : journal.phases[i - 1].output, `input-${i}`)), h("td", {}, expandable(c.output, `output-${i}`)))))] : null,
    h("h2", {}, `Substrate calls (${substrate.length})`),
    substrate.length
      ? h("table", { id: "trace-substrate" },
          h("tr", {}, h("th", {}, "phase"), h("th", {}, "event"), h("th", {}, "operation"), h("th", {}, "at"), h("th", {}, "result")),
          substrate.map((a, i) => h("tr", { "data-phase": a.event.phase_id ?? "" }, h("td", {}, a.event.phase_id ?? "–"), h("td", {}, a.event.event_type), h("td", {}, h("code", {}, String(a.event.data?.operation ?? "–"))), h("td", {}, a.event.timestamp), h("td", {}, expandable(a.event.data === undefined ? undefined : JSON.stringify(a.event.data.result ?? a.event.data), `substrate-${i}`)))))
      : h("p", { class: "muted", id: "trace-substrate-none" }, "No phase of this iteration called a substrate (as the audit trail records it)."),
    h("h2", {}, `Audit events (${audit.length})`),
    h("table", { id: "trace-audit" },
      h("tr", {}, h("th", {}, "seq"), h("th", {}, "event"), h("th", {}, "phase"), h("th", {}, "signature"), h("th", {}, "at"), h("th", {}, "data")),
      audit.map((a) => h("tr", {}, h("td", {}, String(a.event.seq)), h("td", {}, a.event.event_type), h("td", {}, a.event.phase_id ?? "–"), h("td", {}, h("code", {}, a.event.signature.slice(0, 24))), h("td", {}, a.event.timestamp), h("td", {}, expandable(a.event.data === undefined ? undefined : JSON.stringify(a.event.data))))),
    ),
  );
  setStatusBar(`trace ${traceId}: ${audit.length} audit events`);
}

// ---- Conformance -----------------------------------------------------------------------------------
export async function conformanceView(ctx) {
  const out = h("div", { id: "conformance-report" });
  const input = h("input", { type: "file", id: "report-file", accept: "application/json,.json" });
  input.addEventListener("change", async () => {
    const file = input.files?.[0];
    if (!file) return;
    out.replaceChildren(h("p", { class: "muted" }, `Reading ${file.name}…`));
    try {
      let body;
      try {
        body = JSON.parse(await file.text());
      } catch (e) {
        throw new Error(`${file.name} is not JSON: ${e.message}`);
      }
      renderReport(out, await ctx.api("/api/conformance", { body }), file.name);
    } catch (e) {
      out.replaceChildren(h("p", { class: "error", id: "report-error" }, e.message));
    }
  });
  ctx.main.replaceChildren(h("h1", {}, "Conformance"), h("p", {}, "Open a report written by ", h("code", {}, "pulse-conform --report report.json"), ": ", input), out);
}

function renderReport(out, view, name) {
  const { report, tests, badge } = view;
  out.replaceChildren(
    h("div", { class: "badge", id: "badge" }, h("span", { class: "label" }, badge.label), h("span", { class: badge.color }, badge.message)),
    h("dl", { class: "kv" },
      h("dt", {}, "file"), h("dd", {}, name),
      h("dt", {}, "runtime"), h("dd", {}, `${report.runtime_name} ${report.runtime_version}`),
      h("dt", {}, "verdict"), h("dd", { id: "verdict" }, statusChip(report.verdict)),
      h("dt", {}, "summary"), h("dd", {}, Object.entries(report.summary).map(([k, v]) => `${k} ${v}`).join(", ")),
      report.loop ? [h("dt", {}, "loop"), h("dd", {}, `${report.loop.loop_id} ${report.loop.version} (${report.loop.manifest})`)] : null,
    ),
    h("table", { id: "conformance-tests" },
      h("tr", {}, h("th", {}, "#"), h("th", {}, "test"), h("th", {}, "status"), h("th", {}, "checks"), h("th", {}, "evidence")),
      tests.map((t) => h("tr", { "data-test": t.number },
        h("td", {}, String(t.number)),
        h("td", {}, t.name),
        h("td", {}, t.result ? statusChip(t.result.status) : h("span", { class: "muted" }, "not in this report")),
        h("td", {}, t.result ? h("details", {}, h("summary", {}, `${t.result.checks.filter((c) => c.outcome === "pass").length}/${t.result.checks.length} held`), h("ul", {}, t.result.checks.map((c) => h("li", {}, `${c.outcome}: ${c.description}`)))) : "–", t.result?.reason ? h("div", { class: "muted" }, t.result.reason) : null),
        h("td", {}, t.result?.evidence ? h("details", {}, h("summary", {}, "evidence"), h("pre", {}, JSON.stringify(t.result.evidence, null, 2))) : "–"),
      )),
    ),
  );
}
