//! The everyday and CI surface, run for real: `vx lock` (sorted, every
//! resolved field, plugin pins kept, credentials refused, special names
//! round-tripped), `vx lock --check` and `vx run --frozen`; flags typed
//! from Turborepo and Nx habits; `vx completions` and the dynamic
//! completion of task ids; GitHub Actions output; `--summary`; and the
//! status line, absent when piped and drawn on a pseudo-terminal without
//! splitting a task's line.
//!
//! Nothing here asserts on timing: a pause in a task only gives a wrong
//! implementation the chance to show itself.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::common::{LOG_VAR, Output, TestEnv, log_cmd, vx_bin};

/// A TOML basic string (JSON's escapes are TOML's).
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// `vx.lock` of the workspace, parsed.
fn lock_table(env: &TestEnv) -> toml::Table {
    let text = env.read("vx.lock");
    text.parse().unwrap_or_else(|e| panic!("vx.lock is not TOML: {e}\n{text}"))
}

/// `table[key]` as a table; panics with the table when it is missing.
#[track_caller]
fn sub<'a>(table: &'a toml::Table, key: &str) -> &'a toml::Table {
    table.get(key).and_then(toml::Value::as_table).unwrap_or_else(|| panic!("no table `{key}` in {table:#?}"))
}

/// A TOML array of strings.
fn strings(items: &[&str]) -> toml::Value {
    toml::Value::Array(items.iter().map(|s| toml::Value::String((*s).to_string())).collect())
}

/// `lib` and `web` (web's build depends on lib's), each build logging its id.
fn web_and_lib() -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/lib/vx.toml",
        &format!("[project]\nname = \"lib\"\n\n[tasks.build]\ncommand = {}\n", toml_str(&log_cmd("lib#build"))),
    );
    env.write(
        "packages/web/vx.toml",
        &format!(
            "[project]\nname = \"web\"\ndepends-on = [\"lib\"]\n\n[tasks.build]\ncommand = {}\ndepends-on = [\"^build\"]\n",
            toml_str(&log_cmd("web#build"))
        ),
    );
    env
}

/// Replaces lib's build command.
fn set_lib_command(env: &TestEnv, command: &str) {
    env.write(
        "packages/lib/vx.toml",
        &format!("[project]\nname = \"lib\"\n\n[tasks.build]\ncommand = {}\n", toml_str(command)),
    );
}

// ---------------------------------------------------------------- vx lock

#[test]
fn lock_writes_every_resolved_field_with_projects_sorted_by_name() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    // Directory order is the reverse of name order.
    env.write(
        "packages/a-dir/vx.toml",
        "[project]\nname = \"zeta\"\ndepends-on = [\"alpha\"]\n\n\
         [tasks.build]\ncommand = \"tsc -b\"\ndepends-on = [\"^build\"]\ninputs = [\"src/**\"]\n\
         outputs = [\"dist/**\"]\nenv = [\"NODE_ENV\"]\n",
    );
    env.write(
        "packages/z-dir/vx.toml",
        "[project]\nname = \"alpha\"\n\n[tasks.build]\ncommand = [\"echo\", \"alpha\"]\n\n\
         [tasks.dev]\ncommand = \"serve --watch\"\npersistent = true\n",
    );
    let out = env.vx(&["lock"]);
    out.assert_success();
    assert!(out.stdout.contains("2 project(s), 3 task(s)"), "says what it wrote\n{out}");

    let text = env.read("vx.lock");
    let alpha = text.find("[projects.alpha]").unwrap_or_else(|| panic!("no alpha table\n{text}"));
    let zeta = text.find("[projects.zeta]").unwrap_or_else(|| panic!("no zeta table\n{text}"));
    assert!(alpha < zeta, "projects are sorted by name, not by directory\n{text}");

    let lock = lock_table(&env);
    assert_eq!(lock.get("version").and_then(toml::Value::as_integer), Some(1), "{lock:#?}");
    let projects = sub(&lock, "projects");
    assert_eq!(projects.keys().map(String::as_str).collect::<Vec<_>>(), ["alpha", "zeta"]);

    let zeta = sub(projects, "zeta");
    assert_eq!(zeta.get("dir"), Some(&toml::Value::String("packages/a-dir".into())));
    assert_eq!(zeta.get("depends-on"), Some(&strings(&["alpha"])));
    let build = sub(sub(zeta, "tasks"), "build");
    let expected: toml::Table = toml::toml! {
        command = "tsc -b"
        depends-on = ["^build"]
        inputs = ["src/**"]
        outputs = ["dist/**"]
        env = ["NODE_ENV"]
        executor = "local"
        cache = true
        persistent = false
    };
    assert_eq!(build, &expected, "zeta#build with every resolved field");

    let alpha = sub(projects, "alpha");
    assert_eq!(alpha.get("dir"), Some(&toml::Value::String("packages/z-dir".into())));
    assert_eq!(alpha.get("depends-on"), Some(&strings(&[])));
    let tasks = sub(alpha, "tasks");
    let expected: toml::Table = toml::toml! {
        command = ["echo", "alpha"]
        depends-on = []
        outputs = []
        env = []
        executor = "local"
        cache = false
        persistent = false
    };
    assert_eq!(sub(tasks, "build"), &expected, "an argv command stays a list; no `inputs` means every file");
    let dev = sub(tasks, "dev");
    assert_eq!(dev.get("persistent"), Some(&toml::Value::Boolean(true)), "{dev:#?}");
    assert_eq!(dev.get("cache"), Some(&toml::Value::Boolean(false)), "{dev:#?}");

    let check = env.vx(&["lock", "--check"]);
    check.assert_success();
    assert!(check.stdout.contains("up to date"), "{check}");
}

