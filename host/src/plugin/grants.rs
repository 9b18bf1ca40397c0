//! What a plugin may touch, read from its `[plugins.NAME]` table. Nothing
//! is granted by default; each grant names exactly what it opens
//! (docs/plugins.md, "Granting").

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::PluginSettings;
use crate::config::duration::{parse_duration, parse_size};

/// Default memory limit of one plugin instance.
pub(crate) const DEFAULT_MEMORY: u64 = 256 << 20;
/// Default CPU time one call may use.
pub(crate) const DEFAULT_CPU: Duration = Duration::from_secs(10);
/// Default wall-clock time one call may take (host calls included).
pub(crate) const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// Default size of what one call may hand to vx: a report, a downloaded
/// cache entry, an executor's task output. vx holds each in memory, so this
/// bounds its memory whatever the plugin streams.
pub(crate) const DEFAULT_OUTPUT: u64 = 1 << 30;

/// A plugin's resource limits (`[plugins.NAME].limits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub memory: u64,
    pub cpu: Duration,
    pub call_timeout: Duration,
    /// Bytes one call may hand to vx (`limits.output`).
    pub output: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { memory: DEFAULT_MEMORY, cpu: DEFAULT_CPU, call_timeout: DEFAULT_CALL_TIMEOUT, output: DEFAULT_OUTPUT }
    }
}

/// A preopened directory: the workspace-relative path is also the guest's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirGrant {
    pub guest: String,
    pub host: PathBuf,
    pub rw: bool,
}

/// One `allow-hosts` entry: `https://cache.acme.dev`, `*.acme.dev:443`,
/// `http://127.0.0.1:3000`. A missing scheme allows both; a missing port
/// allows the scheme's default (or any port when the scheme is missing too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    pub text: String,
    scheme: Option<String>,
    host: String,
    port: Option<u16>,
    any_port: bool,
}

/// One `allow-programs` entry: `"bwrap"` (any arguments) or
/// `{ program = "docker", args = ["run", "*", "**"] }`, where `*` matches
/// exactly one argument, `**` (last only) any number, and anything else
/// itself (Zed's process capability).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramGrant {
    /// A bare name (resolved on the task's `PATH`) or an absolute path.
    pub program: String,
    /// `None`: any arguments.
    pub args: Option<Vec<String>>,
}

impl ProgramGrant {
    /// Whether `args` fit this entry's pattern.
    pub fn allows_args(&self, args: &[String]) -> bool {
        let Some(pattern) = &self.args else { return true };
        let mut given = args.iter();
        for (i, p) in pattern.iter().enumerate() {
            match p.as_str() {
                "**" if i + 1 == pattern.len() => return true,
                "*" => {
                    if given.next().is_none() {
                        return false;
                    }
                }
                literal => {
                    if given.next().map(String::as_str) != Some(literal) {
                        return false;
                    }
                }
            }
        }
        given.next().is_none()
    }

    /// The entry as it reads in `vx.toml`, for messages.
    pub fn describe(&self) -> String {
        match &self.args {
            None => format!("\"{}\"", self.program),
            Some(args) => {
                let args: Vec<String> = args.iter().map(|a| format!("\"{a}\"")).collect();
                format!("{{ program = \"{}\", args = [{}] }}", self.program, args.join(", "))
            }
        }
    }
}

/// Everything granted to one plugin.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    pub env: Vec<String>,
    pub dirs: Vec<DirGrant>,
    pub hosts: Vec<HostPattern>,
    pub programs: Vec<ProgramGrant>,
    /// The host's wall and monotonic clocks.
    pub clocks: bool,
}

/// Reads the grants and limits of `[plugins.NAME]`; an error names the key.
pub(super) fn read_settings(name: &str, settings: &PluginSettings, root: &Path) -> Result<(Grants, Limits), String> {
    let key = |k: &str| format!("[plugins.{name}].{k}");
    let mut grants = Grants { env: settings.env.clone(), clocks: settings.allow_clocks, ..Grants::default() };
    for value in &settings.dirs {
        let (path, rw) = match value {
            toml::Value::String(s) => (s.clone(), false),
            toml::Value::Table(t) => {
                let Some(toml::Value::String(p)) = t.get("path") else {
                    return Err(format!("{}: a table entry needs `path = \"DIR\"`", key("dirs")));
                };
                let rw = match t.get("rw") {
                    None => false,
                    Some(toml::Value::Boolean(b)) => *b,
                    Some(_) => return Err(format!("{}: `rw` must be true or false", key("dirs"))),
                };
                (p.clone(), rw)
            }
            _ => return Err(format!("{}: each entry is \"DIR\" or {{ path = \"DIR\", rw = true }}", key("dirs"))),
        };
        grants.dirs.push(dir_grant(&path, rw, root).map_err(|m| format!("{}: {m}", key("dirs")))?);
    }
    for text in &settings.allow_hosts {
        grants.hosts.push(HostPattern::parse(text).map_err(|m| format!("{}: {m}", key("allow-hosts")))?);
    }
    for value in &settings.allow_programs {
        grants.programs.push(program_grant(value).map_err(|m| format!("{}: {m}", key("allow-programs")))?);
    }
    let limits = read_limits(settings, &key("limits"))?;
    Ok((grants, limits))
}

