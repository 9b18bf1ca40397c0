//! The engine and the task lifecycle, specified step by step against the
//! scripted executor (`exec::scripted`): real workspaces on disk, a real
//! cache, the real walk and admission, and no process spawned. Each
//! module is one step of a run; each test says what vx does there.

use std::sync::{Arc, Mutex};

use super::exec::scripted::{Script, Step};
use super::{RunOptions, RunOutcome, Session, Signals};
use crate::cache::{Cache, CacheMode};
use crate::config::{Workspace, load_workspace};
use crate::error::ErrorKind;
use crate::events::{Bus, CacheOutcome, Event, Subscriber, TaskStatus};
use crate::graph::{ContinueMode, TaskGraph, TaskId};

/// A workspace on disk: one `vx.toml` per project, `(dir, text)`, and the
/// script its tasks run from.
struct Harness {
    dir: tempfile::TempDir,
    ws: Workspace,
    script: Arc<Script>,
}

fn workspace(projects: &[(&str, &str)]) -> Harness {
    let dir = tempfile::tempdir().expect("a temp dir");
    let globs: Vec<String> = projects.iter().map(|(p, _)| format!("{p:?}")).collect();
    std::fs::write(dir.path().join("vx.toml"), format!("[workspace]\nprojects = [{}]\n", globs.join(", ")))
        .expect("write vx.toml");
    for (project, tasks) in projects {
        let at = dir.path().join(project);
        std::fs::create_dir_all(at.join("src")).expect("make the project");
        std::fs::write(at.join("src/a.txt"), "a\n").expect("write a source");
        // A text that starts with `[project]` adds to that table.
        let rest = tasks.strip_prefix("[project]\n").unwrap_or(tasks);
        std::fs::write(at.join("vx.toml"), format!("[project]\nname = {project:?}\n{rest}")).expect("write vx.toml");
    }
    let ws = load_workspace(dir.path()).expect("the workspace loads");
    Harness { dir, ws, script: Arc::default() }
}

fn options() -> RunOptions {
    RunOptions {
        concurrency: 4,
        memory: None,
        continue_mode: ContinueMode::Never,
        output_logs: Default::default(),
        log_order: Default::default(),
        log_prefix: Default::default(),
        timeout: None,
        color: false,
        github: false,
        executor: None,
        env_mode: None,
        retries: None,
        observe: None,
        download: Default::default(),
        controls: None,
    }
}

/// The events of a run as short lines: `start a#build`, `hit a#build`,
/// `ready s#dev`, `attempt a#build 1 failed (exit code 1, Some(1)): oops`,
/// `done a#build ok`.
#[derive(Debug, Default)]
struct Seen(Mutex<Vec<String>>);

impl Subscriber for Seen {
    fn on(&self, event: &Event<'_>) {
        let line = match event {
            Event::Started { task, .. } => format!("start {task}"),
            Event::CacheHit { task, .. } => format!("hit {task}"),
            Event::Ready { task } => format!("ready {task}"),
            Event::Finished { result, .. } => format!("done {} {}", result.id, result.status.word()),
            Event::AttemptFailed { task, attempt, exit_code, reason, log } => {
                format!(
                    "attempt {task} {attempt} failed ({reason}, {exit_code:?}): {}",
                    String::from_utf8_lossy(log).trim()
                )
            }
            _ => return,
        };
        self.0.lock().expect("seen lock").push(line);
    }
}

impl Seen {
    fn lines(&self) -> Vec<String> {
        self.0.lock().expect("seen lock").clone()
    }

    fn index(&self, line: &str) -> usize {
        let lines = self.lines();
        lines.iter().position(|l| l == line).unwrap_or_else(|| panic!("no `{line}` in {lines:?}"))
    }
}

/// The roots a run of `tasks` starts from, as `vx run` names them from
/// the workspace root: `project#task` exactly, a bare name in every
/// project that has it. (Selecting is `crate::plan`'s; the engine is
/// specified here on the graph it is handed.)
fn roots(ws: &Workspace, tasks: &[String]) -> Vec<(usize, String)> {
    let mut roots = Vec::new();
    for spec in tasks {
        match TaskId::parse(spec) {
            Some(id) => roots.push((ws.project_index(&id.project).expect("a known project"), id.task.clone())),
            None => roots.extend(
                ws.projects
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.tasks.contains_key(spec))
                    .map(|(i, _)| (i, spec.clone())),
            ),
        }
    }
    roots
}