#[test]
fn lock_check_and_frozen_name_what_changed() {
    let env = web_and_lib();
    let frozen = env.vx(&["run", "build", "--frozen"]);
    frozen.assert_code(2);
    assert!(frozen.error_line().contains("vx.lock"), "--frozen without a lock says so\n{frozen}");

    env.vx(&["lock"]).assert_success();
    let check = env.vx(&["lock", "--check"]);
    check.assert_success();

    set_lib_command(&env, &log_cmd("lib#build-changed"));
    let check = env.vx(&["lock", "--check"]);
    check.assert_code(1);
    let change = check
        .stdout
        .lines()
        .find(|l| l.contains("lib#build"))
        .unwrap_or_else(|| panic!("--check names the task `lib#build`\n{check}"));
    assert!(change.contains("command"), "the change names the field `command`: `{change}`\n{check}");
    assert!(!check.stdout.contains("web#build"), "web#build did not change\n{check}");

    let frozen = env.vx(&["run", "build", "--frozen"]);
    frozen.assert_code(2);
    let line = frozen.error_line();
    assert!(line.contains("lib#build") && line.contains("command"), "the error names the change\n{frozen}");
    assert!(env.log().is_empty(), "a refused run runs nothing: {:?}", env.log());

    env.vx(&["lock"]).assert_success();
    env.vx(&["lock", "--check"]).assert_success();
    env.vx(&["run", "build", "--frozen"]).assert_success();
    assert_eq!(env.log(), ["lib#build-changed", "web#build"]);
}

#[test]
fn lock_keeps_plugin_pins_written_by_hand() {
    let env = web_and_lib();
    env.write(
        "vx.lock",
        "version = 1\n\n[plugins.x]\npath = \".vx/plugins/x.wasm\"\nsha256 = \"0123abcd\"\nsource = \"https://example.invalid/x.wasm\"\n",
    );
    let pin: toml::Table = toml::toml! {
        path = ".vx/plugins/x.wasm"
        sha256 = "0123abcd"
        source = "https://example.invalid/x.wasm"
    };
    for round in 0..2 {
        env.vx(&["lock"]).assert_success();
        let lock = lock_table(&env);
        assert_eq!(sub(sub(&lock, "plugins"), "x"), &pin, "round {round}: the pin survives `vx lock`");
        let projects = sub(&lock, "projects");
        assert_eq!(projects.keys().map(String::as_str).collect::<Vec<_>>(), ["lib", "web"], "round {round}");
    }
    env.vx(&["lock", "--check"]).assert_success();
}

