//! `vx run --verify=KIND`, after a run that succeeded: the requested tasks
//! alone, run again uncached, and what that shows.
//!
//! - `determinism`: twice, each from a clean output state, their outputs
//!   compared (`run::Snapshot`);
//! - `inputs`: once, traced (the sandbox's tracer, without its
//!   confinement), and what each touched outside its declarations given
//!   as the lines to add (`sandbox::patch`).

use std::sync::Arc;

use super::choice::{Format, Verify};
use super::exec_args::runtime;
use crate::cache::state_dir;
use crate::config::Workspace;
use crate::error::{Error, Result};
use crate::graph::TaskGraph;
use crate::run::{RunOptions, execute};
use crate::sandbox::{Observed, patch};
use crate::session::{FrontKind, RunSession, SessionOptions};

/// Runs the check of `kind`; its exit code.
pub(crate) fn after_run(
    kind: Verify,
    ws: &Workspace,
    graph: &TaskGraph,
    opts: &RunOptions,
    format: Option<Format>,
) -> Result<u8> {
    match kind {
        Verify::Determinism => verify_determinism(ws, graph, opts),
        Verify::Inputs => verify_inputs(ws, graph, opts, format.unwrap_or(Format::Text)),
    }
}

/// The requested tasks alone, uncached, with `opts`; the run's exit code.
/// Its output goes to stderr when stdout is for a JSON report.
fn run_requested(ws: &Workspace, requested: &TaskGraph, opts: &RunOptions, label: &str, json: bool) -> Result<u8> {
    let said = format!("vx: {label} run of the {} requested task(s), uncached", requested.len());
    if json {
        eprintln!("{said}");
    } else {
        println!("{said}");
    }
    let front = FrontKind::Stream { details: false, to_stderr: json };
    let mut opts = opts.clone();
    let session = RunSession::start(ws, requested, &mut opts, SessionOptions::shown_only(&[], ws.root.clone(), front))?;
    let outcome = runtime()?.block_on(execute(ws, requested, &opts, None, session.bus()))?;
    Ok(session.finish(&outcome, false))
}

/// `--verify=inputs`: exit 1 when a task touched anything undeclared.
fn verify_inputs(ws: &Workspace, graph: &TaskGraph, opts: &RunOptions, format: Format) -> Result<u8> {
    let requested = graph.only_roots();
    let deps = graph
        .roots
        .iter()
        .map(|&r| (graph.nodes[r].id.to_string(), crate::run::dependency_outputs(ws, graph, r)))
        .collect();
    let observed = Arc::new(Observed { deps, ..Observed::default() });
    let mut traced = opts.clone();
    traced.observe = Some(observed.clone());
    let code = run_requested(ws, &requested, &traced, "inputs: a traced", format == Format::Json)?;
    if code != 0 {
        eprintln!("vx: inputs: the traced run failed; nothing reported");
        return Ok(code);
    }
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let root = std::fs::canonicalize(&ws.root).unwrap_or_else(|_| ws.root.clone());
    let seen = std::mem::take(&mut *observed.seen.lock().expect("observed lock poisoned"));
    let mut patches = Vec::new();
    for (id, violations) in seen {
        let Some(node) = requested.nodes.iter().find(|n| n.id.to_string() == id) else { continue };
        let project = &ws.projects[node.project];
        let dir = std::fs::canonicalize(&project.dir).unwrap_or_else(|_| project.dir.clone());
        let file = match project.dir.strip_prefix(&ws.root) {
            Ok(rel) if !rel.as_os_str().is_empty() => format!("{}/vx.toml", rel.display()),
            _ => "vx.toml".to_string(),
        };
        patches.push((id, node.id.task.clone(), file, patch(&violations, &dir, &root, home.as_deref())));
    }
    patches.sort_by(|a, b| a.0.cmp(&b.0));
    let found = patches.iter().filter(|p| !p.3.is_empty()).count();
    match format {
        Format::Json => println!("{}", inputs_json(&patches)),
        Format::Text => print_inputs(requested.len(), found, &patches),
    }
    Ok(u8::from(found > 0))
}

