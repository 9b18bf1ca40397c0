//! `vx dashboard`: its JSON API over the history of real runs (filters,
//! documents valid against the summary schema, 4xx on bad input, an old
//! database), the page in a real headless browser (the runs, a bar per
//! task, a real click on a bar opening the task with its history, a
//! screenshot that is not blank),
//! a run shown live while it waits on a file the test controls, and
//! stopping on SIGINT. The port is whatever free one the dashboard printed.

use nix::sys::signal::Signal;
use serde_json::Value;

use crate::common::TestEnv;
use crate::common::browser::{drawn, dump_dom_url, screenshot};
use crate::common::devtools::Browser;
use crate::common::process::{Running, poll};
use crate::common::summary::{assert_valid, task};

/// `lib#build` ← `app#build` (cached), and `bad#test`, which fails; in a
/// git repository on `main`.
fn fixture() -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let build = |name: &str, deps: &str| {
        format!(
            "[project]\nname = \"{name}\"\ndepends-on = [{deps}]\n\n[tasks.build]\ncommand = \"mkdir -p dist; echo built > dist/out.txt\"\ninputs = [\"src/**\"]\noutputs = [\"dist/**\"]\ndepends-on = [\"^build\"]\n"
        )
    };
    env.write("packages/lib/vx.toml", &build("lib", ""));
    env.write("packages/app/vx.toml", &build("app", "\"lib\""));
    env.write("packages/lib/src/a.txt", "a\n");
    env.write("packages/app/src/b.txt", "b\n");
    env.write("packages/bad/vx.toml", "[project]\nname = \"bad\"\n\n[tasks.test]\ncommand = \"exit 3\"\n");
    env.git_init("main");
    env.git_commit_all("fixture");
    env
}

/// Runs 1 (ok, tagged), 2 (ok, every task a hit) and 3 (failed).
fn three_runs(env: &TestEnv) {
    env.vx(&["run", "build", "--tag", "ci=1"]).assert_success();
    let hit = env.vx(&["run", "build"]);
    assert_eq!(hit.assert_success().summary().cached, 2, "the second run is all hits\n{hit}");
    env.vx(&["run", "bad#test"]).assert_code(1);
}

/// A dashboard running in the background, and where it listens.
struct Dashboard {
    running: Running,
    url: String,
}

impl Dashboard {
    fn start(env: &TestEnv) -> Dashboard {
        let running = env.vx_command(&["dashboard", "--port", "0"]).spawn();
        running.wait_for_stdout("/\n");
        let out = running.output_so_far().stdout;
        let url = out
            .lines()
            .find_map(|l| l.strip_prefix("vx dashboard: "))
            .unwrap_or_else(|| panic!("no URL line\n{out}"))
            .to_string();
        assert!(url.starts_with("http://127.0.0.1:") && url.ends_with('/'), "{url}");
        Dashboard { running, url }
    }

    /// GET `path` (after the leading `/`): the status and the JSON body.
    fn get(&self, path: &str) -> (u16, Value) {
        let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).proxy(None).build().into();
        let url = format!("{}{path}", self.url);
        let mut response = agent.get(&url).call().unwrap_or_else(|e| panic!("GET {url}: {e}"));
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().expect("a body");
        (status, serde_json::from_str(&text).unwrap_or_else(|e| panic!("GET {url}: not JSON ({e}): {text}")))
    }

    fn ok(&self, path: &str) -> Value {
        let (status, body) = self.get(path);
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    fn run_ids(&self, query: &str) -> Vec<i64> {
        let body = self.ok(&format!("api/runs{query}"));
        body["runs"].as_array().expect("a list").iter().map(|r| r["id"].as_i64().expect("an id")).collect()
    }
}

