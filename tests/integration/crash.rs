//! Crash consistency: vx killed with SIGKILL at random moments of a cold,
//! cache-writing run of 50 projects, each kill followed by a normal run.
//! After every normal run, every output equals the reference build (worked
//! out here, not by vx), the store holds one whole, verified entry per
//! task, nothing the killed run started is still running, and no lock is
//! stuck (the normal run would wait on it forever). The same after SIGKILL
//! of the guard alone and of vx's whole process group.
//!
//! The moments are drawn uniformly over the length of a measured cold run,
//! so startup, hashing, execution, archiving and the store's writes are
//! all hit. `VX_CRASH_TRIALS` sets the number of vx kills (200) and
//! `VX_CRASH_SEED` replays a failing series (the seed is in the message).

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::common::fixtures::task;
use crate::common::process::{Running, VxCommand, assert_nothing_left, guard_of, send, try_send};
use crate::common::store::{assert_store_verifies, store};
use crate::common::{Output, TestEnv};

const PROJECTS: usize = 50;
/// Each project depends on the one this far below it: ten chains of five.
const STRIDE: usize = 10;
const PAD: usize = 30_000;

/// p0..p49; `pN` (N ≥ 10) depends on `p(N-10)`. Each `build` writes
/// `dist/out.txt` (its source, then its dependency's `out.txt`) and
/// `dist/pad.txt` (30 kB of its name), so a dependent's output is wrong
/// whenever its dependency's restored or rebuilt output is.
fn workspace(env: &TestEnv) {
    env.write("vx.toml", "[workspace]\nprojects = [\"packages/*\"]\n");
    for i in 0..PROJECTS {
        let (deps, dep_out) = match i.checked_sub(STRIDE) {
            Some(d) => (format!("\"p{d}\""), format!(" ../p{d}/dist/out.txt")),
            None => (String::new(), String::new()),
        };
        let cmd = format!(
            "mkdir -p dist && cat src/f.txt{dep_out} > dist/out.txt && yes p{i} | head -c {PAD} > dist/pad.txt"
        );
        let build = task("build", &cmd, "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]\ndepends-on = [\"^build\"]\n");
        env.write(
            &format!("packages/p{i}/vx.toml"),
            &format!("[project]\nname = \"p{i}\"\ndepends-on = [{deps}]\n{build}"),
        );
        env.write(&format!("packages/p{i}/src/f.txt"), &format!("p{i} source\n"));
    }
}

/// What `pN`'s `dist/out.txt` holds after a correct build.
fn reference_out(i: usize) -> String {
    let own = format!("p{i} source\n");
    match i.checked_sub(STRIDE) {
        Some(d) => own + &reference_out(d),
        None => own,
    }
}

fn reference_pad(i: usize) -> String {
    format!("p{i}\n").repeat(PAD).chars().take(PAD).collect()
}

/// Panics unless every project's `dist/` holds exactly the reference files.
#[track_caller]
fn assert_reference_build(env: &TestEnv, context: &str) {
    for i in 0..PROJECTS {
        let dist = env.path(&format!("packages/p{i}/dist"));
        let mut names: Vec<String> = std::fs::read_dir(&dist)
            .unwrap_or_else(|e| panic!("{context}: p{i} has no dist/: {e}"))
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["out.txt", "pad.txt"], "{context}: p{i}'s dist/ holds exactly its outputs");
        assert_eq!(env.read(&format!("packages/p{i}/dist/out.txt")), reference_out(i), "{context}: p{i}/dist/out.txt");
        assert!(
            env.read(&format!("packages/p{i}/dist/pad.txt")) == reference_pad(i),
            "{context}: p{i}/dist/pad.txt differs"
        );
    }
}

fn cold_run(env: &TestEnv) -> VxCommand {
    env.vx_command(&["run", "build", "--concurrency", "4"])
}

