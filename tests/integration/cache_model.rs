//! A model-based test of the cache (issue 36). Random workspaces, built
//! from a seed, go through random edits and runs; after every run two
//! promises are checked:
//!
//! 1. **A cache hit equals a fresh run.** The output files on disk (the
//!    set of them, and each one's bytes and mode) are those that a copy of
//!    the sources built with `--cache off` in a fresh directory produces.
//! 2. **vx changes no file it does not own.** Every file and link outside
//!    the declared outputs and `.vx/` (sources, `shared/`, `.git/`, the
//!    configs) is the same after the run as before it; the tasks here
//!    write nothing but their outputs, so any change is vx's.
//!
//! The workspaces hold what keys and restores find hard: a DAG of 2–5
//! projects whose builds read their dependencies' outputs, nested sources,
//! a `src/shared` link into `shared/` (followed for inputs), files
//! `.gitignore` excludes that explicit input globs still take (`*.local`,
//! `src/gen/`), a root-anchored input (`/config/base.json`) and output
//! (`/gen/NAME/**`), overlapping input globs, and `[cache] monitor` off,
//! `git` or the default. The steps edit sources (some keeping size and
//! mtime), add, delete and rename them, re-point, dangle or remove the
//! link, put links to files where sources were, edit ignored inputs,
//! tamper with outputs (overwrite, delete, add strays, put links to
//! sources where outputs were), edit `.gitignore`, commit, check files
//! out, change a command or `[cache] monitor`, delete vx's stat index,
//! wait out the racy-clean second, and run: plainly, with `--force`, after
//! deleting every output (a restore), and twice at once.
//!
//! `VX_MODEL_CASES` (default [`CI_CASES`]) and `VX_MODEL_SEED` (the first
//! seed, default 0) choose the cases; a failure prints its seed, the
//! workspace, the steps so far and what differed, and replays with
//! `VX_MODEL_SEED=<seed> VX_MODEL_CASES=1`. Each case ends with a run
//! that must be all hits, so the cache cannot pass by never being used,
//! and each reference build is checked to hold the outputs its sources
//! call for, so the comparison cannot pass on an empty one.
//!
//! What the model found is kept below as regression tests, each fixed;
//! the steps that showed them ([`DIR_BECOMES_FILE`], [`MODE_CHANGES`],
//! [`FORCE_BESIDE_PLAIN`]) were off until the fix and are on since.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::process::poll;
use crate::common::{Output, Summary, TestEnv};

/// Cases a normal run (CI) checks: seeds 0..CI_CASES, the same every time.
const CI_CASES: u64 = 10;

/// A source directory replaced by a file of the same name (a build that
/// copies sources then needs `dist/x` where a directory was): clearing
/// outputs removes the directories it empties
/// (`a_source_directory_that_becomes_a_file_builds_as_from_clean`).
const DIR_BECOMES_FILE: bool = true;

/// Whether a step may make a source executable (or not): the owner's
/// execute bit is in the key (`a_source_made_executable_is_a_miss`).
const MODE_CHANGES: bool = true;

/// Whether a run step may be `vx run build` and `vx run build --force` at
/// once: a running task holds its dependencies' locks shared
/// (`a_dependency_forced_by_another_vx_cannot_poison_its_dependents_entry`).
const FORCE_BESIDE_PLAIN: bool = true;

/// One file or directory of a tree, symbolic links not followed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    Dir,
    File { bytes: Vec<u8>, mode: u32 },
    Link(String),
}

/// Every path under a root (relative, `/`-separated) with what it is.
type Tree = BTreeMap<String, Entry>;

/// One project of a generated workspace: `packages/NAME`, with a `build`
/// task that depends on `^build`.
#[derive(Debug, Clone)]
struct Project {
    name: String,
    deps: Vec<String>,
    /// The declared input globs; `src/**` is always among them.
    inputs: Vec<String>,
    /// Whether the build reads its `*.local` files (declared `*.local`).
    local: bool,
    /// Whether the build reads `/config/base.json` (declared so).
    config: bool,
    /// Whether the build also writes the root-anchored `/gen/NAME/**`.
    gen_output: bool,
    /// Printed into `dist/out.txt`; a step bumps it to change the command.
    recipe: u32,
}

impl Project {
    fn dir(&self) -> String {
        format!("packages/{}", self.name)
    }

    fn outputs(&self) -> Vec<String> {
        let mut outputs = vec!["dist/**".to_string()];
        if self.gen_output {
            outputs.push(format!("/gen/{}/**", self.name));
        }
        outputs
    }

    /// The directories its outputs lie in: `dist` and `/gen/NAME`.
    fn output_roots(&self) -> Vec<String> {
        let mut roots = vec![format!("{}/dist", self.dir())];
        if self.gen_output {
            roots.push(format!("gen/{}", self.name));
        }
        roots
    }

    /// Whether `path` (workspace-relative) is one of this project's outputs.
    fn owns(&self, path: &str) -> bool {
        self.output_roots().iter().any(|dir| path == dir || path.starts_with(&format!("{dir}/")))
    }

    /// The build: `dist/out.txt` lists `path:content` of every input file
    /// it reads, then each dependency's `dist/out.txt`; every `src` file is
    /// copied under `dist/`; a root-anchored output repeats `out.txt` and
    /// the file list under `/gen/NAME/`. It reads nothing it does not
    /// declare, so a stale hit can only be vx's fault.
    fn command(&self) -> String {
        let mut s = String::from("set -e\nmkdir -p dist\n{\n");
        writeln!(s, "  echo 'project {} recipe {}'", self.name, self.recipe).expect("write to a String");
        s.push_str(
            "  find -L src -type f | LC_ALL=C sort \
             | while IFS= read -r f; do printf '%s:%s\\n' \"$f\" \"$(cat \"$f\")\"; done\n",
        );
        if self.local {
            s.push_str(
                "  for f in *.local; do if [ -f \"$f\" ]; then printf '%s:%s\\n' \"$f\" \"$(cat \"$f\")\"; fi; done\n",
            );
        }
        if self.config {
            s.push_str("  printf 'config:%s\\n' \"$(cat ../../config/base.json)\"\n");
        }
        for dep in &self.deps {
            writeln!(s, "  echo 'dep {dep}'\n  cat ../{dep}/dist/out.txt").expect("write to a String");
        }
        s.push_str("} > dist/out.txt\n");
        s.push_str(
            "find -L src -type f \
             | while IFS= read -r f; do mkdir -p \"dist/$(dirname \"${f#src/}\")\"; \
             cp \"$f\" \"dist/${f#src/}\"; done\n",
        );
        if self.gen_output {
            let g = format!("../../gen/{}", self.name);
            writeln!(s, "mkdir -p {g}/list\ncp dist/out.txt {g}/out.txt").expect("write to a String");
            writeln!(s, "find -L src -type f | LC_ALL=C sort > {g}/list/files.txt").expect("write to a String");
        }
        s
    }

