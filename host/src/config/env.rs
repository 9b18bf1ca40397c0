//! Which environment variables a task sees and which belong to its key
//! (docs/config.md, "Environment"). Pure name logic, no I/O: callers hand
//! in the variables of vx's own environment.
//!
//! A list (`env`, `pass-env`, and their `global-` forms) holds names, `*`
//! wildcards (`NEXT_PUBLIC_*`) and `!` exclusions; a name is in the list
//! when some entry matches it and no exclusion does. In strict mode (the
//! default) a task sees the allowlist, `VX_*`, and what its lists name;
//! in loose mode it sees everything. Only `env` and `global-env` are hashed.

use std::ffi::{OsStr, OsString};

/// `[workspace] env-mode` / `--env-mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EnvMode {
    /// Only the allowlist and the listed variables reach a task.
    #[default]
    Strict,
    /// Every variable of vx's environment reaches a task.
    Loose,
}

impl EnvMode {
    pub fn parse(text: &str) -> Option<EnvMode> {
        match text {
            "strict" => Some(EnvMode::Strict),
            "loose" => Some(EnvMode::Loose),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            EnvMode::Strict => "strict",
            EnvMode::Loose => "loose",
        }
    }
}

/// What every task sees in strict mode, besides `VX_*`: what a shell, a
/// compiler and a terminal need to behave as they do outside vx. None of
/// it is hashed; list a name in `env` to make it part of the key.
pub(crate) const ALLOWLIST: &[&str] = &[
    "PATH",
    "HOME",
    "SHELL",
    "USER",
    "LOGNAME",
    "TERM",
    "TERM_PROGRAM",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "CI",
    "DISPLAY",
    "XDG_RUNTIME_DIR",
    "XAUTHORITY",
    "DBUS_SESSION_BUS_ADDRESS",
    "NODE_OPTIONS",
    "COREPACK_HOME",
    "LD_LIBRARY_PATH",
    "DYLD_FALLBACK_LIBRARY_PATH",
    "VX_*",
];

/// Whether strict mode passes `name` to every task.
pub(crate) fn allowlisted(name: &str) -> bool {
    ALLOWLIST.iter().any(|a| matches(a, name))
}

/// Why an entry of an env list is refused.
pub(crate) fn check_entry(entry: &str) -> Result<(), &'static str> {
    let name = entry.strip_prefix('!').unwrap_or(entry);
    if name.is_empty() || name.contains('=') || name.contains('\0') || name.contains('!') {
        return Err("list names only, like `NODE_ENV`, `NEXT_PUBLIC_*` or `!NEXT_PUBLIC_SECRET`");
    }
    Ok(())
}

/// Whether `name` matches `pattern`, where `*` stands for any run of
/// characters. It allocates nothing: strict mode asks it for every
/// variable of vx's environment against every allowlist entry, per task.
pub(crate) fn matches(pattern: &str, name: &str) -> bool {
    let Some((first, after)) = pattern.split_once('*') else { return pattern == name };
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let (middle, last) = after.rsplit_once('*').unwrap_or(("", after));
    for part in middle.split('*') {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// One or more env lists taken together: a name is in it when some entry
/// matches it and no `!` entry does.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EnvList<'a> {
    lists: [&'a [String]; 2],
}

impl<'a> EnvList<'a> {
    /// A task's list and its workspace-wide counterpart.
    pub(crate) fn new(global: &'a [String], task: &'a [String]) -> Self {
        EnvList { lists: [global, task] }
    }

    fn entries(&self) -> impl Iterator<Item = &'a String> + '_ {
        self.lists.iter().flat_map(|l| l.iter())
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        let mut included = false;
        for entry in self.entries() {
            match entry.strip_prefix('!') {
                Some(pattern) if matches(pattern, name) => return false,
                Some(_) => {}
                None => included |= matches(entry, name),
            }
        }
        included
    }

    /// The names this list hashes among `vars`: every match present, and
    /// every plain name (no wildcard) whether set or not, so setting or
    /// unsetting a listed variable changes the key. Sorted, no duplicates.
    pub(crate) fn hashed_names<'v>(&self, vars: impl Iterator<Item = &'v str>) -> Vec<String> {
        let mut names: Vec<String> = vars.filter(|n| self.contains(n)).map(str::to_string).collect();
        names.extend(self.entries().filter(|e| !e.starts_with('!') && !e.contains('*') && self.contains(e)).cloned());
        names.sort();
        names.dedup();
        names
    }
}

/// The environment of a task, or `None` when it inherits vx's whole
/// environment (loose mode).
pub(crate) fn task_environment(
    mode: EnvMode,
    hashed: EnvList<'_>,
    passed: EnvList<'_>,
    vars: impl Iterator<Item = (OsString, OsString)>,
) -> Option<Vec<(OsString, OsString)>> {
    if mode == EnvMode::Loose {
        return None;
    }
    let seen = |name: &OsStr| {
        let Some(name) = name.to_str() else { return false };
        allowlisted(name) || hashed.contains(name) || passed.contains(name)
    };
    Some(vars.filter(|(k, _)| seen(k)).collect())
}

/// The variables among `vars` that the lists name and the allowlist does
/// not (what strict mode adds to the allowlist for one task).
pub(crate) fn listed_extra<'v>(
    hashed: EnvList<'_>,
    passed: EnvList<'_>,
    vars: impl Iterator<Item = &'v (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    // The lists first: most tasks have none, and then no variable is
    // matched against the allowlist at all.
    vars.filter(|(k, _)| k.to_str().is_some_and(|n| (hashed.contains(n) || passed.contains(n)) && !allowlisted(n)))
        .cloned()
        .collect()
}