/// How a run is made: which tasks, with what options, cached or not, and
/// a signal sent once a task has started.
struct Run<'h> {
    h: &'h Harness,
    tasks: Vec<String>,
    opts: RunOptions,
    cached: bool,
    interrupt_after_start: Option<&'static str>,
}

impl Harness {
    fn run(&self, tasks: &[&str]) -> Run<'_> {
        Run {
            h: self,
            tasks: tasks.iter().map(|t| t.to_string()).collect(),
            opts: options(),
            cached: false,
            interrupt_after_start: None,
        }
    }
}

impl Run<'_> {
    fn cached(mut self) -> Self {
        self.cached = true;
        self
    }

    fn with(mut self, f: impl FnOnce(&mut RunOptions)) -> Self {
        f(&mut self.opts);
        self
    }

    fn interrupt_once(mut self, task: &'static str) -> Self {
        self.interrupt_after_start = Some(task);
        self
    }

    fn go(self) -> (RunOutcome, Arc<Seen>) {
        let h = self.h;
        let graph = TaskGraph::build(&h.ws, &roots(&h.ws, &self.tasks)).expect("a graph");
        let cache = self.cached.then(|| {
            let dir = h.dir.path().join(".cache");
            Arc::new(Cache::open(&h.ws, Some(dir), CacheMode::default(), false, None).expect("the cache opens"))
        });
        let seen = Arc::new(Seen::default());
        let bus = Bus::new(vec![seen.clone()]);
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
        let outcome = runtime.block_on(async {
            let (mut signals, send) = Signals::sent();
            if let Some(task) = self.interrupt_after_start {
                let seen = seen.clone();
                tokio::spawn(async move {
                    while !seen.lines().contains(&format!("start {task}")) {
                        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    }
                    let _ = send.send(ErrorKind::Interrupted);
                });
            }
            let mut session = Session::scripted(&h.ws, &graph, self.opts, cache, bus, h.script.clone());
            let outcome = session.run_cycle(None, &mut signals).await.expect("the cycle ends");
            session.shutdown().await;
            outcome
        });
        (outcome, seen)
    }
}

fn status<'o>(outcome: &'o RunOutcome, id: &str) -> &'o TaskStatus {
    &outcome.summary.results.iter().find(|r| r.id == id).unwrap_or_else(|| panic!("no result for {id}")).status
}

fn cache_of(outcome: &RunOutcome, id: &str) -> CacheOutcome {
    outcome.summary.results.iter().find(|r| r.id == id).expect("a result").cache
}

const BUILD: &str = "[tasks.build]\ncommand = \"build\"\ninputs = [\"src/**\"]\noutputs = [\"dist/**\"]\n";
const BUILD_AFTER_DEPS: &str =
    "[tasks.build]\ncommand = \"build\"\ndepends-on = [\"^build\"]\ninputs = [\"src/**\"]\noutputs = [\"dist/**\"]\n";

/// `app` depends on `lib`; both build after their dependencies.
fn app_on_lib() -> Harness {
    workspace(&[("lib", BUILD), ("app", &format!("[project]\ndepends-on = [\"lib\"]\n\n{BUILD_AFTER_DEPS}"))])
}

mod ordering {
    use super::*;

    #[test]
    fn runs_a_dependency_before_its_dependent() {
        let h = app_on_lib();
        let (outcome, seen) = h.run(&["build"]).go();
        assert_eq!(outcome.exit_code(), 0);
        assert!(seen.index("done lib#build ok") < seen.index("start app#build"), "{:?}", seen.lines());
    }

    #[test]
    fn never_runs_more_tasks_at_once_than_the_concurrency() {
        let projects: Vec<(String, &str)> = (0..6).map(|n| (format!("p{n}"), BUILD)).collect();
        let refs: Vec<(&str, &str)> = projects.iter().map(|(p, t)| (p.as_str(), *t)).collect();
        let h = workspace(&refs);
        let (outcome, _) = h.run(&["build"]).with(|o| o.concurrency = 2).go();
        assert_eq!(outcome.exit_code(), 0);
        assert_eq!(h.script.calls().len(), 6);
        assert_eq!(h.script.most_at_once(), 2, "two at a time, and they did overlap");
    }
}

mod failures {
    use super::*;