    fn toml(&self) -> String {
        let list = |items: &[String]| items.iter().map(|i| format!("{i:?}")).collect::<Vec<_>>().join(", ");
        format!(
            "[project]\nname = {:?}\ndepends-on = [{}]\n\n[tasks.build]\ndepends-on = [\"^build\"]\n\
             inputs = [{}]\noutputs = [{}]\ncommand = '''\n{}'''\n",
            self.name,
            list(&self.deps),
            list(&self.inputs),
            list(&self.outputs()),
            self.command()
        )
    }

    /// One line for a failure report.
    fn describe(&self) -> String {
        format!("{}: depends-on {:?}, inputs {:?}, outputs {:?}", self.name, self.deps, self.inputs, self.outputs())
    }
}

/// A workspace to start a case from.
#[derive(Debug, Clone)]
struct Layout {
    projects: Vec<Project>,
    /// `[cache] monitor`, when set.
    monitor: Option<&'static str>,
    /// The root `.gitignore`.
    gitignore: String,
    /// Files to write (besides the `vx.toml`s), path → content.
    files: BTreeMap<String, String>,
    /// Symbolic links, path → target.
    links: BTreeMap<String, String>,
    /// Whether the initial state is committed (git is always initialised).
    commit: bool,
}

/// Source file names; never `out.txt`, which `dist/` keeps for the list.
const NAMES: &[&str] = &["a.txt", "b.ts", "index.ts", "util.txt", "c.md", "d.txt"];
/// Directories under `src/` (`gen` is the one `.gitignore` may exclude).
const SRC_DIRS: &[&str] = &["", "lib", "lib/deep", "gen", "x"];
/// `shared/s0` … `shared/s3`: link targets (not all exist).
const SHARED_DIRS: u32 = 4;
/// Lines the root `.gitignore` may hold besides `.vx/`.
const IGNORABLE: &[&str] = &["*.local", "**/src/gen/", "dist/", "/gen/"];

impl Layout {
    fn random(rng: &mut fastrand::Rng) -> Layout {
        let n = rng.usize(2..=5);
        let mut files = BTreeMap::new();
        let mut links = BTreeMap::new();
        let shared = rng.usize(1..SHARED_DIRS as usize);
        for s in 0..shared {
            for _ in 0..rng.usize(1..=3) {
                let dir = if rng.bool() { format!("shared/s{s}") } else { format!("shared/s{s}/deep") };
                files.insert(format!("{dir}/{}", rng.choice(NAMES).expect("names")), token(rng));
            }
        }
        files.insert("config/base.json".into(), format!("{{\"v\": \"{}\"}}", token(rng)));
        files.insert("README.md".into(), token(rng));
        let mut projects = Vec::new();
        for i in 0..n {
            let name = format!("p{i}");
            let deps = (0..i).filter(|_| rng.f32() < 0.4).map(|j| format!("p{j}")).collect();
            let local = rng.f32() < 0.4;
            let config = rng.f32() < 0.4;
            let mut inputs = vec!["src/**".to_string()];
            if rng.bool() {
                inputs.push("src/**/*.txt".into());
            }
            if rng.f32() < 0.3 {
                inputs.push("src/*/**".into());
            }
            if local {
                inputs.push("*.local".into());
            }
            if config {
                inputs.push("/config/base.json".into());
            }
            rng.shuffle(&mut inputs);
            let dir = format!("packages/{name}");
            for _ in 0..rng.usize(1..=4) {
                let sub = rng.choice(SRC_DIRS).expect("dirs");
                let sub = if sub.is_empty() { String::new() } else { format!("{sub}/") };
                files.insert(format!("{dir}/src/{sub}{}", rng.choice(NAMES).expect("names")), token(rng));
            }
            if local || rng.f32() < 0.2 {
                files.insert(format!("{dir}/dev.local"), token(rng));
            }
            if rng.f32() < 0.3 {
                files.insert(format!("{dir}/README.md"), token(rng));
            }
            if rng.f32() < 0.4 {
                let path = format!("{dir}/src/shared");
                let target = relative(&path, &format!("shared/s{}", rng.usize(0..shared)));
                links.insert(path, target);
            }
            let gen_output = rng.f32() < 0.4;
            projects.push(Project { name, deps, inputs, local, config, gen_output, recipe: 0 });
        }
        let mut gitignore = String::from(".vx/\n");
        for line in IGNORABLE {
            if rng.bool() {
                writeln!(gitignore, "{line}").expect("write to a String");
            }
        }
        let monitor = *rng.choice(&[None, Some("off"), Some("git")]).expect("monitors");
        Layout { projects, monitor, gitignore, files, links, commit: rng.bool() }
    }
}

/// A random word for a file's content.
fn token(rng: &mut fastrand::Rng) -> String {
    let word = rng.choice(["alpha", "beta", "gamma", "delta", "omega"]).expect("words");
    format!("{word}-{}", rng.u32(0..1000))
}

/// What a run step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    /// `vx run build`.
    Plain,
    /// `vx run build --force`.
    Force,
    /// Every output deleted, then `vx run build`: a restore from the cache.
    Restore,
    /// Two `vx run build` at once on the workspace.
    Twice,
    /// `vx run build` and `vx run build --force` at once.
    TwiceForce,
    /// `vx run build` right after a run with nothing changed: every task
    /// must be a hit.
    Hits,
}

/// Files of `.vx/` a user (or a clean-up script) may delete: vx's own
/// state, whose loss must cost time, never correctness.
const STATE: &[&str] = &[".vx/stat-index", ".vx/oid-map", ".vx/tree-snapshot"];

