// A vx reporter written in JavaScript: renders a run as TAP version 14.
//
// Built with jco componentize (StarlingMonkey) against the `reporter` world
// of `wit/v0.1` (see README.md). vx calls `report.info` once at `vx plugin
// add` and `report.render` after every `vx run --report NAME`; each call
// gets a fresh instance, so nothing here keeps state between calls.
//
// One test point per task, in run order: `ok` for a task that ended `ok`,
// `not ok` otherwise, with `# SKIP` for skipped and cancelled tasks. A task
// replayed from a cache says so in its description. Under each point a
// YAML block carries status, cache tier, duration, exit code, message and
// log tail. The `[plugins.NAME].config` table takes one key, `diagnostics`
// (bool, default true): false leaves the YAML blocks out.

import { config, log } from "vx:plugin/host@0.1.0";

const VERSION = "0.1.0";

const CONFIG_SCHEMA = JSON.stringify({
  type: "object",
  additionalProperties: false,
  properties: { diagnostics: { type: "boolean" } },
});

// A WIT `variant` is `{ tag, val }`; throwing it from a function whose WIT
// result is `result<_, error>` returns it as the `err` case.
function invalidConfig(message) {
  return { tag: "invalid-config", val: message };
}

function readConfig() {
  const table = JSON.parse(config());
  for (const key of Object.keys(table)) {
    if (key !== "diagnostics") {
      throw invalidConfig(`unknown key \`${key}\`; the only key is \`diagnostics\``);
    }
  }
  const diagnostics = table.diagnostics ?? true;
  if (typeof diagnostics !== "boolean") {
    throw invalidConfig("`diagnostics` must be true or false");
  }
  return { diagnostics };
}

// A YAML double-quoted scalar: JSON's string syntax is a subset of it.
function yamlString(text) {
  return JSON.stringify(text);
}

function yamlBlock(task) {
  const lines = [
    "  ---",
    `  status: ${task.status}`,
    `  cache: ${task.cache}`,
    // u64 fields arrive as BigInt.
    `  duration_ms: ${task.durationMs.toString()}`,
  ];
  if (task.exitCode !== undefined) lines.push(`  exit_code: ${task.exitCode}`);
  if (task.message !== undefined) lines.push(`  message: ${yamlString(task.message)}`);
  if (task.logTail !== undefined) {
    lines.push("  log_tail: |-");
    for (const line of task.logTail.split("\n")) lines.push(`    ${line}`);
  }
  lines.push("  ...");
  return lines;
}

function testPoint(task, number) {
  const ok = task.status === "ok" || task.status === "skipped" || task.status === "cancelled";
  let line = `${ok ? "ok" : "not ok"} ${number} - ${task.project}#${task.task}`;
  if (task.cache !== "none") line += ` (cached: ${task.cache})`;
  if (task.status === "skipped" || task.status === "cancelled") {
    line += ` # SKIP ${task.message ?? task.status}`;
  }
  return line;
}

function renderTap(run, { diagnostics }) {
  const out = ["TAP version 14", `# vx ${run.vxVersion}: ${run.argv.join(" ")}`, `1..${run.tasks.length}`];
  run.tasks.forEach((task, i) => {
    out.push(testPoint(task, i + 1));
    if (diagnostics) out.push(...yamlBlock(task));
  });
  const failed = run.tasks.filter((t) => t.status === "failed" || t.status === "timed-out").length;
  out.push(`# tasks ${run.tasks.length}, failed ${failed}`);
  return out.join("\n") + "\n";
}

export const report = {
  info() {
    return {
      name: "js-tap",
      version: VERSION,
      minVxVersion: undefined,
      configSchema: CONFIG_SCHEMA,
      requests: [],
    };
  },

  render(run) {
    const options = readConfig();
    const text = renderTap(run, options);
    log("info", "rendered the run as TAP", [
      ["tasks", String(run.tasks.length)],
      ["diagnostics", String(options.diagnostics)],
    ]);
    return new TextEncoder().encode(text);
  },
};
