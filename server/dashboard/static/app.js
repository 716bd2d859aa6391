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
function liveList() {
  let pending = false, last = 0;
  const reload = async () => {
    pending = false;
    last = Date.now();
    const res = await fetch(location.href, { credentials: "same-origin" });
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    const fresh = doc.getElementById("main");
    const active = document.activeElement;
    if (fresh && !(active && active.form)) {
      document.getElementById("main").replaceChildren(...fresh.childNodes);
    }
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
// reloads when the job changes state.
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
      set("attempt", j.attempt);
    },
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const job = document.querySelector("[data-job]");
  if (job) liveJob(job.dataset.job);
  else if (document.querySelector("[data-live]")) liveList();
});
