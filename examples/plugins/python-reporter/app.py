"""A vx reporter written in Python: renders a run as a JSON summary.

Built with componentize-py against the `reporter` world of `wit/v0.1`
(see README.md). vx calls `Report.info` once at `vx plugin add` and
`Report.render` after every `vx run --report NAME`; each call gets a fresh
instance, so nothing here keeps state between calls.

The document has the run's facts (vx version, argv, duration, tags),
totals by status and by cache tier, and one entry per task. The
`[plugins.NAME].config` table takes one key, `failures-only` (bool): when
true, the task list keeps only tasks that did not end `ok`; the totals
always count every task.
"""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports.report import Run, Status, TaskResult, Tier
from wit_world.imports import host
from wit_world.imports.vx_plugin_types import Error_InvalidConfig, PluginInfo

VERSION = "0.1.0"

CONFIG_SCHEMA = json.dumps(
    {
        "type": "object",
        "additionalProperties": False,
        "properties": {"failures-only": {"type": "boolean"}},
    }
)

# WIT enum cases are Python Enum members named in SCREAMING_CASE; the
# report spells them as WIT does.
STATUS_NAMES = {
    Status.OK: "ok",
    Status.FAILED: "failed",
    Status.SKIPPED: "skipped",
    Status.TIMED_OUT: "timed-out",
    Status.CANCELLED: "cancelled",
}
TIER_NAMES = {Tier.NONE: "none", Tier.LOCAL: "local", Tier.REMOTE: "remote"}


def read_config() -> bool:
    """Returns `failures-only`, raising the WIT `invalid-config` error for a bad table."""
    table = json.loads(host.config())
    unknown = sorted(set(table) - {"failures-only"})
    if unknown:
        raise Err(Error_InvalidConfig(f"unknown key `{unknown[0]}`; the only key is `failures-only`"))
    failures_only = table.get("failures-only", False)
    if not isinstance(failures_only, bool):
        raise Err(Error_InvalidConfig("`failures-only` must be true or false"))
    return failures_only


def task_entry(task: TaskResult) -> dict:
    return {
        "id": f"{task.project}#{task.task}",
        "project": task.project,
        "task": task.task,
        "status": STATUS_NAMES[task.status],
        "cache": TIER_NAMES[task.cache],
        "duration_ms": task.duration_ms,
        "exit_code": task.exit_code,
        "message": task.message,
        "log_tail": task.log_tail,
    }


def summary(run: Run, failures_only: bool) -> dict:
    by_status = {name: 0 for name in STATUS_NAMES.values()}
    by_cache = {name: 0 for name in TIER_NAMES.values()}
    for task in run.tasks:
        by_status[STATUS_NAMES[task.status]] += 1
        by_cache[TIER_NAMES[task.cache]] += 1
    shown = [t for t in run.tasks if not (failures_only and t.status == Status.OK)]
    return {
        "vx_version": run.vx_version,
        "argv": run.argv,
        "started_unix_ms": run.started_unix_ms,
        "duration_ms": run.duration_ms,
        "tags": dict(run.tags),
        "totals": {"tasks": len(run.tasks), "status": by_status, "cache": by_cache},
        "failures_only": failures_only,
        "tasks": [task_entry(t) for t in shown],
    }


class Report(exports.Report):
    """The exported `vx:plugin/report` interface; componentize-py finds it by name."""

    def info(self) -> PluginInfo:
        return PluginInfo(
            name="py-json",
            version=VERSION,
            min_vx_version=None,
            config_schema=CONFIG_SCHEMA,
            requests=[],
        )

    def render(self, run: Run) -> bytes:
        failures_only = read_config()
        doc = summary(run, failures_only)
        host.log(
            host.Level.INFO,
            "rendered the run as JSON",
            [("tasks", str(len(run.tasks))), ("listed", str(len(doc["tasks"])))],
        )
        return (json.dumps(doc, indent=2) + "\n").encode()
