//! `--affected` and the lockfile, on real git repositories with lockfiles
//! written by the package managers (`host/src/lockfile/fixtures`): a
//! change selects only the tasks whose slice moved (and their dependents),
//! naming the packages; what vx cannot compare selects everything, saying
//! why. A property test holds the selection to the truth it stands for:
//! after random edits of a lockfile, the tasks `--affected` selects are
//! exactly the tasks whose cache key changed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::TestEnv;
use crate::common::fixtures::task;
use crate::common::log_cmd;
use crate::common::query::query_affected_builds;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/src/lockfile/fixtures")
}

fn fixture(format: &str, side: &str, rel: &str) -> String {
    std::fs::read_to_string(fixtures().join(format).join(side).join(rel)).expect("read a fixture")
}

const PROJECTS: [&str; 3] = ["apps/web", "apps/api", "packages/ui"];

/// A fixture workspace (`FORMAT/before`) committed on `main`: a cached
/// `build` taking `src/**` in each project, after its dependencies'
/// builds, and `api` depending on `web` (so `web`'s dependents show).
fn lockfile_repo(format: &str, lockfile: &str) -> TestEnv {
    let env = TestEnv::new();
    for rel in ["package.json", lockfile]
        .into_iter()
        .chain(PROJECTS.map(|p| format!("{p}/package.json")).iter().map(String::as_str))
    {
        env.write(rel, &fixture(format, "before", rel));
    }
    env.write("vx.toml", "[workspace]\nprojects = [\"apps/*\", \"packages/*\"]\n");
    env.write(".gitignore", ".vx/\n");
    for dir in PROJECTS {
        let name = dir.rsplit('/').next().expect("a name");
        env.write(&format!("{dir}/src/index.js"), name);
        let project = if name == "api" { "[project]\ndepends-on = [\"@fx/web\"]\n\n" } else { "" };
        let build = task("build", &log_cmd(name), "inputs = [\"src/**\"]\ndepends-on = [\"^build\"]\n");
        env.write(&format!("{dir}/vx.toml"), &format!("{project}{build}"));
    }
    env.git_init("main");
    env.git_commit_all("initial");
    env
}

/// The affected builds with their reasons (those the plan pulls in only as
/// dependencies left out).
#[track_caller]
fn affected(env: &TestEnv) -> Vec<(String, Vec<Value>)> {
    query_affected_builds(env).into_iter().filter(|(_, reasons)| !reasons.is_empty()).collect()
}

fn ids(tasks: &[(String, Vec<Value>)]) -> Vec<&str> {
    tasks.iter().map(|(id, _)| id.as_str()).collect()
}

/// Only web's slice moves with the upgrade (its `package.json` and the
/// lockfile, as the package manager left them): web's build is selected,
/// naming the move, and api's for depending on it; ui's is not. (yarn
/// classic records no workspace's ranges: without the `package.json`, web
/// still resolves the 1.0.0 that api keeps, and nothing moves.)
fn an_upgrade_selects_only_the_projects_whose_slice_moved(format: &str, lockfile: &str) {
    let env = lockfile_repo(format, lockfile);
    env.write(lockfile, &fixture(format, "after", lockfile));
    env.write("apps/web/package.json", &fixture(format, "after", "apps/web/package.json"));
    let tasks = affected(&env);
    assert_eq!(ids(&tasks), ["@fx/api#build", "@fx/web#build"], "{format}: {tasks:?}");
    // Its manifest is a reason too; the lockfile's is the one under test.
    let web = tasks[1].1.iter().find(|r| r["kind"] == "lockfile");
    let web = web.unwrap_or_else(|| panic!("{format}: no lockfile reason for web: {tasks:?}"));
    assert_eq!(web["file"], lockfile);
    let changes: Vec<&str> = web["changes"].as_array().expect("changes").iter().filter_map(Value::as_str).collect();
    assert!(changes.contains(&"vxf-pad 1.0.0 → 1.0.1"), "{format}: names the move: {changes:?}");
    assert!(web["text"].as_str().expect("text").starts_with("lockfile: "), "{web}");
    assert_eq!(tasks[0].1[0]["kind"], "dependency", "{format}: {tasks:?}");
    assert_eq!(tasks[0].1[0]["task"], "@fx/web#build");
    let out = env.vx(&["run", "build", "--affected", "--dry"]);
    out.assert_success();
    let web = out.stdout.lines().find(|l| l.starts_with("@fx/web#build")).expect("web is planned");
    assert!(web.contains("lockfile: ") && web.contains("vxf-pad 1.0.0 → 1.0.1"), "{out}");
}

