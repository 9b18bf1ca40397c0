//! Turning a [`Plan`] into the text of each `vx.toml`.

use super::model::{Dep, Plan, ProjectSpec, TaskSpec};

/// One file `vx init` writes: its path relative to the root and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedFile {
    pub path: String,
    pub text: String,
}

/// The root `vx.toml`, then each project's that has something to say. A
/// project at the root (turbo's `//` tasks, or a single-package
/// repository) is written into the root file.
pub fn render(plan: &Plan) -> Vec<RenderedFile> {
    let header = format!("# Written by `vx init` from {}.\n", plan.source);
    let mut root = format!("{header}[workspace]\nprojects = {}\n", list(&plan.projects_globs));
    if !plan.global_inputs.is_empty() {
        root.push_str(&format!("global-inputs = {}\n", list(&plan.global_inputs)));
    }
    if let Some(mode) = &plan.env_mode {
        root.push_str(&format!("env-mode = {}\n", quote(mode)));
    }
    for (key, names) in [("global-env", &plan.global_env), ("global-pass-env", &plan.global_pass_env)] {
        if !names.is_empty() {
            root.push_str(&format!("{key} = {}\n", list(names)));
        }
    }
    for rule in &plan.boundaries {
        let from = match rule.from.as_slice() {
            [one] => quote(one),
            many => list(many),
        };
        root.push_str(&format!("\n[[workspace.boundaries]]\nfrom = {from}\nallow = {}\n", list(&rule.allow)));
    }
    for project in plan.projects.iter().filter(|p| is_root(&p.dir)) {
        if let Some(text) = project_text(project) {
            root.push_str(&format!("\n{text}"));
        }
    }
    let mut files = vec![RenderedFile { path: "vx.toml".to_string(), text: root }];
    for project in plan.projects.iter().filter(|p| !is_root(&p.dir)) {
        if let Some(text) = project_text(project) {
            files.push(RenderedFile { path: format!("{}/vx.toml", project.dir), text: format!("{header}{text}") });
        }
    }
    files
}

/// The files as `vx init` writes them: each first line is the `#:schema`
/// comment taplo (Even Better TOML in VS Code) reads, naming the schema of
/// this vx's version, so an editor completes and checks the keys it reads.
// Not in `render`: a turbo.json read as configuration is rendered too, and
// its diagnostics count lines of the rendered text.
pub(crate) fn with_schema_comment(files: Vec<RenderedFile>) -> Vec<RenderedFile> {
    let line = format!("#:schema {}\n", crate::config::schema_url());
    files.into_iter().map(|f| RenderedFile { text: format!("{line}{}", f.text), ..f }).collect()
}

fn is_root(dir: &str) -> bool {
    dir.is_empty() || dir == "."
}

fn project_text(p: &ProjectSpec) -> Option<String> {
    let mut out = String::new();
    if p.write_name || !p.depends_on.is_empty() || !p.tags.is_empty() || !p.has_package_json {
        out.push_str("[project]\n");
        out.push_str(&format!("name = {}\n", quote(&p.name)));
        if !p.depends_on.is_empty() {
            out.push_str(&format!("depends-on = {}\n", list(&p.depends_on)));
        }
        if !p.tags.is_empty() {
            out.push_str(&format!("tags = {}\n", list(&p.tags)));
        }
    }
    for (name, task) in &p.tasks {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("[tasks.{}]\n", key(name)));
        task_text(task, &mut out);
    }
    (!out.is_empty()).then_some(out)
}

fn task_text(t: &TaskSpec, out: &mut String) {
    if let Some(description) = &t.description {
        out.push_str(&format!("description = {}\n", quote(description)));
    }
    if let Some(command) = &t.command {
        out.push_str(&format!("command = {}\n", quote(command)));
    }
    let deps: Vec<String> = t
        .depends_on
        .iter()
        .map(|d| match d {
            Dep::Local(t) => t.clone(),
            Dep::Upstream(t) => format!("^{t}"),
            Dep::Exact(p, t) => format!("{p}#{t}"),
        })
        .collect();
    out.push_str(&format!("depends-on = {}\n", list(&deps)));
    if t.group {
        return;
    }
    if let Some(inputs) = &t.inputs {
        out.push_str(&format!("inputs = {}\n", list(inputs)));
    }
    if !t.outputs.is_empty() {
        out.push_str(&format!("outputs = {}\n", list(&t.outputs)));
    }
    if !t.env.is_empty() {
        out.push_str(&format!("env = {}\n", list(&t.env)));
    }
    if !t.pass_env.is_empty() {
        out.push_str(&format!("pass-env = {}\n", list(&t.pass_env)));
    }
    if t.interactive {
        out.push_str("interactive = true\n");
    }
    if t.persistent {
        out.push_str("persistent = true\ncache = false\n");
    } else if t.interactive {
        out.push_str("cache = false\n");
    } else {
        out.push_str(&format!("cache = {}\n", t.cache));
    }
}

/// A TOML basic string on one line, escaped as TOML requires.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn list(items: &[String]) -> String {
    format!("[{}]", items.iter().map(|s| quote(s)).collect::<Vec<_>>().join(", "))
}

/// A table key: bare when TOML allows it, else quoted.
fn key(name: &str) -> String {
    let bare = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare { name.to_string() } else { quote(name) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_quoted_only_when_needed() {
        assert_eq!(key("build"), "build");
        assert_eq!(key("build:prod"), "\"build:prod\"");
        assert_eq!(list(&["a\"b".to_string()]), r#"["a\"b"]"#);
        let tricky = "say \"hi\" \\ 'x'\n\u{1}";
        let parsed: toml::Table = toml::from_str(&format!("k = {}", quote(tricky))).expect("valid TOML");
        assert_eq!(parsed["k"].as_str(), Some(tricky));
    }
}
