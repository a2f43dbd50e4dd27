// The C-RASP playground page: the editor's diagnostics as one types, runs with traces,
// predictions and compiled models' attention heatmaps. Talks only to this page's own server.
"use strict";

const DEBOUNCE_MS = 150;
const $ = (id) => document.getElementById(id);
const playground = { timings: [], checks: 0 };  // read by the benchmark and the browser tests
window.playground = playground;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

// POST a JSON object to /api/KIND; {status, data} whatever the outcome (data.error on failure).
async function api(kind, body, signal) {
  let response;
  try {
    response = await fetch(`/api/${kind}`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), signal,
    });
  } catch (failure) {
    if (failure.name === "AbortError") throw failure;
    return { status: 0, data: { error: `the server did not answer: ${failure.message}` } };
  }
  let data;
  try {
    data = await response.json();
  } catch {
    data = { error: `the server answered ${response.status} without JSON` };
  }
  return { status: response.status, data };
}

// An API error in its box: the status and the message (a program's error names program:LINE:COLUMN).
function showError(box, data, status) {
  box.textContent = `${status ? `${status}: ` : ""}${data.error}`;
  box.dataset.status = status;
  box.hidden = false;
}

// ------------------------------------------------------------------ the editor

const editor = {
  text: () => $("program").value,
  lines: () => $("program").value.split("\n").length,
};

// Line numbers, rebuilt only when the count of lines changes; the lines in errorLines marked.
function renderGutter(errorLines = new Set()) {
  const gutter = $("gutter");
  const lines = editor.lines();
  if (gutter.childElementCount !== lines) {
    gutter.replaceChildren();
    for (let n = 1; n <= lines; n++) {
      gutter.append(el("span", { class: "line-number", "data-line": n, text: String(n) }));
    }
  }
  for (const marked of gutter.querySelectorAll(".line-number.error")) marked.classList.remove("error");
  for (const n of errorLines) gutter.children[n - 1]?.classList.add("error");
  gutter.scrollTop = $("program").scrollTop;
}

// Index into text of 1-based (line, column).
function indexOf(text, line, column) {
  let index = 0;
  for (let n = 1; n < line; n++) {
    const next = text.indexOf("\n", index);
    if (next < 0) return text.length;
    index = next + 1;
  }
  return Math.min(text.length, index + column - 1);
}

function renderBackdrop(diagnostics) {
  const text = editor.text();
  const backdrop = $("backdrop");
  backdrop.replaceChildren();
  const located = diagnostics.filter((d) => d.line);
  if (!located.length) { backdrop.append(text + "\n"); return; }
  const d = located[0];
  const start = indexOf(text, d.line, d.column);
  let end = d.end_line ? indexOf(text, d.end_line, d.end_column) : start + 1;
  if (end <= start) end = start + 1;
  const shown = text.slice(start, end);
  backdrop.append(text.slice(0, start),
                  el("mark", { class: "diag", text: shown && shown !== "\n" ? shown : " " }),
                  text.slice(end) + "\n");
  syncScroll();
}

function syncScroll() {
  const area = $("program");
  $("gutter").scrollTop = area.scrollTop;
  $("backdrop").scrollTop = area.scrollTop;
  $("backdrop").scrollLeft = area.scrollLeft;
}

function renderDiagnostics(result) {
  const status = $("check-status");
  const list = $("diagnostics");
  list.replaceChildren();
  if (result.data.error !== undefined) {  // the request itself failed (too large, out of time)
    status.className = "status bad";
    status.textContent = "not checked";
    list.append(el("li", { class: "diagnostic request-error", text: `${result.status}: ${result.data.error}` }));
    renderGutter();
    renderBackdrop([]);
    return;
  }
  const diagnostics = result.data.diagnostics;
  if (result.data.ok) {
    const s = result.data.summary;
    status.className = "status ok";
    status.textContent = `ok: ${s.class}, ${s.definitions} definitions, count depth ${s.depth}, ` +
                         `outputs ${s.outputs.join(", ")}`;
  } else {
    status.className = "status bad";
    status.textContent = `${diagnostics.length} error${diagnostics.length === 1 ? "" : "s"}`;
  }
  for (const d of diagnostics) {
    const item = el("li", { class: "diagnostic", "data-line": d.line ?? "", "data-column": d.column ?? "",
                            text: d.text });
    item.addEventListener("click", () => jumpTo(d.line, d.column));
    list.append(item);
  }
  renderGutter(new Set(diagnostics.map((d) => d.line).filter(Boolean)));
  renderBackdrop(diagnostics);
}

