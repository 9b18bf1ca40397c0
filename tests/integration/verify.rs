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
    assert!(out.stderr.contains("--verify expects inputs or determinism, got `speed`"), "{out}");
    let out = env.vx(&["run", "a#build", "--verify=determinism", "--format", "json"]);
    out.assert_code(2);
    assert!(out.stderr.contains("--format sets the report of --verify=inputs"), "{out}");
}

// ---------------------------------------------------------------------
// --verify=inputs (issue 16, item 3)

/// Project `a` whose `build` runs `command`, beside `lib` and a file at
/// the workspace root that nothing declares.
fn traced(command: &str, extra: &str) -> TestEnv {
    let env = project(&task("build", command, &format!("depends-on = [\"^build\"]\n{extra}")));
    env.write("shared/config.json", "{}\n");
    env.write("packages/a/build.js", "// the build\n");
    env
}

/// The JSON document `--format json` prints: stdout holds it alone (the
/// runs' own output goes to stderr), so a CI step can pipe it to `jq`.
#[track_caller]
fn report_json(out: &crate::common::Output) -> serde_json::Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("stdout is one JSON document: {e}\n{out}"))
}

#[test]
fn a_task_with_missing_declarations_gets_the_lines_to_add_and_exit_1() {
    let command = "cat build.js ../../shared/config.json src/in.txt ../lib/dist/lib.txt > /dev/null && mkdir -p dist cache && echo x > dist/out.txt && echo y > cache/c.txt";
    let env = traced(command, "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]");
    let out = env.vx(&["run", "a#build", "--verify=inputs"]);
    out.assert_code(1);
    assert!(out.stdout.contains("1 of 1 task(s) touched files their declarations do not cover"), "{out}");
    assert!(out.stdout.contains("a#build ([tasks.build] in packages/a/vx.toml):"), "{out}");
    assert!(
        out.stdout.contains("read, not in its inputs; add to `inputs`: \"/shared/config.json\", \"build.js\""),
        "the undeclared reads, spelled for vx.toml; not its inputs, its dependency's outputs or the system\n{out}"
    );
    assert!(out.stdout.contains("wrote, not in its outputs; add to `outputs`: \"cache/c.txt\""), "{out}");
}

#[test]
fn complete_declarations_pass_and_json_says_so() {
    let command = "cat build.js src/in.txt ../lib/dist/lib.txt > /dev/null && mkdir -p dist && echo x > dist/out.txt";
    let env = traced(command, "inputs = [\"src/**\", \"build.js\"]\noutputs = [\"dist/**\"]");
    let out = env.vx(&["run", "a#build", "--verify=inputs"]);
    out.assert_success();
    assert!(out.stdout.contains("the declarations of 1 task(s) cover everything they read and wrote"), "{out}");

    let out = env.vx(&["run", "a#build", "--verify=inputs", "--format", "json"]);
    out.assert_success();
    let json = report_json(&out);
    assert_eq!(json["complete"], true, "{json}");
    assert_eq!(json["tasks"][0]["id"], "a#build", "{json}");
    assert_eq!(json["tasks"][0]["inputs"], serde_json::json!([]), "{json}");
}

#[test]
fn a_task_reading_a_directory_of_files_gets_one_glob() {
    let env = traced("cat gen/*.ts > /dev/null", "inputs = [\"src/**\"]");
    for f in ["a", "b", "c", "d"] {
        env.write(&format!("packages/a/gen/{f}.ts"), f);
    }
    let out = env.vx(&["run", "a#build", "--verify=inputs", "--format", "json"]);
    out.assert_code(1);
    let json = report_json(&out);
    assert_eq!(json["complete"], false);
    assert_eq!(
        json["tasks"][0]["inputs"],
        serde_json::json!(["gen/**"]),
        "four files of one directory: its glob\n{json}"
    );
}

#[test]
fn a_read_inside_an_input_directory_that_its_globs_do_not_match_is_reported() {
    // `src/*.txt` opens src/ to the sandbox, but the key counts only the
    // .txt files: the JSON beside them is undeclared.
    let env = traced("cat src/in.txt src/data.json > /dev/null", "inputs = [\"src/*.txt\"]");
    env.write("packages/a/src/data.json", "{}\n");
    let out = env.vx(&["run", "a#build", "--verify=inputs"]);
    out.assert_code(1);
    assert!(out.stdout.contains("add to `inputs`: \"src/data.json\""), "{out}");
    assert!(!out.stdout.contains("src/in.txt"), "the declared input is not reported\n{out}");
}
