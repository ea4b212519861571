// Seed 002's Studio: Settings (the agent's LLM entries and a connectivity test) and the
// managers of its guides, knowledge and actions (create, edit with validation and a preview,
// delete, and a new action from the template). The key of an entry is never shown in full.
import { h, setStatusBar } from "./app.js";
import { agentNav } from "./agent.js";

const enc = encodeURIComponent;

function shell(ctx, overview, title) {
  const middle = h("section", { class: "agent-middle wide-middle" }, h("h1", {}, title));
  ctx.main.replaceChildren(h("div", { class: "agent-page admin" }, agentNav(ctx, overview, null), middle));
  ctx.main.classList.add("wide");
  ctx.onLeave(() => ctx.main.classList.remove("wide"));
  return middle;
}

const say = (el, text, bad = false) => {
  el.classList.toggle("error", bad);
  el.classList.toggle("muted", !bad);
  el.textContent = text;
  setStatusBar(`${new Date().toLocaleTimeString()} · ${text}`);
};

// ---- Settings ------------------------------------------------------------------------------------
const FIELDS = [
  ["alias", "text"], ["provider", "select"], ["model", "text"], ["baseUrl", "text"], ["apiKey", "password"],
  ["temperature", "number"], ["maxTokens", "number"], ["think", "checkbox"],
];

function entryCard(ctx, entry, index) {
  const inputs = {};
  const result = h("div", { class: "muted small test-result", "data-test-result": "" });
  const row = h("div", { class: "card llm-entry", "data-alias": entry.alias ?? "" });
  for (const [name, type] of FIELDS) {
    let input;
    if (type === "select") {
      input = h("select", {}, h("option", { value: "openai_compatible" }, "openai_compatible"), h("option", { value: "ollama" }, "ollama"));
      input.value = entry.provider ?? "openai_compatible";
    } else if (type === "checkbox") input = h("input", { type: "checkbox", checked: entry.think === true });
    else if (name === "apiKey") input = h("input", { type: "password", autocomplete: "off", placeholder: entry.apiKeySet ? `${entry.apiKey} stored: type to replace` : entry.apiKeyEnv ? `none stored (read from $${entry.apiKeyEnv})` : "none" });
    else input = h("input", { type, value: entry[name] ?? "", ...(type === "number" ? { step: name === "temperature" ? "0.1" : "1" } : {}) });
    input.dataset.field = name;
    inputs[name] = input;
    row.append(h("label", {}, h("span", { class: "muted small" }, name), input));
  }
  const clearKey = h("input", { type: "checkbox", "data-field": "clearKey" });
  if (entry.apiKeySet) row.append(h("label", { class: "small" }, clearKey, " forget the stored key"));
  const value = () => {
    const v = { was: entry.alias };
    for (const [name, type] of FIELDS) {
      const el = inputs[name];
      if (type === "checkbox") v[name] = el.checked;
      else if (type === "number") {
        if (el.value !== "") v[name] = Number(el.value);
      } else if (name === "apiKey") {
        if (clearKey.checked) v.apiKey = "";
        else if (el.value !== "") v.apiKey = el.value; // absent: the stored key stays
      } else if (el.value !== "") v[name] = el.value.trim();
    }
    for (const k of ["apiKeyEnv", "requestTimeoutMs", "maxRetries", "embeddingModel", "thinkSupported"]) if (entry[k] !== undefined) v[k] = entry[k];
    return v;
  };
  const test = h("button", { class: "test-entry", onclick: async () => {
    say(result, "testing…");
    try {
      const r = await ctx.api("/api/agent/settings/test", { body: { entry: value() } });
      say(result, r.ok ? `connected in ${r.ms} ms${r.model ? ` (${r.model})` : ""}: ${JSON.stringify(r.reply)}` : `failed after ${r.ms} ms: ${r.error}`, !r.ok);
      result.dataset.testResult = r.ok ? "ok" : "failed";
    } catch (e) {
      say(result, e.message, true);
      result.dataset.testResult = "failed";
    }
  } }, "Test connectivity");
  const remove = h("button", { class: "remove-entry", onclick: () => row.remove() }, "Remove");
  row.append(h("div", { class: "controls" }, test, remove), result);
  row.value = value;
  return row;
}

