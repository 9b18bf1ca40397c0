//! Tags and `[[workspace.boundaries]]` (issue 39): tags from `vx.toml` and
//! `package.json` select projects with `--filter tag:…`; a dependency a
//! rule refuses stops every command that loads the workspace with one
//! located line, and `vx lock --check` lists every such dependency.

use crate::common::{TestEnv, log_cmd};

/// The hint each violation carries.
const HINT: &str =
    "remove the dependency, or change the projects' tags or the rule ([[workspace.boundaries]] in docs/config.md)";

/// `web` (scope:app) depends on `ui` and `admin`; `admin` (scope:admin,
/// type:app) on `ui` (scope:shared). Every build logs its project.
fn workspace(rules: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", &format!("[workspace]\nprojects = [\"apps/*\", \"packages/*\"]\n{rules}"));
    let project = |dir: &str, name: &str, tags: &str, deps: &str| {
        env.write(
            &format!("{dir}/vx.toml"),
            &format!(
                "[project]\nname = \"{name}\"\ntags = [{tags}]\ndepends-on = [{deps}]\n\n[tasks.build]\ncommand = {:?}\ndepends-on = [\"^build\"]\n",
                log_cmd(name)
            ),
        );
    };
    project("apps/web", "web", "\"scope:app\"", "\"ui\", \"admin\"");
    project("apps/admin", "admin", "\"scope:admin\", \"type:app\"", "\"ui\"");
    project("packages/ui", "ui", "\"scope:shared\"", "");
    env
}

const ONLY_SHARED: &str =
    "\n[[workspace.boundaries]]\nfrom = \"scope:app\"\nallow = [\"scope:shared\", \"scope:app\"]\n";

#[test]
fn a_refused_dependency_stops_the_load_with_one_located_line() {
    let env = workspace(ONLY_SHARED);
    let expected = format!(
        "vx: error: apps/web/vx.toml:4:21: web (scope:app) may not depend on admin (scope:admin, type:app): \
         the rule at vx.toml:4:1 allows only scope:shared, scope:app; {HINT}"
    );
    for args in [&["run", "build"][..], &["show"], &["run", "build", "--filter", "ui"], &["lock"]] {
        let out = env.vx(args);
        out.assert_code(2);
        assert_eq!(out.error_line(), expected, "{args:?}");
    }
    assert!(env.log().is_empty(), "nothing ran: {:?}", env.log());

    // Without the dependency, the same rule lets the build through.
    env.write("apps/web/vx.toml", &env.read("apps/web/vx.toml").replace(", \"admin\"", ""));
    env.vx(&["run", "build"]).assert_success();
    assert_eq!(env.log_set(), ["admin", "ui", "web"]);
}

/// Every rule below applies to some project, and none refuses a
/// dependency: the second says nobody may depend on a `scope:app` project.
#[test]
fn allowed_dependencies_pass_every_rule() {
    let env = workspace(
        "\n[[workspace.boundaries]]\nfrom = \"scope:*\"\nallow = [\"scope:*\"]\n\
         \n[[workspace.boundaries]]\ndeny = [\"scope:app\"]\n\
         \n[[workspace.boundaries]]\nfrom = [\"scope:admin\", \"type:app\"]\nallow = [\"scope:shared\"]\n",
    );
    env.vx(&["run", "build"]).assert_success();
    crate::common::assert_before(&env.log(), "ui", "admin");
    crate::common::assert_before(&env.log(), "admin", "web");
    env.vx(&["lock"]).assert_success();
    let out = env.vx(&["lock", "--check"]);
    out.assert_success();
    assert_eq!(out.stdout, "vx.lock is up to date\n", "{out}");
}

#[test]
fn lock_check_lists_every_violation_and_the_load_counts_them() {
    let env = workspace(
        "\n[[workspace.boundaries]]\nfrom = \"scope:app\"\nallow = [\"scope:app\"]\n\
         \n[[workspace.boundaries]]\ndeny = [\"type:app\"]\n",
    );
    // One dependency of `web` comes from its package.json.
    env.write("apps/web/vx.toml", &env.read("apps/web/vx.toml").replace("\"ui\", \"admin\"", "\"admin\""));
    env.write("packages/ui/package.json", "{ \"name\": \"@acme/ui\" }\n");
    env.write(
        "apps/web/package.json",
        "{\n  \"name\": \"web\",\n  \"dependencies\": {\n    \"@acme/ui\": \"*\"\n  }\n}\n",
    );
    env.vx(&["lock"]).assert_code(2);

    let out = env.vx(&["lock", "--check"]);
    out.assert_code(2);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        lines,
        [
            "vx: error: apps/web/vx.toml:4:15: web (scope:app) may not depend on admin (scope:admin, type:app): the rule at vx.toml:4:1 allows only scope:app",
            "vx: error: apps/web/vx.toml:4:15: web (scope:app) may not depend on admin (type:app): the rule at vx.toml:8:1 denies type:app",
            "vx: error: apps/web/package.json:4:5: web (scope:app) may not depend on ui (scope:shared): the rule at vx.toml:4:1 allows only scope:app",
            "vx: error: there is no vx.lock; run `vx lock` and commit the file",
            &format!("vx: error: 3 dependencies break [[workspace.boundaries]]; {HINT}"),
        ],
        "{out}"
    );

    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    assert_eq!(
        out.error_line(),
        format!(
            "vx: error: {} (and 2 more); `vx lock --check` lists them all; {HINT}",
            &lines[0]["vx: error: ".len()..]
        )
    );
}

