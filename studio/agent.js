// Seed 002's Studio, Working page: threads on the left; the thread (its working directory and
// actions, fixed once a task starts) and a chat with a file picker in the middle; the task, its
// plan and live progress, and the files the run generated or edited on the right. Everything is
// read back from the server (threads and runs survive a reload and a restart).
import { h, statusChip, setStatusBar } from "./app.js";

const enc = encodeURIComponent;
const MB = 1024 * 1024;

/** The left column, shared with the settings and managers pages. */
export function agentNav(ctx, overview, current) {
  const list = h("ul", { class: "threads", id: "threads" },
    ...overview.threads.map((t) => h("li", { class: t.id === current ? "active" : "", "data-thread": t.id },
      h("a", { href: `#/agent/thread/${t.id}` }, t.title), t.running ? h("span", { class: "dot", title: "a task is running" }, " ●") : null,
      h("div", { class: "muted small" }, t.workdir))));
  return h("aside", { class: "agent-left" },
    h("h2", {}, "Agent"),
    h("div", { class: "stack" },
      h("a", { class: "button", href: "#/agent/new", id: "new-thread" }, "+ New thread"),
      h("a", { class: "button", href: "#/agent/settings", id: "nav-settings" }, "Settings"),
      h("a", { class: "button", href: "#/agent/guides", id: "nav-guides" }, "Guides"),
      h("a", { class: "button", href: "#/agent/knowledge", id: "nav-knowledge" }, "Knowledge"),
      h("a", { class: "button", href: "#/agent/actions", id: "nav-actions" }, "Actions")),
    h("h3", {}, "Threads"), overview.threads.length ? list : h("p", { class: "muted" }, "No threads yet."));
}

function throttle(fn, ms = 250) {
  let t;
  return () => {
    if (t) return;
    t = setTimeout(() => ((t = undefined), fn()), ms);
  };
}

function actionPicker(actions, chosen, disabled) {
  return h("div", { class: "action-picker", id: "thread-actions" },
    ...actions.map((a) => h("label", { title: a.description },
      h("input", { type: "checkbox", value: a.name, checked: chosen.includes(a.name), disabled }), ` ${a.name}`)));
}
const picked = (el) => [...el.querySelectorAll("input[type=checkbox]")].filter((c) => c.checked).map((c) => c.value);

export async function agentView(ctx, threadId) {
  const overview = await ctx.api("/api/agent");
  const middle = h("section", { class: "agent-middle" });
  const right = h("aside", { class: "agent-right", id: "agent-right" });
  ctx.main.replaceChildren(h("div", { class: "agent-page" }, agentNav(ctx, overview, threadId), middle, right));
  ctx.main.classList.add("wide");
  ctx.onLeave(() => ctx.main.classList.remove("wide"));
  ctx.live((type, e) => {
    if (type === "agent") setStatusBar(`${new Date().toLocaleTimeString()} · agent · ${e.text ?? e.type}`);
  });
  if (!threadId || threadId === "new") return newThread(ctx, overview, middle, right);
  return threadPage(ctx, overview, threadId, middle, right);
}

function newThread(ctx, overview, middle, right) {
  const workdir = h("input", { type: "text", id: "new-workdir", size: 60, value: overview.roots[0] ?? "" });
  const title = h("input", { type: "text", id: "new-title", size: 40, placeholder: "a name for the thread (optional)" });
  const actions = actionPicker(overview.actions, overview.actions.map((a) => a.name), false);
  const message = h("p", { id: "new-message", class: "muted" });
  const create = async () => {
    try {
      const { thread } = await ctx.api("/api/agent/threads", { body: { workdir: workdir.value, actions: picked(actions), ...(title.value.trim() ? { title: title.value.trim() } : {}) } });
      location.hash = `#/agent/thread/${thread.id}`;
    } catch (e) {
      message.className = "error";
      message.textContent = e.message;
    }
  };
  middle.replaceChildren(h("h1", {}, "New thread"),
    h("dl", { class: "kv" }, h("dt", {}, "title"), h("dd", {}, title), h("dt", {}, "working directory"), h("dd", {}, workdir, h("div", { class: "muted small" }, `under ${overview.roots.join(", ")}`)), h("dt", {}, "available actions"), h("dd", {}, overview.actions.length ? actions : h("span", { class: "muted" }, "none yet: add one in Actions"))),
    h("div", { class: "controls" }, h("button", { id: "create-thread", onclick: create }, "Create thread")), message);
  right.replaceChildren(h("p", { class: "muted" }, `Agent home: ${overview.home}`));
}