/// One step of a case.
#[derive(Debug, Clone)]
enum Step {
    /// Writes a file (an edit, an addition, or a tampered output); with
    /// `keep_mtime`, an existing file keeps its modification time, as
    /// `rsync -t` or `cp -p` leave it.
    Write {
        path: String,
        text: String,
        keep_mtime: bool,
    },
    /// Removes a file, link or directory.
    Remove {
        path: String,
    },
    /// Replaces a directory by a file of the same name.
    Replace {
        path: String,
        text: String,
    },
    /// Sets a file's permission bits.
    Chmod {
        path: String,
        mode: u32,
    },
    /// Moves a file, its content unchanged.
    Rename {
        from: String,
        to: String,
    },
    /// Replaces whatever is at `path` by a link to `target`.
    Link {
        path: String,
        target: String,
    },
    /// `git add --all`, outputs unstaged, `git commit`.
    Commit,
    /// `git checkout HEAD -- path`: a tracked file back as committed.
    Checkout {
        path: String,
    },
    /// Bumps the recipe of a project: its command changes.
    Recipe {
        project: String,
    },
    /// Rewrites the root `vx.toml` with this `[cache] monitor`.
    Monitor(Option<&'static str>),
    /// Deletes a file of vx's state in `.vx/`.
    Forget {
        path: &'static str,
    },
    /// Waits a little over a second, so that what was written so far is
    /// no longer "racily clean": the next run saves it in the stat index
    /// and git's index vouches for it.
    Wait,
    Run(Run),
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Write { path, text, keep_mtime: false } => write!(f, "write {path} = {text:?}"),
            Step::Write { path, text, keep_mtime: true } => write!(f, "write {path} = {text:?}, mtime kept"),
            Step::Remove { path } => write!(f, "remove {path}"),
            Step::Replace { path, text } => write!(f, "replace the directory {path} by a file = {text:?}"),
            Step::Chmod { path, mode } => write!(f, "chmod {mode:o} {path}"),
            Step::Rename { from, to } => write!(f, "rename {from} to {to}"),
            Step::Link { path, target } => write!(f, "link {path} -> {target}"),
            Step::Commit => write!(f, "git add --all (outputs unstaged) && git commit"),
            Step::Checkout { path } => write!(f, "git checkout HEAD -- {path}"),
            Step::Recipe { project } => write!(f, "change the command of {project}#build"),
            Step::Monitor(monitor) => write!(f, "[cache] monitor = {:?}", monitor.unwrap_or("(unset)")),
            Step::Forget { path } => write!(f, "delete {path}"),
            Step::Wait => write!(f, "wait 1.1 s"),
            Step::Run(Run::Plain) => write!(f, "vx run build"),
            Step::Run(Run::Force) => write!(f, "vx run build --force"),
            Step::Run(Run::Restore) => write!(f, "delete every output, then vx run build"),
            Step::Run(Run::Twice) => write!(f, "two vx run build at once"),
            Step::Run(Run::TwiceForce) => write!(f, "vx run build and vx run build --force at once"),
            Step::Run(Run::Hits) => write!(f, "vx run build (all hits expected)"),
        }
    }
}

/// The root `vx.toml`.
fn root_toml(monitor: Option<&str>) -> String {
    let mut root = String::from("[workspace]\nprojects = [\"packages/*\"]\n");
    if let Some(monitor) = monitor {
        writeln!(root, "\n[cache]\nmonitor = {monitor:?}").expect("write to a String");
    }
    root
}

/// A workspace under test, its steps so far, and the last reference build.
#[derive(Debug)]
struct Case {
    /// The seed, or the name of a fixed regression case.
    label: String,
    env: TestEnv,
    projects: Vec<Project>,
    /// How the workspace started, for a failure report.
    start: String,
    /// Whether git has a commit to check files out from.
    committed: bool,
    steps: Vec<Step>,
    /// The sources the last reference was built from, and its outputs.
    reference: Option<(Tree, Tree)>,
}

impl Case {
    fn new(label: String, layout: &Layout) -> Case {
        let env = TestEnv::new();
        env.git_init("main");
        env.write("vx.toml", &root_toml(layout.monitor));
        env.write(".gitignore", &layout.gitignore);
        for p in &layout.projects {
            env.write(&format!("{}/vx.toml", p.dir()), &p.toml());
            // `src/` exists even when every source is a link's or deleted.
            std::fs::create_dir_all(env.path(&format!("{}/src", p.dir()))).expect("create src");
        }
        for (path, text) in &layout.files {
            env.write(path, text);
        }
        for (path, target) in &layout.links {
            std::os::unix::fs::symlink(target, env.path(path)).unwrap_or_else(|e| panic!("link {path}: {e}"));
        }
        if layout.commit {
            env.git_commit_all("initial");
        }
        let mut start = format!(
            "[cache] monitor = {:?}; initial commit: {}; .gitignore: {:?}\n",
            layout.monitor.unwrap_or("(unset)"),
            layout.commit,
            layout.gitignore.lines().collect::<Vec<_>>(),
        );
        for (path, target) in &layout.links {
            writeln!(start, "  link {path} -> {target}").expect("write to a String");
        }
        for p in &layout.projects {
            writeln!(start, "  {}", p.describe()).expect("write to a String");
        }
        Case {
            label,
            env,
            projects: layout.projects.clone(),
            start,
            committed: layout.commit,
            steps: Vec::new(),
            reference: None,
        }
    }

    fn is_output(&self, path: &str) -> bool {
        self.projects.iter().any(|p| p.owns(path))
    }

    /// Files and links (directories aside) of `tree` that are outputs, or
    /// that are not.
    fn part(&self, tree: &Tree, outputs: bool) -> Tree {
        tree.iter()
            .filter(|(path, entry)| **entry != Entry::Dir && self.is_output(path) == outputs)
            .map(|(path, entry)| (path.clone(), entry.clone()))
            .collect()
    }

    /// Everything but outputs and `.vx/` (directories included): what a
    /// copy of the workspace's sources holds.
    fn sources(&self, tree: &Tree) -> Tree {
        tree.iter().filter(|(path, _)| !self.is_output(path)).map(|(p, e)| (p.clone(), e.clone())).collect()
    }

    /// Panics with everything needed to understand and replay the failure.
    #[track_caller]
    fn fail(&self, what: &str, detail: &str) -> ! {
        let mut s = format!("cache model, case {}: {what}\n", self.label);
        if self.label.parse::<u64>().is_ok() {
            writeln!(
                s,
                "replay: VX_MODEL_SEED={} VX_MODEL_CASES=1 cargo nextest run -p vx-tests --test integration \
                 -E 'test(/cache_model::random/)'",
                self.label
            )
            .expect("write to a String");
        }
        writeln!(s, "workspace: {}steps:", self.start).expect("write to a String");
        for (i, step) in self.steps.iter().enumerate() {
            writeln!(s, "  {}. {step}", i + 1).expect("write to a String");
        }
        s.push_str(detail);
        panic!("{s}");
    }

