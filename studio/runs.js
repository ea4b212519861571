// Coding runs (sessions, workflows, agent runs: any kind the server lists): the list and a run's
// page (a session's with its controls; a workflow's pulses; an agent's steps). A control
// shows as done only once the records say so: a requested pause stays "requested" until the
// runner has acted on it and the run reads paused.
import { h, statusChip, setStatusBar } from "./app.js";

const usd = (v) => `$${Number(v ?? 0).toFixed(Math.abs(v ?? 0) >= 0.01 || !v ? 2 : 4)}`;

export async function runsView(ctx) {
  const { runs } = await ctx.api("/api/runs");
  const byKey = new Map(runs.map((r) => [`${r.kind}/${r.id}`, r]));
  const table = h("div", { id: "runs" });
  const render = () => {
    const list = [...byKey.values()].sort((a, b) => (a.updated_at < b.updated_at ? 1 : -1));
    table.replaceChildren(
      list.length === 0 ? h("p", { class: "muted" }, "No coding runs in this store yet (pulse session start, pulse workflow run, pulse agent run --store …).") :
      h("table", { id: "run-list" },
        h("tr", {}, h("th", {}, "kind"), h("th", {}, "run"), h("th", {}, "status"), h("th", {}, "goal"), h("th", {}, "iteration"), h("th", {}, "commits"), h("th", {}, "spend"), h("th", {}, "updated")),
        list.map((r) => h("tr", { class: "clickable run-row", "data-run": r.id, onclick: () => (location.hash = `#/run/${r.kind}/${r.id}`) },
          h("td", {}, r.kind), h("td", {}, h("code", {}, r.id.slice(0, 8))), h("td", {}, statusChip(r.status)), h("td", {}, r.goal), h("td", {}, `${r.iteration}/${r.max_iterations}`), h("td", {}, String(r.commits)), h("td", {}, usd(r.cost_usd)), h("td", {}, new Date(r.updated_at).toLocaleString()))),
      ),
    );
  };
  ctx.main.replaceChildren(h("h1", {}, "Coding runs"), table);
  render();
  ctx.live((type, r) => {
    if (type !== "run") return;
    byKey.set(`${r.kind}/${r.id}`, r);
    render();
  });
}

function gateCell(gate, baseline) {
  if (!gate) return h("span", { class: "muted" }, "not run");
  return h("div", { class: "gate" },
    statusChip(gate.passed ? "passed" : "failed"),
    h("ul", {}, gate.checks.map((c) => {
      const base = baseline?.find((b) => b.command === c.command);
      return h("li", {}, h("code", {}, c.command), ` exit ${c.exit}`, base ? ` (baseline exit ${base.exit}, ${base.failures.length} failing)` : "", c.newFailures.length ? h("div", { class: "error" }, `new failures: ${c.newFailures.join("; ")}`) : h("span", { class: "muted" }, " no new failures"));
    })),
  );
}

/** The turn's receipt: the model, tokens by kind and where its price came from. */
function receipt(r) {
  if (!r) return null;
  const u = r.usage ?? {};
  return h("div", { class: "muted receipt" }, `${r.driver}${r.model ? ` ${r.model}` : ""}: in ${u.inputTokens ?? 0}, out ${u.outputTokens ?? 0}${u.cacheReadTokens ? `, cache read ${u.cacheReadTokens}` : ""}${u.cacheWriteTokens ? `, cache write ${u.cacheWriteTokens}` : ""} · price from ${r.costSource}`);
}

function budgetBar(run) {
  const cap = run.budget.max_cost_usd;
  if (cap === null) return h("div", { id: "budget" }, `spent ${usd(run.cost_usd)}, no cost cap`);
  const share = Math.min(1, run.cost_usd / cap);
  return h("div", { id: "budget" },
    h("div", { class: `bar${run.cost_usd >= cap ? " over" : ""}` }, h("span", { style: `width: ${(share * 100).toFixed(1)}%` })),
    h("div", {}, `spent ${usd(run.cost_usd)} of ${usd(cap)}`, run.budget.max_tokens !== null ? ` · ${run.tokens} of ${run.budget.max_tokens} tokens` : ` · ${run.tokens} tokens`),
  );
}

