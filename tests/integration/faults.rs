//! File-system faults under real runs: a cache on a tmpfs that fills up
//! mid-write, a cache remounted read-only, an unreadable cache directory,
//! and a file-descriptor limit. In each, the run completes (tasks that
//! cannot be cached run and say why, once), no corrupt entry is ever
//! restored or left in the store, and the next run on a healthy disk is
//! correct.
//!
//! Mounting a tmpfs needs root, as in CI; elsewhere those tests say they
//! were skipped. An unreadable directory stops root only without its
//! capabilities, so vx runs under `setpriv --bounding-set=-all` there.

use std::path::{Path, PathBuf};

use crate::common::fixtures::task;
use crate::common::log_cmd as log;
use crate::common::process::assert_nothing_left;
use crate::common::store::{assert_store_verifies, store};
use crate::common::{Output, TestEnv};

const PROJECTS: usize = 6;

/// Projects p0..p5, each `build` logging `pN` and writing its source and
/// `size` incompressible bytes into `dist/`.
fn workspace(env: &TestEnv, projects: usize, size: usize) {
    env.write("vx.toml", "[workspace]\nprojects = [\"packages/*\"]\n");
    for i in 0..projects {
        let cmd = format!(
            "{} && mkdir -p dist && cp src/f.txt dist/f.txt && head -c {size} /dev/urandom > dist/r.bin",
            log(&format!("p{i}"))
        );
        let build = task("build", &cmd, "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]\n");
        env.write(&format!("packages/p{i}/vx.toml"), &format!("[project]\nname = \"p{i}\"\n{build}"));
        env.write(&format!("packages/p{i}/src/f.txt"), &format!("p{i} start"));
    }
}

#[track_caller]
fn assert_outputs_match_sources(env: &TestEnv, projects: usize) {
    for i in 0..projects {
        let src = env.read(&format!("packages/p{i}/src/f.txt"));
        assert_eq!(env.read(&format!("packages/p{i}/dist/f.txt")), src, "p{i}'s output is its source");
    }
}

