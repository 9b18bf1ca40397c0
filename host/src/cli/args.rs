//! Argument checks clap does not make the way vx wants them: a value flag
//! never swallows the next flag, numbers and shares are validated with a
//! message that says what was expected, and every usage error is one line
//! that ends with how to see `--help`.

use std::ffi::OsString;

use crate::error::{Error, Result};

/// Refuses `--cache-dir --force`: the value of a flag written without `=`
/// may not start with `-`, so a forgotten value never eats the next flag.
pub(crate) fn check_value_flags(root: &clap::Command, argv: &[OsString]) -> Result<()> {
    let mut cmd = root;
    let mut i = 1;
    while i < argv.len() {
        let Some(arg) = argv[i].to_str() else {
            i += 1;
            continue;
        };
        if arg == "--" {
            break;
        }
        if let Some(sub) = cmd.find_subcommand(arg) {
            cmd = sub;
        } else if let Some(flag) = value_flag(root, cmd, arg) {
            let next = argv.get(i + 1).and_then(|a| a.to_str());
            match next {
                Some(v) if !v.starts_with('-') || v == "-" => i += 1,
                Some(v) => {
                    return Err(Error::usage(format!(
                        "{arg} expects {} but got the flag `{v}`",
                        flag.get_value_names().and_then(|n| n.first()).map_or("a value", |n| n.as_str())
                    ))
                    .with_hint(format!(
                        "a value that starts with `-` needs the `=` form ({arg}={v}); see `{} --help`",
                        command_path(root, cmd)
                    )));
                }
                None => {}
            }
        }
        i += 1;
    }
    Ok(())
}

/// The argument `arg` names when it is an option that takes a separate
/// value (not `--x=v`, not a flag, not one whose value must use `=`).
fn value_flag<'a>(root: &'a clap::Command, cmd: &'a clap::Command, arg: &str) -> Option<&'a clap::Arg> {
    let matches = |a: &&clap::Arg| {
        if let Some(long) = arg.strip_prefix("--") {
            a.get_long() == Some(long)
        } else if let Some(short) = arg.strip_prefix('-') {
            short.len() == 1 && a.get_short().is_some_and(|s| short.starts_with(s))
        } else {
            false
        }
    };
    cmd.get_arguments()
        .chain(root.get_arguments())
        .find(matches)
        .filter(|a| a.get_action().takes_values() && !a.is_require_equals_set())
}

fn command_path(root: &clap::Command, cmd: &clap::Command) -> String {
    if std::ptr::eq(root, cmd) {
        root.get_name().to_string()
    } else {
        format!("{} {}", root.get_name(), cmd.get_name())
    }
}

/// Prints help and version as clap does; turns every other clap error into
/// one line with a hint. A value vx's own parsers refused (`choice`) is
/// reported in their words.
pub(crate) fn clap_error(err: clap::Error) -> Result<u8> {
    use clap::error::ErrorKind as K;
    if matches!(err.kind(), K::DisplayHelp | K::DisplayVersion | K::DisplayHelpOnMissingArgumentOrSubcommand) {
        let _ = err.print();
        return Ok(if err.kind() == K::DisplayHelpOnMissingArgumentOrSubcommand { 2 } else { 0 });
    }
    if let Some(ours) = std::error::Error::source(&err).and_then(|s| s.downcast_ref::<Error>()) {
        return Err(ours.clone());
    }
    let rendered = err.render().to_string();
    let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("invalid arguments").trim_start_matches("error: ").to_string();
    let tip = lines.find_map(|l| l.strip_prefix("tip: ")).map(|t| t.replace('\'', "`"));
    let hint = match tip {
        Some(tip) => format!("{tip}; see `vx --help`"),
        None => "see `vx --help` (or `vx COMMAND --help`)".to_string(),
    };
    Err(Error::usage(first.replace('\'', "`")).with_hint(hint))
}

fn usage(flag: &str, got: &str, wants: &str, command: &str) -> Error {
    Error::usage(format!("{flag} expects {wants}, got `{got}`")).with_hint(format!("see `vx {command} --help`"))
}

/// `--concurrency N` or `P%` of the cores (at least one task).
pub(crate) fn parse_concurrency(text: &str, command: &str) -> Result<usize> {
    let wants = "a positive integer or a share of the cores like `50%`";
    let cores = crate::sys::cores();
    if let Some(pct) = text.strip_suffix('%') {
        let pct: f64 = pct.trim().parse().map_err(|_| usage("--concurrency", text, wants, command))?;
        if !(pct > 0.0 && pct.is_finite()) {
            return Err(usage("--concurrency", text, wants, command));
        }
        return Ok(((cores as f64 * pct / 100.0).floor() as usize).max(1));
    }
    match text.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(usage("--concurrency", text, wants, command)),
    }
}

/// `--memory SIZE`, `P%` of the machine's memory, or `unlimited` (`None`:
/// memory is not counted).
pub(crate) fn parse_memory(text: &str, command: &str) -> Result<Option<u64>> {
    let wants = "a size like `8GiB`, a share of the machine's memory like `50%`, or `unlimited`";
    if text.trim() == "unlimited" {
        return Ok(None);
    }
    if let Some(pct) = text.strip_suffix('%') {
        let pct: f64 = pct.trim().parse().map_err(|_| usage("--memory", text, wants, command))?;
        if !(pct > 0.0 && pct.is_finite()) {
            return Err(usage("--memory", text, wants, command));
        }
        let Some(total) = crate::sys::physical_memory() else {
            return Err(Error::usage(format!("--memory {text}: vx cannot read this machine's memory"))
                .with_hint("give a size, as in `--memory 8GiB`"));
        };
        return Ok(Some((total as f64 * pct / 100.0) as u64));
    }
    match crate::config::duration::parse_size(text) {
        Ok(bytes) if bytes > 0 => Ok(Some(bytes)),
        _ => Err(usage("--memory", text, wants, command)),
    }
}

/// `--tag k=v`, split on the first `=`.
pub(crate) fn parse_tag(text: &str, command: &str) -> Result<(String, String)> {
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(usage("--tag", text, "KEY=VALUE (split on the first `=`)", command)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrency_forms() {
        assert_eq!(parse_concurrency("3", "run").unwrap(), 3);
        assert!(parse_concurrency("50%", "run").unwrap() >= 1);
        for bad in ["0", "-1", "x", "0%", "%", "1.5"] {
            let e = parse_concurrency(bad, "run").unwrap_err();
            assert!(e.message.contains("share of the cores"), "{bad}: {e}");
        }
    }

    #[test]
    fn memory_forms() {
        assert_eq!(parse_memory("1GiB", "run").unwrap(), Some(1 << 30));
        assert_eq!(parse_memory("unlimited", "run").unwrap(), None);
        for bad in ["0", "2 potatoes", "x", "0%", "-1GiB"] {
            let e = parse_memory(bad, "run").unwrap_err();
            assert!(e.message.contains("a size like `8GiB`"), "{bad}: {e}");
        }
    }

    #[test]
    fn tags_split_on_the_first_equals() {
        assert_eq!(parse_tag("a=b=c", "run").unwrap(), ("a".into(), "b=c".into()));
        assert!(parse_tag("novalue", "run").is_err());
        assert!(parse_tag("=v", "run").is_err());
    }
}