#[test]
fn package_json_tags_join_vx_toml_tags_and_select_everywhere() {
    let env = TestEnv::new();
    env.write("package.json", r#"{ "name": "root", "private": true, "workspaces": ["apps/*", "packages/*"] }"#);
    let package = |dir: &str, name: &str, tags: &str| {
        env.write(
            &format!("{dir}/package.json"),
            &format!(
                r#"{{ "name": "{name}", "scripts": {{ "build": "{}" }}, "vx": {{ "tags": [{tags}] }} }}"#,
                log_cmd(name).replace('"', "\\\"")
            ),
        );
    };
    package("apps/site", "site", r#""scope:app", "type:web""#);
    package("apps/admin", "admin", r#""scope:app""#);
    package("packages/ui", "ui", r#""scope:shared", "type:lib""#);
    package("packages/tools", "tools", "");
    // vx.toml's tags come first; a tag both list is kept once.
    env.write("packages/ui/vx.toml", "[project]\ntags = [\"type:lib\", \"owner:design\"]\n");

    let ran = |args: &[&str]| {
        env.clear_log();
        env.vx(args).assert_success();
        env.log_set()
    };
    assert_eq!(ran(&["run", "build", "--filter", "tag:scope:app"]), ["admin", "site"]);
    assert_eq!(ran(&["run", "build", "--filter", "tag:scope:*", "--filter", "!tag:type:web"]), ["admin", "ui"]);
    assert_eq!(ran(&["run", "build", "--filter", "!tag:scope:*"]), ["tools"]);
    assert_eq!(ran(&["run", "build", "--filter", "tag:owner:*"]), ["ui"]);

    let out = env.vx(&["show", "--format", "json", "--filter", "tag:type:*", "--filter", "!tag:*web"]);
    out.assert_success();
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("vx show --format json is JSON");
    let projects = doc["projects"].as_array().expect("projects");
    assert_eq!(projects.len(), 1, "{out}");
    assert_eq!(projects[0]["name"], "ui");
    assert_eq!(projects[0]["tags"], serde_json::json!(["type:lib", "owner:design", "scope:shared"]));
}

#[test]
fn a_package_json_tag_list_of_the_wrong_type_is_one_located_error() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/ui/package.json", "{\n  \"name\": \"ui\",\n  \"vx\": { \"tags\": \"scope:shared\" }\n}\n");
    let out = env.vx(&["show"]);
    out.assert_code(2);
    assert_eq!(
        out.error_line(),
        "vx: error: packages/ui/package.json:3:32: invalid package.json: invalid type: string \"scope:shared\", \
         expected `vx.tags` as an array of tag strings; \
         vx reads `\"vx\": { \"tags\": [\"scope:app\"] }` in a package.json: an object holding an array of strings"
    );
}

#[test]
fn a_bad_rule_is_a_located_config_error() {
    for (rule, expected) in [
        ("from = \"scope:[\"\ndeny = [\"x\"]\n", "vx: error: vx.toml:5:8: invalid tag glob `scope:[`: "),
        ("form = \"scope:app\"\ndeny = [\"x\"]\n", "vx: error: vx.toml:5:1: unknown key `form`; did you mean `from`?"),
        ("from = \"scope:app\"\n", "vx: error: vx.toml:4:1: a [[workspace.boundaries]] rule needs `allow` or `deny`"),
        ("deny = [\"!\"]\n", "vx: error: vx.toml:5:9: `!` is not a tag pattern"),
    ] {
        let env = workspace(&format!("\n[[workspace.boundaries]]\n{rule}"));
        let out = env.vx(&["show"]);
        out.assert_code(2);
        assert!(out.error_line().starts_with(expected), "{rule}\n{out}");
    }
}