#[test]
fn an_npm_lockfile_upgrade_selects_only_its_projects_tasks_and_dependents() {
    an_upgrade_selects_only_the_projects_whose_slice_moved("npm", "package-lock.json");
}

#[test]
fn a_pnpm_lockfile_upgrade_selects_only_its_projects_tasks_and_dependents() {
    an_upgrade_selects_only_the_projects_whose_slice_moved("pnpm9", "pnpm-lock.yaml");
    an_upgrade_selects_only_the_projects_whose_slice_moved("pnpm6", "pnpm-lock.yaml");
}

#[test]
fn a_yarn_lockfile_upgrade_selects_only_its_projects_tasks_and_dependents() {
    an_upgrade_selects_only_the_projects_whose_slice_moved("yarn1", "yarn.lock");
    an_upgrade_selects_only_the_projects_whose_slice_moved("berry", "yarn.lock");
}

#[test]
fn a_bun_lockfile_upgrade_selects_only_its_projects_tasks_and_dependents() {
    an_upgrade_selects_only_the_projects_whose_slice_moved("bun", "bun.lock");
    an_upgrade_selects_only_the_projects_whose_slice_moved("bun12", "bun.lock");
}

#[test]
fn a_workspace_below_the_repositorys_top_reads_its_own_lockfile_at_the_base() {
    let env = TestEnv::new();
    let mono = |rel: &str| format!("mono/{rel}");
    for rel in ["package.json", "package-lock.json"]
        .into_iter()
        .chain(PROJECTS.map(|p| format!("{p}/package.json")).iter().map(String::as_str))
    {
        env.write(&mono(rel), &fixture("npm", "before", rel));
    }
    // A lockfile at the repository's top is not the workspace's.
    env.write("package-lock.json", "{}\n");
    env.write(&mono("vx.toml"), "[workspace]\nprojects = [\"apps/*\", \"packages/*\"]\n");
    for dir in PROJECTS {
        env.write(&mono(&format!("{dir}/src/index.js")), dir);
        env.write(&mono(&format!("{dir}/vx.toml")), &task("build", &log_cmd(dir), "inputs = [\"src/**\"]\n"));
    }
    env.write(".gitignore", ".vx/\n");
    env.git_init("main");
    env.git_commit_all("initial");
    env.write(&mono("package-lock.json"), &fixture("npm", "after", "package-lock.json"));
    let out = env.vx_in("mono", &["query", "build", "--affected"]);
    out.assert_success();
    assert_eq!(out.stdout, "@fx/web#build\n", "{out}");
}

#[test]
fn the_roots_slice_moving_selects_every_task() {
    let env = lockfile_repo("npm", "package-lock.json");
    let lock = env.read("package-lock.json");
    let entry = lock.find("\"node_modules/vxf-test\"").expect("the root's vxf-test");
    let (head, tail) = lock.split_at(entry);
    env.write(
        "package-lock.json",
        &format!("{head}{}", tail.replacen("\"integrity\": \"sha512-", "\"integrity\": \"sha512-X", 1)),
    );
    let tasks = affected(&env);
    assert_eq!(ids(&tasks), ["@fx/api#build", "@fx/ui#build", "@fx/web#build"]);
    let reason = &tasks[0].1[0];
    assert_eq!((reason["kind"].as_str(), reason["root"].as_bool()), (Some("lockfile"), Some(true)), "{reason}");
    assert_eq!(reason["changes"][0], "vxf-test 1.0.0 integrity changed");
}

#[test]
fn an_old_lockfile_vx_cannot_read_selects_everything_saying_why() {
    let env = lockfile_repo("npm", "package-lock.json");
    let good = env.read("package-lock.json");
    env.write("package-lock.json", "{ \"lockfileVersion\": 3, \"packages\": ");
    env.git_commit_all("a broken lockfile");
    env.write("package-lock.json", &good);
    let tasks = affected(&env);
    assert_eq!(ids(&tasks), ["@fx/api#build", "@fx/ui#build", "@fx/web#build"]);
    for (id, reasons) in &tasks {
        assert_eq!(reasons[0]["kind"], "lockfile-all", "{id}: {reasons:?}");
        let why = reasons[0]["why"].as_str().expect("why");
        assert!(why.starts_with("vx cannot read it as it was at main: "), "{why}");
    }
    let out = env.vx(&["run", "build", "--affected=HEAD", "--dry"]);
    out.assert_success();
    assert!(out.stdout.contains("affected: lockfile package-lock.json: vx cannot read it as it was at HEAD"), "{out}");
}