/// How many lines of `out` start with `pN#build:` and contain `word`, per task.
fn notes_per_task(out: &Output, word: &str) -> Vec<usize> {
    (0..PROJECTS)
        .map(|i| out.stdout.lines().filter(|l| l.starts_with(&format!("p{i}#build:")) && l.contains(word)).count())
        .collect()
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// A tmpfs mounted for one test, unmounted when dropped.
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    /// `None` (with a notice) when this process may not mount.
    fn mount(dir: PathBuf, size: &str) -> Option<Tmpfs> {
        if !is_root() {
            eprintln!("skipped: mounting a tmpfs needs root (CI runs as root)");
            return None;
        }
        std::fs::create_dir_all(&dir).expect("the mount point");
        run("mount", &["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs", &dir.to_string_lossy()]);
        Some(Tmpfs { dir })
    }

    fn remount_read_only(&self) {
        run("mount", &["-o", "remount,ro", &self.dir.to_string_lossy()]);
    }

    fn text(&self) -> String {
        self.dir.to_string_lossy().into_owned()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        #[expect(clippy::disallowed_methods, reason = "a system tool the test runs, not a task")]
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

#[track_caller]
fn run(program: &str, args: &[&str]) {
    #[expect(clippy::disallowed_methods, reason = "a system tool the test runs, not a task")]
    let status = std::process::Command::new(program).args(args).status().expect("start a system tool");
    assert!(status.success(), "{program} {args:?} failed");
}

fn cache_dir(env: &TestEnv, name: &str) -> PathBuf {
    env.root().parent().expect("the workspace has a parent").join(name)
}

#[test]
fn a_full_disk_mid_write_stores_what_fits_and_runs_the_rest() {
    let env = TestEnv::new();
    // Six entries of ~200 kB each on a 600 kB disk: two or three fit, the
    // next write runs out of space part way through.
    workspace(&env, PROJECTS, 200_000);
    let Some(disk) = Tmpfs::mount(cache_dir(&env, "tiny"), "600k") else { return };
    let args = ["run", "build", "--cache-dir", &disk.text()];
    for round in 0..2 {
        let before = assert_store_verifies(&disk.dir).len();
        env.clear_log();
        let out = env.vx(&args);
        out.assert_success();
        let after = assert_store_verifies(&disk.dir).len();
        assert!(after > 0 && after < PROJECTS, "round {round}: some but not all fit: {after}\n{out}");
        let cached = out.summary().cached;
        assert_eq!(cached, before, "what was stored is a hit, and nothing else\n{out}");
        assert_eq!(env.log().len(), PROJECTS - cached, "the rest ran\n{out}");
        let notes = notes_per_task(&out, "No space left on device");
        assert!(notes.iter().all(|&n| n <= 1), "each task says why once: {notes:?}\n{out}");
        let told = notes.iter().sum::<usize>();
        assert_eq!(told, PROJECTS - cached - (after - before), "every task that ran and was not stored says so\n{out}");
        let partial = std::fs::read_dir(disk.dir.join("tmp")).map_or(0, |d| d.count());
        assert_eq!(partial, 0, "no partial write is left");
        assert_outputs_match_sources(&env, PROJECTS);
    }
    // On a healthy disk everything runs once and is cached.
    drop(disk);
    env.clear_log();
    env.vx(&["run", "build"]).assert_success();
    assert_eq!(env.log().len(), PROJECTS);
    let again = env.vx(&["run", "build"]);
    assert_eq!(again.summary().cached, PROJECTS, "{again}");
    assert_store_verifies(&store(&env));
    assert_nothing_left(&env, &[], &"after the full disk");
}

#[test]
fn a_read_only_cache_serves_hits_and_runs_the_rest_uncached() {
    let env = TestEnv::new();
    workspace(&env, PROJECTS, 10_000);
    let Some(disk) = Tmpfs::mount(cache_dir(&env, "ro"), "16m") else { return };
    let args = ["run", "build", "--cache-dir", &disk.text()];
    env.vx(&args).assert_success();
    disk.remount_read_only();
    env.write("packages/p0/src/f.txt", "p0 changed");
    env.clear_log();
    let out = env.vx(&args);
    out.assert_success();
    assert_eq!(env.log(), ["p0"], "the others hit\n{out}");
    assert_eq!(out.summary().cached, PROJECTS - 1, "{out}");
    assert_eq!(notes_per_task(&out, "Read-only file system"), [1, 0, 0, 0, 0, 0], "one note, for p0\n{out}");
    assert_outputs_match_sources(&env, PROJECTS);
    assert_store_verifies(&disk.dir);
}

#[test]
fn an_unreadable_cache_is_one_warning_and_never_loses_an_entry() {
    let env = TestEnv::new();
    workspace(&env, PROJECTS, 10_000);
    let dir = cache_dir(&env, "locked");
    let dir_text = dir.to_string_lossy().into_owned();
    env.vx(&["run", "build", "--cache-dir", &dir_text]).assert_success();
    let before = assert_store_verifies(&dir);
    assert_eq!(before.len(), PROJECTS);
    set_mode(&dir, 0o000);
    env.clear_log();
    let command = env.vx_command(&["run", "build", "--cache-dir", &dir_text]);
    // Root reads anything while it holds CAP_DAC_OVERRIDE: drop them all.
    let command =
        if is_root() { command.wrapped("setpriv", &["--inh-caps=-all", "--bounding-set=-all", "--"]) } else { command };
    let out = command.output();
    set_mode(&dir, 0o755);
    out.assert_success();
    assert_eq!(env.log().len(), PROJECTS, "every task ran\n{out}");
    let warnings: Vec<&str> = out.stdout.lines().filter(|l| l.contains("could not read the cache")).collect();
    assert_eq!(warnings.len(), 1, "one warning for the run\n{out}");
    assert!(warnings[0].contains("Permission denied"), "{out}");
    assert!(!out.stdout.contains("corrupt"), "an unreadable entry is not a corrupt one\n{out}");
    assert!(notes_per_task(&out, "not cached").iter().all(|&n| n == 1), "each says once why it is not stored\n{out}");
    assert_eq!(assert_store_verifies(&dir), before, "nothing was removed");
    assert_outputs_match_sources(&env, PROJECTS);
    // Readable again: every entry is still a hit.
    env.clear_log();
    let out = env.vx(&["run", "build", "--cache-dir", &dir_text]);
    assert_eq!(out.summary().cached, PROJECTS, "{out}");
}

fn set_mode(dir: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).expect("chmod the cache");
}

#[test]
fn sixty_four_file_descriptors_are_enough_for_a_wide_run() {
    let env = TestEnv::new();
    workspace(&env, 40, 20_000);
    for i in 0..40 {
        for j in 0..5 {
            env.write(&format!("packages/p{i}/src/more{j}.txt"), "more");
        }
    }
    let limited = |n: &str| {
        env.vx_command(&["run", "build", "--concurrency", "8"])
            .wrapped("sh", &["-c", &format!("ulimit -n {n} && exec \"$@\""), "sh"])
            .output()
    };
    let out = limited("64");
    out.assert_success();
    assert_eq!(env.log().len(), 40, "{out}");
    assert_outputs_match_sources(&env, 40);
    env.clear_log();
    let out = limited("64");
    assert_eq!(out.summary().cached, 40, "{out}");
    // Far too few to start processes: tasks fail, each saying why, and
    // nothing panics or is left behind.
    env.write("packages/p0/src/f.txt", "p0 changed");
    let out = limited("12");
    assert_eq!(out.code, 1, "{out}");
    // EMFILE by its number: its words are the libc's ("Too many open
    // files" from glibc, "No file descriptors available" from musl).
    assert!(out.stdout.contains("(os error 24)") || out.stderr.contains("(os error 24)"), "{out}");
    assert!(!out.stderr.contains("panicked"), "{out}");
    assert_store_verifies(&store(&env));
    assert_nothing_left(&env, &[], &"after the limits");
}
