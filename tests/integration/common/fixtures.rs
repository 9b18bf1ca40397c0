//! Writing test workspaces: TOML snippets shared by the test modules.

/// A TOML basic string.
pub fn toml_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `[tasks.NAME]` with a command and extra lines (TOML).
pub fn task(name: &str, command: &str, extra: &str) -> String {
    format!("\n[tasks.{name}]\ncommand = {}\n{extra}\n", toml_str(command))
}
