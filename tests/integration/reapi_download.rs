//! `--download=all|needed|none` ("build without the bytes") against a
//! real BuildGrid 0.4.4 server: in a fresh clone whose every task is
//! cached on the server, which outputs appear on disk, what a task that
//! must run fetches first, that a task whose inputs hold a dependency's
//! outputs is keyed from their bytes, and the bytes each mode moves.
//!
//! A remote hit is itself the proof that a key is the one computed with
//! every output on disk: the first run, which built everything here,
//! stored each entry under that key.

use crate::common::buildgrid::BuildGrid;
use crate::common::fixtures::task;
use crate::common::{Output, TestEnv, log_cmd};

/// The bytes of `a`'s output: large enough that leaving it on the server
/// shows in the traffic.
const A_BYTES: usize = 512 * 1024;

/// `a → b → c`: each `build` writes `dist/out.txt` from its own
/// `src.txt` and its dependency's output; `a` also writes a large file.
fn chain(server: &BuildGrid) -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", &format!("[workspace]\nprojects = [\"packages/*\"]\n{}", server.remote_toml()));
    for (name, dep) in [("a", None), ("b", Some("a")), ("c", Some("b"))] {
        let read_dep = dep.map_or(String::new(), |d| format!(" && cat ../{d}/dist/out.txt >> dist/out.txt"));
        let big = if name == "a" { format!(" && head -c {A_BYTES} /dev/zero > dist/big.bin") } else { String::new() };
        let command = format!("{} && mkdir -p dist && cat src.txt > dist/out.txt{read_dep}{big}", log_cmd(name));
        let depends = dep.map_or(String::new(), |d| format!("\"{d}\""));
        let mut text = format!("[project]\nname = \"{name}\"\ndepends-on = [{depends}]\n");
        text.push_str(&task(
            "build",
            &command,
            "inputs = [\"src.txt\"]\noutputs = [\"dist/**\"]\ndepends-on = [\"^build\"]",
        ));
        env.write(&format!("packages/{name}/vx.toml"), &text);
        env.write(&format!("packages/{name}/src.txt"), &format!("{name} source\n"));
    }
    env
}

/// `vx run c#build` with the traffic line, and `extra` flags.
fn run_c(env: &TestEnv, extra: &[&str]) -> Output {
    let mut args = vec!["run", "c#build", "--report", "markdown"];
    args.extend_from_slice(extra);
    env.vx_command(&args).env("VX_REMOTE_STATS", "1").output()
}

/// A fresh clone: no `.vx/`, no `dist/`, an empty task log.
fn forget_local(env: &TestEnv, dirs: &[&str]) {
    std::fs::remove_dir_all(env.path(".vx")).expect("remove .vx");
    for dir in dirs {
        let _ = std::fs::remove_dir_all(env.path(dir));
    }
    env.clear_log();
}

const DISTS: [&str; 3] = ["packages/a/dist", "packages/b/dist", "packages/c/dist"];

/// Which of the chain's `dist/` directories exist.
fn present(env: &TestEnv) -> Vec<&'static str> {
    DISTS.into_iter().filter(|d| env.path(d).exists()).collect()
}

/// The bytes the run downloaded, from its `VX_REMOTE_STATS` line.
#[track_caller]
fn bytes_down(out: &Output) -> u64 {
    let line = out
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("vx: remote cache: "))
        .unwrap_or_else(|| panic!("no traffic line\n{out}"));
    let n: Vec<u64> =
        line.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    n[1]
}

/// The key `--dry=json` plans for `id`, from the files as they are now.
#[track_caller]
fn key_of(env: &TestEnv, id: &str) -> String {
    let out = env.vx(&["run", id, "--dry=json"]);
    out.assert_success();
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("--dry=json is JSON");
    let task = plan["tasks"].as_array().expect("tasks").iter().find(|t| t["id"] == id).expect("the task is planned");
    task["key"].as_str().expect("a key").to_string()
}