export async function settingsView(ctx) {
  const [overview, settings] = await Promise.all([ctx.api("/api/agent"), ctx.api("/api/agent/settings")]);
  const middle = shell(ctx, overview, "Settings");
  const list = h("div", { id: "llm-entries", class: "entries" });
  const message = h("p", { id: "settings-message", class: "muted" });
  const roleSelect = (role) => {
    const s = h("select", { id: `role-${role}` }, h("option", { value: "" }, "(the first entry)"), ...settings.llm.map((e) => h("option", { value: e.alias }, e.alias)));
    s.value = settings.roles?.[role] ?? "";
    return s;
  };
  const planner = roleSelect("planner");
  const decider = roleSelect("decider");
  const render = (entries) => list.replaceChildren(...entries.map((e, i) => entryCard(ctx, e, i)));
  render(settings.llm);
  const save = async () => {
    const llm = [...list.querySelectorAll(".llm-entry")].map((r) => r.value());
    const aliases = new Set(llm.map((e) => e.alias));
    const roles = {};
    for (const [role, sel] of [["planner", planner], ["decider", decider]]) if (sel.value && aliases.has(sel.value)) roles[role] = sel.value;
    try {
      const saved = await ctx.api("/api/agent/settings", { body: { llm, roles } });
      render(saved.llm);
      say(message, `saved to ${saved.file}`);
    } catch (e) {
      say(message, e.message, true);
    }
  };
  middle.append(
    h("p", { class: "muted" }, `The agent's LLM entries (${settings.file}). A key is kept in the file (mode 0600) and never shown in full; an entry without one reads the variable its apiKeyEnv names.`),
    list,
    h("div", { class: "controls" },
      h("button", { id: "add-entry", onclick: () => list.append(entryCard(ctx, { alias: "", provider: "openai_compatible", baseUrl: "http://127.0.0.1:11434/v1", model: "", temperature: 0.2, maxTokens: 2048 }, list.children.length)) }, "+ Add an entry"),
      h("label", {}, "planner ", planner), h("label", {}, "decider ", decider),
      h("button", { id: "save-settings", onclick: save }, "Save")),
    message);
}

// ---- Guides, Knowledge, Actions -------------------------------------------------------------------
const BLANK = {
  guides: (name) => JSON.stringify({ meta: { name, version: "1", domain: "" }, entries: [{ name: "first-guide", description: "When to use it", plan: ["first step", "second step"] }] }, null, 2),
  knowledge: (name) => JSON.stringify({ meta: { name, version: "1", domain: "" }, entries: [{ name: "first-fact", description: "What it is about", content: "The text the planner reads." }] }, null, 2),
};

function previewOf(kind, p) {
  if (!p) return h("p", { class: "muted" }, "nothing to preview");
  if (kind === "actions")
    return h("div", {}, h("div", {}, h("strong", {}, p.name), ` — ${p.description}`),
      h("table", {}, h("tr", {}, h("th", {}, "argument"), h("th", {}, "type"), h("th", {}, "required")), ...p.arguments.map((a) => h("tr", {}, h("td", {}, a.name), h("td", {}, a.type), h("td", {}, a.required ? "yes" : "no")))),
      h("div", { class: "muted small" }, `timeout ${p.timeout_sec} s · tags ${p.tags.join(", ") || "none"} · ${p.layout}`));
  return h("div", {}, h("div", { class: "muted small" }, `${p.meta?.name} · version ${p.meta?.version ?? "–"} · ${p.meta?.domain || "no domain"}`),
    ...p.entries.map((e) => h("div", { class: "card" }, h("strong", {}, e.name), ` — ${e.description}`, kind === "guides" ? h("ol", {}, ...e.plan.map((s) => h("li", {}, s))) : h("pre", {}, e.content))));
}