#[test]
fn the_api_lists_filters_and_describes_recorded_runs() {
    let env = fixture();
    three_runs(&env);
    let d = Dashboard::start(&env);

    assert_eq!(d.run_ids(""), [3, 2, 1], "newest first");
    assert_eq!(d.run_ids("?outcome=failed"), [3]);
    assert_eq!(d.run_ids("?outcome=ok"), [2, 1]);
    assert_eq!(d.run_ids("?tag=ci%3D1"), [1]);
    assert_eq!(d.run_ids("?branch=main"), [3, 2, 1]);
    assert_eq!(d.run_ids("?branch=elsewhere"), Vec::<i64>::new());
    assert_eq!(d.run_ids("?command=bad"), [3]);
    let page = d.ok("api/runs?limit=1");
    assert_eq!((page["runs"][0]["id"].as_i64(), page["next_before"].as_i64()), (Some(3), Some(3)));
    assert_eq!(d.run_ids("?before=3"), [2, 1], "the next page");
    let listed = &d.ok("api/runs")["runs"][1];
    assert_eq!((listed["tasks"].as_i64(), listed["cached"].as_i64()), (Some(2), Some(2)), "{listed}");
    assert_eq!(listed["branch"], "main");

    let first = d.ok("api/runs/1");
    assert_valid(&first);
    assert_eq!(first["invocation"]["id"], 1);
    assert_eq!(first["invocation"]["branch"], "main");
    assert_eq!(first["invocation"]["git_commit"].as_str(), Some(env.git(&["rev-parse", "HEAD"]).trim()));
    assert_eq!(first["invocation"]["args"], serde_json::json!(["run", "build", "--tag", "ci=1"]));
    let (lib, app) = (task(&first, "lib#build"), task(&first, "app#build"));
    assert_eq!(app["dependencies"], serde_json::json!(["lib#build"]));
    assert_eq!(lib["dependencies"], serde_json::json!([]));
    for t in [lib, app] {
        assert_eq!(
            (t["status"].as_str(), t["cache"].as_str(), t["executor"].as_str()),
            (Some("ok"), Some("miss"), Some("local"))
        );
        assert!(t["start_ms"].is_u64(), "a task that ran has its start\n{t}");
    }
    assert!(app["start_ms"].as_u64() >= lib["start_ms"].as_u64(), "app began after the lib it needs");
    let hits = d.ok("api/runs/2");
    assert_valid(&hits);
    assert_eq!(task(&hits, "app#build")["cache"], "hit-local");
    let failed = d.ok("api/runs/3");
    assert_valid(&failed);
    assert_eq!(failed["invocation"]["exit_code"], 1);
    assert_eq!(task(&failed, "bad#test")["status"], "failed");
    assert_eq!(task(&failed, "bad#test")["reason"], "exit code 3");

    let history = d.ok("api/tasks/app%23build/history");
    let caches: Vec<&str> =
        history["history"].as_array().unwrap().iter().map(|r| r["cache"].as_str().unwrap()).collect();
    assert_eq!(caches, ["miss", "hit-local"], "oldest first\n{history}");
    assert_eq!(history["hit_rate"], 0.5);
    let stats = d.ok("api/stats");
    assert!(stats["cache"]["entries"].as_u64() >= Some(2), "{stats}");
    assert_eq!(stats["most_missed"].as_array().map(Vec::len), Some(2), "{stats}");
    assert!(stats["slowest"].as_array().is_some_and(|s| !s.is_empty()), "{stats}");
    assert_eq!(stats["saved_by_day"][0]["hits"], 2, "{stats}");
    assert_eq!(d.ok("api/live")["runs"], serde_json::json!([]));

    for (path, status) in [
        ("api/runs/999", 404),
        ("api/runs/abc", 400),
        ("api/runs?limit=x", 400),
        ("api/runs?outcome=maybe", 400),
        ("api/runs?colour=blue", 400),
        ("api/tasks/nope%23x/history", 404),
        ("api/nothing", 404),
    ] {
        let (got, body) = d.get(path);
        assert_eq!(got, status, "GET {path}: {body}");
        assert!(body["error"].as_str().is_some_and(|e| !e.is_empty()), "GET {path}: a JSON error: {body}");
    }
}

/// The history schema before the dashboard: no task start, executor,
/// dependencies or reason; no args, commit, branch, mode or walk time.
const OLD_SCHEMA: &str = "
CREATE TABLE invocations (id INTEGER PRIMARY KEY, command TEXT NOT NULL, cwd TEXT NOT NULL, tags TEXT NOT NULL,
    started_ms INTEGER NOT NULL, ended_ms INTEGER NOT NULL, exit_code INTEGER NOT NULL);