fn program_grant(value: &toml::Value) -> Result<ProgramGrant, String> {
    let (program, args) = match value {
        toml::Value::String(s) => (s.clone(), None),
        toml::Value::Table(t) => {
            let Some(toml::Value::String(p)) = t.get("program") else {
                return Err("a table entry needs `program = \"NAME\"`".to_string());
            };
            if let Some(k) = t.keys().find(|k| *k != "program" && *k != "args") {
                return Err(format!("unknown key `{k}`; an entry has `program` and `args`"));
            }
            let args = match t.get("args") {
                None => None,
                Some(toml::Value::Array(a)) => Some(
                    a.iter()
                        .map(|v| v.as_str().map(str::to_string).ok_or("`args` holds strings only"))
                        .collect::<Result<Vec<_>, _>>()?,
                ),
                Some(_) => return Err("`args` is a list of strings, like [\"run\", \"*\", \"**\"]".to_string()),
            };
            (p.clone(), args)
        }
        _ => return Err("each entry is \"PROGRAM\" or { program = \"PROGRAM\", args = [...] }".to_string()),
    };
    if program.is_empty() || (program.contains('/') && !program.starts_with('/')) {
        return Err(format!("`{program}`: give a program name (found on PATH) or an absolute path"));
    }
    if let Some(args) = &args
        && let Some(i) = args.iter().position(|a| a == "**")
        && i + 1 != args.len()
    {
        return Err(format!("`{program}`: `**` matches the remaining arguments, so it can only come last"));
    }
    Ok(ProgramGrant { program, args })
}

fn read_limits(settings: &PluginSettings, key: &str) -> Result<Limits, String> {
    let mut limits = Limits::default();
    for (k, v) in &settings.limits {
        let text = match v {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) if k == "memory" || k == "output" => i.to_string(),
            _ => return Err(format!("{key}.{k}: write it as a string, like \"256MiB\" or \"10s\"")),
        };
        match k.as_str() {
            "memory" => limits.memory = parse_size(&text).map_err(|m| format!("{key}.memory: {m}"))?,
            "output" => limits.output = parse_size(&text).map_err(|m| format!("{key}.output: {m}"))?,
            "cpu" => limits.cpu = parse_duration(&text).map_err(|m| format!("{key}.cpu: {m}"))?,
            "call-timeout" => {
                limits.call_timeout = parse_duration(&text).map_err(|m| format!("{key}.call-timeout: {m}"))?
            }
            other => {
                return Err(format!(
                    "{key}: unknown limit `{other}`; the limits are memory, cpu, call-timeout and output"
                ));
            }
        }
    }
    if limits.memory < (1 << 20) {
        return Err(format!("{key}.memory: at least 1MiB"));
    }
    Ok(limits)
}

/// A workspace-relative directory that exists and stays inside the
/// workspace once symlinks are resolved.
fn dir_grant(path: &str, rw: bool, root: &Path) -> Result<DirGrant, String> {
    let rel = Path::new(path);
    if rel.is_absolute() || rel.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
        return Err(format!("`{path}` must be a path inside the workspace, without `..`"));
    }
    let host = root.join(rel).canonicalize().map_err(|e| format!("`{path}`: {e}"))?;
    let root = root.canonicalize().map_err(|e| format!("the workspace root: {e}"))?;
    if !host.starts_with(&root) {
        return Err(format!("`{path}` leads outside the workspace (through a symlink)"));
    }
    if !host.is_dir() {
        return Err(format!("`{path}` is not a directory"));
    }
    let guest = path.trim_end_matches('/').trim_start_matches("./").to_string();
    Ok(DirGrant { guest: if guest.is_empty() { ".".to_string() } else { guest }, host, rw })
}

