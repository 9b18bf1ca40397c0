//! Snapshots of what vx shows a user, kept as transcripts that read like a
//! spec: each file the test wrote, each `vx` command line, its exit code,
//! its stdout and its stderr. `insta` stores them as `.snap` files beside
//! the tests (`spec/snapshots/`), so a change of vx's text is a diff that
//! someone reviews and accepts (see `docs/testing.md`).
//!
//! Before comparing, everything that differs between machines or runs is
//! replaced by a placeholder: the test's temporary paths (`[ROOT]`,
//! `[HOME]`, `[TEMP]`), wall times and task durations (`[DURATION]`), cache
//! keys (`[KEY]`), hashes of files built here (`[HASH]`), PIDs (`[PID]`,
//! `[PGID]`) and run ids (`[RUN_ID]`). Keys are content hashes and stable
//! on one machine, but they also hash vx's version and key schema, which
//! are not the text under review.

use super::{Output, TestEnv};

/// The transcript of a test: files written and `vx` runs, in order.
#[derive(Debug)]
pub(crate) struct Transcript<'e> {
    env: &'e TestEnv,
    text: String,
}

impl<'e> Transcript<'e> {
    pub(crate) fn new(env: &'e TestEnv) -> Transcript<'e> {
        Transcript { env, text: String::new() }
    }

    /// The environment the transcript runs in.
    pub(crate) fn env(&self) -> &'e TestEnv {
        self.env
    }

    /// The transcript so far.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// A line of prose, for a reader of the snapshot.
    pub(crate) fn note(&mut self, text: &str) -> &mut Self {
        self.text.push_str(&format!("# {text}\n\n"));
        self
    }

    /// Writes a workspace file and shows it.
    pub(crate) fn write(&mut self, rel: &str, contents: &str) -> &mut Self {
        self.env.write(rel, contents);
        self.show_file(rel)
    }

    /// Shows a workspace file as it is now (written by a fixture).
    pub(crate) fn show_file(&mut self, rel: &str) -> &mut Self {
        let contents = self.env.read(rel);
        self.text.push_str(&format!("--- {rel}\n{contents}"));
        if !contents.ends_with('\n') {
            self.text.push('\n');
        }
        self.text.push('\n');
        self
    }

    /// Runs `vx ARGS` at the workspace root and records it.
    pub(crate) fn vx(&mut self, args: &[&str]) -> Output {
        let out = self.env.vx(args);
        self.record(None, args, &out);
        out
    }

    /// Runs `vx ARGS` in `dir` (relative to the root) and records it.
    pub(crate) fn vx_in(&mut self, dir: &str, args: &[&str]) -> Output {
        let out = self.env.vx_in(dir, args);
        self.record(Some(dir), args, &out);
        out
    }

    /// Records a run made some other way (a `VxCommand` with extra
    /// variables, say), with the arguments it was given.
    pub(crate) fn record(&mut self, dir: Option<&str>, args: &[&str], out: &Output) -> &mut Self {
        let words: Vec<String> = args.iter().map(|a| shell_word(a)).collect();
        let cd = dir.map(|d| format!("(cd {} && ", shell_word(d))).unwrap_or_default();
        let close = if dir.is_some() { ")" } else { "" };
        let command: Vec<String> = std::iter::once("vx".to_string()).chain(words).collect();
        self.text.push_str(&format!("$ {cd}{}{close}\nexit {}\n", command.join(" "), out.code));
        for (name, stream) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            if !stream.is_empty() {
                self.text.push_str(&format!("{name}:\n{stream}"));
                if !stream.ends_with('\n') {
                    self.text.push_str("[no newline at the end]\n");
                }
            }
        }
        self.text.push('\n');
        self
    }
}

/// `arg` as a reader would type it in a POSIX shell: bare when it holds
/// nothing the shell reads specially, else single-quoted.
fn shell_word(arg: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=,#@%+^".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

/// The placeholders, as `(regex, replacement)` in the order they apply:
/// the environment's own paths first (longest first), then the values
/// that change from run to run.
pub(crate) fn filters(env: &TestEnv) -> Vec<(String, String)> {
    let path = |p: &std::path::Path| regex::escape(p.to_str().expect("temporary paths are UTF-8"));
    vec![
        (path(&env.root), "[ROOT]".into()),
        (path(&env.home), "[HOME]".into()),
        (path(&env.base), "[TEMP]".into()),
        // `Tasks: … in 1.24s`: the wall time of the run.
        (r"(?m)^(Tasks: .*) in \S+$".into(), "$1 in [DURATION]".into()),
        // `--summary`: `  1.24s  web#build`, right-aligned durations.
        (r"(?m)^ +(?:\d+ms|\d+\.\d+s|\d+m\d+s)  (\S)".into(), "  [DURATION]  $1".into()),
        // `--summary`: what a task's processes used, and the total.
        (r"\(cpu \S+, [\d.]+ (?:B|KiB|MiB|GiB)\)".into(), "(cpu [CPU], [MEMORY])".into()),
        (
            r"(?m)^Resources: \S+ of CPU in (\d+) task\(s\); peak memory [\d.]+ \S+".into(),
            "Resources: [CPU] of CPU in $1 task(s); peak memory [MEMORY]".into(),
        ),
        // Full keys (BLAKE3, 64 hex digits) and the short ones in
        // `cache miss, executing 0123abcd…` and `cache hit …`.
        (r"\b[0-9a-f]{64}\b".into(), "[KEY]".into()),
        (
            r"(cache (?:miss, executing|hit(?:, replaying logs|, suppressing logs)?)) [0-9a-f]+".into(),
            "$1 [KEY]".into(),
        ),
        // Abbreviated hashes (`blake3 2cf1589155f0…`) of files built on
        // this machine, such as a plugin's component.
        (r"\b[0-9a-f]{12,63}…".into(), "[HASH]…".into()),
        (r"\(pid \d+\)".into(), "(pid [PID])".into()),
        (r"\bprocess group \d+".into(), "process group [PGID]".into()),
        // `VX_RUN_ID`: vx's PID and the time, in hex.
        (r"\b\d+-[0-9a-f]{8,}\b".into(), "[RUN_ID]".into()),
    ]
}

/// insta's settings for a snapshot of `env`: its filters, snapshots named
/// after the test alone, and no expression in the header (the transcript
/// says what was run).
pub(crate) fn settings(env: &TestEnv) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    for (regex, replacement) in filters(env) {
        settings.add_filter(&regex, replacement);
    }
    settings
}

/// Compares a [`Transcript`] with the snapshot named after the calling
/// test (or `$name`), with the environment's filters applied.
macro_rules! assert_transcript {
    ($transcript:expr) => {{
        let transcript = &$transcript;
        $crate::common::snapshot::settings(transcript.env()).bind(|| insta::assert_snapshot!(transcript.text()));
    }};
    ($name:expr, $transcript:expr) => {{
        let transcript = &$transcript;
        $crate::common::snapshot::settings(transcript.env()).bind(|| insta::assert_snapshot!($name, transcript.text()));
    }};
}
pub(crate) use assert_transcript;