    fn apply(&mut self, step: Step) {
        self.steps.push(step.clone());
        let env = &self.env;
        match step {
            Step::Write { path, text, keep_mtime } => {
                let mtime = std::fs::metadata(env.path(&path)).and_then(|m| m.modified()).ok();
                env.write(&path, &text);
                if let Some(mtime) = mtime.filter(|_| keep_mtime) {
                    let file = std::fs::File::options().write(true).open(env.path(&path)).expect("open to set mtime");
                    file.set_modified(mtime).expect("set the mtime back");
                }
            }
            Step::Remove { path } => remove(&env.path(&path)),
            Step::Replace { path, text } => {
                remove(&env.path(&path));
                env.write(&path, &text);
            }
            Step::Chmod { path, mode } => {
                std::fs::set_permissions(env.path(&path), std::fs::Permissions::from_mode(mode))
                    .unwrap_or_else(|e| panic!("chmod {path}: {e}"));
            }
            Step::Rename { from, to } => {
                let to = env.path(&to);
                std::fs::create_dir_all(to.parent().expect("a parent")).expect("create the new parent");
                std::fs::rename(env.path(&from), &to).unwrap_or_else(|e| panic!("rename {from}: {e}"));
            }
            Step::Link { path, target } => {
                let link = env.path(&path);
                remove(&link);
                std::fs::create_dir_all(link.parent().expect("a parent")).expect("create the link's parent");
                std::os::unix::fs::symlink(&target, &link).unwrap_or_else(|e| panic!("link {path}: {e}"));
            }
            Step::Commit => {
                // Sources only: vx never removes an output git tracks (it
                // leaves it and does not cache the task), so a repository
                // that commits its outputs is outside this model.
                env.git(&["add", "--all"]);
                let outputs = [":(glob)packages/*/dist/**", ":(glob)gen/**"];
                env.git(&[&["rm", "-r", "--cached", "--quiet", "--ignore-unmatch", "--"][..], &outputs].concat());
                env.git(&["commit", "--quiet", "--allow-empty", "-m", "a step"]);
                self.committed = true;
            }
            Step::Checkout { path } => {
                env.git(&["checkout", "HEAD", "--", &path]);
            }
            Step::Recipe { project } => {
                let p = self.projects.iter_mut().find(|p| p.name == project).expect("a project of the case");
                p.recipe += 1;
                let (dir, toml) = (p.dir(), p.toml());
                self.env.write(&format!("{dir}/vx.toml"), &toml);
            }
            Step::Monitor(monitor) => env.write("vx.toml", &root_toml(monitor)),
            Step::Forget { path } => remove(&env.path(path)),
            Step::Wait => std::thread::sleep(Duration::from_millis(1100)),
            Step::Run(kind) => self.run(kind),
        }
    }

    /// A run step, then both promises checked.
    fn run(&mut self, kind: Run) {
        if kind == Run::Restore {
            for p in &self.projects {
                remove(&self.env.path(&format!("{}/dist", p.dir())));
                if p.gen_output {
                    remove(&self.env.path(&format!("gen/{}", p.name)));
                }
            }
        }
        let before = scan(self.env.root());
        let plain: &[&str] = &["run", "build"];
        let force: &[&str] = &["run", "build", "--force"];
        let outs: Vec<Output> = match kind {
            Run::Twice | Run::TwiceForce => {
                let second = if kind == Run::Twice { plain } else { force };
                let running = [self.env.vx_command(plain).spawn(), self.env.vx_command(second).spawn()];
                running.into_iter().map(|r| r.finish()).collect()
            }
            Run::Force => vec![self.env.vx_command(force).output()],
            Run::Plain | Run::Restore | Run::Hits => vec![self.env.vx_command(plain).output()],
        };
        let shown: String = outs.iter().map(|o| format!("--- vx ---\n{o}")).collect();
        if outs.iter().any(|o| o.code != 0) {
            self.fail("a run failed", &shown);
        }
        if kind == Run::Hits {
            let summary = outs[0].stdout.lines().rev().find(|l| l.starts_with("Tasks: ")).and_then(Summary::parse);
            if summary.is_none_or(|s| s.cached != self.projects.len()) {
                self.fail("a run with nothing changed was not all hits", &shown);
            }
        }
        let after = scan(self.env.root());
        let changed = diff("before", &self.part(&before, false), "after", &self.part(&after, false));
        if !changed.is_empty() {
            self.fail("the run changed files outside the declared outputs", &format!("{changed}{shown}"));
        }
        let sources = self.sources(&after);
        let reference = self.reference(&sources);
        let outputs = diff("workspace", &self.part(&after, true), "fresh build", &reference);
        if !outputs.is_empty() {
            self.fail("the outputs differ from a fresh build of the same sources", &format!("{outputs}{shown}"));
        }
    }

    /// The outputs a fresh build of `sources` produces with the cache off,
    /// in a directory of its own; kept while the sources stay the same.
    fn reference(&mut self, sources: &Tree) -> Tree {
        if let Some((built_from, outputs)) = &self.reference
            && built_from == sources
        {
            return outputs.clone();
        }
        let fresh = TestEnv::new();
        materialize(fresh.root(), sources);
        let out = fresh.vx_command(&["run", "build", "--cache", "off"]).output();
        if out.code != 0 {
            self.fail("the reference build (--cache off) failed", &format!("--- vx ---\n{out}"));
        }
        let outputs = self.part(&scan(fresh.root()), true);
        self.check_reference(sources, &outputs);
        self.reference = Some((sources.clone(), outputs.clone()));
        outputs
    }

    /// The reference must hold the outputs the sources call for, so that a
    /// comparison with it cannot pass on an empty or broken build: each
    /// project's `dist/out.txt` naming every source with its content, a
    /// copy of each source (links followed), and `/gen/NAME/` when
    /// declared.
    fn check_reference(&self, sources: &Tree, outputs: &Tree) {
        let mut want = BTreeSet::new();
        let mut problems = String::new();
        for p in &self.projects {
            let dist = format!("{}/dist", p.dir());
            let out = match outputs.get(&format!("{dist}/out.txt")) {
                Some(Entry::File { bytes, .. }) => String::from_utf8_lossy(bytes).into_owned(),
                _ => String::new(),
            };
            let head = format!("project {} recipe {}\n", p.name, p.recipe);
            if !out.starts_with(&head) {
                writeln!(problems, "{dist}/out.txt does not start with {head:?}").expect("write to a String");
            }
            want.insert(format!("{dist}/out.txt"));
            for (rel, bytes) in followed(sources, &format!("{}/src", p.dir())) {
                let text = String::from_utf8_lossy(&bytes);
                if !out.contains(&format!("src/{rel}:{text}\n")) {
                    writeln!(problems, "{dist}/out.txt lacks src/{rel}").expect("write to a String");
                }
                let copy = format!("{dist}/{rel}");
                if !matches!(outputs.get(&copy), Some(Entry::File { bytes: b, .. }) if *b == bytes) {
                    writeln!(problems, "{copy} is not a copy of its source").expect("write to a String");
                }
                want.insert(copy);
            }
            if p.gen_output {
                want.insert(format!("gen/{}/out.txt", p.name));
                want.insert(format!("gen/{}/list/files.txt", p.name));
            }
        }
        let got: BTreeSet<String> = outputs.keys().cloned().collect();
        if got != want {
            writeln!(problems, "output files {got:?}, expected {want:?}").expect("write to a String");
        }
        if !problems.is_empty() {
            self.fail("the reference build did not produce what its sources call for", &problems);
        }
    }

