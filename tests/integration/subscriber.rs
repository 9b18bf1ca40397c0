//! Subscriber plugins: the `otel` exporter (`plugins/otel`) sending each
//! run as an OpenTelemetry trace to a real OTLP/HTTP receiver
//! (`common::otlp`, which decodes with the OpenTelemetry schema), and
//! failing subscribers (`tests/plugins/testsub`) that must leave the run's
//! result alone.

use std::collections::HashSet;

use crate::common::otlp::{OtlpReceiver, Span, Value, attribute};
use crate::common::{Output, TestEnv};
use crate::plugins::component;

/// Three projects: `app` depends on `lib` and `util`; every `build` writes
/// an output, so a second run is restored from the cache.
fn workspace() -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojects = [\"app\", \"lib\", \"util\"]\n");
    for (name, deps) in [("app", "[\"lib\", \"util\"]"), ("lib", "[]"), ("util", "[]")] {
        env.write(
            &format!("{name}/vx.toml"),
            &format!(
                "[project]\nname = \"{name}\"\ndepends-on = {deps}\n\n[tasks.build]\ncommand = \"echo built {name}; \
                 mkdir -p dist; echo {name} > dist/out.txt\"\noutputs = [\"dist/**\"]\ndepends-on = [\"^build\"]\n"
            ),
        );
    }
    env
}

/// Adds the otel plugin, granted `origin` and pointed at `endpoint`.
fn add_otel(env: &TestEnv, origin: &str, endpoint: &str) {
    let otel = component("otel");
    env.vx(&["plugin", "add", otel.to_str().unwrap(), "--name", "otel", "--allow-host", origin]).assert_success();
    let toml = env.read("vx.toml");
    env.write("vx.toml", &format!("{toml}\n[plugins.otel.config]\nendpoint = \"{endpoint}\"\n"));
}

fn text(span: &Span, key: &str) -> String {
    match attribute(span, key) {
        Some(Value::StringValue(s)) => s.clone(),
        other => panic!("{}: attribute {key} is {other:?}", span.name),
    }
}

fn int(span: &Span, key: &str) -> i64 {
    match attribute(span, key) {
        Some(Value::IntValue(i)) => *i,
        other => panic!("{}: attribute {key} is {other:?}", span.name),
    }
}

/// The spans of one trace: its root and its task spans (children of the
/// root), checked for shape.
fn one_run(spans: &[Span], trace: &[u8]) -> (Span, Vec<Span>) {
    let of_trace: Vec<&Span> = spans.iter().filter(|s| s.trace_id == trace).collect();
    let roots: Vec<&&Span> = of_trace.iter().filter(|s| s.parent_span_id.is_empty()).collect();
    assert_eq!(roots.len(), 1, "one root span per trace: {roots:#?}");
    let root = (*roots[0]).clone();
    let tasks: Vec<Span> = of_trace.iter().filter(|s| s.parent_span_id == root.span_id).map(|s| (*s).clone()).collect();
    for span in &of_trace {
        assert_eq!(span.span_id.len(), 8, "{}", span.name);
        assert!(span.start_time_unix_nano > 1_600_000_000_000_000_000, "{}: a wall-clock start", span.name);
        assert!(span.end_time_unix_nano >= span.start_time_unix_nano, "{}", span.name);
        let parent_known = span.parent_span_id.is_empty() || of_trace.iter().any(|p| p.span_id == span.parent_span_id);
        assert!(parent_known, "{}: its parent is in the trace", span.name);
    }
    (root, tasks)
}

fn cache_statuses(tasks: &[Span]) -> Vec<(String, String)> {
    let mut statuses: Vec<(String, String)> =
        tasks.iter().map(|s| (s.name.clone(), text(s, "vx.cache.status"))).collect();
    statuses.sort();
    statuses
}

#[test]
fn subscriber_otel_sends_each_run_as_a_trace_with_a_span_per_task() {
    let env = workspace();
    let receiver = OtlpReceiver::start();
    add_otel(&env, &receiver.origin(), &receiver.origin());

    let first = env.vx(&["run", "build"]);
    first.assert_success();
    assert!(!first.stderr.contains("subscriber"), "no warning when the export succeeds:\n{first}");
    let second = env.vx(&["run", "build"]);
    second.assert_success();

    let spans = receiver.spans();
    let traces: Vec<Vec<u8>> =
        spans.iter().filter(|s| s.parent_span_id.is_empty()).map(|s| s.trace_id.clone()).collect();
    assert_eq!(traces.len(), 2, "one trace per run");
    assert_ne!(traces[0], traces[1], "each run has its own trace id");
    assert_eq!(spans.iter().map(|s| s.trace_id.clone()).collect::<HashSet<_>>().len(), 2);
    assert!(receiver.service_names().iter().all(|n| n == "vx"), "{:?}", receiver.service_names());

    let (root, tasks) = one_run(&spans, &traces[0]);
    assert_eq!(root.name, "vx run build");
    assert_eq!(int(&root, "vx.exit_code"), 0);
    assert_eq!(text(&root, "vx.version"), env!("CARGO_PKG_VERSION"));
    assert!(text(&root, "vx.argv").ends_with("run build"), "{}", text(&root, "vx.argv"));
    let miss = |id: &str| (id.to_string(), "miss".to_string());
    assert_eq!(cache_statuses(&tasks), vec![miss("app#build"), miss("lib#build"), miss("util#build")]);
    for task in &tasks {
        assert_eq!(text(task, "vx.task.status"), "ok");
        assert_eq!(int(task, "vx.task.exit_code"), 0);
        assert_eq!(int(task, "vx.task.attempts"), 1);
        assert!(task.start_time_unix_nano >= root.start_time_unix_nano, "{} starts inside the run", task.name);
        assert!(task.end_time_unix_nano <= root.end_time_unix_nano, "{} ends inside the run", task.name);
        let attempt = spans.iter().find(|s| s.parent_span_id == task.span_id && s.name == "attempt 1");
        assert!(attempt.is_some(), "{}: its attempt is a span under it", task.name);
    }

    let (root, tasks) = one_run(&spans, &traces[1]);
    assert_eq!(int(&root, "vx.tasks.cached"), 3);
    let hit = |id: &str| (id.to_string(), "hit-local".to_string());
    assert_eq!(cache_statuses(&tasks), vec![hit("app#build"), hit("lib#build"), hit("util#build")]);
}