    #[test]
    fn skips_a_task_when_a_dependency_failed() {
        let h = app_on_lib();
        h.script.on("lib#build", [Step::Fail(3)]);
        let (outcome, _) = h.run(&["build"]).go();
        assert_eq!(outcome.exit_code(), 1);
        assert_eq!(status(&outcome, "lib#build"), &TaskStatus::Failed("exit code 3".into()));
        assert!(matches!(status(&outcome, "app#build"), TaskStatus::Skipped(_)), "{:?}", outcome.summary.results);
        assert_eq!(h.script.calls(), ["lib#build"], "app never started");
    }

    #[test]
    fn continue_always_runs_a_dependent_of_a_failed_task() {
        let h = app_on_lib();
        h.script.on("lib#build", [Step::Fail(1)]);
        let (outcome, _) = h.run(&["build"]).with(|o| o.continue_mode = ContinueMode::Always).go();
        assert_eq!(outcome.exit_code(), 1);
        assert_eq!(status(&outcome, "app#build"), &TaskStatus::Succeeded);
    }

    #[test]
    fn continue_dependents_ok_runs_independent_tasks_but_not_the_dependents_of_a_failure() {
        let h = workspace(&[
            ("lib", BUILD),
            ("app", &format!("[project]\ndepends-on = [\"lib\"]\n\n{BUILD_AFTER_DEPS}")),
            ("solo", "[tasks.build]\ncommand = \"build\"\ndepends-on = [\"^build\"]\n"),
        ]);
        h.script.on("lib#build", [Step::Fail(1)]);
        let (outcome, _) = h.run(&["build"]).with(|o| o.continue_mode = ContinueMode::DependentsOk).go();
        assert!(matches!(status(&outcome, "app#build"), TaskStatus::Skipped(_)));
        assert_eq!(status(&outcome, "solo#build"), &TaskStatus::Succeeded);
    }
}

mod retries {
    use super::*;

    #[test]
    fn runs_a_failed_attempt_again_while_retries_are_left() {
        let h = workspace(&[("lib", &format!("{BUILD}retries = 2\n"))]);
        h.script.on("lib#build", [Step::Fail(1), Step::Fail(1), Step::Succeed]);
        let (outcome, _) = h.run(&["build"]).go();
        assert_eq!(outcome.exit_code(), 0);
        assert_eq!(h.script.attempts("lib#build"), 3);
        let result = &outcome.summary.results[0];
        assert_eq!((result.attempts, result.failed_attempt.is_some()), (3, true), "a flaky success says so");
    }

    #[test]
    fn hands_every_failed_attempts_output_to_history_before_the_task_is_done() {
        let h = workspace(&[("lib", &format!("{BUILD}retries = 2\n"))]);
        h.script.on("lib#build", [Step::Fail(1), Step::Fail(3), Step::Succeed]);
        let (_, seen) = h.run(&["build"]).go();
        let first = seen.index("attempt lib#build 1 failed (exit code 1, Some(1)): oops");
        let second = seen.index("attempt lib#build 2 failed (exit code 3, Some(3)): oops");
        assert!(first < second && second < seen.index("done lib#build ok"), "{:?}", seen.lines());
        assert_eq!(seen.lines().iter().filter(|l| l.starts_with("attempt ")).count(), 2, "the passing one is not");
    }

    #[test]
    fn fails_once_its_retries_are_spent() {
        let h = workspace(&[("lib", BUILD)]);
        h.script.on("lib#build", [Step::Fail(1), Step::Fail(2), Step::Succeed]);
        let (outcome, _) = h.run(&["build"]).with(|o| o.retries = Some(1)).go();
        assert_eq!(status(&outcome, "lib#build"), &TaskStatus::Failed("exit code 2".into()));
        assert_eq!(h.script.attempts("lib#build"), 2);
    }
}

mod cache {
    use super::*;

    fn writes_dist() -> Step {
        Step::Write(vec![("dist/out.txt", "built\n")])
    }

    #[test]
    fn restores_outputs_on_a_hit_without_running_the_task() {
        let h = workspace(&[("lib", BUILD)]);
        h.script.on("lib#build", [writes_dist()]);
        let (first, _) = h.run(&["build"]).cached().go();
        assert_eq!(cache_of(&first, "lib#build"), CacheOutcome::Miss);
        let out = h.ws.root.join("lib/dist/out.txt");
        std::fs::remove_file(&out).expect("remove the output");
        let (second, seen) = h.run(&["build"]).cached().go();
        assert_eq!(cache_of(&second, "lib#build"), CacheOutcome::Local);
        assert_eq!(h.script.attempts("lib#build"), 1, "the hit ran nothing");
        assert!(seen.lines().contains(&"hit lib#build".to_string()));
        assert_eq!(std::fs::read_to_string(out).expect("restored"), "built\n");
    }