#[test]
fn lock_refuses_credentials_and_writes_nothing() {
    let env = web_and_lib();
    let secrets = [
        ("a token prefix", "curl -H \"Authorization: token ghp_abcdefghijklmnop1234\" https://example.invalid"),
        ("a literal KEY= assignment", "API_KEY=literal node deploy.js"),
        ("a long random string", "deploy --auth Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LmNbVcXz"),
    ];
    let refused = |what: &str, command: &str| {
        set_lib_command(&env, command);
        let out = env.vx(&["lock"]);
        out.assert_code(2);
        let line = out.error_line();
        for name in ["`lib`", "`build`", "`command`"] {
            assert!(line.contains(name), "{what}: the error names {name}\n{out}");
        }
        assert!(!line.contains("ghp_abcdefghijklmnop1234"), "{what}: the error does not repeat the secret\n{out}");
    };
    for (what, command) in secrets {
        refused(what, command);
        assert!(!env.path("vx.lock").exists(), "{what}: no vx.lock is written");
    }

    set_lib_command(&env, "node build.js");
    env.vx(&["lock"]).assert_success();
    let before = std::fs::read(env.path("vx.lock")).expect("read vx.lock");
    for (what, command) in secrets {
        refused(what, command);
        assert_eq!(std::fs::read(env.path("vx.lock")).expect("read vx.lock"), before, "{what}: vx.lock is unchanged");
    }

    let from_env = "API_KEY=$API_KEY node deploy.js";
    set_lib_command(&env, from_env);
    env.vx(&["lock"]).assert_success();
    let lock = lock_table(&env);
    let build = sub(sub(sub(sub(&lock, "projects"), "lib"), "tasks"), "build");
    assert_eq!(build.get("command"), Some(&toml::Value::String(from_env.into())), "a variable reference is no secret");
}

#[test]
fn lock_round_trips_special_names() {
    let names = ["__proto__", "constructor", "toString", "ünï ☃", "with space"];
    let env = TestEnv::new();
    env.workspace(&["p/*"]);
    for (i, name) in names.iter().enumerate() {
        let quoted = toml_str(name);
        env.write(
            &format!("p/d{i}/vx.toml"),
            &format!("[project]\nname = {quoted}\n\n[tasks.{quoted}]\ncommand = \"true\"\n"),
        );
    }
    env.vx(&["lock"]).assert_success();
    let check = env.vx(&["lock", "--check"]);
    check.assert_success();
    assert!(check.stdout.contains("up to date"), "{check}");

    let lock = lock_table(&env);
    let projects = sub(&lock, "projects");
    let found: BTreeSet<&str> = projects.keys().map(String::as_str).collect();
    assert_eq!(found, names.iter().copied().collect::<BTreeSet<_>>(), "project names round-trip exactly");
    for name in names {
        let tasks = sub(sub(projects, name), "tasks");
        assert_eq!(tasks.keys().map(String::as_str).collect::<Vec<_>>(), [name], "task names round-trip exactly");
    }
}

// ------------------------------------------------- coming from turbo and nx

/// Projects `a`, `b`, `c`, each with a `build` that logs `P#build`;
/// `extra` goes into each task table (e.g. `inputs` to make it cacheable).
fn abc(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    for p in ["a", "b", "c"] {
        env.write(
            &format!("packages/{p}/vx.toml"),
            &format!(
                "[project]\nname = \"{p}\"\n\n[tasks.build]\ncommand = {}\n{extra}",
                toml_str(&log_cmd(&format!("{p}#build")))
            ),
        );
        env.write(&format!("packages/{p}/file.txt"), "one\n");
    }
    env
}

/// Every stderr line is a `vx: note:`, and there is at least one.
#[track_caller]
fn assert_notes(out: &Output, needle: &str) {
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(!lines.is_empty(), "a translated flag prints a notice\n{out}");
    assert!(lines.iter().all(|l| l.starts_with("vx: note: ")), "stderr holds only notices\n{out}");
    assert!(out.stderr.contains(needle), "a notice mentions `{needle}`\n{out}");
}

/// What `vx last` prints, trimmed.
fn last(env: &TestEnv) -> String {
    let out = env.vx(&["last"]);
    out.assert_success();
    out.stdout.trim().to_string()
}

#[test]
fn run_many_runs_exactly_the_named_projects() {
    let env = abc("");
    let out = env.vx(&["run-many", "-t", "build", "-p", "a,b"]);
    out.assert_success();
    assert_notes(&out, "run-many");
    assert_eq!(env.log_set(), ["a#build", "b#build"]);
    assert_eq!(last(&env), "vx run build --filter a --filter b", "vx last prints the vx spelling");
}