/// The state a killed run must leave: after it, a normal run succeeds
/// without a warning, builds the reference outputs, and leaves one
/// verified entry per task; and nothing of either run is running.
#[track_caller]
fn assert_recovers(env: &TestEnv, killed: Output, context: &str) {
    assert_nothing_left(env, &[], &format_args!("{context}: after the kill\n{killed}"));
    let out = cold_run(env).output();
    out.assert_success();
    assert!(!out.stderr.contains("warning"), "{context}: the run after the kill warns of nothing\n{out}");
    assert_reference_build(env, context);
    let keys = assert_store_verifies(&store(env));
    assert_eq!(keys.len(), PROJECTS, "{context}: one entry per task\n{out}");
    assert_nothing_left(env, &[], &format_args!("{context}: after the normal run\n{out}"));
}

/// Makes the next run cold: the store emptied (the stat index, history and
/// locks stay, as a crash left them).
fn empty_store(env: &TestEnv) {
    match std::fs::remove_dir_all(store(env)) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => panic!("empty the store: {e}"),
    }
}

/// A seeded generator, its seed taken from `VX_CRASH_SEED` or the clock.
fn generator() -> (fastrand::Rng, u64) {
    let seed = std::env::var("VX_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| fastrand::u64(..));
    (fastrand::Rng::with_seed(seed), seed)
}

/// How long a cold run takes here, from one measured run, which must
/// itself build the reference.
fn measure_cold_run(env: &TestEnv) -> Duration {
    let start = Instant::now();
    let out = cold_run(env).output();
    let took = start.elapsed();
    out.assert_success();
    assert_reference_build(env, "the reference run");
    took
}

/// `trials` rounds of: empty the store, start a cold run, wait a random
/// part of a cold run's length, `kill` it, and check the recovery.
fn crash_series(trials: usize, kill: impl Fn(&Running)) {
    let env = TestEnv::new();
    workspace(&env);
    let cold = measure_cold_run(&env);
    let (mut rng, seed) = generator();
    let mut outcomes = [0usize; 2];
    for trial in 0..trials {
        empty_store(&env);
        let vx = cold_run(&env).own_group().spawn();
        let delay = cold.mul_f64(rng.f64());
        std::thread::sleep(delay);
        kill(&vx);
        let killed = vx.finish();
        outcomes[usize::from(killed.code == -1)] += 1;
        let context = format!("trial {trial} of {trials}, killed after {delay:?} (VX_CRASH_SEED={seed})");
        assert_recovers(&env, killed, &context);
    }
    eprintln!(
        "{trials} trials over a {cold:?} cold run (VX_CRASH_SEED={seed}): {} killed mid-run, {} finished first",
        outcomes[1], outcomes[0]
    );
}

fn trials() -> usize {
    std::env::var("VX_CRASH_TRIALS").ok().and_then(|s| s.parse().ok()).unwrap_or(200)
}

#[test]
fn sigkill_of_vx_at_random_moments_of_a_cold_run_never_corrupts_the_next() {
    crash_series(trials(), |vx| send(vx.pid(), Signal::SIGKILL));
}

#[test]
fn sigkill_of_vx_and_its_guard_together_never_corrupts_the_next_run() {
    // The whole process group: vx and its guard at once, as `kill -9 -PGID`
    // or a terminal closing hard does; the tasks are in sessions of their
    // own and must still be stopped.
    crash_series(trials() / 10, |vx| send(-vx.pid(), Signal::SIGKILL));
}

#[test]
fn sigkill_of_the_guard_mid_run_leaves_a_run_that_completes_and_a_correct_next() {
    let env = TestEnv::new();
    workspace(&env);
    let cold = measure_cold_run(&env);
    let (mut rng, seed) = generator();
    let trials = trials() / 10;
    for trial in 0..trials {
        empty_store(&env);
        let vx = cold_run(&env).spawn();
        let guard = guard_of(vx.pid());
        let delay = cold.mul_f64(rng.f64());
        std::thread::sleep(delay);
        // The run may have ended, and its guard with it, in the meantime.
        try_send(guard, Signal::SIGKILL);
        let out = vx.finish();
        let context = format!("trial {trial} of {trials}, guard killed after {delay:?} (VX_CRASH_SEED={seed})");
        // Without its guard vx goes on: the run itself completes.
        assert_eq!(out.code, 0, "{context}: the run goes on without its guard\n{out}");
        assert_recovers(&env, out, &context);
    }
}