#[test]
fn a_new_lockfile_or_a_new_package_manager_selects_everything_saying_why() {
    let env = lockfile_repo("npm", "package-lock.json");
    env.remove("package-lock.json");
    env.git_commit_all("no lockfile");
    env.write("package-lock.json", &fixture("npm", "before", "package-lock.json"));
    let tasks = affected(&env);
    assert_eq!(tasks.len(), 3, "{tasks:?}");
    assert_eq!(tasks[0].1[0]["why"], "it is new since main", "{tasks:?}");

    let env = lockfile_repo("npm", "package-lock.json");
    env.remove("package-lock.json");
    env.write("pnpm-lock.yaml", &fixture("pnpm9", "before", "pnpm-lock.yaml"));
    let tasks = affected(&env);
    assert_eq!(tasks.len(), 3, "{tasks:?}");
    let why = tasks[0].1[0]["why"].as_str().expect("why");
    assert!(why.contains("package manager changed"), "{why}");
    assert_eq!(tasks[0].1[0]["file"], "package-lock.json");
}

#[test]
fn a_lockfile_edit_that_moves_no_pin_selects_nothing() {
    let env = lockfile_repo("npm", "package-lock.json");
    env.write(
        "package-lock.json",
        &env.read("package-lock.json").replace("\"license\": \"MIT\"", "\"license\": \"ISC\""),
    );
    assert!(affected(&env).is_empty(), "no slice moved");
}

/// A small deterministic generator (xorshift), so a failing case names
/// its seed and replays.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// One random edit of an npm `package-lock.json`: a pin's integrity or
/// version, a declared dependency dropped from a workspace, a declared
/// range rewritten (no pin moves), or a field no slice holds.
fn edit_npm(text: &str, rng: &mut Rng) -> (String, String) {
    let mut doc: Value = serde_json::from_str(text).expect("the fixture is JSON");
    let packages = doc["packages"].as_object_mut().expect("packages");
    let pinned: Vec<String> =
        packages.iter().filter(|(_, v)| v.get("integrity").is_some()).map(|(k, _)| k.clone()).collect();
    let importers: Vec<String> = packages
        .iter()
        .filter(|(k, v)| !k.starts_with("node_modules/") && v.get("dependencies").is_some())
        .map(|(k, _)| k.clone())
        .collect();
    let what = match rng.below(5) {
        0 => {
            let key = &pinned[rng.below(pinned.len())];
            packages[key]["integrity"] = Value::from(format!("sha512-edited{}", rng.below(1000)));
            format!("repin {key}")
        }
        1 => {
            let key = &pinned[rng.below(pinned.len())];
            packages[key]["version"] = Value::from("9.9.9");
            format!("version of {key}")
        }
        2 => {
            let key = &importers[rng.below(importers.len())];
            let deps = packages[key]["dependencies"].as_object_mut().expect("dependencies");
            let name = deps.keys().nth(rng.below(deps.len())).expect("a dependency").clone();
            deps.remove(&name);
            format!("drop {name} from {key}")
        }
        3 => {
            let key = &importers[rng.below(importers.len())];
            let deps = packages[key]["dependencies"].as_object_mut().expect("dependencies");
            for range in deps.values_mut() {
                *range = Value::from(range.as_str().unwrap_or("").replacen('^', "~", 1));
            }
            format!("ranges of {key}")
        }
        _ => {
            let key = &pinned[rng.below(pinned.len())];
            packages[key]["license"] = Value::from("0BSD");
            format!("license of {key}")
        }
    };
    (serde_json::to_string_pretty(&doc).expect("JSON"), what)
}

