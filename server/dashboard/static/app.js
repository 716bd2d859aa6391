// Skiplock dashboard: confirmations and live updates over server-sent events.
"use strict";

document.addEventListener("submit", (e) => {
  const msg = e.target.dataset.confirm;
  if (msg && !window.confirm(msg)) e.preventDefault();
});

function listen(url, handlers) {
  const es = new EventSource(url);
  for (const [name, fn] of Object.entries(handlers)) {
    es.addEventListener(name, (e) => fn(JSON.parse(e.data)));
  }
  es.onopen = () => document.body.classList.add("connected");
  es.onerror = () => document.body.classList.remove("connected");
  window.addEventListener("pagehide", () => es.close());
  return es;
}

// keyOf names an element across reloads: the kept form, an id, a row's
// data-id. Elements without a key are matched in order.
function keyOf(n) {
  if (n.nodeType !== 1) return null;
  if (n.hasAttribute("data-keep")) return "keep";
  return n.id || n.dataset.id || null;
}

// morph makes node cur look like next and answers the node that stands for
// next: cur itself, changed only where it differs, or next when cur cannot
// become it. The kept form is left as it is.
function morph(cur, next) {
  if (cur.nodeType === 1 && cur.hasAttribute("data-keep")) return cur;
  if (cur.isEqualNode(next)) return cur;
  if (cur.nodeType !== next.nodeType || cur.nodeName !== next.nodeName) return next;
  if (cur.nodeType !== 1) {
    cur.nodeValue = next.nodeValue;
    return cur;
  }
  for (const a of [...cur.attributes]) if (!next.hasAttribute(a.name)) cur.removeAttribute(a.name);
  for (const a of next.attributes) if (cur.getAttribute(a.name) !== a.value) cur.setAttribute(a.name, a.value);
  morphChildren(cur, [...next.childNodes]);
  return cur;
}

// morphChildren makes parent's children the nodes next, keeping every child
// that matches one (by key, else in order) and moving only those out of place.
function morphChildren(parent, next) {
  const cur = [...parent.childNodes];
  const keyed = new Map(cur.filter(keyOf).map((n) => [keyOf(n), n]));
  const loose = cur.filter((n) => !keyOf(n));
  const out = next.map((n) => {
    const k = keyOf(n);
    const c = k ? keyed.get(k) : loose.shift();
    return c ? morph(c, n) : n;
  });
  const stay = new Set(out);
  for (const n of cur) if (!stay.has(n)) n.remove();
  let anchor = null;
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i].parentNode !== parent || out[i].nextSibling !== anchor) parent.insertBefore(out[i], anchor);
    anchor = out[i];
  }
}

// A list page reloads its content (at most once a second) when a job changes.
// Only what changed is replaced: its filter form (data-keep) never is, so the
// fields someone is typing in keep their text, focus and caret, and rows that
// did not change stay the same elements. A reload is skipped while the focus
// is in another form (an action's button would lose it).
function liveList() {
  let pending = false, last = 0;
  const reload = async () => {
    pending = false;
    last = Date.now();
    const res = await fetch(location.href, { credentials: "same-origin" });
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    const fresh = doc.getElementById("main");
    if (!fresh) return;
    const main = document.getElementById("main");
    const keep = main.querySelector("[data-keep]");
    const active = document.activeElement;
    if (active && active.form && !(keep && keep.contains(active))) return;
    morphChildren(main, [...fresh.childNodes]);
    if (window.selectionChanged) window.selectionChanged();
  };
  listen("/ui/events", {
    change: () => {
      if (pending) return;
      pending = true;
      setTimeout(reload, Math.max(0, 1000 - (Date.now() - last)));
    },
  });
}

// A job page updates its progress, checkpoint and lease in place, and
// reloads when the job changes state (a new attempt starts with one).
function liveJob(id) {
  const state = document.querySelector("#state .badge").textContent;
  const set = (sel, text) => { const el = document.getElementById(sel); if (el) el.textContent = text; };
  listen("/ui/events?job=" + encodeURIComponent(id), {
    job: (j) => {
      if (j.state !== state) { location.reload(); return; }
      document.getElementById("progress").value = j.progress;
      set("progress-text", j.progress + "%");
      set("progress-message", j.progress_message);
      set("checkpoint", j.checkpoint);
      set("worker", j.worker_id || "—");
      set("lease", j.lease_until || "—");
    },
  });
}

// The jobs list's selection: row checkboxes belong to the form #sel, whose
// buttons act on the jobs checked (GET /bulk?id=…&action=…, a confirmation
// page). With every row of a full page checked, "select all matching" makes
// the buttons act on the page's filter instead (the confirmation counts it).
function selection() {
  if (!document.getElementById("sel")) return;
  // Looked up each time: a live reload may put new elements in place.
  const form = () => document.getElementById("sel");
  let matching = false;
  const boxes = () => [...document.querySelectorAll('input[name="job"][form="sel"]')];
  const update = () => {
    const f = form();
    if (!f) return;
    const all = boxes(), n = all.filter((b) => b.checked).length;
    const page = document.getElementById("sel-page");
    if (page) page.checked = all.length > 0 && n === all.length;
    if (n < all.length || !all.length) matching = false;
    const full = n > 0 && n === all.length && !!document.getElementById("next") && !!f.dataset.filterUrl;
    document.getElementById("sel-count").textContent = matching ? "" : n + " selected";
    document.getElementById("sel-more").hidden = matching || !full;
    document.getElementById("sel-all-matching").hidden = !matching;
    for (const b of f.querySelectorAll("button")) b.disabled = n === 0 && !matching;
  };
  document.addEventListener("change", (e) => {
    if (e.target.id === "sel-page") for (const b of boxes()) b.checked = e.target.checked;
    if (e.target.id === "sel-page" || e.target.form === form()) update();
  });
  document.addEventListener("click", (e) => {
    if (e.target.id === "sel-matching") { e.preventDefault(); matching = true; update(); }
    if (e.target.id === "sel-clear") { e.preventDefault(); for (const b of boxes()) b.checked = false; matching = false; update(); }
  });
  document.addEventListener("submit", (e) => {
    const f = e.target;
    if (f.id !== "sel" || !matching) return;
    e.preventDefault();
    const action = e.submitter ? e.submitter.value : "";
    location.href = f.dataset.filterUrl + (f.dataset.filterUrl.includes("?") ? "&" : "?") + "action=" + encodeURIComponent(action);
  });
  window.selectionChanged = update;
  // Recounted twice a second too: the count and the buttons follow the
  // boxes whatever a live reload of the list replaced meanwhile.
  setInterval(update, 500);
  update();
}

document.addEventListener("DOMContentLoaded", () => {
  selection();
  const job = document.querySelector("[data-job]");
  if (job) liveJob(job.dataset.job);
  else if (document.querySelector("[data-live]")) liveList();
  // Every other page of a signed-in user connects too: the dot says whether
  // the dashboard reaches the server.
  else if (document.getElementById("role")) listen("/ui/events", {});
});