    #[test]
    fn does_not_store_a_failure() {
        let h = workspace(&[("lib", BUILD)]);
        h.script.on("lib#build", [Step::Fail(1), writes_dist()]);
        let (first, _) = h.run(&["build"]).cached().go();
        assert_eq!(first.exit_code(), 1);
        let (second, _) = h.run(&["build"]).cached().go();
        assert_eq!(cache_of(&second, "lib#build"), CacheOutcome::Miss, "nothing was stored to hit");
        assert_eq!(h.script.attempts("lib#build"), 2);
    }

    #[test]
    fn misses_when_an_input_changes() {
        let h = workspace(&[("lib", BUILD)]);
        h.run(&["build"]).cached().go();
        std::fs::write(h.ws.root.join("lib/src/a.txt"), "changed\n").expect("edit");
        let (second, _) = h.run(&["build"]).cached().go();
        assert_eq!(cache_of(&second, "lib#build"), CacheOutcome::Miss);
        assert_eq!(h.script.attempts("lib#build"), 2);
    }
}

mod groups {
    use super::*;

    #[test]
    fn a_group_runs_its_members_and_nothing_of_its_own() {
        let h = workspace(&[(
            "lib",
            "[tasks.lint]\ncommand = \"lint\"\n\n[tasks.test]\ncommand = \"test\"\n\n[tasks.check]\ndepends-on = [\"lint\", \"test\"]\n",
        )]);
        let (outcome, _) = h.run(&["lib#check"]).go();
        assert_eq!(outcome.exit_code(), 0);
        let mut calls = h.script.calls();
        calls.sort();
        assert_eq!(calls, ["lib#lint", "lib#test"], "the group itself runs nothing");
        assert_eq!(cache_of(&outcome, "lib#check"), CacheOutcome::Group);
    }

    #[test]
    fn a_group_fails_when_a_member_fails() {
        let h = workspace(&[("lib", "[tasks.lint]\ncommand = \"lint\"\n\n[tasks.check]\ndepends-on = [\"lint\"]\n")]);
        h.script.on("lib#lint", [Step::Fail(1)]);
        let (outcome, _) = h.run(&["lib#check"]).go();
        assert_eq!(outcome.exit_code(), 1);
        assert!(!matches!(status(&outcome, "lib#check"), TaskStatus::Succeeded), "{:?}", outcome.summary.results);
    }
}

mod persistent {
    use super::*;

    #[test]
    fn a_dependent_starts_once_the_server_is_ready_and_the_server_is_stopped_at_the_end() {
        let h = workspace(&[
            ("api", "[tasks.dev]\ncommand = \"serve\"\npersistent = true\n"),
            (
                "web",
                "[project]\ndepends-on = [\"api\"]\n\n[tasks.e2e]\ncommand = \"e2e\"\ndepends-on = [\"api#dev\"]\n",
            ),
        ]);
        h.script.on("api#dev", [Step::Serve]);
        let (outcome, seen) = h.run(&["web#e2e"]).go();
        assert_eq!(outcome.exit_code(), 0, "{:?}", outcome.summary.results);
        assert!(seen.index("ready api#dev") < seen.index("start web#e2e"), "{:?}", seen.lines());
        assert_eq!(status(&outcome, "api#dev"), &TaskStatus::Succeeded, "stopped as planned once no task needs it");
    }
}

mod cancellation {
    use super::*;

    #[test]
    fn an_interrupt_cancels_the_running_task_and_starts_no_other() {
        let h = app_on_lib();
        h.script.on("lib#build", [Step::Hang]);
        let (outcome, _) = h.run(&["build"]).interrupt_once("lib#build").go();
        assert_eq!(outcome.interrupted, Some(ErrorKind::Interrupted));
        assert_eq!(outcome.exit_code(), 130);
        assert_eq!(status(&outcome, "lib#build"), &TaskStatus::Cancelled);
        assert_eq!(h.script.calls(), ["lib#build"], "app never started");
    }
}