/** A workflow's pulses: each one's commit and its gate against the baseline. */
function pulsesTable(d) {
  return h("table", { id: "run-pulses" },
    h("tr", {}, h("th", {}, "#"), h("th", {}, "pulse"), h("th", {}, "status"), h("th", {}, "summary"), h("th", {}, "files"), h("th", {}, "commit"), h("th", {}, "gate"), h("th", {}, "turns"), h("th", {}, "cost")),
    d.iterations.map((i) => h("tr", { "data-pulse": i.number },
      h("td", {}, `#${i.number}`),
      h("td", {}, i.task ?? "", i.payload?.description ? h("div", { class: "muted" }, i.payload.description) : null),
      h("td", {}, statusChip(i.status), i.error ? h("div", { class: "error" }, i.error) : null, i.payload?.is_recovery_checkpoint ? h("div", { class: "muted" }, "recovery checkpoint") : null),
      h("td", {}, i.summary ?? "–", (i.payload?.unresolved_issues ?? []).length ? h("ul", { class: "error" }, i.payload.unresolved_issues.map((u) => h("li", {}, `${u.issue}: ${u.reason}`))) : null),
      h("td", {}, i.files.length ? h("ul", {}, i.files.map((f) => h("li", {}, h("code", {}, f)))) : "–"),
      h("td", { class: "commit-cell" }, i.commit ? h("code", {}, i.commit.slice(0, 10)) : "–"),
      h("td", { class: "gate-cell" }, gateCell(i.gate, null)),
      h("td", {}, `${i.payload?.turns ?? 0}`, i.payload?.rejections ? h("div", { class: "muted" }, `${i.payload.rejections} rejected`) : null),
      h("td", { class: "cost-cell" }, usd(i.cost_usd), h("div", { class: "muted" }, `${i.tokens} tokens`)),
    )),
  );
}

/** An agent run's steps: the plan step, the decision, the action and its result, the feedback, the advisory. */
function stepsTable(d) {
  return h("table", { id: "run-steps" },
    h("tr", {}, h("th", {}, "#"), h("th", {}, "plan step"), h("th", {}, "decision"), h("th", {}, "action"), h("th", {}, "result"), h("th", {}, "feedback"), h("th", {}, "advisory"), h("th", {}, "tokens")),
    d.iterations.map((i) => {
      const p = i.payload ?? {};
      return h("tr", { "data-step": i.number },
        h("td", {}, `#${i.number}`),
        h("td", {}, i.task || "–"),
        h("td", { class: "decision-cell" }, p.decision ? [h("code", {}, p.decision.type), p.decision.reason ? h("div", { class: "muted" }, p.decision.reason) : null] : "–"),
        h("td", { class: "action-cell" }, p.action ? [h("code", {}, p.action), p.args ? h("div", { class: "muted" }, JSON.stringify(p.args)) : null] : "–"),
        h("td", {}, statusChip(i.status), i.summary ? h("details", {}, h("summary", {}, "output"), h("pre", {}, i.summary)) : null),
        h("td", { class: "feedback-cell" }, p.feedback ? `${p.feedback.score}/5 ${p.feedback.signal} (${p.feedback.submittedBy})` : "–"),
        h("td", {}, i.signal ?? "–", p.advisory_reason ? h("div", { class: "muted" }, p.advisory_reason) : null, p.progress ? h("div", { class: "muted" }, `${p.progress.done}/${p.progress.total} steps done`) : null),
        h("td", {}, String(i.tokens)),
      );
    }),
  );
}

/** A workflow's or an agent run's page: read-only here (they are steered with pulse workflow, or by their own process). */
function loopRunBody(kind, d) {
  const r = d.run;
  const p = d.payload ?? {};
  return [
    h("h1", {}, `${kind} `, h("code", {}, r.id.slice(0, 8)), " ", h("span", { id: "run-status" }, statusChip(r.status))),
    h("dl", { class: "kv" },
      h("dt", {}, kind === "workflow" ? "plan" : "request"), h("dd", {}, r.goal),
      h("dt", {}, kind === "workflow" ? "pulses done" : "iterations"), h("dd", { id: "run-iteration" }, `${r.iteration}/${r.max_iterations}`),
      h("dt", {}, "commits"), h("dd", {}, String(r.commits)),
      kind === "workflow" ? [h("dt", {}, "branch"), h("dd", {}, `${d.branch ?? "–"} from ${p.base_ref ?? "?"}`), h("dt", {}, "repository"), h("dd", {}, d.repo)] : [h("dt", {}, "mode"), h("dd", {}, p.mode ?? "–"), h("dt", {}, "workdir"), h("dd", {}, d.repo), h("dt", {}, "actions"), h("dd", {}, `${p.actions_used ?? 0} of ${p.max_actions ?? "?"}`)],
      h("dt", {}, "spend"), h("dd", { id: "run-spend" }, `${usd(r.cost_usd)} · ${r.tokens} tokens`),
      h("dt", {}, "runner"), h("dd", { id: "run-live" }, d.live ? "a live process runs it" : "no process runs it now"),
      d.stop_reason ? [h("dt", {}, "stopped"), h("dd", {}, d.stop_reason)] : null,
      r.status_reason ? [h("dt", {}, "why"), h("dd", { id: "run-reason" }, r.status_reason)] : null,
    ),
    h("p", { class: "muted" }, kind === "workflow" ? "Stop or resume it with pulse workflow stop|resume." : "Abort it from its own terminal (Ctrl-C on pulse agent run)."),
    h("h2", {}, kind === "workflow" ? "Pulses" : "Steps"),
    kind === "workflow" ? pulsesTable(d) : stepsTable(d),
  ];
}