async function threadPage(ctx, overview, id, middle, right) {
  const path = `/api/agent/threads/${enc(id)}`;
  let view = await ctx.api(path);
  const t0 = view.thread;
  // ---- the thread's bar: fixed once a task started ----
  const workdir = h("input", { type: "text", id: "thread-workdir", size: 50, value: t0.workdir });
  const actions = actionPicker(overview.actions.filter((a) => true), t0.actions, false);
  const mode = h("select", { id: "thread-mode" }, h("option", { value: "auto" }, "auto"), h("option", { value: "interactive" }, "interactive (confirm each action)"));
  mode.value = t0.mode;
  const barMessage = h("span", { id: "bar-message", class: "muted" });
  const saveBar = h("button", { id: "save-thread", onclick: async () => {
    try {
      await ctx.api(path, { body: view.thread.started_at ? { mode: mode.value } : { workdir: workdir.value, actions: picked(actions), mode: mode.value } });
      barMessage.className = "muted";
      barMessage.textContent = "saved";
      await refresh();
    } catch (e) {
      barMessage.className = "error";
      barMessage.textContent = e.message;
    }
  } }, "Save");
  const fixedNote = h("span", { id: "fixed-note", class: "muted small" });
  const bar = h("div", { class: "thread-bar" }, h("label", {}, "Working directory ", workdir), h("div", {}, h("span", { class: "muted" }, "Available actions "), actions), h("label", {}, "Mode ", mode), saveBar, fixedNote, barMessage);
  // ---- the chat ----
  const messages = h("div", { class: "chat", id: "chat" });
  const pending = h("div", { id: "pending" });
  const text = h("textarea", { id: "ask-text", rows: 3, placeholder: "Ask the agent…" });
  const fileInput = h("input", { type: "file", id: "ask-files", multiple: true });
  const chosen = h("span", { id: "ask-chosen", class: "muted small" });
  const askMessage = h("div", { id: "ask-message", class: "muted" });
  const { files: maxFiles, bytes: maxBytes } = overview.limits;
  fileInput.addEventListener("change", () => {
    const fs = [...fileInput.files];
    const total = fs.reduce((n, f) => n + f.size, 0);
    chosen.textContent = fs.length ? `${fs.length} file(s), ${(total / MB).toFixed(2)} MB` : "";
    chosen.className = fs.length > maxFiles || total > maxBytes ? "error small" : "muted small";
    if (fs.length > maxFiles) chosen.textContent += ` — at most ${maxFiles} files`;
    if (total > maxBytes) chosen.textContent += ` — at most ${maxBytes / MB} MB together`;
  });
  const send = h("button", { id: "ask-send" }, "Send");
  const stop = h("button", { id: "ask-stop", onclick: async () => {
    try {
      await ctx.api(`${path}/abort`, { body: {} });
    } catch (e) {
      askMessage.textContent = e.message;
    }
  } }, "Stop");
  send.addEventListener("click", async () => {
    const fs = [...fileInput.files];
    const total = fs.reduce((n, f) => n + f.size, 0);
    askMessage.className = "error";
    if (fs.length > maxFiles) return void (askMessage.textContent = `at most ${maxFiles} files go with a request`);
    if (total > maxBytes) return void (askMessage.textContent = `the files may be at most ${maxBytes / MB} MB together`);
    if (!text.value.trim()) return void (askMessage.textContent = "write a request first");
    send.disabled = true;
    askMessage.className = "muted";
    try {
      const paths = [];
      for (const f of fs) {
        askMessage.textContent = `uploading ${f.name}…`;
        const data = await new Promise((res, rej) => {
          const r = new FileReader();
          r.onload = () => res(String(r.result).replace(/^data:[^,]*,/, ""));
          r.onerror = () => rej(r.error);
          r.readAsDataURL(f);
        });
        paths.push((await ctx.api(`${path}/upload`, { body: { name: f.name, data } })).path);
      }
      const { runId } = await ctx.api(`${path}/ask`, { body: { text: text.value, files: paths } });
      askMessage.textContent = `run ${runId.slice(0, 8)} started`;
      text.value = "";
      fileInput.value = "";
      chosen.textContent = "";
      await refresh();
    } catch (e) {
      askMessage.className = "error";
      askMessage.textContent = e.message;
    } finally {
      send.disabled = false;
    }
  });
  middle.replaceChildren(h("h1", { id: "thread-title" }, t0.title), bar, messages, pending,
    h("div", { class: "composer" }, text, h("div", { class: "controls" }, h("label", { class: "button" }, "Attach files ", fileInput), chosen, send, stop, h("span", { class: "muted small" }, `≤ ${maxFiles} files, ≤ ${maxBytes / MB} MB`)), askMessage));

  const answer = (p, value) => async () => {
    try {
      await ctx.api(`${path}/answer`, { body: p.kind === "confirm" ? { key: p.key, yes: value } : { key: p.key, text: value() } });
      await refresh();
    } catch (e) {
      askMessage.textContent = e.message;
    }
  };
  // Kept across re-renders: a file opened stays open while the run's events come in.
  const preview = h("pre", { id: "file-preview", hidden: true });
  const render = () => {
    const t = view.thread;
    const started = Boolean(t.started_at);
    workdir.disabled = started;
    for (const c of actions.querySelectorAll("input")) c.disabled = started;
    fixedNote.textContent = started ? `working directory and actions fixed since ${new Date(t.started_at).toLocaleString()}` : "";
    stop.disabled = !view.running;
    send.disabled = Boolean(view.running);
    messages.replaceChildren(...t.messages.map((m) => h("div", { class: `msg ${m.role}`, "data-run": m.runId ?? "" },
      h("div", { class: "muted small" }, `${m.role === "user" ? "you" : "agent"} · ${new Date(m.ts).toLocaleTimeString()}`, m.status ? [" ", statusChip(m.status)] : null),
      h("div", {}, m.text), m.files?.length ? h("div", { class: "muted small" }, `files: ${m.files.map((f) => f.split("/").pop()).join(", ")}`) : null)));
    if (!t.messages.length) messages.append(h("p", { class: "muted" }, "Ask the agent something: it plans, picks an action per step and runs it."));
    pending.replaceChildren(...view.pending.map((p) => h("div", { class: "pending card", "data-key": p.key },
      h("div", {}, p.text),
      p.kind === "confirm"
        ? h("div", { class: "controls" }, h("button", { class: "confirm-yes", onclick: answer(p, true) }, "Run it"), h("button", { class: "confirm-no", onclick: answer(p, false) }, "Decline"))
        : (() => {
            const input = h("input", { type: "text", size: 50 });
            return h("div", { class: "controls" }, input, h("button", { onclick: answer(p, () => input.value) }, "Answer"));
          })())));
    renderRight(ctx, view, right, path, preview);
  };
  const refresh = async () => {
    view = await ctx.api(path);
    render();
  };
  render();
  const later = throttle(() => void refresh().catch(() => undefined));
  ctx.live((type, e) => {
    if (type === "agent" && e.thread === id) later();
  });
}