    /// A random step, chosen from the workspace as it is now.
    fn random_step(&self, rng: &mut fastrand::Rng) -> Step {
        if rng.f32() < 0.4 {
            let kinds = [(8, Run::Plain), (3, Run::Force), (4, Run::Restore), (4, Run::Twice)];
            let run = weighted(rng, &kinds);
            if FORCE_BESIDE_PLAIN && run == Run::Twice && rng.bool() {
                return Step::Run(Run::TwiceForce);
            }
            return Step::Run(run);
        }
        let tree = scan(self.env.root());
        let project = rng.choice(&self.projects).expect("projects");
        let kinds = [(25, "edit"), (12, "add"), (10, "delete"), (6, "rename"), (10, "link"), (8, "ignored")];
        let more = [(12, "tamper"), (4, "gitignore"), (5, "commit"), (4, "checkout"), (4, "recipe")];
        let rest = [(4, "monitor"), (3, "forget"), (3, "wait"), (4, "chmod")];
        let kinds = [&kinds[..], &more, &rest].concat();
        match weighted(rng, &kinds) {
            "edit" => self.random_edit(rng, &tree, |_| true),
            "add" => self.random_add(rng, &tree, project),
            "delete" => self.random_delete(rng, &tree),
            "rename" => {
                let files = self.editable(&tree, |p| p.contains("/src/"));
                match rng.choice(&files) {
                    Some(from) => Step::Rename { from: from.clone(), to: self.random_new_path(rng, &tree, project) },
                    None => self.random_edit(rng, &tree, |_| true),
                }
            }
            "link" => self.random_link(rng, &tree, project),
            "ignored" => {
                let ignored = |p: &str| p.ends_with(".local") || p.contains("/src/gen/");
                if self.editable(&tree, ignored).is_empty() || rng.f32() < 0.2 {
                    let path = format!("{}/src/gen/g{}.txt", project.dir(), rng.u32(0..100));
                    Step::Write { path, text: token(rng), keep_mtime: false }
                } else {
                    self.random_edit(rng, &tree, ignored)
                }
            }
            "tamper" => self.random_tamper(rng, &tree, project),
            "gitignore" => self.toggle_gitignore(rng),
            "commit" => Step::Commit,
            "checkout" if self.committed => {
                let tracked: BTreeSet<String> = self.env.git(&["ls-files"]).lines().map(str::to_string).collect();
                let files = self.editable(&tree, |p| tracked.contains(p));
                match rng.choice(&files) {
                    Some(path) => Step::Checkout { path: path.clone() },
                    None => Step::Commit,
                }
            }
            "checkout" => Step::Commit,
            "recipe" => Step::Recipe { project: project.name.clone() },
            "monitor" => Step::Monitor(*rng.choice(&[None, Some("off"), Some("git")]).expect("monitors")),
            "forget" => Step::Forget { path: rng.choice(STATE).expect("state files") },
            "chmod" if MODE_CHANGES => {
                let files = self.editable(&tree, |_| true);
                let path = rng.choice(&files).expect("config/base.json is always there").clone();
                let executable = matches!(tree.get(&path), Some(Entry::File { mode, .. }) if mode & 0o100 != 0);
                Step::Chmod { path, mode: if executable { 0o644 } else { 0o755 } }
            }
            "chmod" => self.random_edit(rng, &tree, |_| true),
            _ => Step::Wait,
        }
    }

    /// A new source file, or now and then a directory of sources replaced
    /// by a file.
    fn random_add(&self, rng: &mut fastrand::Rng, tree: &Tree, project: &Project) -> Step {
        let src = format!("{}/src/", project.dir());
        let dirs = filtered(tree, |p, e| *e == Entry::Dir && p.starts_with(&src));
        match rng.choice(&dirs) {
            Some(dir) if DIR_BECOMES_FILE && rng.f32() < 0.25 => Step::Replace { path: dir.clone(), text: token(rng) },
            _ => Step::Write { path: self.random_new_path(rng, tree, project), text: token(rng), keep_mtime: false },
        }
    }

    /// A file removed, or now and then a whole directory of sources.
    fn random_delete(&self, rng: &mut fastrand::Rng, tree: &Tree) -> Step {
        let dirs = filtered(tree, |p, e| *e == Entry::Dir && p.starts_with("packages/") && p.contains("/src/"));
        match rng.choice(&dirs) {
            Some(dir) if rng.f32() < 0.2 => Step::Remove { path: dir.clone() },
            _ => {
                let files = self.editable(tree, |p| p != "config/base.json");
                Step::Remove { path: rng.choice(&files).expect("README.md stays").clone() }
            }
        }
    }

    /// One of the ignorable lines added to `.gitignore`, or taken out.
    fn toggle_gitignore(&self, rng: &mut fastrand::Rng) -> Step {
        let old = std::fs::read_to_string(self.env.path(".gitignore")).expect("read .gitignore");
        let line = rng.choice(IGNORABLE).expect("lines");
        let lines: Vec<&str> = old.lines().collect();
        let text = if lines.contains(line) {
            lines.iter().filter(|l| *l != line).map(|l| format!("{l}\n")).collect()
        } else {
            format!("{old}{line}\n")
        };
        Step::Write { path: ".gitignore".into(), text, keep_mtime: false }
    }

    /// The regular files a user edits (not the configs, nor outputs, nor
    /// `.git/`) whose path passes `keep`.
    fn editable(&self, tree: &Tree, keep: impl Fn(&str) -> bool) -> Vec<String> {
        filtered(tree, |path, entry| {
            matches!(entry, Entry::File { .. })
                && !path.starts_with(".git/")
                && !path.ends_with("vx.toml")
                && !path.ends_with(".gitignore")
                && !self.is_output(path)
                && keep(path)
        })
    }

    /// New content for an editable file: half the time of the same size,
    /// and then now and then with its mtime kept, the edits a stat check
    /// can miss.
    fn random_edit(&self, rng: &mut fastrand::Rng, tree: &Tree, keep: impl Fn(&str) -> bool) -> Step {
        let files = self.editable(tree, keep);
        let path = rng.choice(&files).expect("config/base.json is always there").clone();
        let old = std::fs::read_to_string(self.env.path(&path)).expect("read a source");
        if old.is_empty() || rng.bool() {
            return Step::Write { path, text: token(rng), keep_mtime: false };
        }
        let text = loop {
            let text: String = (0..old.len()).map(|_| rng.alphanumeric()).collect();
            if text != old {
                break text;
            }
        };
        Step::Write { path, text, keep_mtime: rng.bool() }
    }

    /// A path for a new file: in a real directory of `project`'s `src/`
    /// (or a new one), a `*.local` file, a file under `shared/`, or one
    /// that no input names.
    fn random_new_path(&self, rng: &mut fastrand::Rng, tree: &Tree, project: &Project) -> String {
        let name = format!("n{}.{}", rng.u32(0..100), rng.choice(["txt", "ts"]).expect("extensions"));
        let dir = project.dir();
        let path = match rng.u32(0..10) {
            0..5 => {
                let src = format!("{dir}/src");
                let mut dirs =
                    filtered(tree, |p, e| *e == Entry::Dir && (p == src || p.starts_with(&format!("{src}/"))));
                // `shared` too while nothing is there: a real directory
                // where a link was, or will be.
                let free = !tree.contains_key(&format!("{src}/shared"));
                let subs: Vec<&str> = SRC_DIRS.iter().copied().chain(free.then_some("shared")).collect();
                let sub = *rng.choice(&subs).expect("dirs");
                if !sub.is_empty() {
                    dirs.push(format!("{src}/{sub}"));
                }
                format!("{}/{name}", rng.choice(&dirs).expect("src exists"))
            }
            5..7 => format!("{dir}/n{}.local", rng.u32(0..100)),
            7..9 => format!("shared/s{}/{name}", rng.u32(0..SHARED_DIRS)),
            _ => format!("{dir}/docs/{name}"),
        };
        // Never through a link nor over a directory (a file of `docs/` is
        // neither).
        if fits(tree, &path) { path } else { format!("{dir}/docs/{name}") }
    }