export async function runView(ctx, kind, id) {
  const path = `/api/runs/${encodeURIComponent(kind)}/${encodeURIComponent(id)}`;
  const body = h("div", { id: "run" });
  const message = h("div", { id: "run-message", class: "muted" });
  let current;
  const render = (d) => {
    current = d;
    if (kind !== "session") return body.replaceChildren(...loopRunBody(kind, d));
    const r = d.run;
    const raise = h("input", { type: "number", id: "raise-cost", min: "0", step: "0.01", value: r.budget.max_cost_usd === null ? "" : String(Math.max(r.budget.max_cost_usd * 2, r.cost_usd + 1)), placeholder: "new cost cap, USD" });
    const act = (action, extra = () => ({})) => async () => {
      message.className = "muted";
      message.textContent = `${action}: asking…`;
      try {
        const { run } = await ctx.api(`${path}/${action}`, { body: extra() });
        // Shown as the records say: a control the runner has not acted on yet is "requested".
        message.textContent = run.control ? `${action} requested: waiting for the runner to act on it` : `${action}: the run is ${run.status}`;
        await refresh();
      } catch (e) {
        message.className = "error";
        message.textContent = e.message;
      }
    };
    const finished = r.status === "complete" || r.status === "aborted";
    const steer = h("input", { type: "text", id: "steer-text", size: 50, placeholder: "new guidance for the agent (it replans before going on)" });
    body.replaceChildren(
      h("h1", {}, `${kind} `, h("code", {}, r.id.slice(0, 8)), " ", h("span", { id: "run-status" }, statusChip(r.status))),
      h("dl", { class: "kv" },
        h("dt", {}, "goal"), h("dd", {}, r.goal),
        h("dt", {}, "iteration"), h("dd", { id: "run-iteration" }, `${r.iteration}/${r.max_iterations}`),
        h("dt", {}, "commits"), h("dd", {}, String(r.commits)),
        h("dt", {}, "branch"), h("dd", {}, d.branch ?? "–"),
        h("dt", {}, "repository"), h("dd", {}, d.repo),
        h("dt", {}, "runner"), h("dd", { id: "run-live" }, d.live ? "a live process runs it" : "no process runs it now"),
        r.control ? [h("dt", {}, "requested"), h("dd", { id: "run-control" }, `${r.control} (not yet acted on by the runner)`)] : null,
        r.status_reason ? [h("dt", {}, "why"), h("dd", { id: "run-reason" }, r.status_reason)] : null,
      ),
      h("h2", {}, "Budget"), budgetBar(r),
      h("div", { class: "controls" },
        h("button", { id: "run-pause", onclick: act("pause"), disabled: finished || r.status !== "running" }, "Pause"),
        raise, h("button", { id: "run-resume", onclick: act("resume", () => (raise.value ? { maxCost: Number(raise.value) } : {})), disabled: finished || r.status === "running" }, "Resume (with this cost cap)"),
        h("button", { id: "run-abort", onclick: act("abort"), disabled: finished }, "Abort"),
      ),
      h("div", { class: "controls" },
        steer, h("button", { id: "run-steer", onclick: act("steer", () => ({ text: steer.value })), disabled: finished }, "Steer"),
      ),
      d.pending_replans.length ? h("div", { id: "pending-replans" }, h("h2", {}, "Pending replans"), h("ul", {}, d.pending_replans.map((p) => h("li", {}, `${new Date(p.at).toLocaleString()}: `, p.text ?? `changed ${p.files.join(", ")}`, h("span", { class: "muted" }, p.deferred ? " (deferred: written to the session's guidance when its worktree is back, on resume)" : " (not yet acknowledged by the agent)"))))) : null,
      message,
      h("h2", {}, "Iterations"),
      h("table", { id: "run-iterations" },
        h("tr", {}, h("th", {}, "#"), h("th", {}, "status"), h("th", {}, "signal"), h("th", {}, "summary"), h("th", {}, "files"), h("th", {}, "commit"), h("th", {}, "gate (against the baseline)"), h("th", {}, "cost")),
        d.iterations.map((i) => h("tr", { "data-iteration": i.number },
          h("td", {}, `#${i.number}`),
          h("td", {}, statusChip(i.status), i.error ? h("div", { class: "error" }, i.error) : null),
          h("td", {}, i.signal ?? "–"),
          h("td", {}, i.summary ?? "–", i.output_tail ? h("details", {}, h("summary", {}, "agent output (tail)"), h("pre", {}, i.output_tail)) : null),
          h("td", {}, i.files.length ? h("ul", {}, i.files.map((f) => h("li", {}, h("code", {}, f)))) : "–"),
          h("td", {}, i.commit ? h("code", {}, i.commit.slice(0, 10)) : "–"),
          h("td", { class: "gate-cell" }, gateCell(i.gate, d.baseline)),
          h("td", { class: "cost-cell" }, `${usd(i.cost_usd)}`, h("div", { class: "muted" }, `${i.tokens} tokens`), receipt(i.receipt)),
        )),
      ),
    );
  };
  const refresh = async () => render(await ctx.api(path));
  ctx.main.replaceChildren(body);
  await refresh();
  ctx.live((type, r) => {
    if (type === "run" && r.id === current?.run.id) void refresh().then(() => setStatusBar(`run ${r.id.slice(0, 8)} is ${r.status}`));
  });
}
