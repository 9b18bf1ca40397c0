//! The bubblewrap command line, as a plain function tested on the host.

use vx_plugin_sdk::Error;

use crate::Config;

/// The JSON Schema of [`Config`], for `vx plugin add`.
pub const CONFIG_SCHEMA: &str = r#"{"type":"object","additionalProperties":false,"properties":{"allow-network":{"type":"boolean"},"allow":{"type":"array","items":{"type":"string"}},"deny":{"type":"array","items":{"type":"string"}},"bwrap":{"type":"string"}}}"#;

/// An absolute path for `path`, relative paths taken from `root`; `..` is
/// refused so a list entry cannot climb out of what it names.
fn absolute(root: &str, path: &str, key: &str) -> Result<String, Error> {
    if path.is_empty() || path.split('/').any(|c| c == "..") {
        return Err(Error::invalid_config(format!("config.{key}: `{path}` must be a path without `..`")));
    }
    let joined =
        if path.starts_with('/') { path.to_string() } else { format!("{}/{path}", root.trim_end_matches('/')) };
    let trimmed = joined.trim_end_matches('/').replace("/./", "/");
    Ok(if trimmed.is_empty() { "/".to_string() } else { trimmed.trim_end_matches("/.").to_string() })
}

/// `bwrap` arguments that run `argv` in `cwd` (workspace-relative) of the
/// workspace at `root` (absolute).
pub fn bwrap_args(config: &Config, root: &str, cwd: &str, argv: &[String]) -> Result<Vec<String>, Error> {
    if !root.starts_with('/') {
        return Err(Error::failed(format!("the workspace root `{root}` is not absolute")));
    }
    if argv.is_empty() {
        return Err(Error::failed("the task has no command"));
    }
    let project = if cwd.is_empty() || cwd == "." { absolute(root, ".", "cwd")? } else { absolute(root, cwd, "cwd")? };
    let mut args: Vec<String> = Vec::new();
    let mut push = |items: &[&str]| args.extend(items.iter().map(|s| s.to_string()));
    push(&["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]);
    // The private /tmp hides a workspace kept under /tmp: show it again,
    // read-only, before the writable binds.
    push(&["--ro-bind", root, root]);
    push(&["--bind", &project, &project]);
    for path in &config.allow {
        let path = absolute(root, path, "allow")?;
        push(&["--bind", &path, &path]);
    }
    for path in &config.deny {
        let path = absolute(root, path, "deny")?;
        push(&["--tmpfs", &path]);
    }
    if !config.allow_network {
        push(&["--unshare-net"]);
    }
    push(&["--die-with-parent", "--new-session", "--chdir", &project, "--"]);
    args.extend(argv.iter().cloned());
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_project_is_writable_and_the_network_gone() {
        let args = bwrap_args(&Config::default(), "/ws", "web", &s(&["sh", "-c", "make"])).unwrap();
        let text = args.join(" ");
        assert!(text.starts_with("--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --ro-bind /ws /ws"), "{text}");
        assert!(text.contains("--bind /ws/web /ws/web"), "{text}");
        assert!(text.contains("--unshare-net"), "{text}");
        assert!(text.ends_with("--chdir /ws/web -- sh -c make"), "{text}");
    }

    #[test]
    fn allow_deny_and_network_follow_the_config() {
        let config =
            Config { allow_network: true, allow: s(&[".cache", "/var/tmp/x"]), deny: s(&["secrets"]), bwrap: None };
        let text = bwrap_args(&config, "/ws", ".", &s(&["true"])).unwrap().join(" ");
        assert!(text.contains("--bind /ws /ws"), "{text}");
        assert!(text.contains("--bind /ws/.cache /ws/.cache --bind /var/tmp/x /var/tmp/x"), "{text}");
        assert!(text.contains("--tmpfs /ws/secrets"), "{text}");
        assert!(!text.contains("--unshare-net"), "{text}");
    }

    #[test]
    fn climbing_paths_are_refused() {
        let config = Config { allow: s(&["../up"]), ..Config::default() };
        let e = bwrap_args(&config, "/ws", ".", &s(&["true"])).unwrap_err();
        assert!(e.message().contains("config.allow"), "{}", e.message());
        assert!(bwrap_args(&Config::default(), "relative", ".", &s(&["true"])).is_err());
        assert!(bwrap_args(&Config::default(), "/ws", ".", &[]).is_err());
    }
}