    /// Re-points or removes `src/shared`, or puts a link to a file of
    /// `shared/` where a source file was, or takes such a link away.
    fn random_link(&self, rng: &mut fastrand::Rng, tree: &Tree, project: &Project) -> Step {
        let src = format!("{}/src", project.dir());
        if rng.f32() < 0.6 {
            let path = format!("{src}/shared");
            // Any of the shared directories, even one that does not exist
            // (yet): a dangling link.
            let target = relative(&path, &format!("shared/s{}", rng.u32(0..SHARED_DIRS)));
            return match tree.get(&path) {
                Some(Entry::Link(_)) if rng.bool() => Step::Remove { path },
                Some(Entry::Dir | Entry::File { .. }) => Step::Remove { path },
                _ => Step::Link { path, target },
            };
        }
        let links = filtered(tree, |p, e| matches!(e, Entry::Link(_)) && p.starts_with(&format!("{src}/")));
        let shared = filtered(tree, |p, e| matches!(e, Entry::File { .. }) && p.starts_with("shared/"));
        let files = self.editable(tree, |p| p.starts_with(&format!("{src}/")));
        match (rng.choice(&files), rng.choice(&shared)) {
            (Some(path), Some(target)) if links.is_empty() || rng.bool() => {
                Step::Link { target: relative(path, target), path: path.clone() }
            }
            _ => match rng.choice(&links) {
                Some(link) => Step::Remove { path: link.clone() },
                None => self.random_edit(rng, tree, |_| true),
            },
        }
    }

    /// Damage to the outputs a run must repair: a file overwritten or
    /// removed, a stray file, and links where outputs were, to a source
    /// with the same content (which a restore that follows links would
    /// take for the output) or to a source directory (which clearing the
    /// outputs must not descend into).
    fn random_tamper(&self, rng: &mut fastrand::Rng, tree: &Tree, project: &Project) -> Step {
        let files = filtered(tree, |p, e| matches!(e, Entry::File { .. }) && self.is_output(p));
        // Directories below `dist/` or `/gen/NAME/`, not those themselves.
        let roots: BTreeSet<String> = self.projects.iter().flat_map(Project::output_roots).collect();
        let dirs = filtered(tree, |p, e| *e == Entry::Dir && self.is_output(p) && !roots.contains(p));
        let path = format!("{}/dist/stray/n{}.txt", project.dir(), rng.u32(0..100));
        let stray = Step::Write { path, text: token(rng), keep_mtime: false };
        match rng.u32(0..5) {
            0 => match rng.choice(&files) {
                Some(path) => Step::Write { path: path.clone(), text: "tampered".into(), keep_mtime: rng.bool() },
                None => stray,
            },
            1 => match rng.choice(&files) {
                Some(path) => Step::Remove { path: path.clone() },
                None => stray,
            },
            2 => stray,
            3 => match rng.choice(&files) {
                Some(path) => {
                    let source = source_of(path).filter(|s| tree.contains_key(s)).unwrap_or_else(|| {
                        rng.choice(self.editable(tree, |_| true)).expect("config/base.json is always there")
                    });
                    Step::Link { target: relative(path, &source), path: path.clone() }
                }
                None => stray,
            },
            _ => {
                let path = match rng.choice(&dirs) {
                    Some(dir) => dir.clone(),
                    None => format!("{}/dist/lib", project.dir()),
                };
                let sources = filtered(tree, |p, e| {
                    *e == Entry::Dir
                        && (p.starts_with("shared/")
                            || p.starts_with("packages/") && (p.ends_with("/src") || p.contains("/src/")))
                });
                let source = source_of(&path)
                    .filter(|s| tree.get(s) == Some(&Entry::Dir))
                    .unwrap_or_else(|| rng.choice(&sources).expect("src exists").clone());
                Step::Link { target: relative(&path, &source), path }
            }
        }
    }
}

/// Whether a file can be written at `path` without replacing a directory
/// or following a link: a file or nothing is there, and every parent is a
/// directory or nothing.
fn fits(tree: &Tree, path: &str) -> bool {
    let mut parents = path.match_indices('/').map(|(i, _)| &path[..i]);
    matches!(tree.get(path), None | Some(Entry::File { .. }))
        && parents.all(|p| matches!(tree.get(p), None | Some(Entry::Dir)))
}

/// The paths of `tree` that pass `keep`, in order.
fn filtered(tree: &Tree, keep: impl Fn(&str, &Entry) -> bool) -> Vec<String> {
    tree.iter().filter(|(p, e)| keep(p, e)).map(|(p, _)| p.clone()).collect()
}

/// The source an output copies: `packages/P/dist/REL` → `packages/P/src/REL`.
fn source_of(output: &str) -> Option<String> {
    let (project, rel) = output.split_once("/dist/")?;
    Some(format!("{project}/src/{rel}"))
}

/// A relative target for a link at `link` that leads to `target` (both
/// workspace-relative): up to the root, then down.
fn relative(link: &str, target: &str) -> String {
    format!("{}{target}", "../".repeat(link.matches('/').count()))
}

/// One random case: a workspace from `seed`, 6–10 random steps ending
/// with a run, then a run that must be all hits.
fn random_case(seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let layout = Layout::random(&mut rng);
    let mut case = Case::new(seed.to_string(), &layout);
    for _ in 0..rng.usize(6..=10) {
        let step = case.random_step(&mut rng);
        case.apply(step);
    }
    if !matches!(case.steps.last(), Some(Step::Run(_))) {
        case.apply(Step::Run(Run::Plain));
    }
    case.apply(Step::Run(Run::Hits));
}

fn env_u64(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok().filter(|v| !v.is_empty())?;
    Some(value.parse().unwrap_or_else(|e| panic!("{name}={value:?} is not a number: {e}")))
}

#[test]
fn random_workspaces_keep_both_promises() {
    let first = env_u64("VX_MODEL_SEED").unwrap_or(0);
    let cases = env_u64("VX_MODEL_CASES").unwrap_or(CI_CASES);
    assert!(cases > 0, "VX_MODEL_CASES must be at least 1");
    for seed in first..first + cases {
        random_case(seed);
    }
}