#[test]
fn subscriber_otel_failing_run_keeps_its_exit_code_and_marks_the_span() {
    let env = workspace();
    env.write("lib/vx.toml", "[project]\nname = \"lib\"\n\n[tasks.build]\ncommand = \"echo oops; exit 3\"\n");
    let receiver = OtlpReceiver::start();
    add_otel(&env, &receiver.origin(), &receiver.origin());
    env.vx(&["run", "build"]).assert_code(1);
    let spans = receiver.spans();
    let lib = spans.iter().find(|s| s.name == "lib#build").expect("a span for the failed task");
    assert_eq!(text(lib, "vx.task.status"), "failed");
    assert_eq!(int(lib, "vx.task.exit_code"), 3);
    assert_eq!(lib.status.as_ref().map(|s| s.code), Some(2), "STATUS_CODE_ERROR");
    let app = spans.iter().find(|s| s.name == "app#build").expect("a span for the skipped task");
    assert_eq!(text(app, "vx.task.status"), "skipped");
    let root = spans.iter().find(|s| s.parent_span_id.is_empty()).unwrap();
    assert_eq!(int(root, "vx.exit_code"), 1);
}

fn warnings(out: &Output) -> Vec<&str> {
    out.stderr.lines().filter(|l| l.starts_with("vx: warning: subscriber")).collect()
}

#[test]
fn subscriber_receiver_down_is_one_warning_and_the_run_succeeds() {
    let env = workspace();
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let origin = format!("http://127.0.0.1:{port}");
    add_otel(&env, &origin, &origin);
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert_eq!(out.summary().failed, 0, "{out}");
    let lines = warnings(&out);
    assert_eq!(lines.len(), 1, "{out}");
    assert!(lines[0].contains("plugin `otel` failed in `on-events`"), "{out}");
    // Refused, as a rule; "closed" when a server of a test running beside
    // this one took the freed port meanwhile. Either way the receiver is
    // not one that answers, and the warning says where vx sent the spans.
    assert!(lines[0].contains(&format!("unavailable: POST {origin}/v1/traces")), "{out}");
}

#[test]
fn subscriber_host_not_granted_is_denied_with_the_key_to_add() {
    let env = workspace();
    let receiver = OtlpReceiver::start();
    add_otel(&env, "http://127.0.0.1:1", &receiver.origin());
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    let lines = warnings(&out);
    assert_eq!(lines.len(), 1, "{out}");
    assert!(lines[0].contains("denied") && lines[0].contains("allow-hosts"), "{out}");
    assert!(receiver.spans().is_empty(), "nothing left vx");
}

#[test]
fn subscriber_no_subscribers_flag_sends_nothing() {
    let env = workspace();
    let receiver = OtlpReceiver::start();
    add_otel(&env, &receiver.origin(), &receiver.origin());
    env.vx(&["run", "build", "--no-subscribers"]).assert_success();
    assert!(receiver.spans().is_empty());
}

/// Adds `testsub` with `mode` and tight limits.
fn add_testsub(env: &TestEnv, mode: &str) {
    let sub = component("testsub");
    env.vx(&["plugin", "add", sub.to_str().unwrap(), "--name", "sub"]).assert_success();
    let toml = env.read("vx.toml");
    let limits = "limits = { cpu = \"1s\", memory = \"64MiB\" }\n";
    env.write("vx.toml", &format!("{toml}{limits}\n[plugins.sub.config]\nmode = \"{mode}\"\n"));
}

#[test]
fn subscriber_sees_every_task_result() {
    let env = workspace();
    add_testsub(&env, "");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert!(out.stderr.contains("3 task results"), "{out}");
    assert!(warnings(&out).is_empty(), "{out}");
}

#[test]
fn subscriber_hostile_failures_leave_the_run_alone() {
    for (mode, says) in [
        ("panic", "testsub was told to panic"),
        ("spin", "CPU budget"),
        ("alloc", "memory limit"),
        ("fail", "unavailable: testsub was told to fail"),
    ] {
        let env = workspace();
        add_testsub(&env, mode);
        let out = env.vx(&["run", "build"]);
        out.assert_success();
        assert_eq!(out.summary().failed, 0, "{mode}: {out}");
        let lines = warnings(&out);
        assert_eq!(lines.len(), 1, "{mode}: one warning line\n{out}");
        assert!(lines[0].contains("plugin `sub`") && lines[0].contains(says), "{mode}: {out}");
        assert!(lines[0].ends_with("the run's result is unchanged"), "{mode}: {out}");
    }
}