/// The variables an executor that starts from an empty environment (a
/// plugin, a remote worker) is given: what the task's lists name, no
/// allowlist, whatever the mode.
pub(crate) fn listed_vars<'v>(
    hashed: EnvList<'_>,
    passed: EnvList<'_>,
    vars: impl Iterator<Item = &'v (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    vars.filter(|(k, _)| k.to_str().is_some_and(|n| hashed.contains(n) || passed.contains(n))).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn wildcards_match_runs_of_characters() {
        assert!(matches("NEXT_PUBLIC_*", "NEXT_PUBLIC_URL"));
        assert!(matches("NEXT_PUBLIC_*", "NEXT_PUBLIC_"));
        assert!(!matches("NEXT_PUBLIC_*", "NEXT_PRIVATE"));
        assert!(matches("*_TOKEN", "NPM_TOKEN"));
        assert!(matches("A*B*C", "AxxBxxC"));
        assert!(!matches("A*B*C", "AxxCxxB"));
        assert!(matches("NODE_ENV", "NODE_ENV"));
        assert!(!matches("NODE_ENV", "NODE_ENVX"));
        assert!(matches("*", "ANYTHING"));
    }

    #[test]
    fn exclusions_win_over_global_and_task_entries() {
        let global = list(&["NEXT_PUBLIC_*"]);
        let task = list(&["!NEXT_PUBLIC_SECRET", "NODE_ENV"]);
        let l = EnvList::new(&global, &task);
        assert!(l.contains("NEXT_PUBLIC_URL"));
        assert!(!l.contains("NEXT_PUBLIC_SECRET"));
        assert!(l.contains("NODE_ENV"));
        assert!(!l.contains("OTHER"));
    }

    #[test]
    fn hashed_names_keep_unset_plain_names_and_present_wildcard_matches() {
        let task = list(&["NODE_ENV", "NEXT_PUBLIC_*", "!NEXT_PUBLIC_SECRET"]);
        let l = EnvList::new(&[], &task);
        let vars = ["NEXT_PUBLIC_B", "NEXT_PUBLIC_A", "NEXT_PUBLIC_SECRET", "HOME"];
        assert_eq!(l.hashed_names(vars.into_iter()), ["NEXT_PUBLIC_A", "NEXT_PUBLIC_B", "NODE_ENV"]);
    }

    #[test]
    fn strict_keeps_the_allowlist_and_the_lists_loose_keeps_all() {
        let vars = || {
            ["PATH", "LC_ALL", "VX_TEST", "SECRET", "NODE_ENV", "PASSED"]
                .into_iter()
                .map(|n| (OsString::from(n), OsString::from("1")))
        };
        let env = list(&["NODE_ENV"]);
        let pass = list(&["PASS*"]);
        let (hashed, passed) = (EnvList::new(&[], &env), EnvList::new(&pass, &[]));
        let strict = task_environment(EnvMode::Strict, hashed, passed, vars()).unwrap();
        let names: Vec<_> = strict.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert_eq!(names, ["PATH", "LC_ALL", "VX_TEST", "NODE_ENV", "PASSED"]);
        assert!(task_environment(EnvMode::Loose, hashed, passed, vars()).is_none());
        let all: Vec<_> = vars().collect();
        assert_eq!(listed_vars(hashed, passed, all.iter()).len(), 2);
        let extra = listed_extra(hashed, passed, all.iter());
        assert_eq!(extra.len(), 2, "NODE_ENV and PASSED; PATH is on the allowlist");
    }

    #[test]
    fn entries_are_names_patterns_or_exclusions() {
        for ok in ["NODE_ENV", "NEXT_PUBLIC_*", "!SECRET", "*"] {
            assert!(check_entry(ok).is_ok(), "{ok}");
        }
        for bad in ["", "!", "A=B", "!!A", "A!B"] {
            assert!(check_entry(bad).is_err(), "{bad}");
        }
    }
}
