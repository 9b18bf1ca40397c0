//! Nx inputs and outputs: `{projectRoot}` and `{workspaceRoot}` tokens,
//! named inputs (expanded, the project's over `nx.json`'s), `{ env }`
//! entries, and `{options.x}` in outputs. What has no vx form is noted.

use serde_json::{Map, Value};

use super::model::Plan;
use super::source::{describe, project_relative};

/// Nested named inputs deeper than this are a cycle.
const MAX_DEPTH: usize = 16;

/// Expands one target's `inputs` for the project at `dir`.
pub(crate) struct Resolver<'a> {
    pub dir: &'a str,
    pub named: &'a Map<String, Value>,
    pub file: &'a str,
    pub setting: &'a str,
    pub plan: &'a mut Plan,
}

impl Resolver<'_> {
    /// The project-relative input globs and the env names.
    pub(crate) fn inputs(&mut self, value: &Value) -> (Vec<String>, Vec<String>) {
        let mut globs = Vec::new();
        let mut env = Vec::new();
        self.walk(value, 0, &mut globs, &mut env);
        let mut seen = std::collections::BTreeSet::new();
        globs.retain(|g| seen.insert(g.clone()));
        (globs, env)
    }

    fn walk(&mut self, value: &Value, depth: usize, globs: &mut Vec<String>, env: &mut Vec<String>) {
        if depth > MAX_DEPTH {
            self.note("named inputs nest too deep (a cycle?); stopped expanding".to_string());
            return;
        }
        for item in value.as_array().into_iter().flatten() {
            match item {
                Value::String(s) => self.string(s, depth, globs, env),
                Value::Object(o) => {
                    if let Some(fileset) = o.get("fileset").and_then(Value::as_str) {
                        self.string(fileset, depth, globs, env);
                    } else if let Some(name) = o.get("env").and_then(Value::as_str) {
                        env.push(name.to_string());
                    } else {
                        self.note(format!("{}: no vx equivalent", describe(item)));
                    }
                }
                _ => self.note(format!("unreadable entry {}", describe(item))),
            }
        }
    }

    fn string(&mut self, s: &str, depth: usize, globs: &mut Vec<String>, env: &mut Vec<String>) {
        let (neg, body) = match s.strip_prefix('!') {
            Some(rest) => ("!", rest),
            None => ("", s),
        };
        if let Some(rest) = body.strip_prefix("{projectRoot}") {
            let rest = rest.trim_start_matches('/');
            globs.push(format!("{neg}{}", if rest.is_empty() { "**" } else { rest }));
        } else if let Some(rest) = body.strip_prefix("{workspaceRoot}") {
            self.workspace_path(neg, rest.trim_start_matches('/'), globs);
        } else if let Some(name) = body.strip_prefix('^') {
            self.note(format!(
                "`^{name}` (the inputs of dependencies): vx keys a task on the keys of the tasks it depends on instead"
            ));
        } else if let Some(named) = self.named.get(body).cloned() {
            self.walk(&named, depth + 1, globs, env);
        } else if body == "default" {
            globs.push("**".to_string());
        } else if body.contains(['/', '*', '.']) {
            self.workspace_path(neg, body, globs);
        } else {
            self.note(format!("named input `{body}` is not defined in nx.json or project.json"));
        }
    }

    fn workspace_path(&mut self, neg: &str, path: &str, globs: &mut Vec<String>) {
        match project_relative(self.dir, path) {
            Some(rel) if rel == "." => globs.push(format!("{neg}**")),
            Some(rel) => globs.push(format!("{neg}{rel}")),
            None => self.note(format!(
                "`{path}` is outside the project; add it to global-inputs by hand if every task should see it"
            )),
        }
    }

    fn note(&mut self, why: String) {
        self.plan.note(self.file, self.setting, why);
    }
}

/// Expands `outputs` for the project at `dir`; `{options.x}` reads the
/// target's options.
pub(crate) fn resolve_outputs(
    value: &Value,
    dir: &str,
    options: &Map<String, Value>,
    file: &str,
    setting: &str,
    plan: &mut Plan,
) -> Vec<String> {
    let mut out = Vec::new();
    for item in value.as_array().into_iter().flatten() {
        let Some(s) = item.as_str() else {
            plan.note(file, setting, format!("unreadable entry {}", describe(item)));
            continue;
        };
        let mut s = s.to_string();
        while let Some(start) = s.find("{options.") {
            let Some(len) = s[start..].find('}') else { break };
            let key = &s[start + "{options.".len()..start + len];
            match options.get(key).and_then(Value::as_str) {
                Some(v) => s = format!("{}{v}{}", &s[..start], &s[start + len + 1..]),
                None => break,
            }
        }
        let (neg, body) = match s.strip_prefix('!') {
            Some(rest) => ("!", rest.to_string()),
            None => ("", s.clone()),
        };
        let rel = if let Some(rest) = body.strip_prefix("{projectRoot}") {
            Some(rest.trim_start_matches('/').to_string())
        } else if let Some(rest) = body.strip_prefix("{workspaceRoot}") {
            project_relative(dir, rest.trim_start_matches('/'))
        } else if body.contains('{') {
            None
        } else {
            project_relative(dir, &body)
        };
        match rel {
            Some(rel) if !rel.is_empty() && rel != "." => out.push(format!("{neg}{rel}")),
            Some(_) => {
                plan.note(file, setting, format!("`{s}` is the whole project; vx outputs name what a task writes"))
            }
            None => plan.note(
                file,
                setting,
                format!("`{s}` is outside the project (or unresolved); vx outputs stay inside the project"),
            ),
        }
    }
    out
}