function renderRight(ctx, view, right, path, preview) {
  const run = view.runs.at(-1);
  if (!run) return void right.replaceChildren(h("h2", {}, "Task"), h("p", { class: "muted" }, "No task yet."));
  const steps = run.plan?.steps ?? [];
  const done = steps.filter((s) => s.status === "done").length;
  right.replaceChildren(
    h("div", { class: "right-top" },
      h("h2", {}, "Task ", h("span", { id: "run-status" }, statusChip(run.status))),
      h("div", { id: "task" }, run.request ?? ""),
      run.message ? h("div", { class: "muted small", id: "run-message" }, run.message) : null,
      h("h3", {}, "Plan ", h("span", { class: "muted small", id: "plan-progress" }, steps.length ? `${done}/${steps.length} done` : "")),
      h("ol", { id: "plan" }, ...steps.map((s) => h("li", { "data-step": s.id, "data-status": s.status }, statusChip(s.status), " ", s.desc))),
      h("h3", {}, "Progress"),
      h("ul", { id: "progress", class: "progress" }, ...run.progress.slice(-40).map((p) => h("li", { "data-type": p.type }, h("span", { class: "muted small" }, new Date(p.ts).toLocaleTimeString()), " ", p.text))),
      run.actions.length ? h("h3", {}, "Action results") : null,
      ...run.actions.map((a) => h("div", { class: "action-result card", "data-action": a.name },
        h("div", {}, h("strong", {}, a.name), " ", statusChip(a.status === "ok" ? "completed" : "failed"), " ", a.status),
        h("pre", {}, a.status === "ok" ? a.result : (a.error ?? a.result)),
        h("div", { class: "controls small" }, "rate: ", ...[1, 2, 3, 4, 5].map((n) => h("button", { class: "rate", onclick: async (ev) => {
          try {
            await ctx.api(`${path}/feedback`, { body: { actionRunId: a.actionRunId, score: n, signal: n >= 4 ? "success" : n >= 2 ? "partial" : "fail" } });
            ev.target.parentElement.append(` rated ${n}/5`);
          } catch (e) {
            ev.target.parentElement.append(` ${e.message}`);
          }
        } }, String(n))))))),
    h("div", { class: "right-bottom" },
      h("h3", {}, "Files generated or edited"),
      run.files.length
        ? h("ul", { id: "run-files" }, ...run.files.map((f) => h("li", {}, h("a", { href: "#", "data-file": f.rel, onclick: async (ev) => {
            ev.preventDefault();
            try {
              const p = await ctx.api(`/api/agent/file?path=${enc(f.path)}`);
              preview.hidden = false;
              preview.textContent = `${p.path}${p.truncated ? " (first 64 KiB)" : ""}\n\n${p.text}`;
            } catch (e) {
              preview.hidden = false;
              preview.textContent = e.message;
            }
          } }, f.rel), h("span", { class: "muted small" }, ` ${f.size} B`))))
        : h("p", { class: "muted", id: "run-files-none" }, "none"),
      preview));
  if (run.last) setStatusBar(run.last);
}