#[test]
fn affected_subcommand_and_since_are_run_affected() {
    let env = abc("");
    env.git_init("main");
    env.git_commit_all("initial");
    env.git_branch("feature");
    env.write("packages/c/file.txt", "two\n");

    let out = env.vx(&["affected", "-t", "build"]);
    out.assert_success();
    assert_notes(&out, "--affected");
    assert_eq!(env.log(), ["c#build"], "only the changed project\n{out}");
    assert_eq!(last(&env), "vx run build --affected");

    env.clear_log();
    let out = env.vx(&["run", "build", "--since", "main"]);
    out.assert_success();
    assert_notes(&out, "--affected=main");
    assert_eq!(env.log(), ["c#build"], "{out}");
    assert_eq!(last(&env), "vx run build --affected=main");
}

#[test]
fn scope_is_filter() {
    let env = abc("");
    let out = env.vx(&["run", "build", "--scope", "b"]);
    out.assert_success();
    assert_notes(&out, "--filter b");
    assert_eq!(env.log(), ["b#build"]);
    assert_eq!(last(&env), "vx run build --filter b");
}

#[test]
fn parallel_n_is_concurrency() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    // Each task marks itself running, logs how many are running, pauses,
    // and unmarks itself before it exits: the count never exceeds the limit.
    let command = format!(
        "touch \"${LOG_VAR}.running.$VX_PROJECT\"; ls \"${LOG_VAR}\".running.* | wc -l | tr -d ' ' >> \"${LOG_VAR}\"; \
         sleep 0.3; rm \"${LOG_VAR}.running.$VX_PROJECT\""
    );
    for p in ["p1", "p2", "p3", "p4", "p5"] {
        env.write(
            &format!("packages/{p}/vx.toml"),
            &format!("[project]\nname = \"{p}\"\n\n[tasks.build]\ncommand = {}\n", toml_str(&command)),
        );
    }
    for limit in [2, 1] {
        env.clear_log();
        let out = env.vx(&["run", "build", &format!("--parallel={limit}")]);
        out.assert_success();
        assert_notes(&out, &format!("--concurrency {limit}"));
        let counts: Vec<usize> = env.log().iter().map(|l| l.parse().expect("a count")).collect();
        assert_eq!(counts.len(), 5, "every task ran: {counts:?}");
        assert!(counts.iter().all(|&n| (1..=limit).contains(&n)), "at most {limit} at once: {counts:?}");
        assert_eq!(last(&env), format!("vx run build --concurrency {limit}"));
    }
}

#[test]
fn skip_nx_cache_forces_a_rerun() {
    let env = abc("inputs = [\"*.txt\"]\n");
    env.vx(&["run", "build"]).assert_success();
    assert_eq!(env.log_set(), ["a#build", "b#build", "c#build"]);
    env.clear_log();
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert_eq!(out.summary().cached, 3, "the second run is all hits\n{out}");
    assert!(env.log().is_empty(), "nothing re-ran: {:?}", env.log());

    let out = env.vx(&["run", "build", "--skip-nx-cache"]);
    out.assert_success();
    assert_notes(&out, "--force");
    assert_eq!(out.summary().cached, 0, "{out}");
    assert_eq!(env.log_set(), ["a#build", "b#build", "c#build"], "--skip-nx-cache re-runs cached tasks");
}

#[test]
fn dry_run_json_prints_the_plan() {
    let env = abc("");
    let out = env.vx(&["run", "build", "--dry-run=json"]);
    out.assert_success();
    assert_notes(&out, "--dry=json");
    let plan: serde_json::Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("stdout is the plan JSON: {e}\n{out}"));
    let ids: BTreeSet<&str> = plan["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("the plan has `tasks`\n{out}"))
        .iter()
        .map(|t| t["id"].as_str().expect("a task id"))
        .collect();
    assert_eq!(ids, BTreeSet::from(["a#build", "b#build", "c#build"]));
    assert!(env.log().is_empty(), "a dry run runs nothing: {:?}", env.log());
}

