//! Looking at a run: `--summarize` (a JSON summary validated against the
//! schema in `docs/schema`), `--profile` (a Chrome trace whose slices
//! nest), and the CPU time and peak memory of each task's process tree in
//! the summary, `--summary`, the markdown report and `vx history`.
//!
//! The tasks do measurable work rather than sleep: one spins a shell loop
//! (CPU), one holds a 64 MiB line in `tail` (memory), so the figures
//! asserted are lower bounds the kernel's accounting must reach however
//! loaded the machine is; nothing here asserts wall time.

use serde_json::Value;

use crate::common::TestEnv;
use crate::common::summary::{assert_valid, task};

/// A shell loop that burns about 0.2–0.4 s of CPU.
const SPIN: &str = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done";
/// `tail` keeps the whole last line of its input: a 64 MiB line of zeros.
const HOLD_64_MIB: &str = "head -c 67108864 /dev/zero | tail -n 1 >/dev/null";

/// `lib#build` (memory) ← `app#build` (CPU), both cached, in a git repo.
fn fixture() -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let project = |name: &str, deps: &str, work: &str| {
        format!(
            "[project]\nname = \"{name}\"\ndepends-on = [{deps}]\n\n[tasks.build]\ncommand = \"{work}; mkdir -p dist; echo built > dist/out.txt\"\ninputs = [\"src/**\"]\noutputs = [\"dist/**\"]\ndepends-on = [\"^build\"]\n"
        )
    };
    env.write("packages/lib/vx.toml", &project("lib", "", HOLD_64_MIB));
    env.write("packages/app/vx.toml", &project("app", "\"lib\"", SPIN));
    env.write("packages/lib/src/a.txt", "a\n");
    env.write("packages/app/src/b.txt", "b\n");
    env.git_init("main");
    env.git_commit_all("fixture");
    env
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

#[test]
fn a_summary_follows_its_schema_and_describes_every_task_with_its_resource_use() {
    let env = fixture();
    let out = env.vx(&["run", "build", "--summarize", "--tag", "ci=1"]);
    out.assert_success();
    assert!(out.stderr.contains("vx: --summarize wrote .vx/runs/1.json"), "the first invocation's id\n{out}");
    let doc = parse(&env.read(".vx/runs/1.json"));
    assert_valid(&doc);
    let inv = &doc["invocation"];
    assert_eq!(inv["id"], 1);
    assert_eq!(inv["args"], serde_json::json!(["run", "build", "--summarize", "--tag", "ci=1"]));
    assert_eq!(inv["tags"], serde_json::json!([{"key": "ci", "value": "1"}]));
    assert_eq!(inv["env_mode"], "strict");
    assert_eq!(inv["exit_code"], 0);
    assert_eq!(inv["git_commit"].as_str(), Some(env.git(&["rev-parse", "HEAD"]).trim()));

    let (lib, app) = (task(&doc, "lib#build"), task(&doc, "app#build"));
    assert_eq!(app["dependencies"], serde_json::json!(["lib#build"]));
    for t in [lib, app] {
        assert_eq!(
            (t["status"].as_str(), t["cache"].as_str(), t["executor"].as_str()),
            (Some("ok"), Some("miss"), Some("local")),
            "{t}"
        );
        assert_eq!((t["attempts"].as_u64(), t["exit_code"].as_i64()), (Some(1), Some(0)), "{t}");
        assert!(t["key"].as_str().is_some_and(|k| k.len() == 64), "{t}");
    }
    let end = |t: &Value| t["start_ms"].as_u64().unwrap() + t["duration_ms"].as_u64().unwrap();
    assert!(app["start_ms"].as_u64().unwrap() >= end(lib), "app began after lib ended\n{doc:#}");
    // The kernel's own accounting of each tree: lower bounds only.
    assert!(lib["peak_rss_bytes"].as_u64().unwrap() > 48 << 20, "tail held 64 MiB\n{lib}");
    assert!(app["cpu_ms"].as_u64().unwrap() >= 50, "the loop spun\n{app}");
    assert_eq!(doc["totals"]["peak_rss_bytes"], lib["peak_rss_bytes"]);

    // A fully cached run: hits measured nothing, and the file is the next id.
    let hit = env.vx(&["run", "build", "--summarize"]);
    hit.assert_success();
    let doc = parse(&env.read(".vx/runs/2.json"));
    assert_valid(&doc);
    for t in doc["tasks"].as_array().unwrap() {
        assert_eq!((t["cache"].as_str(), t["attempts"].as_u64()), (Some("hit-local"), Some(0)), "{t}");
        assert!(t["cpu_ms"].is_null() && t["peak_rss_bytes"].is_null(), "a hit ran nothing\n{t}");
    }
    assert_eq!(doc["totals"]["cached"], 2);
}