#[test]
fn needed_fetches_the_named_tasks_outputs_and_what_a_task_that_runs_needs() {
    let server = BuildGrid::start();
    let env = chain(&server);
    let built = run_c(&env, &[]);
    built.assert_success();
    assert_eq!(env.log_set(), ["a", "b", "c"], "{built}");
    let keys: Vec<String> = ["a#build", "b#build", "c#build"].iter().map(|id| key_of(&env, id)).collect();
    let c_out = std::fs::read_to_string(env.path("packages/c/dist/out.txt")).unwrap();

    // `all`: today's behaviour, every output on disk.
    forget_local(&env, &DISTS);
    let all = run_c(&env, &["--download=all", "--output-logs=hash-only"]);
    all.assert_success();
    assert_eq!(env.log_set(), Vec::<String>::new(), "all hits\n{all}");
    assert_eq!(all.stdout.matches("| hit (remote) |").count(), 3, "{all}");
    assert_eq!(present(&env), DISTS, "{all}");

    // `needed` (the default): only the named task's outputs.
    forget_local(&env, &DISTS);
    let needed = run_c(&env, &["--output-logs=hash-only"]);
    needed.assert_success();
    assert_eq!(env.log_set(), Vec::<String>::new(), "all hits\n{needed}");
    assert_eq!(needed.stdout.matches("| hit (remote) |").count(), 3, "{needed}");
    assert_eq!(present(&env), ["packages/c/dist"], "{needed}");
    assert_eq!(std::fs::read_to_string(env.path("packages/c/dist/out.txt")).unwrap(), c_out);
    for (id, key) in ["a#build", "b#build", "c#build"].iter().zip(&keys) {
        let line = needed.task_lines(id).join("\n");
        assert!(line.contains(&key[..16]), "{id} was hit under the key computed with every output on disk\n{needed}");
    }
    let (all_down, needed_down) = (bytes_down(&all), bytes_down(&needed));
    assert!(
        needed_down + A_BYTES as u64 <= all_down,
        "a's outputs stayed on the server: {needed_down} bytes down against {all_down}\n{needed}"
    );

    // `none`: nothing on disk, every task still a hit.
    forget_local(&env, &DISTS);
    let none = run_c(&env, &["--download=none"]);
    none.assert_success();
    assert_eq!(none.stdout.matches("| hit (remote) |").count(), 3, "{none}");
    assert_eq!(present(&env), Vec::<&str>::new(), "{none}");

    // A later run that must execute c fetches b's and a's outputs first.
    for mode in ["needed", "none"] {
        // A new source each time: the first run stores c's new entry.
        env.write("packages/c/src.txt", &format!("c source, edited under {mode}\n"));
        forget_local(&env, &DISTS);
        let rebuilt = run_c(&env, &[&format!("--download={mode}")]);
        rebuilt.assert_success();
        assert_eq!(env.log_set(), ["c"], "only c ran under {mode}\n{rebuilt}");
        assert_eq!(present(&env), DISTS, "its dependencies' outputs were fetched under {mode}\n{rebuilt}");
        assert_eq!(
            std::fs::read_to_string(env.path("packages/c/dist/out.txt")).unwrap(),
            format!("c source, edited under {mode}\nb source\na source\n"),
            "c read the outputs it needed under {mode}"
        );
    }
}

#[test]
fn a_dependency_whose_outputs_are_among_a_tasks_inputs_is_fetched_before_it_is_keyed() {
    let server = BuildGrid::start();
    let env = TestEnv::new();
    env.write("vx.toml", &format!("[workspace]\nprojects = [\"packages/*\"]\n{}", server.remote_toml()));
    // `p#build` takes every file of `p` as an input, `gen/` included; `q`
    // ignores its `gen/`, so its build's key cannot see it.
    for name in ["p", "q"] {
        let gen_cmd =
            format!("{} && mkdir -p gen && echo 'generated in {name}' > gen/out.txt", log_cmd(&format!("{name}-gen")));
        let build = format!("{} && mkdir -p dist && cat gen/out.txt > dist/out.txt", log_cmd(&format!("{name}-build")));
        let mut text = format!("[project]\nname = \"{name}\"\n");
        text.push_str(&task("gen", &gen_cmd, "inputs = [\"src.txt\"]\noutputs = [\"gen/**\"]"));
        text.push_str(&task("build", &build, "outputs = [\"dist/**\"]\ndepends-on = [\"gen\"]"));
        env.write(&format!("packages/{name}/vx.toml"), &text);
        env.write(&format!("packages/{name}/src.txt"), "source\n");
    }
    env.write("packages/q/.gitignore", "gen/\n");
    let built = env.vx(&["run", "build"]);
    built.assert_success();
    assert_eq!(env.log_set(), ["p-build", "p-gen", "q-build", "q-gen"], "{built}");
    let p_key = key_of(&env, "p#build");

    let generated = ["packages/p/gen", "packages/q/gen", "packages/p/dist", "packages/q/dist"];
    forget_local(&env, &generated);
    let out = env.vx(&["run", "build", "--output-logs=hash-only"]);
    out.assert_success();
    assert_eq!(env.log_set(), Vec::<String>::new(), "every task a hit: p#build keyed from gen's bytes\n{out}");
    assert!(out.task_lines("p#build").join("\n").contains(&p_key[..16]), "{out}");
    assert!(env.path("packages/p/gen/out.txt").exists(), "p's gen/ is an input of p#build: fetched\n{out}");
    assert!(!env.path("packages/q/gen").exists(), "q's gen/ is ignored, so no key needs it\n{out}");
    assert!(env.path("packages/q/dist/out.txt").exists(), "a named task's outputs are fetched\n{out}");
}