#[test]
fn head_is_refused_with_the_vx_way() {
    let env = abc("");
    let out = env.vx(&["run", "build", "--head", "x"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("--head"), "names the flag\n{out}");
    assert!(line.contains("--affected=BASE"), "hints at the vx spelling\n{out}");
    assert!(env.log().is_empty(), "nothing ran: {:?}", env.log());
}

// ------------------------------------------------------------ completions

#[test]
fn completions_print_a_script_per_shell() {
    let env = TestEnv::new();
    for shell in ["bash", "zsh", "fish"] {
        let out = env.vx(&["completions", shell]);
        out.assert_success();
        assert!(out.stdout.contains("COMPLETE"), "{shell}: the script calls back into vx\n{out}");
        assert!(out.stdout.contains("vx"), "{shell}: the script completes vx\n{out}");
        assert!(out.stderr.is_empty(), "{shell}\n{out}");
    }
    let out = env.vx(&["completions", "nushell"]);
    out.assert_code(2);
    assert!(out.error_line().contains("nushell"), "names the shell it does not know\n{out}");
}

#[test]
fn completion_offers_task_ids_from_the_workspace() {
    let env = web_and_lib();
    env.write(
        "packages/web/vx.toml",
        "[project]\nname = \"web\"\n\n[tasks.build]\ncommand = \"true\"\n\n[tasks.test]\ncommand = \"true\"\n",
    );
    // What clap_complete's bash script sets before it calls back.
    let out = env
        .vx_command(&["--", "vx", "run", "we"])
        .env("COMPLETE", "bash")
        .env("_CLAP_COMPLETE_INDEX", "2")
        .env("_CLAP_COMPLETE_COMP_TYPE", "9")
        .env("_CLAP_COMPLETE_SPACE", "true")
        .output();
    out.assert_success();
    let offered: Vec<&str> = out.stdout.split_whitespace().collect();
    assert!(offered.contains(&"web#build"), "web#build is offered\n{out}");
    assert!(offered.contains(&"web#test"), "web#test is offered\n{out}");
    assert!(offered.iter().all(|c| c.starts_with("we")), "only what matches `we`\n{out}");
}

// ---------------------------------------------------------- GitHub Actions

#[test]
fn github_actions_groups_annotates_and_appends_the_step_summary() {
    let env = web_and_lib();
    set_lib_command(&env, "echo lib-out; echo lib-err >&2; exit 3");
    env.write(
        "packages/web/vx.toml",
        "[project]\nname = \"web\"\n\n[tasks.build]\ncommand = \"echo web-one; echo web-two\"\n",
    );
    let summary_file = env.root().parent().expect("the workspace has a parent").join("step-summary.md");
    std::fs::write(&summary_file, "# Earlier step\n\nkept\n").expect("pre-fill the step summary");

    let out = env
        .vx_command(&["run", "build", "--continue"])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary_file.to_string_lossy())
        .output();
    out.assert_code(1);

    assert_eq!(group(&out, "web#build"), ["web#build: web-one", "web#build: web-two"]);
    assert_eq!(group(&out, "lib#build"), ["lib#build: lib-out", "lib#build: lib-err"]);
    let errors: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("::error")).collect();
    assert_eq!(errors.len(), 1, "one annotation, for the failed task\n{out}");
    assert!(errors[0].starts_with("::error title=lib#build failed::"), "{out}");
    assert!(errors[0].contains("exit code 3"), "the annotation says why\n{out}");
    assert!(errors[0].contains("lib-err"), "the annotation carries the log tail\n{out}");

    let summary = std::fs::read_to_string(&summary_file).expect("read the step summary");
    assert!(summary.starts_with("# Earlier step\n\nkept\n"), "appended, not overwritten:\n{summary}");
    assert!(summary.contains("| Task | Status |"), "the markdown table:\n{summary}");
    let row = |id: &str| summary.lines().find(|l| l.starts_with(&format!("| `{id}` |"))).map(str::to_string);
    assert!(row("lib#build").is_some_and(|r| r.contains("failed")), "{summary}");
    assert!(row("web#build").is_some_and(|r| r.contains("ok")), "{summary}");
}

/// The lines between `::group::ID` and the next `::endgroup::`; exactly one
/// group per task.
#[track_caller]
fn group<'a>(out: &'a Output, id: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = out.stdout.lines().collect();
    let opener = format!("::group::{id}");
    let starts: Vec<usize> = lines.iter().enumerate().filter(|(_, l)| **l == opener).map(|(i, _)| i).collect();
    assert_eq!(starts.len(), 1, "one group for {id}\n{out}");
    let body = &lines[starts[0] + 1..];
    let end = body.iter().position(|l| *l == "::endgroup::").unwrap_or_else(|| panic!("{id}'s group is closed\n{out}"));
    body[..end].to_vec()
}

// -------------------------------------------------------------- --summary