impl HostPattern {
    pub(super) fn parse(text: &str) -> Result<HostPattern, String> {
        let (scheme, rest) = match text.split_once("://") {
            Some((s @ ("http" | "https"), rest)) => (Some(s.to_string()), rest),
            Some((s, _)) => return Err(format!("`{text}`: scheme `{s}` is not http or https")),
            None => (None, text),
        };
        let rest = rest.trim_end_matches('/');
        if rest.contains('/') {
            return Err(format!("`{text}`: give a host, not a path"));
        }
        let (host, port) = match rest.rsplit_once(':') {
            Some((h, p)) if !h.is_empty() && !h.ends_with(':') => (h, Some(p)),
            _ => (rest, None),
        };
        if host.is_empty() || host.contains(|c: char| c.is_whitespace() || c == '@') {
            return Err(format!("`{text}` is not a host"));
        }
        let (port, any_port) = match port {
            None => (None, scheme.is_none()),
            Some("*") => (None, true),
            Some(p) => (Some(p.parse::<u16>().map_err(|_| format!("`{text}`: `{p}` is not a port"))?), false),
        };
        Ok(HostPattern { text: text.to_string(), scheme, host: host.to_ascii_lowercase(), port, any_port })
    }

    /// Whether a request to `scheme://host:port` is allowed by this entry.
    pub fn allows(&self, scheme: &str, host: &str, port: u16) -> bool {
        if self.scheme.as_deref().is_some_and(|s| s != scheme) {
            return false;
        }
        let host = host.to_ascii_lowercase();
        let host_ok = match self.host.strip_prefix("*.") {
            Some(suffix) => {
                host.len() > suffix.len() && host.ends_with(suffix) && host.ends_with(&format!(".{suffix}"))
            }
            None => self.host == host || self.host == "*",
        };
        let default_port = if scheme == "https" { 443 } else { 80 };
        let port_ok = self.any_port || self.port.unwrap_or(default_port) == port;
        host_ok && port_ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_patterns() {
        let p = HostPattern::parse("https://cache.acme.dev").unwrap();
        assert!(p.allows("https", "cache.acme.dev", 443));
        assert!(!p.allows("http", "cache.acme.dev", 80));
        assert!(!p.allows("https", "cache.acme.dev", 8443));
        assert!(!p.allows("https", "evil.dev", 443));
        let w = HostPattern::parse("*.acme.dev:443").unwrap();
        assert!(w.allows("https", "a.acme.dev", 443));
        assert!(!w.allows("https", "acme.dev", 443));
        assert!(!w.allows("https", "xacme.dev", 443));
        let l = HostPattern::parse("http://127.0.0.1:3000").unwrap();
        assert!(l.allows("http", "127.0.0.1", 3000));
        assert!(!l.allows("http", "127.0.0.1", 3001));
        let any = HostPattern::parse("localhost").unwrap();
        assert!(any.allows("http", "localhost", 1234));
        assert!(HostPattern::parse("ftp://x").is_err());
        assert!(HostPattern::parse("https://x/path").is_err());
        assert!(HostPattern::parse("x:notaport").is_err());
    }

    #[test]
    fn program_patterns_match_like_zeds() {
        let grant = |v: &str| program_grant(&toml::from_str::<toml::Table>(&format!("x = {v}")).unwrap()["x"]);
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let any = grant("\"bwrap\"").unwrap();
        assert!(any.allows_args(&args(&["--ro-bind", "/", "/"])));
        let docker = grant("{ program = \"docker\", args = [\"run\", \"*\", \"**\"] }").unwrap();
        assert!(docker.allows_args(&args(&["run", "img"])));
        assert!(docker.allows_args(&args(&["run", "img", "sh", "-c", "x"])));
        assert!(!docker.allows_args(&args(&["run"])));
        assert!(!docker.allows_args(&args(&["exec", "img"])));
        let exact = grant("{ program = \"make\", args = [\"build\"] }").unwrap();
        assert!(exact.allows_args(&args(&["build"])));
        assert!(!exact.allows_args(&args(&["build", "extra"])));
        assert!(!exact.allows_args(&args(&[])));
        assert!(grant("{ program = \"x\", args = [\"**\", \"a\"] }").unwrap_err().contains("last"));
        assert!(grant("\"./rel\"").unwrap_err().contains("absolute path"));
        assert!(grant("{ program = \"x\", argv = [] }").unwrap_err().contains("unknown key `argv`"));
    }

    #[test]
    fn limits_parse_and_name_the_key() {
        let mut s = PluginSettings {
            path: PathBuf::new(),
            dirs: vec![],
            env: vec![],
            allow_hosts: vec![],
            allow_programs: vec![],
            allow_clocks: false,
            limits: toml::Table::new(),
            config: toml::Table::new(),
        };
        s.limits.insert("memory".into(), "64MiB".into());
        s.limits.insert("cpu".into(), "2s".into());
        let (_, l) = read_settings("x", &s, Path::new("/")).unwrap();
        assert_eq!(l.memory, 64 << 20);
        assert_eq!(l.cpu, Duration::from_secs(2));
        s.limits.insert("fuel".into(), "1".into());
        assert!(read_settings("x", &s, Path::new("/")).unwrap_err().contains("[plugins.x].limits"));
    }
}