/// One random edit of a `pnpm-lock.yaml` (v9), as text: a package's
/// integrity, a specifier rewritten (no pin moves), or a workspace's
/// dependency dropped from its importer.
fn edit_pnpm(text: &str, rng: &mut Rng) -> (String, String) {
    let lines: Vec<&str> = text.lines().collect();
    match rng.below(3) {
        0 => {
            let at: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].contains("integrity: sha512-")).collect();
            let i = at[rng.below(at.len())];
            let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            out[i] = out[i].replacen("sha512-", &format!("sha512-E{}", rng.below(1000)), 1);
            (out.join("\n") + "\n", format!("repin line {}", i + 1))
        }
        1 => {
            let at: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].contains("specifier: ")).collect();
            let i = at[rng.below(at.len())];
            let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            out[i] = out[i].replace("specifier: ", "specifier: >=");
            (out.join("\n") + "\n", format!("specifier line {}", i + 1))
        }
        _ => {
            // An importer's dependency is three lines: `name:`, its
            // specifier and its version, under `importers:`.
            let end = lines.iter().position(|l| *l == "packages:").expect("a packages section");
            let at: Vec<usize> =
                (0..end).filter(|&i| lines[i].starts_with("      ") && !lines[i].starts_with("        ")).collect();
            let i = at[rng.below(at.len())];
            let mut out: Vec<&str> = lines.clone();
            out.drain(i..i + 3);
            (out.join("\n") + "\n", format!("drop {}", lines[i].trim()))
        }
    }
}

/// One random edit of a yarn (classic or berry) or bun lockfile, as text:
/// a package's integrity or checksum re-pinned. These formats differ in
/// everything but that, so the edit is the one move every lockfile has.
fn edit_pin(text: &str, rng: &mut Rng) -> (String, String) {
    let lines: Vec<&str> = text.lines().collect();
    let pins = ["integrity sha512-", "checksum: 10c0/", "\"sha512-"];
    let at: Vec<(usize, &str)> =
        (0..lines.len()).filter_map(|i| pins.iter().find(|p| lines[i].contains(**p)).map(|p| (i, *p))).collect();
    let (i, pin) = at[rng.below(at.len())];
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    out[i] = out[i].replacen(pin, &format!("{pin}e{}", rng.below(1000)), 1);
    (out.join("\n") + "\n", format!("repin line {}", i + 1))
}

/// Each task's cache key in `--dry=json`, by id.
fn keys(env: &TestEnv) -> Vec<(String, Value)> {
    let out = env.vx(&["run", "build", "--dry=json"]);
    out.assert_success();
    let plan: Value = serde_json::from_str(&out.stdout).expect("JSON");
    plan["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| (t["id"].as_str().expect("id").to_string(), t["key"].clone()))
        .collect()
}

/// Random edits of `lockfile`, each from the committed one: the tasks
/// `--affected` selects are the tasks whose key moved.
fn selection_matches_moved_keys(format: &str, lockfile: &str, edit: fn(&str, &mut Rng) -> (String, String)) {
    let env = lockfile_repo(format, lockfile);
    let before = keys(&env);
    let base = env.read(lockfile);
    let mut rng = Rng(0x5eed_0000_0000_0001 ^ lockfile.len() as u64);
    let mut moved_some = false;
    for case in 0..12 {
        let (mut text, mut what) = edit(&base, &mut rng);
        if case % 3 == 2 {
            // Two edits at once, now and then.
            let (twice, second) = edit(&text, &mut rng);
            (text, what) = (twice, format!("{what}; {second}"));
        }
        env.write(lockfile, &text);
        let after = keys(&env);
        let moved: BTreeSet<&str> =
            before.iter().zip(&after).filter(|(b, a)| b.1 != a.1).map(|(b, _)| b.0.as_str()).collect();
        let selected: BTreeSet<String> = affected(&env).into_iter().map(|(id, _)| id).collect();
        let selected: BTreeSet<&str> = selected.iter().map(String::as_str).collect();
        assert_eq!(selected, moved, "{format} case {case} ({what}): --affected against the moved keys");
        moved_some |= !moved.is_empty() && moved.len() < before.len();
    }
    assert!(moved_some, "{format}: some edit moved some keys but not all, so the cases tell projects apart");
}

#[test]
fn after_random_npm_lockfile_edits_affected_is_exactly_the_tasks_whose_key_moved() {
    selection_matches_moved_keys("npm", "package-lock.json", edit_npm);
}

#[test]
fn after_random_pnpm_lockfile_edits_affected_is_exactly_the_tasks_whose_key_moved() {
    selection_matches_moved_keys("pnpm9", "pnpm-lock.yaml", edit_pnpm);
}

#[test]
fn after_random_yarn_lockfile_edits_affected_is_exactly_the_tasks_whose_key_moved() {
    selection_matches_moved_keys("yarn1", "yarn.lock", edit_pin);
    selection_matches_moved_keys("berry", "yarn.lock", edit_pin);
}

#[test]
fn after_random_bun_lockfile_edits_affected_is_exactly_the_tasks_whose_key_moved() {
    selection_matches_moved_keys("bun", "bun.lock", edit_pin);
}