type TaskPatch = (String, String, String, crate::sandbox::Patch);

fn print_inputs(tasks: usize, found: usize, patches: &[TaskPatch]) {
    if found == 0 {
        println!("vx: inputs: the declarations of {tasks} task(s) cover everything they read and wrote");
        return;
    }
    println!("vx: inputs: {found} of {tasks} task(s) touched files their declarations do not cover:");
    let list = |v: &[String]| v.iter().map(|p| format!("{p:?}")).collect::<Vec<_>>().join(", ");
    for (id, task, file, p) in patches.iter().filter(|p| !p.3.is_empty()) {
        println!("  {id} ([tasks.{task}] in {file}):");
        if !p.inputs.is_empty() {
            println!("    read, not in its inputs; add to `inputs`: {}", list(&p.inputs));
        }
        if !p.outputs.is_empty() {
            println!("    wrote, not in its outputs; add to `outputs`: {}", list(&p.outputs));
        }
        if !p.outside_reads.is_empty() {
            println!(
                "    read outside the workspace (in no key; `sandbox.allow-read` when sandboxed): {}",
                list(&p.outside_reads)
            );
        }
        if !p.outside_writes.is_empty() {
            println!(
                "    wrote outside the workspace (`sandbox.allow-write` when sandboxed): {}",
                list(&p.outside_writes)
            );
        }
    }
}

fn inputs_json(patches: &[TaskPatch]) -> String {
    let tasks: Vec<serde_json::Value> = patches
        .iter()
        .map(|(id, task, file, p)| {
            serde_json::json!({
                "id": id,
                "task": task,
                "file": file,
                "inputs": p.inputs,
                "outputs": p.outputs,
                "outside_reads": p.outside_reads,
                "outside_writes": p.outside_writes,
            })
        })
        .collect();
    let complete = patches.iter().all(|p| p.3.is_empty());
    serde_json::to_string_pretty(&serde_json::json!({ "complete": complete, "tasks": tasks }))
        .expect("JSON values serialize")
}

/// `--verify=determinism`, after a run that succeeded: the requested tasks
/// alone, twice, uncached (each from a clean output state), their outputs
/// compared. Exit 1 when any differ, or when a run fails.
fn verify_determinism(ws: &Workspace, graph: &TaskGraph, opts: &RunOptions) -> Result<u8> {
    let requested = graph.only_roots();
    let scratch = state_dir(ws).join("verify");
    let run = |label: &str| run_requested(ws, &requested, opts, &format!("determinism: {label}"), false);
    let failed = |label: &str, code: u8| {
        eprintln!("vx: determinism: the {label} run failed; nothing compared");
        Ok(code)
    };
    let code = run("first")?;
    if code != 0 {
        return failed("first", code);
    }
    let snapshot = crate::run::Snapshot::take(ws, &requested, &scratch)
        .map_err(|e| Error::io(format_args!("copy the outputs to {}", scratch.display()), e))?;
    let code = run("second")?;
    if code != 0 {
        return failed("second", code);
    }
    let report = snapshot
        .compare(ws, &requested)
        .map_err(|e| Error::io(format_args!("compare the outputs in {}", scratch.display()), e))?;
    Ok(print_determinism(requested.len(), &report))
}

/// The verdict of `--verify=determinism`; its exit code.
fn print_determinism(tasks: usize, report: &[(String, Vec<crate::run::Difference>)]) -> u8 {
    if report.is_empty() {
        println!("vx: determinism: {tasks} task(s) wrote the same outputs twice");
        return 0;
    }
    println!("vx: determinism: {} of {tasks} task(s) wrote different outputs on a second run:", report.len());
    for (id, diffs) in report {
        for d in diffs {
            println!("  {id}: {d}");
        }
    }
    1
}