#[test]
fn summary_lists_the_slowest_tasks_and_cache_counts() {
    let env = abc("inputs = [\"*.txt\"]\n");
    let out = env.vx(&["run", "build", "--summary"]);
    out.assert_success();
    let slowest = details(&out, "Slowest:");
    let listed: BTreeSet<&str> = slowest.iter().filter_map(|l| l.split_whitespace().nth(1)).collect();
    assert_eq!(listed, BTreeSet::from(["a#build", "b#build", "c#build"]), "the tasks that ran\n{out}");
    assert!(cache_line(&out).starts_with("Cache: 0 of 3 "), "first run: no hits\n{out}");

    let out = env.vx(&["run", "build", "--summary"]);
    out.assert_success();
    assert_eq!(out.summary().cached, 3, "{out}");
    let slowest = details(&out, "Slowest:");
    assert!(slowest.is_empty(), "no task ran, none is listed\n{out}");
    assert!(cache_line(&out).starts_with("Cache: 3 of 3 "), "second run: all hits\n{out}");
    assert!(cache_line(&out).contains("100%"), "{out}");
}

/// The indented lines under the line starting with `head`.
#[track_caller]
fn details<'a>(out: &'a Output, head: &str) -> Vec<&'a str> {
    let mut lines = out.stdout.lines().skip_while(|l| !l.starts_with(head));
    assert!(lines.next().is_some(), "no `{head}` line\n{out}");
    lines.take_while(|l| l.starts_with("  ")).collect()
}

#[track_caller]
fn cache_line(out: &Output) -> &str {
    out.stdout.lines().find(|l| l.starts_with("Cache: ")).unwrap_or_else(|| panic!("no `Cache:` line\n{out}"))
}

// ------------------------------------------------------------ status line

/// Three projects whose builds print three lines each.
fn chatty() -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    for p in ["a", "b", "c"] {
        env.write(
            &format!("packages/{p}/vx.toml"),
            &format!(
                "[project]\nname = \"{p}\"\n\n[tasks.build]\ncommand = \"echo {p}-one; echo {p}-two; echo {p}-three\"\n"
            ),
        );
    }
    env
}

fn chatty_lines() -> Vec<String> {
    ["a", "b", "c"].iter().flat_map(|p| ["one", "two", "three"].map(|w| format!("{p}#build: {p}-{w}"))).collect()
}

#[test]
fn no_status_line_when_stdout_is_piped() {
    let env = chatty();
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert!(!out.stdout.contains("\r\x1b[2K"), "no status line redraws in piped output\n{out:?}");
    assert!(!out.stdout.contains("[3/3]"), "no status text in piped output\n{out}");
    for line in chatty_lines() {
        assert!(out.stdout.lines().any(|l| l == line), "`{line}` is printed\n{out}");
    }
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[test]
fn status_line_on_a_terminal_keeps_task_lines_whole() {
    let env = chatty();
    let home = env.root().parent().expect("the workspace has a parent").join("home");
    let raw = in_terminal(env.root(), &home, &["run", "build"]);
    assert!(raw.contains("[3/3]"), "the status line shows done/total\n{raw:?}");
    assert!(raw.contains("\r\x1b[2K"), "the status line is cleared before output\n{raw:?}");
    // Each task line is written whole after the status line is cleared,
    // and ends before the status line is drawn again.
    for line in chatty_lines() {
        assert!(raw.contains(&format!("\x1b[2K{line}\r\n")), "`{line}` is intact\n{raw:?}");
    }
    assert!(raw.contains("\x1b[2KTasks: 3 run, 3 succeeded"), "the summary is intact\n{raw:?}");
}

/// Runs `vx ARGS` in `dir` under a pseudo-terminal (util-linux `script`),
/// with a hermetic environment (no `CI`), and returns its raw output.
fn in_terminal(dir: &Path, home: &Path, args: &[&str]) -> String {
    let mut line = quote(&vx_bin().to_string_lossy());
    for a in args {
        line.push(' ');
        line.push_str(&quote(a));
    }
    #[expect(clippy::disallowed_methods, reason = "the test drives a terminal, outside any task")]
    let mut cmd = Command::new("script");
    cmd.args(["-q", "-e", "-c", &line, "/dev/null"])
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()))
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .env("LANG", "C")
        .env("LC_ALL", "C")
        .env("TERM", "dumb")
        .stdin(std::process::Stdio::null());
    let out = cmd.output().expect("util-linux `script` must be installed");
    let raw = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "vx failed under a terminal: {:?}\n{raw:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    raw
}
