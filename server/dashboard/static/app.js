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

// A list page reloads its content (at most once a second) when a job changes.
// Its filter form (data-keep) is never replaced, only what is around it: the
// fields someone is typing in keep their text and focus. A reload is skipped
// while the focus is in another form (an action's button would lose it).
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
    const keep = main.querySelector(":scope > [data-keep]");
    const slot = keep && fresh.querySelector(":scope > [data-keep]");
    const active = document.activeElement;
    if (active && active.form && !(slot && keep.contains(active))) return;
    if (!slot) { main.replaceChildren(...fresh.childNodes); return; }
    const nodes = [...fresh.childNodes], at = nodes.indexOf(slot);
    while (keep.previousSibling) keep.previousSibling.remove();
    while (keep.nextSibling) keep.nextSibling.remove();
    keep.before(...nodes.slice(0, at));
    keep.after(...nodes.slice(at + 1));
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

document.addEventListener("DOMContentLoaded", () => {
  const job = document.querySelector("[data-job]");
  if (job) liveJob(job.dataset.job);
  else if (document.querySelector("[data-live]")) liveList();
});
