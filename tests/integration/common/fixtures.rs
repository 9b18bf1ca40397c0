//! Writing test workspaces: TOML snippets shared by the test modules.

/// A TOML basic string.
pub(crate) fn toml_str(s: &str) -> String {
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
pub(crate) fn task(name: &str, command: &str, extra: &str) -> String {
    format!("\n[tasks.{name}]\ncommand = {}\n{extra}\n", toml_str(command))
}

/// A shell test that holds while the process whose PID is in `pid_file`
/// runs: it exists and is not a zombie. `kill -0` is not enough: it
/// succeeds on a zombie, and a server stopped too early can stay one for a
/// while (its parent gone, it waits for init to reap it).
pub(crate) fn running(pid_file: &str) -> String {
    format!(
        "s=$(sed 's/.*) //' /proc/\"$(cat {pid_file})\"/stat 2>/dev/null | cut -d' ' -f1); \
         [ -n \"$s\" ] && [ \"$s\" != Z ] && [ \"$s\" != X ]"
    )
}