// ---------------------------------------------------------------------
// Regressions: what the model found, as fixed cases. A race between two
// vx processes shows in a random case only when the timing falls right,
// so the races are pinned in the order that shows them, every wait a
// handshake through files at the workspace root (no task's input).
// ---------------------------------------------------------------------

/// One project, `p0`, whose build copies `src/x/a.txt`; nothing else.
fn one_project() -> Layout {
    let p0 = Project {
        name: "p0".into(),
        deps: Vec::new(),
        inputs: vec!["src/**".into()],
        local: false,
        config: false,
        gen_output: false,
        recipe: 0,
    };
    let files = [("packages/p0/src/x/a.txt".to_string(), "a".to_string())].into();
    Layout {
        projects: vec![p0],
        monitor: None,
        gitignore: ".vx/\n".into(),
        files,
        links: BTreeMap::new(),
        commit: false,
    }
}

/// The model found this with [`DIR_BECOMES_FILE`] (seed 6, on a run with
/// `--force`): clearing a task's outputs removes files and links but
/// leaves directories, so when `src/x/` becomes a file `src/x`, the empty
/// `dist/x/` left behind takes the copy as `dist/x/x`, where a build from
/// clean writes `dist/x`; the run succeeds and caches it. A restore meets
/// the same directory (`could not restore its outputs (dist/x: Is a
/// directory)`) and runs the task, with the same result.
#[test]
fn a_source_directory_that_becomes_a_file_builds_as_from_clean() {
    let mut case = Case::new("a_source_directory_that_becomes_a_file".into(), &one_project());
    case.apply(Step::Run(Run::Plain));
    case.apply(Step::Replace { path: "packages/p0/src/x".into(), text: "now a file".into() });
    case.apply(Step::Run(Run::Plain));
    case.apply(Step::Run(Run::Hits));
}

/// The model found this with [`MODE_CHANGES`] (seed 85): an input's
/// permission bits were not in its task's key, yet outputs are archived
/// and restored with theirs. After `chmod +x` on a source the build
/// copies, the run was a hit and the copy kept the mode of the old build,
/// where a build from clean makes it executable. The owner's execute bit
/// is in the key now (docs/cache.md, "The key").
#[test]
fn a_source_made_executable_is_a_miss() {
    let mut case = Case::new("a_source_made_executable".into(), &one_project());
    case.apply(Step::Run(Run::Plain));
    case.apply(Step::Chmod { path: "packages/p0/src/x/a.txt".into(), mode: 0o755 });
    case.apply(Step::Run(Run::Plain));
}

/// A shell loop that waits until `file` exists, for at most about 3 s:
/// long enough to show an overlap vx allows, short enough that a vx that
/// serialises the two runs (so the other side never arrives) only costs
/// the test those seconds.
fn wait_briefly_for(file: &str) -> String {
    format!("i=0; while [ ! -e {file} ] && [ $i -lt 150 ]; do sleep 0.02; i=$((i+1)); done")
}

/// Polls up to 3 s for `check` to hold; whether it did. Used where a vx
/// without the bug never lets the awaited event happen.
fn holds_soon(check: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    while !check() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    check()
}

/// `[project]` NAME with DEPS and a cached `build` running COMMAND.
fn build_project(name: &str, deps: &str, command: &str) -> String {
    format!(
        "[project]\nname = \"{name}\"\ndepends-on = [{deps}]\n\n[tasks.build]\ndepends-on = [\"^build\"]\n\
         inputs = [\"src/**\"]\noutputs = [\"dist/**\"]\ncommand = '''\n{command}\n'''\n"
    )
}

/// The model found this with [`FORCE_BESIDE_PLAIN`], as a failed run:
/// beside `vx run build`, `vx run build --force` re-ran a dependency,
/// clearing its outputs while the other process's dependent read them
/// (`cat: ../p0/dist/out.txt: No such file or directory`). A dependent
/// that tolerates a missing file (a bundler taking whatever its
/// dependency's `dist/` holds) succeeds instead, and stores an entry
/// built from the cleared outputs, which every later hit restores. A
/// task's lock covered its own run, not its outputs while dependents in
/// other processes read them; a running task now holds the locks of the
/// tasks it depends on, shared, so the forced one waits.
#[test]
fn a_dependency_forced_by_another_vx_cannot_poison_its_dependents_entry() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let hold = "[ -e ../../hold ]";
    let lib = format!(
        "mkdir -p dist && if {hold}; then touch ../../lib-started; {}; fi && echo v1 > dist/lib.txt",
        wait_briefly_for("../../app-copied")
    );
    let app = format!(
        "mkdir -p dist && if {hold}; then touch ../../app-started; \
         while [ ! -e ../../release ]; do sleep 0.02; done; fi\n\
         {{ cp -R ../lib/dist/. dist/ 2>/dev/null || true; }}\nif {hold}; then touch ../../app-copied; fi\n\
         cat src/a.txt > dist/app.txt"
    );
    env.write("packages/lib/vx.toml", &build_project("lib", "", &lib));
    env.write("packages/app/vx.toml", &build_project("app", "\"lib\"", &app));
    env.write("packages/lib/src/a.txt", "lib");
    env.write("packages/app/src/a.txt", "app 1");
    env.vx_command(&["run", "build"]).output().assert_success();
    assert_eq!(env.read("packages/app/dist/lib.txt"), "v1\n", "the cold run bundles lib's output");

    // app changes, so the next plain run builds it (lib is a hit); while
    // app runs, another vx forces lib.
    env.write("packages/app/src/a.txt", "app 2");
    env.write("hold", "");
    let plain = env.vx_command(&["run", "build"]).spawn();
    assert!(poll(|| env.path("app-started").exists()), "app#build never started\n{}", plain.output_so_far());
    let forced = env.vx_command(&["run", "lib#build", "--force"]).spawn();
    // Either the forced lib starts now, its outputs cleared under the
    // running app, or vx holds it back until app is done.
    let overlapped = holds_soon(|| env.path("lib-started").exists());
    env.write("release", "");
    let (plain, forced) = (plain.finish(), forced.finish());
    plain.assert_success();
    forced.assert_success();
    env.remove("hold");

    // Nothing changed since: both are hits, and app's restored outputs
    // must be what a build of these sources makes, lib's output bundled.
    std::fs::remove_dir_all(env.path("packages/app/dist")).expect("remove app's outputs");
    let out = env.vx_command(&["run", "build"]).output();
    out.assert_success();
    assert_eq!(out.summary().cached, 2, "both tasks are hits\n{out}");
    assert_eq!(env.read("packages/app/dist/app.txt"), "app 2");
    let bundled = std::fs::read_to_string(env.path("packages/app/dist/lib.txt")).ok();
    assert_eq!(
        bundled.as_deref(),
        Some("v1\n"),
        "app's cached outputs lack lib's (the forced lib overlapped app: {overlapped})\n{plain}\n{forced}\n{out}"
    );
}