function jumpTo(line, column) {
  if (!line) return;
  const area = $("program");
  const at = indexOf(area.value, line, column);
  area.focus();
  area.setSelectionRange(at, at);
}

let pending = null;       // the debounce timer
let inflight = null;      // the AbortController of the check in flight
let sequence = 0;
let typedAt = 0;          // when the text last changed (performance.now())

function scheduleCheck() {
  typedAt = performance.now();
  $("check-status").className = "status pending";  // the marks stay until the new diagnostics come
  if ($("gutter").childElementCount !== editor.lines()) renderGutter();
  renderBackdrop([]);
  clearTimeout(pending);
  pending = setTimeout(check, DEBOUNCE_MS);
}

async function check() {
  if (inflight) inflight.abort();
  inflight = new AbortController();
  const mine = ++sequence;
  const started = typedAt;
  let result;
  try {
    result = await api("check", { program: editor.text() }, inflight.signal);
  } catch {
    return;  // aborted: a newer check is on its way
  }
  if (mine !== sequence) return;
  renderDiagnostics(result);
  playground.checks += 1;
  playground.timings.push(performance.now() - started);
}

// ------------------------------------------------------------------ run

const ELLIPSIS = "…";  // a long input's left-out middle (null in the server's arrays)

function traceTable(data) {
  const table = el("table", { class: "trace", id: "trace-table" });
  const head = el("tr", {}, el("th", { class: "name", text: "position" }));
  data.positions.forEach((p) => head.append(el("th", { text: p === null ? ELLIPSIS : String(p) })));
  const tokens = el("tr", {}, el("th", { class: "name", text: "token" }));
  data.tokens.forEach((t) => tokens.append(el("td", { class: "tok", text: t ?? ELLIPSIS })));
  table.append(el("thead", {}, head, tokens));
  const body = el("tbody");
  for (const row of data.rows) {
    const tr = el("tr", { "data-name": row.name }, el("th", { class: "name", title: row.source, text: row.name }));
    for (const v of row.values) {
      if (v === null) tr.append(el("td", { text: ELLIPSIS }));
      else if (row.sort === "bool") tr.append(el("td", { class: v ? "t" : "f", text: v ? "1" : "0" }));
      else tr.append(el("td", { class: "n", text: String(v) }));
    }
    body.append(tr);
  }
  const outputs = el("tr", { class: "output" }, el("th", { class: "name", text: "output" }));
  for (const o of data.outputs) {
    outputs.append(el("td", { class: o === "accept" || o === "reject" ? o : "", text: o ?? ELLIPSIS }));
  }
  body.append(outputs);
  table.append(body);
  return table;
}

// What run and compile send: the program, the tokens, the offset and whether unknown tokens are allowed.
function runRequest() {
  return { program: editor.text(), tokens: $("tokens").value, offset: Number($("offset").value || 0),
           allow_unknown: $("allow-unknown").checked };
}

async function runProgram() {
  const box = $("run-error");
  box.hidden = true;
  $("run-result").replaceChildren(el("span", { class: "muted", text: "running…" }));
  const { status, data } = await api("run", runRequest());
  $("run-result").replaceChildren();
  if (data.error !== undefined) { showError(box, data, status); return; }
  const verdict = data.verdict ?? `next tokens: ${data.outputs.map((o) => o ?? ELLIPSIS).join(" ")}`;
  $("run-result").append(el("p", { class: `verdict ${data.verdict ?? ""}`, id: "verdict", text: verdict }),
                         el("div", { class: "trace-wrap" }, traceTable(data)));
}

// ------------------------------------------------------------------ compile

