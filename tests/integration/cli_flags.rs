//! Flag validation: a value flag never swallows the next flag, numbers and
//! shares are checked with a message that says what was expected, `--tag`
//! splits on the first `=`, and every usage error is one line (exit 2) that
//! ends with how to see `--help`.

use crate::common::{Output, TestEnv, log_cmd, project_toml};

fn fixture() -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/p/vx.toml", &project_toml("p", &[], &[("build", &log_cmd("p#build"), &[])]));
    env
}

/// Checks a usage error: exit 2, one line, naming `flag` and `got`, with a
/// last `; `-separated part (the hint) that mentions `--help`.
#[track_caller]
fn assert_usage_error(out: &Output, flag: &str, got: &str) {
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains(flag), "the error names the flag `{flag}`\n{out}");
    assert!(line.contains(got), "the error names what it got, `{got}`\n{out}");
    let hint = line.rsplit("; ").next().expect("a line");
    assert!(line.contains("; ") && hint.contains("--help"), "the error ends with a hint that mentions --help\n{out}");
}

#[test]
fn cache_dir_does_not_swallow_the_next_flag() {
    let env = fixture();
    let out = env.vx(&["run", "build", "--cache-dir", "--force"]);
    assert_usage_error(&out, "--cache-dir", "--force");
    assert!(out.error_line().contains("--cache-dir=--force"), "shows the `=` form that passes such a value\n{out}");
    assert!(env.log().is_empty(), "nothing runs");
}

#[test]
fn cache_dir_takes_a_dash_value_in_the_equals_form() {
    let env = fixture();
    let out = env.vx(&["run", "build", "--cache-dir=-odd-cache", "--force"]);
    out.assert_success();
    assert_eq!(env.log(), ["p#build"]);
}

#[test]
fn other_value_flags_do_not_swallow_flags_either() {
    let env = fixture();
    for (flag, next) in [("--concurrency", "--force"), ("--filter", "--all"), ("--timeout", "--force"), ("-F", "--all")]
    {
        let out = env.vx(&["run", "build", flag, next]);
        assert_usage_error(&out, flag, next);
        assert!(out.error_line().contains('='), "points at the `=` form\n{out}");
    }
    assert!(env.log().is_empty());
}

#[test]
fn concurrency_must_be_a_positive_integer_or_a_share() {
    let env = fixture();
    for bad in ["0", "abc", "0%", "1.5", "%"] {
        let out = env.vx(&["run", "build", "--concurrency", bad]);
        assert_usage_error(&out, "--concurrency", bad);
        assert!(out.error_line().contains("50%"), "says what it wants\n{out}");
    }
    assert!(env.log().is_empty());
}

#[test]
fn concurrency_accepts_integers_and_shares() {
    let env = fixture();
    for good in ["1", "3", "50%", "100%", "--concurrency=2"] {
        env.clear_log();
        let out = if good.starts_with("--") {
            env.vx(&["run", "build", good])
        } else {
            env.vx(&["run", "build", "--concurrency", good])
        };
        out.assert_success();
        assert_eq!(env.log(), ["p#build"], "{good}");
    }
}

#[test]
fn tag_splits_on_the_first_equals() {
    let env = fixture();
    let out = env.vx(&["run", "build", "--tag", "k=v=w", "--tag", "empty="]);
    out.assert_success();
    assert_eq!(env.log(), ["p#build"]);
}

#[test]
fn tag_without_a_key_or_equals_is_refused() {
    let env = fixture();
    for bad in ["novalue", "=v"] {
        let out = env.vx(&["run", "build", "--tag", bad]);
        assert_usage_error(&out, "--tag", bad);
        assert!(out.error_line().contains("KEY=VALUE") || out.error_line().contains("k=v"), "{out}");
    }
    assert!(env.log().is_empty());
}