CREATE TABLE task_runs (invocation INTEGER NOT NULL REFERENCES invocations(id), task TEXT NOT NULL, key TEXT,
    status TEXT NOT NULL, cache TEXT NOT NULL, duration_ms INTEGER NOT NULL, exit_code INTEGER,
    attempts INTEGER NOT NULL DEFAULT 1, cpu_ms INTEGER, peak_rss_bytes INTEGER);
CREATE INDEX task_runs_by_task ON task_runs(task, status, cache);
CREATE TABLE manifests (task TEXT PRIMARY KEY, key TEXT NOT NULL, manifest TEXT NOT NULL);
INSERT INTO invocations VALUES (1, 'vx run build', '.', '[[\"ci\",\"1\"]]', 1700000000000, 1700000001500, 0);
INSERT INTO task_runs VALUES (1, 'lib#build', 'k', 'ok', 'miss', 1200, 0, 1, 40, 1048576);
";

#[test]
fn an_old_history_database_opens_and_its_runs_show() {
    let env = fixture();
    std::fs::create_dir_all(env.path(".vx")).unwrap();
    rusqlite::Connection::open(env.path(".vx/history.db")).unwrap().execute_batch(OLD_SCHEMA).unwrap();
    let d = Dashboard::start(&env);
    assert_eq!(d.run_ids(""), [1]);
    let old = d.ok("api/runs/1");
    assert_valid(&old);
    assert_eq!(old["invocation"]["command"], "vx run build");
    assert_eq!(old["invocation"]["wall_ms"], 1500, "the invocation's times stand in for the walk's");
    let lib = task(&old, "lib#build");
    assert_eq!((lib["start_ms"].clone(), lib["duration_ms"].as_u64()), (Value::Null, Some(1200)), "{lib}");
    // A run recorded now, beside the old one, has everything.
    env.vx(&["run", "build"]).assert_success();
    assert_eq!(d.run_ids(""), [2, 1]);
    assert!(task(&d.ok("api/runs/2"), "app#build")["start_ms"].is_u64());
}