function heatmapTable(map) {
  const table = el("table", { class: "heatmap-table" });
  const head = el("tr", {}, el("th"));
  map.labels.forEach((l) => head.append(el("th", { text: l })));
  table.append(head);
  map.weights.forEach((row, i) => {
    const tr = el("tr", {}, el("th", { text: map.labels[i] }));
    row.forEach((w) => {
      const cell = el("td", { title: w.toFixed(3), text: w >= 0.005 ? w.toFixed(2).replace(/^0/, "") : "" });
      cell.style.background = `rgba(68, 1, 84, ${w})`;
      cell.style.color = w > 0.5 ? "#fff" : "#333";
      tr.append(cell);
    });
    table.append(tr);
  });
  return table;
}

async function compileProgram() {
  const box = $("compile-error");
  box.hidden = true;
  const result = $("compile-result");
  result.className = "";
  result.replaceChildren(el("span", { class: "muted", text: "compiling…" }));
  const { status, data } = await api("compile", runRequest());
  result.replaceChildren();
  if (data.error !== undefined) { showError(box, data, status); return; }
  const p = data.properties;
  result.append(
    el("p", { text: `PERIODIC: period ${p.period}; LOCAL: tau ${p.tau}; ${p.layers} layers, ${p.heads} heads. ` +
                    `Compiled: ${data.verdicts.compiled.join(" ")}; interpreter: ${data.verdicts.interpreter.join(" ")}` }),
    el("pre", { class: "description", text: data.description }));
  const maps = el("div", { class: "heatmaps", id: "heatmaps" });
  if (!data.heatmaps.length) maps.append(el("p", { class: "muted", text: "this model has no attention heads" }));
  for (const map of data.heatmaps) {
    const body = map.image ? el("img", { class: "heatmap", src: map.image, alt: map.title }) : heatmapTable(map);
    maps.append(el("figure", { class: "heatmap-figure" }, body, el("figcaption", { text: map.title })));
  }
  result.append(maps);
}

// ------------------------------------------------------------------ predict

async function predictTask() {
  const box = $("predict-error");
  box.hidden = true;
  const task = $("task").value.trim();
  const body = task ? { task } : { regex: $("regex").value, alphabet: $("alphabet").value };
  $("predict-result").replaceChildren(el("span", { class: "muted", text: "predicting…" }));
  const { status, data } = await api("predict", body);
  $("predict-result").replaceChildren();
  if (data.error !== undefined) { showError(box, data, status); return; }
  const table = el("table", { class: "prediction", id: "prediction-table" },
    el("tr", {}, el("th", { text: "scheme" }), el("th", { text: "verdict" }), el("th", { text: "strength" }),
       el("th", { text: "reason" })));
  for (const s of data.schemes) {
    table.append(el("tr", { "data-scheme": s.scheme }, el("td", { text: s.title }),
      el("td", { class: "v-" + s.verdict.replaceAll(" ", "-"), text: s.verdict }),
      el("td", { text: s.strength ?? "" }), el("td", { text: s.reason })));
  }
  $("predict-result").append(el("p", { text: `${data.task} (${data.seconds} s)` }), table);
}

// ------------------------------------------------------------------ start

async function loadExamples() {
  const response = await fetch("/api/examples");
  const examples = await response.json();
  const select = $("examples");
  for (const name of Object.keys(examples)) select.append(el("option", { value: name, text: name }));
  select.addEventListener("change", () => {
    if (!select.value) return;
    $("program").value = examples[select.value];
    scheduleCheck();
  });
  const limits = await (await fetch("/api/limits")).json();
  $("limits").textContent = `time limit ${limits.seconds} s, requests up to ${limits.body_bytes} bytes`;
}

function busy(button, action) {
  return async () => {
    button.disabled = true;
    try { await action(); } finally { button.disabled = false; }
  };
}

document.addEventListener("DOMContentLoaded", () => {
  const area = $("program");
  area.addEventListener("input", scheduleCheck);
  area.addEventListener("scroll", syncScroll);
  area.addEventListener("keydown", (event) => {
    if (event.key === "Tab") {  // a tab indents instead of leaving the editor
      event.preventDefault();
      area.setRangeText("    ", area.selectionStart, area.selectionEnd, "end");
      scheduleCheck();
    }
  });
  $("run-button").addEventListener("click", busy($("run-button"), runProgram));
  $("compile-button").addEventListener("click", busy($("compile-button"), compileProgram));
  $("predict-button").addEventListener("click", busy($("predict-button"), predictTask));
  renderGutter();
  renderBackdrop([]);
  check();
  loadExamples();
});
