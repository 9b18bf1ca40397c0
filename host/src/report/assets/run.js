// One run, drawn from its summary document (docs/schema/run-summary.v1.json):
// the counts, a timeline with one lane per slot (hits light, the critical
// path outlined), the task table, and the detail of the task clicked.
// Shared by the HTML report (`vx run --report html`) and the dashboard,
// which also asks for the task graph and adds a task's history to its
// detail (`opts`). A run in progress (the dashboard's live view) has tasks
// with status `running` and `pending`.
"use strict";

(function (global) {
  const SVG = "http://www.w3.org/2000/svg";

  function el(tag, attrs, ...children) {
    const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined) continue;
      if (k === "onclick") node.addEventListener("click", v);
      else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c);
    return node;
  }

  function duration(ms) {
    if (ms === null || ms === undefined) return "-";
    if (ms < 1000) return ms + "ms";
    if (ms < 60000) return (ms / 1000).toFixed(2) + "s";
    return Math.floor(ms / 60000) + "m" + String(Math.floor((ms % 60000) / 1000)).padStart(2, "0") + "s";
  }

  function bytes(n) {
    if (n === null || n === undefined) return "-";
    if (n < 1024) return n + " B";
    const units = ["KiB", "MiB", "GiB", "TiB"];
    let v = n / 1024, u = 0;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    return v.toFixed(1) + " " + units[u];
  }

  // The tasks that began, each on the lowest lane free at its start.
  function lanes(tasks) {
    const began = tasks.filter((t) => t.start_ms !== null).sort((a, b) => a.start_ms - b.start_ms || (a.id < b.id ? -1 : 1));
    const free = [];
    const placed = [];
    for (const t of began) {
      let lane = free.findIndex((end) => end <= t.start_ms);
      if (lane < 0) { lane = free.length; free.push(0); }
      free[lane] = t.start_ms + t.duration_ms;
      placed.push({ task: t, lane });
    }
    return { placed, count: free.length };
  }

  // The chain that decided the wall time: from the task that ended last,
  // back through the dependency of each that ended last.
  function criticalPath(tasks) {
    const byId = new Map(tasks.map((t) => [t.id, t]));
    const end = (t) => (t.start_ms === null ? -1 : t.start_ms + t.duration_ms);
    let last = null;
    for (const t of tasks) if (t.start_ms !== null && (!last || end(t) > end(last))) last = t;
    const path = new Set();
    while (last) {
      path.add(last.id);
      let next = null;
      for (const d of last.dependencies) {
        const dep = byId.get(d);
        if (dep && dep.start_ms !== null && (!next || end(dep) > end(next))) next = dep;
      }
      last = next;
    }
    return path;
  }

  function timeline(doc, onPick) {
    const { placed, count } = lanes(doc.tasks);
    const critical = criticalPath(doc.tasks);
    const span = Math.max(1, ...placed.map((p) => p.task.start_ms + p.task.duration_ms));
    const left = 70, width = 1080, laneHeight = 22, top = 18;
    const scale = (ms) => left + (ms / span) * (width - left - 10);
    const svg = el("svg:svg", { width, height: top + count * laneHeight + 6, role: "img", "aria-label": "timeline" });
    for (let i = 0; i <= 4; i++) {
      const x = scale((span * i) / 4);
      svg.append(el("svg:line", { x1: x, x2: x, y1: 12, y2: top + count * laneHeight, class: "axis" }));
      // The last label ends at its line, inside the drawing.
      const last = i === 4;
      svg.append(el("svg:text", { x: last ? x - 2 : x + 2, y: 10, "text-anchor": last ? "end" : null }, duration(Math.round((span * i) / 4))));
    }
    for (let lane = 0; lane < count; lane++) {
      svg.append(el("svg:text", { x: 4, y: top + lane * laneHeight + 15, class: "lane-label" }, "slot " + (lane + 1)));
    }
    for (const { task, lane } of placed) {
      const x = scale(task.start_ms);
      const w = Math.max(2, scale(task.start_ms + task.duration_ms) - x);
      const classes = ["bar", task.status, task.cache, critical.has(task.id) ? "critical" : ""].join(" ");
      const bar = el("svg:rect", {
        x, y: top + lane * laneHeight + 2, width: w, height: laneHeight - 5, rx: 2, class: classes,
        "data-task": task.id, onclick: () => onPick(task.id),
      });
      bar.append(el("svg:title", {}, `${task.id}: ${task.status}, ${task.cache}, ${duration(task.duration_ms)}`));
      svg.append(bar);
      if (w > 60) svg.append(el("svg:text", { x: x + 4, y: top + lane * laneHeight + 15 }, task.id));
    }
    const legend = el("div", { class: "legend muted" },
      el("span", {}, el("i", { style: "background:var(--miss)" }), "ran"),
      el("span", {}, el("i", { style: "background:var(--hit)" }), "cache hit"),
      el("span", {}, el("i", { style: "background:var(--fail)" }), "failed"),
      el("span", {}, el("i", { style: "border:2px solid var(--crit)" }), "critical path"));
    return el("div", {}, el("div", { class: "timeline" }, svg), legend);
  }

  function statusClass(status) {
    if (status === "ok") return "good";
    if (status === "running") return "live";
    if (status === "skipped" || status === "pending") return "warn";
    return "bad";
  }

  // The task graph in layers: each task one column right of its deepest
  // dependency, edges from a dependency to its dependents.
  function graph(doc, onPick) {
    const byId = new Map(doc.tasks.map((t) => [t.id, t]));
    const depth = new Map();
    const depthOf = (id, seen) => {
      if (depth.has(id)) return depth.get(id);
      if (seen.has(id)) return 0;
      seen.add(id);
      const deps = (byId.get(id).dependencies || []).filter((d) => byId.has(d));
      const d = deps.length ? 1 + Math.max(...deps.map((x) => depthOf(x, seen))) : 0;
      depth.set(id, d);
      return d;
    };
    const layers = [];
    for (const t of doc.tasks) {
      const d = depthOf(t.id, new Set());
      (layers[d] = layers[d] || []).push(t);
    }
    const colWidth = 190, rowHeight = 30, nodeWidth = 160, nodeHeight = 20;
    const rows = Math.max(1, ...layers.map((l) => (l ? l.length : 0)));
    const svg = el("svg:svg", { width: Math.max(1, layers.length) * colWidth + 10, height: rows * rowHeight + 10, role: "img", "aria-label": "task graph" });
    const at = new Map();
    layers.forEach((layer, col) => (layer || []).sort((a, b) => (a.id < b.id ? -1 : 1)).forEach((t, row) => {
      at.set(t.id, { x: 6 + col * colWidth, y: 6 + row * rowHeight });
    }));
    for (const t of doc.tasks) {
      const to = at.get(t.id);
      for (const d of t.dependencies || []) {
        const from = at.get(d);
        if (!from) continue;
        const x1 = from.x + nodeWidth, y1 = from.y + nodeHeight / 2, x2 = to.x, y2 = to.y + nodeHeight / 2;
        const mid = (x1 + x2) / 2;
        svg.append(el("svg:path", { d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`, class: "edge" }));
      }
    }
    for (const t of doc.tasks) {
      const { x, y } = at.get(t.id);
      const node = el("svg:g", { class: "node", "data-task": t.id, onclick: () => onPick(t.id) });
      node.append(el("svg:rect", { x, y, width: nodeWidth, height: nodeHeight, rx: 4, class: ["bar", t.status, t.cache].join(" ") }));
      node.append(el("svg:text", { x: x + 6, y: y + 14 }, t.id.length > 22 ? t.id.slice(0, 21) + "…" : t.id));
      node.append(el("svg:title", {}, `${t.id}: ${t.status}, ${t.cache}`));
      svg.append(node);
    }
    return el("div", { class: "timeline graph" }, svg);
  }

  function table(doc, onPick) {
    const body = el("tbody");
    const rows = [...doc.tasks].sort((a, b) => (a.start_ms ?? Infinity) - (b.start_ms ?? Infinity) || (a.id < b.id ? -1 : 1));
    for (const t of rows) {
      body.append(el("tr", { class: "task", "data-task": t.id, onclick: () => onPick(t.id), title: t.description },
        el("td", { class: "mono" }, t.id, t.description ? el("span", { class: "muted description" }, " " + t.description) : ""),
        el("td", { class: statusClass(t.status) }, t.flaky ? "ok (flaky)" : t.status),
        el("td", {}, t.cache),
        el("td", { class: "num" }, duration(t.duration_ms)),
        el("td", { class: "num" }, duration(t.cpu_ms)),
        el("td", { class: "num" }, bytes(t.peak_rss_bytes)),
        el("td", { class: "num" }, String(t.attempts))));
    }
    const head = el("tr", {}, ...["Task", "Status", "Cache", "Duration", "CPU", "Peak memory", "Attempts"].map(
      (h, i) => el("th", { class: i >= 3 ? "num" : null }, h)));
    return el("table", { id: "tasks" }, el("thead", {}, head), body);
  }

  function detail(doc, id) {
    const t = doc.tasks.find((x) => x.id === id);
    if (!t) return el("p", { class: "muted" }, "Click a task to see it.");
    const row = (k, v) => [el("dt", {}, k), el("dd", { class: "mono" }, v === null || v === undefined ? "-" : String(v))];
    return el("div", {}, el("h2", {}, t.id),
      t.description ? el("p", { class: "muted description" }, t.description) : "",
      el("dl", {}, ...row("status", t.status + (t.reason ? ` (${t.reason})` : "")), ...row("cache", t.cache),
        ...row("executor", t.executor), ...row("key", t.key), ...row("started at", duration(t.start_ms)),
        ...row("duration", duration(t.duration_ms)), ...row("cpu", duration(t.cpu_ms)),
        ...row("peak memory", bytes(t.peak_rss_bytes)), ...row("attempts", t.attempts),
        ...row("exit code", t.exit_code), ...row("depends on", t.dependencies.join(", ") || "nothing")));
  }

  // Draws `doc` into `root`, replacing what was there; returns `pick`,
  // which opens a task's detail as a click does. `opts.graph` adds the
  // task graph, `opts.onPick(id, pane)` is called after a task opens.
  function renderRun(doc, root, opts) {
    opts = opts || {};
    const inv = doc.invocation, totals = doc.totals;
    const pane = el("div", { id: "detail" });
    const pick = (id) => {
      pane.replaceChildren(detail(doc, id));
      for (const node of root.querySelectorAll("[data-task]")) node.classList.toggle("selected", node.dataset.task === id);
      if (opts.onPick) opts.onPick(id, pane);
    };
    pane.append(detail(doc, null));
    root.replaceChildren(
      el("h1", { class: "mono" }, inv.command),
      el("p", { class: "counts" },
        inv.exit_code === null ? el("span", { class: "live" }, "running") :
          el("span", { class: inv.exit_code === 0 ? "good" : "bad" }, "exit " + inv.exit_code),
        el("span", {}, `${totals.tasks} tasks`), el("span", {}, `${totals.succeeded} succeeded`),
        el("span", { class: totals.failed ? "bad" : "" }, `${totals.failed} failed`),
        el("span", {}, `${totals.skipped} skipped`), el("span", {}, `${totals.cached} cached`),
        el("span", { class: totals.flaky ? "warn" : "" }, `${totals.flaky} flaky`),
        el("span", {}, "wall " + duration(inv.wall_ms)), el("span", {}, "cpu " + duration(totals.cpu_ms)),
        el("span", { class: "muted" }, new Date(inv.started_unix_ms).toISOString()),
        el("span", { class: "muted mono" }, inv.branch || ""),
        el("span", { class: "muted mono" }, inv.git_commit ? inv.git_commit.slice(0, 10) : "")),
      el("h2", {}, "Timeline"), timeline(doc, pick), pane,
      ...(opts.graph ? [el("h2", {}, "Task graph"), graph(doc, pick)] : []),
      el("h2", {}, "Tasks"), table(doc, pick));
    return { pick };
  }

  global.vx = Object.assign(global.vx || {}, { renderRun, duration, bytes, el, criticalPath, lanes, graph });
})(window);