#[test]
fn the_page_shows_the_runs_a_bar_per_task_and_a_task_opened() {
    let env = fixture();
    three_runs(&env);
    let d = Dashboard::start(&env);

    let home = dump_dom_url(&d.url);
    for id in 1..=3 {
        let row = format!(r#"data-run="{id}""#);
        assert!(home.contains(&row), "run {id} is listed\n{home}");
    }
    assert!(home.contains("vx run bad#test"), "{home}");

    let run = dump_dom_url(&format!("{}#/run/1", d.url));
    assert!(run.contains("vx run build --tag ci=1"), "{run}");
    let bars = regex::Regex::new(r#"<rect [^>]*class="bar ok miss[^"]*" data-task="([^"]+)""#).unwrap();
    let mut drawn_ids: Vec<&str> = bars.captures_iter(&run).map(|c| c.get(1).unwrap().as_str()).collect();
    drawn_ids.sort_unstable();
    assert_eq!(drawn_ids, ["app#build", "lib#build"], "one timeline bar per task\n{run}");
    assert!(run.contains(r#"class="bar ok miss critical""#), "the critical path is marked\n{run}");
    assert!(run.contains(r#"aria-label="task graph""#) && run.contains(r#"class="edge""#), "the task graph\n{run}");
    assert!(run.contains(r#"<div id="detail"><p class="muted">Click a task"#), "no task open yet\n{run}");

    // The route a click on a bar sets opens the task, as the click does
    // (`a_click_on_a_timeline_bar_opens_the_task_with_its_history`).
    let opened = dump_dom_url(&format!("{}#/run/1/task/app%23build", d.url));
    assert!(opened.contains("<h2>app#build</h2>"), "the task's detail\n{opened}");
    assert!(!opened.contains("Click a task"), "{opened}");
    assert!(opened.contains("History: the last 2 runs") && opened.contains("hit rate 50%"), "its history\n{opened}");
    assert!(opened.contains(r#"aria-label="duration""#) && opened.contains(r#"aria-label="peak memory""#), "{opened}");

    let stats = dump_dom_url(&format!("{}#/stats", d.url));
    assert!(stats.contains("<h2>Slowest tasks (p50 of their runs)</h2>"), "{stats}");
    assert!(stats.contains("<h2>Most often missed</h2>"), "{stats}");
}

#[test]
fn a_click_on_a_timeline_bar_opens_the_task_with_its_history() {
    let env = fixture();
    three_runs(&env);
    let d = Dashboard::start(&env);
    let mut page = Browser::open(&format!("{}#/run/1", d.url));
    let bar = r#"rect.bar[data-task="app#build"]"#;
    page.wait_for(&format!("document.querySelector('{bar}') !== null"));
    assert_eq!(page.eval("document.querySelector('#detail h2')"), Value::Null, "nothing is open before the click");
    page.click(bar);
    page.wait_for("(document.querySelector('#detail h2') || {}).textContent === 'app#build'");
    page.wait_for(r#"document.querySelector('#task-history svg[aria-label="duration"]') !== null"#);
    assert_eq!(page.eval("location.hash"), "#/run/1/task/app%23build", "the route that opens it again");
    assert_eq!(page.eval("document.querySelector('#task-history h2').textContent"), "History: the last 2 runs");
}

#[test]
fn a_screenshot_of_the_dashboard_is_not_blank() {
    let env = fixture();
    three_runs(&env);
    let d = Dashboard::start(&env);
    let shot = drawn(&screenshot(&format!("{}#/run/1/task/app%23build", d.url)));
    assert!(shot.is_a_page(), "the dashboard drew too little: {shot:?}");
    // The same measure on a blank page says so: the check can fail.
    let blank = drawn(&screenshot("about:blank"));
    assert!(!blank.is_a_page(), "a blank page passed as drawn: {blank:?}");
}

#[test]
fn a_run_in_progress_shows_live_and_then_in_the_list() {
    let env = fixture();
    env.write(
        "packages/wait/vx.toml",
        "[project]\nname = \"wait\"\n\n[tasks.hold]\ncommand = \"while [ ! -f go ]; do sleep 0.05; done\"\n",
    );
    let d = Dashboard::start(&env);
    assert!(env.path(".vx/dashboard.json").exists(), "the marker is written while the dashboard is up");
    let run = env.vx_command(&["run", "wait#hold"]).spawn();
    let shown = poll(|| {
        let live = d.ok("api/live");
        live["runs"].as_array().is_some_and(|runs| {
            runs.len() == 1 && runs[0]["tasks"][0]["id"] == "wait#hold" && runs[0]["tasks"][0]["status"] == "running"
        })
    });
    assert!(shown, "the run never showed live: {}", d.ok("api/live"));
    let live = d.ok("api/live");
    assert_eq!(live["runs"][0]["live"]["pid"].as_i64(), Some(i64::from(run.pid())));
    assert_eq!(live["runs"][0]["invocation"]["command"], "vx run wait#hold");
    assert!(d.run_ids("").is_empty(), "not in history before it ends");
    env.write("packages/wait/go", "");
    run.finish().assert_success();
    assert_eq!(d.ok("api/live")["runs"], serde_json::json!([]), "gone from live once it ended");
    assert_eq!(d.run_ids(""), [1]);
    assert_eq!(task(&d.ok("api/runs/1"), "wait#hold")["status"], "ok");
}

#[test]
fn sigint_stops_the_dashboard_with_exit_0_and_removes_its_marker() {
    let env = fixture();
    let d = Dashboard::start(&env);
    assert!(env.path(".vx/dashboard.json").exists());
    d.running.signal(Signal::SIGINT);
    let out = d.running.finish();
    out.assert_success();
    assert!(!env.path(".vx/dashboard.json").exists(), "the marker is removed\n{out}");
    // Runs started after it stopped write no live file.
    env.vx(&["run", "build"]).assert_success();
    assert!(!env.path(".vx/runs/live").exists(), "no live file without a dashboard");
}

#[test]
fn bad_input_is_one_line_and_a_non_zero_exit() {
    let outside = TestEnv::new();
    let out = outside.vx(&["dashboard", "--port", "0"]);
    assert_ne!(out.code, 0, "{out}");
    let _ = out.error_line();

    let env = fixture();
    let d = Dashboard::start(&env);
    let port = d.url.trim_end_matches('/').rsplit(':').next().unwrap().to_string();
    let taken = env.vx(&["dashboard", "--port", &port]);
    assert_ne!(taken.code, 0, "{taken}");
    assert!(taken.error_line().contains(&format!("127.0.0.1:{port}")), "{taken}");
    assert!(env.path(".vx/dashboard.json").exists(), "the running dashboard's marker stays");
    let bad = env.vx(&["dashboard", "--port", "http"]);
    assert_ne!(bad.code, 0, "{bad}");
    let _ = bad.error_line();
}

/// One raw HTTP/1.1 GET of `/api/runs` with `host` as its `Host` header:
/// the status line.
fn status_with_host(url: &str, host: &str) -> String {
    use std::io::{Read, Write};
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(addr).expect("connect to the dashboard");
    write!(stream, "GET /api/runs HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read the answer");
    answer.lines().next().unwrap_or_default().to_string()
}

#[test]
fn a_request_for_another_host_is_refused_so_dns_rebinding_reads_nothing() {
    let env = fixture();
    three_runs(&env);
    let d = Dashboard::start(&env);
    let port = d.url.trim_end_matches('/').rsplit(':').next().expect("a port").to_string();
    for host in ["evil.example", &format!("evil.example:{port}"), "127.0.0.1:1", "localhost.evil.example"] {
        let status = status_with_host(&d.url, host);
        assert!(status.contains(" 403 "), "Host: {host} → {status}");
    }
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("LocalHost:{port}")] {
        let status = status_with_host(&d.url, &host);
        assert!(status.contains(" 200 "), "Host: {host} → {status}");
    }
}

#[test]
fn a_failed_tasks_log_and_a_tasks_description_are_served_and_shown() {
    let env = fixture();
    env.write(
        "packages/bad/vx.toml",
        "[project]\nname = \"bad\"\n\n[tasks.test]\ncommand = \"seq -f 'case %g failed' 1 300; exit 3\"\n\
         description = \"Runs the bad tests\"\n",
    );
    three_runs(&env);
    let d = Dashboard::start(&env);
    let listed = &d.ok("api/runs")["runs"];
    assert_eq!((listed[0]["logs"].as_u64(), listed[1]["logs"].as_u64()), (Some(1), Some(0)), "{listed}");

    let kept = d.ok("api/runs/3/tasks/bad%23test/logs");
    let log = &kept["logs"][0];
    let expected: String = (1..=300).map(|i| format!("case {i} failed\n")).collect();
    assert_eq!(log["text"].as_str(), Some(expected.as_str()), "the whole log\n{kept}");
    assert_eq!((log["run"].as_i64(), log["attempt"].as_u64(), log["exit_code"].as_i64()), (Some(3), Some(1), Some(3)));
    assert_eq!((log["reason"].as_str(), log["truncated"].as_bool()), (Some("exit code 3"), Some(false)));
    for (path, status) in [("api/runs/1/tasks/app%23build/logs", 404), ("api/runs/x/tasks/bad%23test/logs", 400)] {
        let (got, body) = d.get(path);
        assert_eq!(got, status, "GET {path}: {body}");
    }

    let doc = d.ok("api/runs/3");
    assert_valid(&doc);
    assert_eq!(task(&doc, "bad#test")["description"], "Runs the bad tests", "the workspace's description");
    assert_eq!(d.ok("api/tasks/bad%23test/history")["description"], "Runs the bad tests");
    assert_eq!(d.ok("api/tasks/app%23build/history")["description"], Value::Null);

    let opened = dump_dom_url(&format!("{}#/run/3/task/bad%23test", d.url));
    assert!(opened.contains("Runs the bad tests"), "the description in the task's pane\n{opened}");
    assert!(opened.contains("attempt 1 of 1: exit code 3"), "the attempt the log is of\n{opened}");
    assert!(opened.contains("case 1 failed\ncase 2 failed") && opened.contains("case 300 failed"), "the log\n{opened}");
    assert!(opened.contains("vx last --failed --run 3 --task bad#test"), "the same log in a terminal\n{opened}");
}
