//! `vx run --verify=determinism` (issue 16, item 4): after the run, the
//! requested tasks run twice more, uncached, and their outputs are
//! compared. A task writing a timestamp is caught, with the file and the
//! first byte that differs; a deterministic one passes.

use crate::common::TestEnv;
use crate::common::fixtures::task;

fn project(tasks: &str) -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/lib/vx.toml",
        &format!(
            "[project]\nname = \"lib\"\n{}",
            task(
                "build",
                "mkdir -p dist && echo lib > dist/lib.txt && echo ran >> ../../lib-runs.txt",
                "outputs = [\"dist/**\"]"
            )
        ),
    );
    env.write("packages/a/src/in.txt", "in\n");
    env.write("packages/a/vx.toml", &format!("[project]\nname = \"a\"\ndepends-on = [\"lib\"]\n{tasks}"));
    env
}

fn build(command: &str) -> String {
    task("build", command, "depends-on = [\"^build\"]\ninputs = [\"src/**\"]\noutputs = [\"dist/**\"]")
}

#[test]
fn a_task_writing_a_timestamp_is_caught_with_the_file_and_the_first_differing_byte() {
    let env = project(&build(
        "mkdir -p dist && cp src/in.txt dist/same.txt && echo \"built at $(date +%s%N)\" > dist/stamp.txt",
    ));
    let out = env.vx(&["run", "a#build", "--verify=determinism"]);
    out.assert_code(1);
    assert!(out.stdout.contains("1 of 1 task(s) wrote different outputs on a second run"), "{out}");
    let line =
        out.stdout.lines().find(|l| l.contains("a#build: ")).filter(|l| l.contains("stamp.txt")).unwrap_or_default();
    let offset: usize = line
        .split("packages/a/dist/stamp.txt differs from byte ")
        .nth(1)
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("names the file and a byte\n{out}"));
    assert!(offset >= "built at ".len(), "the first 9 bytes are the same: {offset}\n{out}");
    assert!(!out.stdout.contains("same.txt"), "the deterministic file is not reported\n{out}");
}

#[test]
fn a_deterministic_task_passes_and_its_dependencies_are_not_run_again() {
    let env = project(&build("mkdir -p dist && cat src/in.txt ../lib/dist/lib.txt > dist/out.txt"));
    let out = env.vx(&["run", "a#build", "--verify=determinism"]);
    out.assert_success();
    assert!(out.stdout.contains("1 task(s) wrote the same outputs twice"), "{out}");
    assert_eq!(env.read("lib-runs.txt"), "ran\n", "the dependency ran once, in the run itself\n{out}");
    assert!(out.stdout.contains("first run of the 1 requested task(s)"), "{out}");
}

#[test]
fn a_file_written_by_one_run_only_is_reported() {
    // Counts its runs in a file it does not declare; writes `extra.txt`
    // on even runs: the run itself (0), not the first check (1), the
    // second check (2).
    let env = project(&build(
        "n=$(cat count.txt 2>/dev/null || echo 0); echo $((n+1)) > count.txt; mkdir -p dist; echo same > dist/out.txt; if [ $((n % 2)) = 0 ]; then echo x > dist/extra.txt; fi",
    ));
    let out = env.vx(&["run", "a#build", "--verify=determinism"]);
    out.assert_code(1);
    assert!(out.stdout.contains("a#build: packages/a/dist/extra.txt was written by the second run only"), "{out}");
}

#[test]
fn verify_with_dry_is_a_usage_error_and_a_bad_kind_is_refused() {
    let env = project(&build("true"));
    let out = env.vx(&["run", "a#build", "--verify=determinism", "--dry"]);
    out.assert_code(2);
    assert!(out.stderr.contains("--verify runs the tasks"), "{out}");
    let out = env.vx(&["run", "a#build", "--verify=speed"]);
    out.assert_code(2);
    assert!(out.stderr.contains("--verify expects determinism, got `speed`"), "{out}");
}
