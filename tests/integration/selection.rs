//! Selection: `project#task`, bare tasks, `--filter` in every form (unioned,
//! `!` subtracted), scoping to the project vx is started in, and `-C`.
//!
//! Tasks here have no task-level `depends-on`, so what runs is exactly
//! what was selected; project dependencies only matter to `...` filters.

use crate::common::{TestEnv, log_cmd, project_toml};

/// ui ← web ← site, ui ← admin, lib-a ← lib-b (arrows point at dependents).
/// Every project has `build`; ui and web also have `test`.
fn fixture() -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*", "apps/*", "libs/*"]);
    let with_test = |name: &str| {
        let build = log_cmd(&format!("{name}#build"));
        let test = log_cmd(&format!("{name}#test"));
        (build, test)
    };
    for (dir, name, deps) in [
        ("packages/ui", "ui", &[][..]),
        ("packages/web", "web", &["ui"][..]),
        ("apps/site", "site", &["web"][..]),
        ("apps/admin", "admin", &["ui"][..]),
        ("libs/lib-a", "lib-a", &[][..]),
        ("libs/lib-b", "lib-b", &["lib-a"][..]),
    ] {
        let (build, test) = with_test(name);
        let toml = if name == "ui" || name == "web" {
            project_toml(name, deps, &[("build", &build, &[]), ("test", &test, &[])])
        } else {
            project_toml(name, deps, &[("build", &build, &[])])
        };
        env.write(&format!("{dir}/vx.toml"), &toml);
        env.write(&format!("{dir}/src/index.js"), "export {};\n");
    }
    env
}

/// Runs `vx ARGS` in `dir` and returns which build/test tasks ran, sorted.
fn ran(env: &TestEnv, dir: &str, args: &[&str]) -> Vec<String> {
    env.clear_log();
    env.vx_in(dir, args).assert_success();
    env.log_set()
}

fn builds(names: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = names.iter().map(|n| format!("{n}#build")).collect();
    out.sort();
    out
}

const ALL: [&str; 6] = ["admin", "lib-a", "lib-b", "site", "ui", "web"];

#[test]
fn exact_task_id_runs_one_task() {
    let env = fixture();
    assert_eq!(ran(&env, ".", &["run", "web#build"]), builds(&["web"]));
}

#[test]
fn bare_task_runs_in_every_project_that_has_it() {
    let env = fixture();
    assert_eq!(ran(&env, ".", &["run", "build"]), builds(&ALL));
    assert_eq!(ran(&env, ".", &["run", "test"]), ["ui#test", "web#test"], "projects without `test` are passed over");
}

#[test]
fn several_tasks_at_once() {
    let env = fixture();
    assert_eq!(ran(&env, ".", &["run", "test", "lib-a#build"]), ["lib-a#build", "ui#test", "web#test"]);
}

#[test]
fn filter_by_name() {
    let env = fixture();
    assert_eq!(ran(&env, ".", &["run", "build", "--filter", "web"]), builds(&["web"]));
    assert_eq!(ran(&env, ".", &["run", "build", "-F", "web"]), builds(&["web"]), "-F is --filter");
}

#[test]
fn filter_by_name_glob() {
    let env = fixture();
    assert_eq!(ran(&env, ".", &["run", "build", "--filter", "lib-*"]), builds(&["lib-a", "lib-b"]));
}

#[test]
fn filter_by_path_glob() {
    let env = fixture();
    assert_eq!(ran(&env, ".", &["run", "build", "--filter", "./apps/*"]), builds(&["admin", "site"]));
    assert_eq!(ran(&env, ".", &["run", "build", "--filter", "./libs/lib-b"]), builds(&["lib-b"]));
}

#[test]
fn path_filter_is_relative_to_the_current_directory() {
    let env = fixture();
    assert_eq!(ran(&env, "packages/web", &["run", "build", "--filter", "../../apps/*"]), builds(&["admin", "site"]));
    assert_eq!(ran(&env, "apps", &["run", "build", "--filter", "./site"]), builds(&["site"]));
}

#[test]
fn filter_with_dependencies() {
    let env = fixture();
    assert_eq!(ran(&env, ".", &["run", "build", "--filter", "site..."]), builds(&["site", "ui", "web"]));
}

#[test]
fn filter_with_dependents() {
    let env = fixture();
    assert_eq!(ran(&env, ".", &["run", "build", "--filter", "...ui"]), builds(&["admin", "site", "ui", "web"]));
}

#[test]
fn filter_exclusion_alone_means_everything_else() {
    let env = fixture();
    let expected: Vec<&str> = ALL.iter().copied().filter(|n| *n != "web").collect();
    assert_eq!(ran(&env, ".", &["run", "build", "--filter", "!web"]), builds(&expected));
}

#[test]
fn filters_are_unioned_and_exclusions_subtracted() {
    let env = fixture();
    assert_eq!(
        ran(&env, ".", &["run", "build", "--filter", "web", "--filter", "lib-a"]),
        builds(&["lib-a", "web"]),
        "two filters select the union"
    );
    assert_eq!(
        ran(&env, ".", &["run", "build", "--filter", "...ui", "--filter", "!site", "--filter", "lib-b"]),
        builds(&["admin", "lib-b", "ui", "web"]),
    );
}

/// As in Turborepo, a filter that selects no package is an empty run
/// (exit 0), said once with the nearest name; a misspelt task is still
/// exit 2 (`a_transposed_typo_still_gets_a_suggestion`).
#[test]
fn filter_matching_nothing_runs_nothing_and_says_so() {
    let env = fixture();
    let out = env.vx(&["run", "build", "--filter", "webb"]);
    out.assert_success();
    let warning = out.stderr.lines().find(|l| l.contains("--filter `webb` matches no project")).unwrap_or_default();
    assert!(warning.contains("did you mean `web`?"), "{out}");
    assert!(out.stdout.contains("nothing to run: the filters select no task"), "{out}");
    assert!(env.log().is_empty());
}

#[test]
fn malformed_filter_is_a_usage_error() {
    let env = fixture();
    for bad in ["[main", "...", "{apps/*"] {
        let out = env.vx(&["run", "build", "--filter", bad]);
        out.assert_code(2);
        assert!(out.error_line().contains("--filter"), "{out}");
    }
}

#[test]
fn inside_a_project_a_bare_task_means_that_project() {
    let env = fixture();
    assert_eq!(ran(&env, "packages/web", &["run", "build"]), builds(&["web"]));
    assert_eq!(ran(&env, "packages/web/src", &["run", "build"]), builds(&["web"]), "any depth inside the project");
}

#[test]
fn inside_a_project_all_widens_to_every_project() {
    let env = fixture();
    assert_eq!(ran(&env, "packages/web", &["run", "build", "--all"]), builds(&ALL));
}

#[test]
fn inside_a_project_a_filter_replaces_the_scope() {
    let env = fixture();
    assert_eq!(ran(&env, "packages/web", &["run", "build", "--filter", "lib-a"]), builds(&["lib-a"]));
}

#[test]
fn inside_a_project_an_exact_id_names_any_project() {
    let env = fixture();
    assert_eq!(ran(&env, "packages/web", &["run", "lib-b#build"]), builds(&["lib-b"]));
}

#[test]
fn outside_any_project_a_bare_task_means_every_project() {
    let env = fixture();
    assert_eq!(ran(&env, "apps", &["run", "build"]), builds(&ALL));
}

#[test]
fn inside_a_project_without_the_task_the_error_points_at_all() {
    let env = fixture();
    let out = env.vx_in("apps/site", &["run", "test"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("`site`") && line.contains("`test`"), "{out}");
    assert!(line.contains("--all"), "says how to widen the selection\n{out}");
}

#[test]
fn dash_c_runs_as_if_started_there() {
    let env = fixture();
    assert_eq!(ran(&env, ".", &["-C", "packages/web", "run", "build"]), builds(&["web"]));
    assert_eq!(ran(&env, "packages/web", &["-C", "../..", "run", "build"]), builds(&ALL));
    assert_eq!(ran(&env, ".", &["run", "build", "-C", "libs/lib-a"]), builds(&["lib-a"]), "-C is global");
    let root = env.root().to_str().expect("utf-8 temp path").to_string();
    assert_eq!(ran(&env, "/", &["-C", &root, "run", "build"]), builds(&ALL), "an absolute -C from anywhere");
}

#[test]
fn dash_c_to_a_missing_directory_is_a_usage_error() {
    let env = fixture();
    let out = env.vx(&["-C", "no/such/dir", "run", "build"]);
    out.assert_code(2);
    assert!(out.error_line().contains("no/such/dir"), "{out}");
}

#[test]
fn unknown_task_and_project_names_get_suggestions() {
    let env = fixture();
    let cases = [
        (&["run", "web#biuld"][..], "did you mean `web#build`?"),
        (&["run", "webb#build"][..], "did you mean `web#build`?"),
        (&["run", "biuld"][..], "did you mean `build`?"),
    ];
    for (args, hint) in cases {
        let out = env.vx(args);
        out.assert_code(2);
        assert!(out.error_line().contains(hint), "{args:?}\n{out}");
    }
    assert!(env.log().is_empty());
}

/// Swapped letters are the commonest typo; `wbe` is one edit (a
/// transposition) from `web` and far from every other name.
#[test]
fn a_transposed_typo_still_gets_a_suggestion() {
    let env = fixture();
    // A filter that matches nothing is an empty run (exit 0), with one
    // warning that still suggests the name.
    let out = env.vx(&["run", "build", "--filter", "wbe"]);
    out.assert_success();
    assert!(out.stderr.contains("--filter `wbe` matches no project; did you mean `web`?"), "{out}");
    let cases = [
        (&["run", "wbe#build"][..], "did you mean `web#build`?"),
        (&["show", "wbe"][..], "did you mean `web`?"),
        (&["run", "web#biuld"][..], "did you mean `web#build`?"),
    ];
    for (args, hint) in cases {
        let out = env.vx(args);
        out.assert_code(2);
        assert!(out.error_line().contains(hint), "{args:?}\n{out}");
    }
}

#[test]
fn run_without_a_task_lists_the_tasks() {
    let env = fixture();
    let out = env.vx(&["run"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("no task named"), "{out}");
    // Without a terminal there is no picker: the candidates go to stdout.
    assert!(out.stdout.lines().any(|l| l.ends_with("#build")), "{out}");
    assert!(out.stdout.lines().any(|l| l.ends_with("#test")), "{out}");
}

/// `--filter tag:GLOB` selects the projects with a matching tag, and
/// composes with `!`, `...` and other filters like any filter.
#[test]
fn filter_by_tag_selects_tagged_projects() {
    let env = fixture();
    let tag = |dir: &str, tags: &str| {
        let path = format!("{dir}/vx.toml");
        let text = env.read(&path).replacen("[project]\n", &format!("[project]\ntags = [{tags}]\n"), 1);
        env.write(&path, &text);
    };
    tag("apps/site", "\"scope:app\", \"type:web\"");
    tag("apps/admin", "\"scope:app\"");
    tag("packages/ui", "\"scope:shared\"");
    assert_eq!(ran(&env, ".", &["run", "build", "--filter", "tag:scope:app"]), builds(&["admin", "site"]));
    assert_eq!(
        ran(&env, ".", &["run", "build", "--filter", "tag:scope:*", "--filter", "!tag:type:web"]),
        builds(&["admin", "ui"])
    );
    assert_eq!(ran(&env, ".", &["run", "build", "--filter", "tag:scope:shared...", "--only"]), builds(&["ui"]));
    assert_eq!(
        ran(&env, ".", &["run", "build", "--filter", "...tag:scope:shared"]),
        builds(&["admin", "site", "ui", "web"]),
        "ui and everything that depends on it"
    );
    let out = env.vx(&["run", "build", "--filter", "tag:nope"]);
    out.assert_success();
    assert!(out.stderr.contains("--filter `tag:nope` matches no project's tags"), "{out}");
    let bad = env.vx(&["run", "build", "--filter", "tag:"]);
    bad.assert_code(2);
    assert!(bad.error_line().contains("empty tag in `tag:`"), "{bad}");
}