export async function managerView(ctx, kind, selected) {
  const title = { guides: "Guides", knowledge: "Knowledge", actions: "Actions" }[kind];
  const [overview, listing] = await Promise.all([ctx.api("/api/agent"), ctx.api(`/api/agent/${kind}`)]);
  const middle = shell(ctx, overview, title);
  const message = h("p", { id: "manager-message", class: "muted" });
  const items = h("ul", { class: "resources", id: "resources" });
  const renderList = (l) => items.replaceChildren(...l.items.map((i) => h("li", { "data-name": i.name, class: i.name === selected ? "active" : "" },
    h("a", { href: `#/agent/${kind}/${enc(i.name)}` }, i.title), " ", h("span", { class: "muted small" }, i.detail), i.problem ? h("div", { class: "error small" }, i.problem) : null)));
  renderList(listing);
  const editor = h("div", { class: "editor", id: "editor" });
  const newName = h("input", { type: "text", id: "new-name", placeholder: kind === "actions" ? "action name, e.g. summarize" : "file name, e.g. onboarding" });
  const create = kind === "actions"
    ? h("button", { id: "create-from-template", onclick: async () => {
        try {
          await ctx.api(`/api/agent/actions/${enc(newName.value.trim())}/template`, { body: {} });
          say(message, `created ${newName.value.trim()} from the template`);
          location.hash = `#/agent/actions/${enc(newName.value.trim())}`;
        } catch (e) {
          say(message, e.message, true);
        }
      } }, "Create from template")
    : h("button", { id: "create-new", onclick: () => openEditor(newName.value.trim(), { content: BLANK[kind](newName.value.trim() || "new") }, true) }, "New");
  middle.append(h("div", { class: "controls" }, newName, create), message, h("div", { class: "manager" }, items, editor));

  function openEditor(name, files, isNew) {
    const areas = {};
    const names = kind === "actions" ? ["meta.json", "perform.js"] : ["content"];
    for (const f of names) areas[f] = h("textarea", { class: "code", rows: kind === "actions" && f === "meta.json" ? 10 : 18, "data-file": f, spellcheck: "false" }, files[f] ?? "");
    const errors = h("div", { id: "validation", class: "muted" });
    const preview = h("div", { id: "preview", class: "preview" });
    const current = () => Object.fromEntries(names.map((f) => [f, areas[f].value]));
    const validate = async () => {
      try {
        const r = await ctx.api(`/api/agent/${kind}/validate`, { body: { files: current() } });
        errors.className = r.ok ? "ok small" : "error small";
        errors.textContent = r.ok ? "valid" : r.errors.join("\n");
        errors.dataset.valid = String(r.ok);
        preview.replaceChildren(previewOf(kind, r.preview));
      } catch (e) {
        errors.textContent = e.message;
      }
    };
    let timer;
    for (const a of Object.values(areas)) a.addEventListener("input", () => (clearTimeout(timer), (timer = setTimeout(validate, 300))));
    const save = h("button", { id: "save-resource", onclick: async () => {
      try {
        await ctx.api(`/api/agent/${kind}/${enc(name)}`, { body: { files: current(), ...(isNew ? { create: true } : {}) } });
        say(message, `saved ${kind}/${name}`);
        if (isNew) location.hash = `#/agent/${kind}/${enc(name)}`;
        else {
          renderList(await ctx.api(`/api/agent/${kind}`));
          await validate();
        }
      } catch (e) {
        say(message, e.message, true);
      }
    } }, "Save");
    const del = h("button", { id: "delete-resource", disabled: isNew, onclick: async () => {
      if (!confirm(`Delete ${kind}/${name}?`)) return;
      try {
        await ctx.api(`/api/agent/${kind}/${enc(name)}/delete`, { body: {} });
        say(message, `deleted ${kind}/${name}`);
        location.hash = `#/agent/${kind}`;
      } catch (e) {
        say(message, e.message, true);
      }
    } }, "Delete");
    const editable = kind !== "actions" || files["meta.json"] !== undefined;
    editor.replaceChildren(h("h2", {}, name || "(unnamed)"),
      editable ? null : h("p", { class: "muted" }, "An Agent Skills folder: edit its SKILL.md and scripts on disk."),
      ...(editable ? names.map((f) => h("label", { class: "block" }, h("span", { class: "muted small" }, f), areas[f])) : [h("pre", {}, files["SKILL.md"] ?? "")]),
      editable ? h("div", { class: "controls" }, h("button", { id: "validate-resource", onclick: validate }, "Validate"), save, del) : h("div", { class: "controls" }, del),
      errors, h("h3", {}, "Preview"), preview);
    if (editable) void validate();
  }

  if (selected) {
    const got = await ctx.api(`/api/agent/${kind}/${enc(selected)}`);
    openEditor(selected, got.files, false);
  } else editor.replaceChildren(h("p", { class: "muted" }, `Pick one, or ${kind === "actions" ? "create one from the template" : "make a new one"}.`));
}