#[test]
fn every_usage_error_ends_with_a_help_hint() {
    let env = fixture();
    let cases: &[(&[&str], &str, &str)] = &[
        (&["run", "build", "--bogus"], "--bogus", "--bogus"),
        (&["run", "build", "--continue=sometimes"], "--continue", "sometimes"),
        (&["run", "build", "--dry=yaml"], "--dry", "yaml"),
        (&["run", "build", "--output-logs", "most"], "--output-logs", "most"),
        (&["run", "build", "--log-order", "random"], "--log-order", "random"),
        (&["run", "build", "--timeout", "10"], "--timeout", "10"),
        (&["run", "build", "--filter", "[main"], "--filter", "[main"),
        (&["run", "build", "--concurrency"], "--concurrency", "--concurrency"),
        (&["show", "--format", "xml"], "--format", "xml"),
        (&["frobnicate"], "frobnicate", "frobnicate"),
    ];
    for (args, flag, got) in cases {
        let out = env.vx(args);
        assert_usage_error(&out, flag, got);
    }
    assert!(env.log().is_empty());
}

#[test]
fn help_and_version_succeed_on_stdout() {
    let env = fixture();
    for args in [&["--help"][..], &["run", "--help"][..], &["show", "--help"][..], &["--version"][..]] {
        let out = env.vx(args);
        out.assert_success();
        assert!(!out.stdout.is_empty() && out.stderr.is_empty(), "{args:?}\n{out}");
    }
    let out = env.vx(&["run", "--help"]);
    for flag in ["--filter", "--affected", "--concurrency", "--continue", "--dry", "--graph", "--all"] {
        assert!(out.stdout.contains(flag), "`vx run --help` documents {flag}\n{out}");
    }
}

#[test]
fn no_subcommand_is_a_usage_error() {
    let env = fixture();
    let out = env.vx(&[]);
    out.assert_code(2);
}

#[test]
fn an_executor_that_is_not_of_this_workspace_is_a_usage_error_before_anything_runs() {
    let env = fixture();
    for command in [&["run", "build"][..], &["why", "p#build"], &["watch", "build"]] {
        let out = env.vx(&[command, &["--executor", "nope"]].concat());
        assert_usage_error(&out, "--executor `nope`", "not an executor of this workspace");
        assert!(env.log().is_empty(), "nothing runs: {command:?}\n{out}");
    }
}

/// `--flag=VALUE` as an argument that need not be UTF-8.
fn flag_value(flag: &str, value: &[u8]) -> std::ffi::OsString {
    use std::os::unix::ffi::OsStringExt;
    std::ffi::OsString::from_vec([flag.as_bytes(), b"=", value].concat())
}

#[test]
fn every_value_flag_refuses_an_empty_a_huge_and_a_non_utf8_value_in_one_short_line() {
    let env = fixture();
    let huge = vec![b'x'; 100_000];
    let flags = [
        "--filter",
        "--concurrency",
        "--continue",
        "--tag",
        "--timeout",
        "--output-logs",
        "--executor",
        "--env-mode",
        "--retries",
        "--log-order",
        "--log-prefix",
        "--dry",
    ];
    for flag in flags {
        for value in [&b""[..], &huge, b"\xff\xfe"] {
            if flag == "--continue" && value.is_empty() {
                // `--continue=` is the bare flag, as `--affected=` is: an
                // optional value given empty.
                continue;
            }
            let args = ["run".into(), "build".into(), flag_value(flag, value)];
            let out = env.vx_os(&args);
            let shown = String::from_utf8_lossy(&value[..value.len().min(8)]).into_owned();
            assert_eq!(out.code, 2, "{flag}={shown}…: a usage error\n{out}");
            assert_eq!(out.stderr.lines().count(), 1, "{flag}={shown}…: one line\n{out}");
            assert!(
                out.stderr.len() < 2_500,
                "{flag}={shown}…: a line a terminal can show ({} bytes)",
                out.stderr.len()
            );
            assert!(out.stderr.starts_with("vx: error: "), "{flag}={shown}…\n{out}");
            assert!(env.log().is_empty(), "{flag}={shown}…: nothing runs\n{out}");
        }
    }
}

#[test]
fn a_cache_dir_whose_name_is_not_utf8_holds_the_cache() {
    let env = fixture();
    env.write(
        "packages/p/vx.toml",
        &format!("[project]\nname = \"p\"\n[tasks.build]\ncommand = {:?}\ncache = true\n", log_cmd("p#build")),
    );
    let args = || ["run".into(), "build".into(), flag_value("--cache-dir", b"cache-\xff")];
    env.vx_os(&args()).assert_success();
    let out = env.vx_os(&args());
    out.assert_success();
    assert_eq!(out.summary().cached, 1, "the second run hits the cache it wrote\n{out}");
    assert_eq!(env.log(), ["p#build"], "the task ran once");
}
