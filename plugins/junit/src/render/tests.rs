//! Structure and escaping of the rendered XML, asserted on whole documents
//! so a change in layout is a visible diff.

use super::*;

fn task(project: &str, name: &str, status: Status) -> TaskResult {
    TaskResult {
        project: project.into(),
        task: name.into(),
        status,
        cache: Tier::None,
        duration_ms: 1500,
        exit_code: None,
        message: None,
        log_tail: None,
    }
}

fn run(tasks: Vec<TaskResult>) -> Run {
    Run {
        argv: vec!["vx".into(), "run".into(), "test".into()],
        vx_version: "0.1.0".into(),
        started_unix_ms: 1_798_761_600_000,
        duration_ms: 4321,
        tags: vec![("branch".into(), "main".into())],
        tasks,
    }
}

#[test]
fn renders_every_status_in_its_element() {
    let mut failed = task("web", "test", Status::Failed);
    failed.exit_code = Some(2);
    failed.log_tail = Some("expected 1\ngot 2".into());
    let mut timed_out = task("web", "e2e", Status::TimedOut);
    timed_out.message = Some("timed out after 30s".into());
    let mut skipped = task("api", "lint", Status::Skipped);
    skipped.message = Some("dependency web#build failed".into());
    let mut cached = task("api", "build", Status::Ok);
    cached.cache = Tier::Remote;
    let tasks = vec![task("web", "build", Status::Ok), failed, timed_out, skipped, cached];

    let xml = render(&Config::default(), &run(tasks));

    let expected = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="vx" tests="5" failures="2" errors="0" skipped="1" time="4.321" timestamp="2027-01-01T00:00:00">
  <testsuite name="web" tests="3" failures="2" errors="0" skipped="0" time="4.500" timestamp="2027-01-01T00:00:00">
    <properties>
      <property name="vx.version" value="0.1.0"/>
      <property name="vx.argv" value="vx run test"/>
      <property name="vx.tag.branch" value="main"/>
    </properties>
    <testcase name="build" classname="web" time="1.500"/>
    <testcase name="test" classname="web" time="1.500">
      <failure type="failed" message="exit code 2">expected 1
got 2</failure>
    </testcase>
    <testcase name="e2e" classname="web" time="1.500">
      <failure type="timed-out" message="timed out after 30s"></failure>
    </testcase>
  </testsuite>
  <testsuite name="api" tests="2" failures="0" errors="0" skipped="1" time="3.000" timestamp="2027-01-01T00:00:00">
    <properties>
      <property name="vx.version" value="0.1.0"/>
      <property name="vx.argv" value="vx run test"/>
      <property name="vx.tag.branch" value="main"/>
    </properties>
    <testcase name="lint" classname="api" time="1.500">
      <skipped message="dependency web#build failed"/>
    </testcase>
    <testcase name="build" classname="api" time="1.500">
      <properties>
        <property name="vx.cache" value="remote"/>
      </properties>
      <system-out>vx: replayed from the remote cache</system-out>
    </testcase>
  </testsuite>
</testsuites>
"#;
    assert_eq!(xml, expected);
}

#[test]
fn escapes_names_messages_and_log_tails() {
    let mut failed = task("@org/ui<x>", "test&\"lint\"", Status::Failed);
    failed.message = Some("exit 1: 'a' < \"b\"".into());
    failed.log_tail = Some("\u{1b}[31m<error>\u{1b}[0m a && b\0".into());
    let config = Config { suite_name: Some("CI \"nightly\"".into()) };

    let xml = render(&config, &run(vec![failed]));

    assert!(xml.contains(r#"<testsuites name="CI &quot;nightly&quot;""#), "{xml}");
    assert!(xml.contains(r#"<testsuite name="@org/ui&lt;x&gt;""#), "{xml}");
    assert!(xml.contains(r#"<testcase name="test&amp;&quot;lint&quot;" classname="@org/ui&lt;x&gt;""#), "{xml}");
    assert!(
        xml.contains(r#"message="exit 1: &apos;a&apos; &lt; &quot;b&quot;">&lt;error&gt; a &amp;&amp; b�</failure>"#),
        "{xml}"
    );
}

#[test]
fn cancelled_tasks_are_skipped_and_exit_codes_fill_a_missing_message() {
    let mut failed = task("web", "test", Status::Failed);
    failed.exit_code = Some(137);
    let xml = render(&Config::default(), &run(vec![task("web", "build", Status::Cancelled), failed]));
    assert!(xml.contains(r#"<skipped message="cancelled"/>"#), "{xml}");
    assert!(xml.contains(r#"<failure type="failed" message="exit code 137"></failure>"#), "{xml}");
    assert!(xml.contains(r#"tests="2" failures="1" errors="0" skipped="1""#), "{xml}");
}

#[test]
fn an_empty_run_is_a_valid_document() {
    let xml = render(&Config::default(), &run(vec![]));
    assert_eq!(
        xml,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"vx\" tests=\"0\" failures=\"0\" errors=\"0\" skipped=\"0\" time=\"4.321\" timestamp=\"2027-01-01T00:00:00\">\n</testsuites>\n"
    );
}

#[test]
fn a_flaky_task_is_a_passing_case_with_a_flaky_failure() {
    let mut flaky = task("web", "test", Status::Ok);
    flaky.message = Some("flaky: passed on attempt 2; attempt 1 failed: exit code 1".into());
    flaky.log_tail = Some("expected <1>".into());
    let xml = render(&Config::default(), &run(vec![flaky]));
    let expected = r#"    <testcase name="test" classname="web" time="1.500">
      <flakyFailure type="failed" message="flaky: passed on attempt 2; attempt 1 failed: exit code 1">
        <system-out>expected &lt;1&gt;</system-out>
      </flakyFailure>
    </testcase>
"#;
    assert!(xml.contains(expected), "{xml}");
    assert!(
        xml.contains(r#"<testsuites name="vx" tests="1" failures="0" errors="0" skipped="0""#),
        "a flaky test passed\n{xml}"
    );
}
