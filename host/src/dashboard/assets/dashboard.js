// The dashboard (`vx dashboard`): a hash router over the JSON API of the
// server that serves this page. `#/` lists the runs (filters, runs in
// progress, cache size and savings), `#/run/ID` draws one with the shared
// run view (vx.renderRun) and its task graph, `#/run/ID/task/TASK` opens a
// task with its description, the output of its failed attempts in that run
// (as history kept it) and its history over time, `#/live/PID` follows a
// run in progress,
// `#/stats` shows the slowest and most missed tasks. It polls /api/live
// and the runs list every second and redraws what changed.
"use strict";

(function (global) {
  const { el, duration, bytes } = global.vx;
  const app = document.getElementById("app");
  const badge = document.getElementById("live-badge");
  const filters = { command: "", tag: "", branch: "", outcome: "" };
  let lastSeen = "";
  let view = null;

  async function api(path) {
    const response = await fetch(path, { cache: "no-store" });
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  }

  function query() {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v);
    return q.toString();
  }

  function when(ms) {
    return new Date(ms).toISOString().replace("T", " ").slice(0, 19);
  }

  function failure(error) {
    return el("p", { class: "bad", id: "error" }, String(error.message || error));
  }

  // A small chart of one value per run: a dot per run, coloured by how it
  // went, on a scale from zero to the largest value.
  function chart(title, runs, value, format) {
    const width = 360, height = 110, left = 48, top = 16, bottom = 14;
    const values = runs.map(value);
    const max = Math.max(1, ...values.filter((v) => v !== null && v !== undefined));
    const svg = el("svg:svg", { width, height, class: "chart", role: "img", "aria-label": title });
    svg.append(el("svg:text", { x: 4, y: 11 }, title));
    svg.append(el("svg:text", { x: 4, y: top + 8 }, format(max)));
    svg.append(el("svg:text", { x: 4, y: height - bottom }, format(0)));
    svg.append(el("svg:line", { x1: left, x2: width - 6, y1: height - bottom, y2: height - bottom, class: "axis", stroke: "currentColor", "stroke-opacity": 0.2 }));
    const step = (width - left - 10) / Math.max(1, runs.length - 1);
    runs.forEach((run, i) => {
      const v = values[i];
      if (v === null || v === undefined) return;
      const y = height - bottom - (v / max) * (height - top - bottom);
      const kind = run.status !== "ok" ? "failed" : run.flaky ? "flaky" : run.cache.startsWith("hit") ? "hit" : "";
      const dot = el("svg:circle", { cx: left + i * step, cy: y, r: 3, class: "point " + kind });
      dot.append(el("svg:title", {}, `run #${run.invocation}: ${format(v)} (${run.status}, ${run.cache})`));
      svg.append(dot);
    });
    return svg;
  }

  // The output of a failed (or flaky) task's failed attempts in run `run`,
  // each under a line saying which attempt and why; history keeps them.
  async function taskLogs(run, id, pane) {
    const box = el("div", { id: "task-log" }, el("p", { class: "muted" }, "Loading its log…"));
    pane.append(box);
    try {
      const kept = await api(`/api/runs/${encodeURIComponent(run)}/tasks/${encodeURIComponent(id)}/logs`);
      box.replaceChildren(el("h2", {}, "Log of its failed attempts"), ...kept.logs.flatMap((log) => [
        el("p", { class: "muted" }, `attempt ${log.attempt} of ${log.attempts}: ${log.reason}` +
          (log.flaky ? ", then passed (flaky)" : "") +
          (log.truncated ? ` — it wrote ${bytes(log.bytes)}; its first and last MiB are kept` : "")),
        el("pre", { class: "log mono", "data-attempt": log.attempt }, log.text)]),
        el("p", { class: "muted" }, `In a terminal: vx last --failed --run ${run} --task ${id}`));
    } catch (e) {
      box.replaceChildren(el("p", { class: "muted" }, "No log: " + e.message));
    }
  }

  async function taskHistory(id, pane) {
    const box = el("div", { id: "task-history" }, el("p", { class: "muted" }, "Loading its history…"));
    pane.append(box);
    try {
      const h = await api("/api/tasks/" + encodeURIComponent(id) + "/history");
      const rate = h.hit_rate === null ? "-" : Math.round(h.hit_rate * 100) + "%";
      box.replaceChildren(
        el("h2", {}, `History: the last ${h.runs} runs`),
        el("p", { class: "counts" }, el("span", {}, "hit rate " + rate), el("span", {}, "p50 " + duration(h.p50_ms)),
          el("span", { class: h.flaky ? "warn" : "" }, `${h.flaky} flaky`)),
        chart("duration", h.history, (r) => r.duration_ms, duration),
        chart("cpu", h.history, (r) => r.cpu_ms, duration),
        chart("peak memory", h.history, (r) => r.peak_rss_bytes, bytes),
        chart("attempts", h.history, (r) => r.attempts, String));
    } catch (e) {
      box.replaceChildren(el("p", { class: "muted" }, "No history: " + e.message));
    }
  }

  async function showRun(id, task) {
    const doc = await api("/api/runs/" + encodeURIComponent(id));
    const root = el("div", { id: "run" });
    const onPick = async (picked, pane) => {
      const target = `#/run/${id}/task/${encodeURIComponent(picked)}`;
      if (location.hash !== target) history.replaceState(null, "", target);
      const t = doc.tasks.find((x) => x.id === picked);
      if (t && (t.status === "failed" || t.status === "timed-out" || t.flaky)) await taskLogs(id, picked, pane);
      taskHistory(picked, pane);
    };
    const { pick } = vx.renderRun(doc, root, { graph: true, onPick });
    app.replaceChildren(el("p", {}, el("a", { href: "#/" }, "← runs")), root);
    if (task) pick(task);
  }

  async function showLive(pid) {
    const live = await api("/api/live");
    const doc = live.runs.find((r) => String(r.live.pid) === String(pid));
    if (!doc) {
      app.replaceChildren(el("p", {}, el("a", { href: "#/" }, "← runs")),
        el("p", { class: "muted" }, "This run is over: find it in the runs list."));
      return;
    }
    const root = el("div", { id: "run" });
    vx.renderRun(doc, root, { graph: true });
    app.replaceChildren(el("p", {}, el("a", { href: "#/" }, "← runs")), root);
  }

  function filterForm() {
    const input = (name, placeholder) => {
      const box = el("input", { name, placeholder, value: filters[name] });
      box.addEventListener("change", () => { filters[name] = box.value.trim(); route(); });
      return box;
    };
    const outcome = el("select", { name: "outcome" },
      ...[["", "any outcome"], ["ok", "ok"], ["failed", "failed"]].map(([v, label]) => {
        const o = el("option", { value: v }, label);
        if (filters.outcome === v) o.selected = true;
        return o;
      }));
    outcome.addEventListener("change", () => { filters.outcome = outcome.value; route(); });
    return el("div", { class: "filters" }, input("command", "command contains"), input("tag", "tag KEY=VALUE"),
      input("branch", "branch"), outcome);
  }

  function runRows(runs, body) {
    for (const r of runs) {
      const tags = r.tags.map((t) => `${t.key}=${t.value}`).join(" ");
      body.append(el("tr", { class: "run", "data-run": r.id, onclick: () => { location.hash = "#/run/" + r.id; } },
        el("td", { class: "num" }, "#" + r.id),
        el("td", { class: "mono" }, r.command),
        el("td", { class: "muted" }, when(r.started_unix_ms)),
        el("td", { class: "num" }, duration(r.wall_ms)),
        el("td", { class: r.exit_code === 0 ? "good" : "bad" }, String(r.exit_code),
          r.logs ? el("span", { class: "muted", title: "the output of its failed attempts is kept: open the run" }, " · log") : ""),
        el("td", { class: "num" }, String(r.tasks)),
        el("td", { class: "num" }, r.tasks ? Math.round((r.cached * 100) / r.tasks) + "%" : "-"),
        el("td", { class: "num" }, duration(r.cpu_ms)),
        el("td", { class: "mono" }, r.branch || ""),
        el("td", { class: "mono muted" }, tags)));
    }
  }

  function liveList(live) {
    if (!live.runs.length) return el("div", { id: "live" });
    return el("div", { id: "live" }, el("h2", {}, "In progress"),
      el("ul", {}, ...live.runs.map((doc) => el("li", {},
        el("a", { href: "#/live/" + doc.live.pid, class: "live" }, doc.invocation.command),
        ` ${doc.live.running} running, ${doc.live.pending} waiting, ${doc.totals.succeeded + doc.totals.failed + doc.totals.skipped} done`))));
  }

  function cards(stats) {
    const saved = stats.saved_by_day.reduce((sum, d) => sum + d.saved_ms, 0);
    return el("div", { class: "cards", id: "cards" },
      el("div", { class: "card" }, el("b", {}, bytes(stats.cache.bytes)), `cache, ${stats.cache.entries} entries`),
      el("div", { class: "card" }, el("b", {}, duration(saved)), `saved by hits (last ${stats.window_runs} runs)`),
      el("div", { class: "card" }, el("b", {}, stats.slowest.length ? stats.slowest[0].task : "-"), "slowest task (p50)"));
  }

  async function showRuns() {
    const [list, live, stats] = await Promise.all([api("/api/runs?" + query()), api("/api/live"), api("/api/stats")]);
    const body = el("tbody");
    runRows(list.runs, body);
    const head = el("tr", {}, ...["Run", "Command", "Started", "Wall", "Exit", "Tasks", "Cached", "CPU", "Branch", "Tags"].map((h) => el("th", {}, h)));
    const more = el("button", { id: "more" }, "Older runs");
    let before = list.next_before;
    more.hidden = before === null;
    more.addEventListener("click", async () => {
      const next = await api("/api/runs?" + query() + "&before=" + before);
      runRows(next.runs, body);
      before = next.next_before;
      more.hidden = before === null;
    });
    app.replaceChildren(cards(stats), liveList(live), el("h1", {}, "Runs"), filterForm(),
      list.runs.length ? el("table", { id: "runs" }, el("thead", {}, head), body) : el("p", { class: "muted", id: "runs" }, "No runs recorded yet: `vx run` something."),
      el("p", {}, more));
  }

  function ranking(title, rows, label, value) {
    return el("div", {}, el("h2", {}, title),
      rows.length ? el("table", {}, el("tbody", {}, ...rows.map((r) => el("tr", {},
        el("td", { class: "mono" }, label(r)), el("td", { class: "num" }, value(r)))))) : el("p", { class: "muted" }, "Nothing yet."));
  }

  async function showStats() {
    const s = await api("/api/stats");
    const days = s.saved_by_day.map((d) => ({ invocation: when(d.day_unix_ms).slice(0, 10), status: "ok", cache: "hit-local", saved: d.saved_ms }));
    app.replaceChildren(el("h1", {}, "Stats"), cards(s),
      el("h2", {}, "Time saved by cache hits, per day"), chart("saved", days, (d) => d.saved, duration),
      ranking("Slowest tasks (p50 of their runs)", s.slowest, (r) => r.task, (r) => duration(r.p50_ms)),
      ranking("Most often missed", s.most_missed, (r) => r.task, (r) => `${r.misses} of ${r.lookups} lookups`));
  }

  async function route() {
    const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
    view = parts.join("/");
    try {
      if (parts[0] === "run" && parts[1]) await showRun(parts[1], parts[2] === "task" ? parts[3] : null);
      else if (parts[0] === "live" && parts[1]) await showLive(parts[1]);
      else if (parts[0] === "stats") await showStats();
      else await showRuns();
    } catch (e) {
      app.replaceChildren(failure(e));
    }
  }

  // Every second: what is running, and the newest run; redraw the list or
  // the live run when they changed.
  async function poll() {
    try {
      const [live, newest] = await Promise.all([api("/api/live"), api("/api/runs?limit=1")]);
      badge.replaceChildren(live.runs.length ? el("a", { class: "live", href: "#/" }, `● ${live.runs.length} running`) : "");
      const seen = JSON.stringify([newest.runs.map((r) => r.id), live.runs.map((r) => [r.live.pid, r.invocation.wall_ms])]);
      if (seen !== lastSeen) {
        const changed = lastSeen !== "";
        lastSeen = seen;
        if (changed && (view === "" || view.startsWith("live/"))) await route();
      }
    } catch (e) {
      badge.replaceChildren(el("span", { class: "bad" }, " dashboard unreachable"));
    }
  }

  window.addEventListener("hashchange", route);
  route();
  setInterval(poll, 1000);
  global.vx.dashboard = { route, poll };
})(window);