#[test]
fn a_failed_and_a_skipped_task_are_in_the_summary_with_their_reasons() {
    let env = fixture();
    env.write("packages/lib/vx.toml", "[project]\nname = \"lib\"\n\n[tasks.build]\ncommand = \"echo no; exit 3\"\n");
    let out = env.vx(&["run", "build", "--summarize=reports/run.json"]);
    out.assert_code(1);
    assert!(out.stderr.contains("vx: --summarize wrote reports/run.json"), "{out}");
    let doc = parse(&env.read("reports/run.json"));
    assert_valid(&doc);
    assert_eq!(doc["invocation"]["exit_code"], 1);
    let lib = task(&doc, "lib#build");
    assert_eq!(
        (lib["status"].as_str(), lib["reason"].as_str(), lib["exit_code"].as_i64()),
        (Some("failed"), Some("exit code 3"), Some(3))
    );
    assert_eq!(lib["cache"], "off", "not cacheable without outputs");
    let app = task(&doc, "app#build");
    assert_eq!(app["status"], "skipped");
    assert!(app["start_ms"].is_null() && app["reason"].as_str().is_some_and(|r| r.contains("lib#build")), "{app}");
    assert_eq!((doc["totals"]["failed"].as_u64(), doc["totals"]["skipped"].as_u64()), (Some(1), Some(1)));
}

#[test]
fn resource_use_reaches_history_the_details_and_the_markdown_report() {
    let env = fixture();
    let out = env.vx(&["run", "build", "--summary", "--report", "markdown", "--report-file", "r.md"]);
    out.assert_success();
    let resources = out.stdout.lines().find(|l| l.starts_with("Resources:")).unwrap_or_else(|| panic!("{out}"));
    assert!(resources.contains("in 2 task(s); peak memory") && resources.ends_with("(lib#build)"), "{resources}");
    let md = env.read("r.md");
    assert!(md.contains("| Task | Status | Cache | Duration | CPU | Peak memory |"), "{md}");
    let row = md.lines().find(|l| l.starts_with("| `lib#build` |")).expect("lib's row");
    assert!(row.ends_with(" MiB |"), "{row}");

    let history = env.vx(&["history", "--format", "json"]);
    history.assert_success();
    let rows = parse(&history.stdout);
    assert!(rows[0]["cpu_ms"].as_i64().unwrap() >= 50, "{rows:#}");
    assert!(rows[0]["peak_rss_bytes"].as_i64().unwrap() > 48 << 20, "{rows:#}");
    let text = env.vx(&["history"]);
    assert!(text.stdout.lines().next().is_some_and(|l| l.contains("cpu ") && l.contains(" MiB")), "{text}");
}

#[test]
fn summarize_and_profile_refuse_a_run_that_runs_nothing_and_an_unwritable_path() {
    let env = fixture();
    let dry = env.vx(&["run", "build", "--dry", "--summarize"]);
    dry.assert_code(2);
    assert!(dry.error_line().contains("--summarize and --profile describe a run"), "{dry}");
    env.write("blocker", "a file, not a directory\n");
    let out = env.vx(&["run", "build", "--profile=blocker/trace.json"]);
    out.assert_code(1);
    assert!(out.stderr.contains("vx: error: --profile: could not create"), "{out}");
    assert!(out.stderr.contains("give a path vx can write: --profile=FILE"), "{out}");
    assert_eq!(out.summary().succeeded, 2, "the run itself is whole\n{out}");
    assert_eq!(env.vx(&["run", "build"]).summary().cached, 2, "and its results were stored");
}

/// The `X` slices of a trace: (name, category, track, start, end) in µs.
fn slices(trace: &Value) -> Vec<(String, String, u64, u64, u64)> {
    trace["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| {
            let n = |k: &str| e[k].as_u64().unwrap_or_else(|| panic!("{k} of {e}"));
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_string();
            (s("name"), s("cat"), n("tid"), n("ts"), n("ts") + n("dur"))
        })
        .collect()
}

