//! What differs between two locks, one readable line per change, named by
//! project, task and field.

use std::collections::BTreeSet;

use super::{Lock, LockedProject, LockedTask};

fn show<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Every difference from `old` (the file) to `new` (the configuration).
pub(crate) fn diff_locks(old: &Lock, new: &Lock) -> Vec<String> {
    let mut out = Vec::new();
    let names: BTreeSet<&String> = old.projects.keys().chain(new.projects.keys()).collect();
    for name in names {
        match (old.projects.get(name), new.projects.get(name)) {
            (Some(_), None) => out.push(format!("project `{name}` removed")),
            (None, Some(_)) => out.push(format!("project `{name}` added")),
            (Some(a), Some(b)) => diff_project(name, a, b, &mut out),
            (None, None) => {}
        }
    }
    out
}

fn diff_project(name: &str, a: &LockedProject, b: &LockedProject, out: &mut Vec<String>) {
    if a.dir != b.dir {
        out.push(format!("project `{name}`: dir {} → {}", show(&a.dir), show(&b.dir)));
    }
    if a.depends_on != b.depends_on {
        out.push(format!("project `{name}`: depends-on {} → {}", show(&a.depends_on), show(&b.depends_on)));
    }
    let tasks: BTreeSet<&String> = a.tasks.keys().chain(b.tasks.keys()).collect();
    for task in tasks {
        let id = format!("{name}#{task}");
        match (a.tasks.get(task), b.tasks.get(task)) {
            (Some(_), None) => out.push(format!("task `{id}` removed")),
            (None, Some(_)) => out.push(format!("task `{id}` added")),
            (Some(x), Some(y)) => diff_task(&id, x, y, out),
            (None, None) => {}
        }
    }
}

fn diff_task(id: &str, a: &LockedTask, b: &LockedTask, out: &mut Vec<String>) {
    let fields: [(&str, String, String); 11] = [
        ("command", show(&a.command), show(&b.command)),
        ("depends-on", show(&a.depends_on), show(&b.depends_on)),
        ("inputs", show(&a.inputs), show(&b.inputs)),
        ("outputs", show(&a.outputs), show(&b.outputs)),
        ("env", show(&a.env), show(&b.env)),
        ("executor", show(&a.executor), show(&b.executor)),
        ("cache", show(&a.cache), show(&b.cache)),
        ("persistent", show(&a.persistent), show(&b.persistent)),
        ("pass-env", show(&a.pass_env), show(&b.pass_env)),
        ("runtime", show(&a.runtime), show(&b.runtime)),
        ("retries", show(&a.retries), show(&b.retries)),
    ];
    for (field, x, y) in fields {
        if x != y {
            out.push(format!("task `{id}`: {field} {x} → {y}"));
        }
    }
}
