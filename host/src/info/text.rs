//! `vx info` as text: one aligned line per fact, the plugins indented
//! under theirs, then the problems, each with its fix.

use std::fmt::Write;

use super::Info;
use crate::units::format_bytes;

/// The report as the terminal shows it.
pub(crate) fn render(info: &Info) -> String {
    let mut out = String::new();
    let mut line = |label: &str, text: String| {
        let _ = writeln!(out, "{label:<10}{text}");
    };
    let b = &info.build;
    let kernel = b.kernel.as_deref().map(|k| format!(", Linux {k}")).unwrap_or_default();
    line("vx", format!("{} ({} build, {}{kernel})", info.version, b.profile, b.target));
    match &info.workspace {
        Some(ws) => {
            line("workspace", format!("{} ({} projects, {} tasks)", ws.root.display(), ws.projects, ws.tasks));
            line("config", ws.config.clone());
            for refused in &ws.refused {
                line("refused", refused.clone());
            }
            line("env mode", ws.env_mode.to_string());
        }
        None => line("workspace", "none".to_string()),
    }
    if let Some(c) = &info.cache {
        let limits = format!("max-size {}, max-age {}", format_bytes(c.max_size), days(c.max_age_secs));
        let writable = if c.writable { "" } else { ", NOT WRITABLE" };
        line(
            "cache",
            format!("{}: {} entries, {} ({limits}){writable}", c.dir.display(), c.entries, format_bytes(c.bytes)),
        );
    }
    if let Some(h) = &info.history {
        let rate =
            if h.lookups > 0 { format!(", {}% of lookups hit", h.hits * 100 / h.lookups) } else { String::new() };
        line("history", format!("{}: {} runs{rate}", h.path.display(), h.runs));
    }
    line("remote", remote(info));
    if info.plugins.is_empty() {
        line("plugins", "none".to_string());
    }
    for p in &info.plugins {
        let hash = p.hash.as_deref().map(|h| format!(", blake3 {}", &h[..h.len().min(12)])).unwrap_or_default();
        let world = if p.world.is_empty() { "?" } else { &p.world };
        let grants = if p.grants.is_empty() { "none".to_string() } else { p.grants.join(", ") };
        line("plugin", format!("{} {world} {} ({}{hash}); grants {grants}", p.name, p.version, p.state));
    }
    let yes = |b: bool| if b { "yes" } else { "no" };
    let g = &info.guard;
    line("guard", format!("process groups yes, /proc {}, pidfd {}", yes(g.procfs), yes(g.pidfd)));
    line("escapees", g.containment.clone());
    let s = &info.sandbox;
    let landlock = if s.landlock_abi > 0 { format!("ABI {}", s.landlock_abi) } else { "no".to_string() };
    line(
        "sandbox",
        format!(
            "landlock {landlock}, user namespaces {}, seccomp user notification {}",
            yes(s.user_namespaces),
            yes(s.seccomp_user_notif)
        ),
    );
    let w = &info.watcher;
    let number = |n: Option<u64>| n.map_or("?".to_string(), |n| n.to_string());
    let dirs = w.directories.map(|d| format!(" (the workspace has {d} directories)")).unwrap_or_default();
    line(
        "watcher",
        format!(
            "{}; inotify max_user_watches {}{dirs}, max_user_instances {}",
            w.backend,
            number(w.max_user_watches),
            number(w.max_user_instances)
        ),
    );
    out.push('\n');
    match info.problems.len() {
        0 => out.push_str("no problems found\n"),
        n => {
            let _ = writeln!(out, "{n} problem{}:", if n == 1 { "" } else { "s" });
            for p in &info.problems {
                let _ = writeln!(out, "  {}: {}\n    fix: {}", p.area, p.problem, p.fix);
            }
        }
    }
    out
}

fn remote(info: &Info) -> String {
    let Some(r) = &info.remote else { return "none".to_string() };
    let at = r.endpoint.as_deref().map(|e| format!(" at {e}")).unwrap_or_default();
    let state = match (r.reachable, &r.error) {
        (None, _) => "not checked (--offline)".to_string(),
        (Some(true), _) if r.capabilities.is_empty() => "reachable".to_string(),
        (Some(true), _) => format!("reachable; {}", r.capabilities.join(", ")),
        (Some(false), Some(e)) => format!("UNREACHABLE: {e}"),
        (Some(false), None) => "UNREACHABLE".to_string(),
    };
    format!("{}{at}: {state}", r.backend)
}

/// `14d`, or hours or seconds when it is not whole days.
fn days(secs: u64) -> String {
    match secs {
        s if s >= 86_400 && s % 86_400 == 0 => format!("{}d", s / 86_400),
        s if s >= 3_600 && s % 3_600 == 0 => format!("{}h", s / 3_600),
        s => format!("{s}s"),
    }
}