/// `vx run build --cache off` took no task lock, so beside `vx run build`
/// both ran the same task at once in the same directory; the cached run
/// then stored what the two commands wrote together, and every later hit
/// restored it. With the cache off the task's lock is taken all the same.
#[test]
fn a_run_with_the_cache_off_beside_a_cached_run_cannot_poison_the_entry() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    // Each run of the task says it started, then waits for the test's
    // go-ahead between its two writes.
    let command = "mkdir -p dist && echo one >> dist/out.txt && echo x >> ../../started\n\
                   while [ ! -e ../../release ]; do sleep 0.02; done\necho two >> dist/out.txt";
    env.write("packages/p/vx.toml", &build_project("p", "", command));
    env.write("packages/p/src/a.txt", "a");
    let cached = env.vx_command(&["run", "build"]).spawn();
    let off = env.vx_command(&["run", "build", "--cache", "off"]).spawn();
    // Both commands start, or vx serialises them (then the second starts
    // once the first is released).
    let started = || std::fs::read_to_string(env.path("started")).unwrap_or_default().lines().count();
    let overlapped = holds_soon(|| started() == 2);
    env.write("release", "");
    let (cached, off) = (cached.finish(), off.finish());
    cached.assert_success();
    off.assert_success();

    std::fs::remove_dir_all(env.path("packages/p/dist")).expect("remove the outputs");
    let out = env.vx_command(&["run", "build"]).output();
    out.assert_success();
    assert_eq!(
        env.read("packages/p/dist/out.txt"),
        "one\ntwo\n",
        "a hit (or a fresh run) gives one run's output (the two runs overlapped: {overlapped})\n{cached}\n{off}\n{out}"
    );
}

// ---------------------------------------------------------------------
// Helpers: trees on disk, their differences, random edits.
// ---------------------------------------------------------------------

/// `choices` as (weight, value); one value, in proportion to its weight.
fn weighted<T: Copy>(rng: &mut fastrand::Rng, choices: &[(u32, T)]) -> T {
    let total: u32 = choices.iter().map(|(w, _)| w).sum();
    let mut roll = rng.u32(0..total);
    for (weight, value) in choices {
        if roll < *weight {
            return *value;
        }
        roll -= weight;
    }
    unreachable!("the roll is below the total weight")
}

/// Removes a file, link or directory tree, if there.
fn remove(path: &Path) {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return };
    let removed = if meta.is_dir() { std::fs::remove_dir_all(path) } else { std::fs::remove_file(path) };
    removed.unwrap_or_else(|e| panic!("remove {}: {e}", path.display()));
}

/// Every path under `root` but `.vx/` (links not followed).
fn scan(root: &Path) -> Tree {
    let mut tree = Tree::new();
    let mut stack = vec![String::new()];
    while let Some(dir) = stack.pop() {
        let full = if dir.is_empty() { root.to_path_buf() } else { root.join(&dir) };
        let entries = std::fs::read_dir(&full).unwrap_or_else(|e| panic!("read {}: {e}", full.display()));
        for e in entries {
            let e = e.unwrap_or_else(|e| panic!("read {}: {e}", full.display()));
            let name = e.file_name().into_string().expect("names here are UTF-8");
            let rel = if dir.is_empty() { name } else { format!("{dir}/{name}") };
            if rel == ".vx" {
                continue;
            }
            let path = e.path();
            let meta = std::fs::symlink_metadata(&path).unwrap_or_else(|e| panic!("stat {}: {e}", path.display()));
            let entry = if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap_or_else(|e| panic!("read link {}: {e}", path.display()));
                Entry::Link(target.to_string_lossy().into_owned())
            } else if meta.is_dir() {
                stack.push(rel.clone());
                Entry::Dir
            } else {
                let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
                Entry::File { bytes, mode: meta.permissions().mode() & 0o7777 }
            };
            tree.insert(rel, entry);
        }
    }
    tree
}

/// Writes `tree` under `root` (parents sort before their children).
fn materialize(root: &Path, tree: &Tree) {
    for (rel, entry) in tree {
        let path = root.join(rel);
        match entry {
            Entry::Dir => std::fs::create_dir_all(&path).expect("create a directory"),
            Entry::File { bytes, mode } => {
                std::fs::write(&path, bytes).expect("write a file");
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(*mode)).expect("set a mode");
            }
            Entry::Link(target) => std::os::unix::fs::symlink(target, &path).expect("create a link"),
        }
    }
}

/// The files under `dir` of `tree` as a task reading it sees them, links
/// to directories followed: path relative to `dir` → bytes.
fn followed(tree: &Tree, dir: &str) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let prefix = format!("{dir}/");
    for (path, entry) in tree.range(prefix.clone()..) {
        let Some(rel) = path.strip_prefix(&prefix) else { break };
        match entry {
            Entry::File { bytes, .. } => {
                out.insert(rel.to_string(), bytes.clone());
            }
            Entry::Link(target) => {
                let parent = Path::new(path).parent().expect("a link has a parent");
                let resolved = normalize(&parent.join(target).to_string_lossy());
                match tree.get(&resolved) {
                    Some(Entry::File { bytes, .. }) => {
                        out.insert(rel.to_string(), bytes.clone());
                    }
                    Some(Entry::Dir) => {
                        for (inner, bytes) in followed(tree, &resolved) {
                            out.insert(format!("{rel}/{inner}"), bytes);
                        }
                    }
                    // Dangling (or a link to a link, which no step makes).
                    _ => {}
                }
            }
            Entry::Dir => {}
        }
    }
    out
}

/// `a/b/../c` → `a/c`, for the relative link targets here.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("/")
}

/// What differs between two trees of files, one line or three per path;
/// empty when they are equal.
fn diff(left_name: &str, left: &Tree, right_name: &str, right: &Tree) -> String {
    let mut out = String::new();
    let paths: BTreeSet<&String> = left.keys().chain(right.keys()).collect();
    for path in paths {
        match (left.get(path), right.get(path)) {
            (Some(a), Some(b)) if a == b => Ok(()),
            (Some(a), None) => writeln!(out, "only in the {left_name}: {path} ({})", show(a)),
            (None, Some(b)) => writeln!(out, "only in the {right_name}: {path} ({})", show(b)),
            (Some(a), Some(b)) => {
                writeln!(out, "differs: {path}\n  {left_name}: {}\n  {right_name}: {}", show(a), show(b))
            }
            (None, None) => unreachable!("the path comes from one of the trees"),
        }
        .expect("write to a String");
    }
    out
}

/// An entry in a line: a link's target, a file's mode and (start of its)
/// text.
fn show(entry: &Entry) -> String {
    match entry {
        Entry::Dir => "a directory".into(),
        Entry::Link(target) => format!("link to {target}"),
        Entry::File { bytes, mode } => {
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]);
            format!("mode {mode:o}, {} bytes: {text:?}", bytes.len())
        }
    }
}