#[test]
fn a_profile_has_a_track_per_slot_and_every_step_nests_in_its_task() {
    let env = fixture();
    env.write("packages/solo/vx.toml", &format!("[project]\nname = \"solo\"\n\n[tasks.build]\ncommand = \"{SPIN}\"\n"));
    let out = env.vx(&["run", "build", "--concurrency", "2", "--profile"]);
    out.assert_success();
    assert!(out.stderr.contains("vx: --profile wrote .vx/runs/1.trace.json"), "{out}");
    let trace = parse(&env.read(".vx/runs/1.trace.json"));
    let all = slices(&trace);
    let own: Vec<&str> = all.iter().filter(|s| s.2 == 0).map(|s| s.0.as_str()).collect();
    assert_eq!(own, ["config", "graph", "setup", "walk"], "vx's own phases, in order");
    let tasks: Vec<_> = all.iter().filter(|s| s.1 == "task").collect();
    let mut ids: Vec<&str> = tasks.iter().map(|t| t.0.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["app#build", "lib#build", "solo#build"]);
    let tracks: std::collections::BTreeSet<u64> = tasks.iter().map(|t| t.2).collect();
    assert!(tracks.len() <= 2 && !tracks.contains(&0), "at most --concurrency slots: {tracks:?}");
    for (i, a) in tasks.iter().enumerate() {
        for b in &tasks[i + 1..] {
            assert!(a.2 != b.2 || a.4 <= b.3 || b.4 <= a.3, "two tasks overlap on one track: {a:?} {b:?}");
        }
    }
    for step in all.iter().filter(|s| s.1 == "step") {
        let parent = tasks.iter().find(|t| t.2 == step.2 && t.3 <= step.3 && step.4 <= t.4);
        assert!(parent.is_some(), "{step:?} nests in no task of its track");
    }
    let steps_of = |id: &str| -> Vec<String> {
        let t = tasks.iter().find(|t| t.0 == id).unwrap();
        all.iter().filter(|s| s.1 == "step" && s.2 == t.2 && t.3 <= s.3 && s.4 <= t.4).map(|s| s.0.clone()).collect()
    };
    assert_eq!(steps_of("lib#build"), ["hash", "cache lookup", "run", "archive"]);
    assert_eq!(steps_of("solo#build"), ["hash", "run"], "not cacheable: no lookup, no archive");
    let names: Vec<&str> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.first(), Some(&"vx"));
    assert!(names[1..].iter().all(|n| n.starts_with("slot ")), "{names:?}");

    // A hit is looked up and restored; the given path is used.
    std::fs::remove_dir_all(env.root().join("packages/lib/dist")).expect("remove lib's outputs");
    let hit = env.vx(&["run", "lib#build", "--profile=hit.json"]);
    hit.assert_success();
    let trace = parse(&env.read("hit.json"));
    let steps: Vec<String> = slices(&trace).into_iter().filter(|s| s.1 == "step").map(|s| s.0).collect();
    assert_eq!(steps, ["hash", "cache lookup", "restore"]);
}

/// The embedded summary document of an HTML report.
fn embedded(page: &str) -> Value {
    let start = page.find(r#"<script type="application/json" id="run-data">"#).expect("the data element");
    let rest = &page[start..];
    let body = &rest[rest.find('>').unwrap() + 1..rest.find("</script>").unwrap()];
    parse(body)
}

#[test]
fn the_html_report_is_one_self_contained_page_holding_the_summary() {
    let env = fixture();
    let out = env.vx(&["run", "build", "--report", "html", "--report-file", "report.html"]);
    out.assert_success();
    let page = env.read("report.html");
    assert!(!page.contains(" src=") && !page.contains(" href=") && !page.contains("@import"), "nothing is fetched");
    let doc = embedded(&page);
    assert_valid(&doc);
    assert_eq!(doc["tasks"].as_array().unwrap().len(), 2);
    assert!(task(&doc, "lib#build")["peak_rss_bytes"].as_u64().unwrap() > 48 << 20);
    assert_eq!(doc["invocation"]["id"], 1, "the history id, as --summarize has it");

    // A real browser draws it: a bar per task in the timeline, a row per task.
    let dom = crate::common::browser::dump_dom(&env.root().join("report.html"));
    assert!(dom.contains(r#"class="bar ok miss"#), "bars are drawn\n{dom}");
    for id in ["lib#build", "app#build"] {
        assert!(dom.contains(&format!(r#"<tr class="task" data-task="{id}">"#)), "{id}'s row\n{dom}");
        assert!(dom.contains(&format!(r#"data-task="{id}""#)), "{id}'s bar\n{dom}");
    }
    assert_eq!(dom.matches("<rect").count(), 2, "one bar per task that began\n{dom}");
    assert!(dom.contains("critical"), "the critical path is marked\n{dom}");
}
