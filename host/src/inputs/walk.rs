//! Which files are a task's inputs, and which are its outputs on disk.
//!
//! Inputs: the files of the project matching the task's `inputs` globs
//! (every file when none are declared), minus `!` patterns, minus files
//! matching its `outputs`, minus what `.gitignore` (and `.ignore`) exclude,
//! minus `.git`, `.vx`, `node_modules` and nested projects. Only the literal
//! directory prefix of each glob is walked (`src/**` walks `src/`), so a
//! task with narrow inputs never lists the whole project.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::Gitignore;

use super::glob::GlobFilter;
use super::hasher::FileStat;
use super::ignores::{chained, ignore_file};
use super::runs::{listing_order, merge_runs};

/// A file under a base directory: its path relative to that directory
/// (with `/`), its absolute path, and its `lstat` when the walk took one
/// (for a file reached through a symbolic link the walk followed, the
/// `stat` of what the link leads to, and `via_link` set).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct FileRef {
    pub rel: String,
    pub abs: PathBuf,
    pub stat: Option<FileStat>,
    /// Reached through a symbolic link: a file-system monitor watching the
    /// walked directories would not see its changes, nor does git's index
    /// hold its content.
    pub via_link: bool,
}

/// How a walk treats what it meets.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Listing<'a> {
    /// A task's inputs: symbolic links are followed (a linked `src/` is
    /// keyed by what it holds, a linked file by its content), and
    /// `Some(chain)` applies ignore files: the chain of parsed ignore
    /// files from the workspace root down to and including the base, the
    /// ones inside read as the walk meets them. `None` lists what git
    /// ignores too (explicit `inputs` name files as Turborepo's do).
    Inputs(Option<&'a Arc<Vec<Gitignore>>>),
    /// A task's outputs: a link is an output itself, never followed (so
    /// clearing removes the link, not what it leads to), and ignore files
    /// do not apply (outputs are usually ignored).
    Outputs,
}

/// Lists the files under `base` that pass `filter`, sorted, each with its
/// `lstat`, as `listing` says. `skip_dirs` are absolute directories never
/// entered (nested projects).
pub(crate) fn list_files(
    base: &Path,
    filter: &GlobFilter,
    listing: Listing<'_>,
    skip_dirs: &[PathBuf],
) -> Vec<FileRef> {
    merge_runs(list_file_runs(base, "", filter, listing, skip_dirs))
}

/// [`list_files`] with each `rel` behind `prefix` (`base` relative to the
/// workspace, "" for none: the name a task's key gives the file, made
/// once as the walk meets it rather than copied again after), as runs
/// each in listing order (`runs`) left for the caller to merge: one per
/// walk thread when a single root was walked, else one.
pub(crate) fn list_file_runs(
    base: &Path,
    prefix: &str,
    filter: &GlobFilter,
    listing: Listing<'_>,
    skip_dirs: &[PathBuf],
) -> Vec<Vec<FileRef>> {
    let mut runs = Vec::new();
    let skip = if prefix.is_empty() { 0 } else { prefix.len() + 1 };
    let (follow_links, ignores) = match listing {
        Listing::Inputs(ignores) => (true, ignores),
        Listing::Outputs => (false, None),
    };
    for root in filter.roots() {
        let start = if root.is_empty() { base.to_path_buf() } else { base.join(root) };
        let Ok(lstat) = std::fs::symlink_metadata(&start) else { continue };
        let via_link = lstat.file_type().is_symlink() || (follow_links && !start_is_plain(base, root));
        let meta = match (follow_links, via_link) {
            (true, true) => std::fs::metadata(&start).unwrap_or(lstat),
            _ => lstat,
        };
        let rel = join_rel(prefix, root);
        if !meta.is_dir() {
            if filter.matches(root) {
                runs.push(vec![FileRef { rel, abs: start, stat: Some(FileStat::of(&meta)), via_link }]);
            }
            continue;
        }
        if via_link && !follow_links {
            continue;
        }
        let walk = Walk { filter, skip, respect_ignore: ignores.is_some(), follow_links, skip_dirs };
        let chain = ignores.cloned().unwrap_or_default();
        let verdicts = Arc::new(chain.iter().map(|gi| verdict(gi.matched_path_or_any_parents(&start, true))).collect());
        // The chain already holds `base`'s own ignore files.
        let own_read = root.is_empty();
        let followed = Arc::new(if via_link { start.canonicalize().into_iter().collect() } else { Vec::new() });
        walk.run(DirJob { dir: start, rel, chain, verdicts, own_read, via_link, followed }, &mut runs);
    }
    if filter.roots().len() <= 1 {
        return runs;
    }
    // Roots never nest (`GlobFilter::new`), but a symbolic link can make
    // one reach another's files by the same path. Compared as bytes: both
    // were joined from `base` the same way.
    let mut out = merge_runs(runs);
    out.dedup_by(|a, b| a.abs.as_os_str() == b.abs.as_os_str());
    vec![out]
}

/// Directory entries seen before a walk spreads over several threads: a
/// project's few files stay on the calling thread (a run keys many tasks
/// side by side already); a tree of thousands gets every core. 512 was
/// measured slower on 40 projects of 1,000 files each, and no faster on
/// one of 100,000 (docs/bench.md).
const PARALLEL_AFTER: usize = 2048;

/// One walk of one literal prefix.
///
/// It is `read_dir` and, for each file that passes the filter, one `lstat`
/// relative to the open directory (std's `DirEntry::metadata`), which the
/// hasher then uses instead of its own. The `ignore` crate's walker cost a
/// `getcwd`, a `realpath` and two failed stats for absent ignore files per
/// walk, and a second stat per file in the hasher; a fully cached run walks
/// once per task.
struct Walk<'a> {
    filter: &'a GlobFilter,
    /// Bytes of a `rel` before the part the filter matches (the prefix and
    /// its slash).
    skip: usize,
    respect_ignore: bool,
    follow_links: bool,
    skip_dirs: &'a [PathBuf],
}

struct DirJob {
    dir: PathBuf,
    /// `dir` as the start of its files' `rel` (prefix included).
    rel: String,
    chain: Arc<Vec<Gitignore>>,
    /// What each ignore file of `chain` says of `dir` or its nearest
    /// parent it has an opinion on ([`Verdict`]).
    verdicts: Arc<Vec<Verdict>>,
    /// Whether the chain already holds this directory's ignore files.
    own_read: bool,
    /// Entered through a symbolic link (it or a directory above it).
    via_link: bool,
    /// The real directories of the links followed to reach it: a link to
    /// one of them, or to a directory above, is a loop.
    followed: Arc<Vec<PathBuf>>,
}

impl Walk<'_> {
    /// Adds to `runs` the walk's files as lists each in [`listing_order`]
    /// (one per thread that took part).
    fn run(&self, first: DirJob, runs: &mut Vec<Vec<FileRef>>) {
        let mut queue = vec![first];
        let mut seen = 0;
        let mut out = Vec::new();
        while let Some(job) = queue.pop() {
            seen += self.read_dir(job, &mut out, &mut queue);
            if seen >= PARALLEL_AFTER && queue.len() >= 2 && crate::sys::cores() > 1 {
                self.run_parallel(queue, runs);
                break;
            }
        }
        out.sort_unstable_by(listing_order);
        runs.push(out);
    }

    /// Drains `queue` on up to one thread per core; each thread takes a
    /// directory, lists it, and queues the directories it finds.
    fn run_parallel(&self, queue: Vec<DirJob>, runs: &mut Vec<Vec<FileRef>>) {
        use std::sync::{Condvar, Mutex};
        struct Shared {
            queue: Vec<DirJob>,
            busy: usize,
        }
        let shared = Mutex::new(Shared { queue, busy: 0 });
        let wake = Condvar::new();
        let worker = || {
            let mut found = Vec::new();
            let mut more = Vec::new();
            let mut state = shared.lock().expect("walk queue poisoned");
            loop {
                if let Some(job) = state.queue.pop() {
                    state.busy += 1;
                    drop(state);
                    self.read_dir(job, &mut found, &mut more);
                    state = shared.lock().expect("walk queue poisoned");
                    state.busy -= 1;
                    if !more.is_empty() {
                        state.queue.append(&mut more);
                        wake.notify_all();
                    } else if state.busy == 0 && state.queue.is_empty() {
                        wake.notify_all();
                    }
                } else if state.busy == 0 {
                    drop(state);
                    // Each thread sorts its own part: the caller then
                    // only merges (`merge_runs`).
                    found.sort_unstable_by(listing_order);
                    return found;
                } else {
                    state = wake.wait(state).expect("walk queue poisoned");
                }
            }
        };
        let threads = crate::sys::cores().min(shared.lock().expect("walk queue poisoned").queue.len());
        std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(worker)).collect();
            runs.push(worker());
            for h in helpers {
                runs.push(h.join().expect("walk thread panicked"));
            }
        });
    }

    /// Lists one directory: files that pass the filter go to `out`, the
    /// directories to enter to `queue`. Returns the number of entries.
    /// The ignore chain for `job`'s entries: with the directory's own
    /// `.gitignore` and `.ignore` added (and what each says of the
    /// directory itself), unless the chain already holds them.
    fn own_ignore_files(
        &self,
        job: &DirJob,
        entries: &[(std::fs::DirEntry, std::ffi::OsString)],
    ) -> (Arc<Vec<Gitignore>>, Arc<Vec<Verdict>>) {
        if !self.respect_ignore || job.own_read {
            return (job.chain.clone(), job.verdicts.clone());
        }
        let has = |name: &str| entries.iter().any(|(_, n)| n == name);
        let own: Vec<Gitignore> = [".gitignore", ".ignore"]
            .into_iter()
            .filter(|name| has(name))
            .filter_map(|name| ignore_file(&job.dir, &job.dir.join(name)))
            .collect();
        let mut verdicts = job.verdicts.clone();
        if !own.is_empty() {
            let mut longer = Vec::clone(&verdicts);
            longer.extend(own.iter().map(|gi| verdict(gi.matched_path_or_any_parents(&job.dir, true))));
            verdicts = Arc::new(longer);
        }
        (chained(&job.chain, own), verdicts)
    }

    /// `None` when the ignore chain ignores `path`; else, for a directory,
    /// the verdicts its entries inherit (`Some(None)`: its parent's).
    /// Each ignore file's own match, else what it said of the parent:
    /// `matched_path_or_any_parents` without matching every parent again
    /// for every file.
    fn not_ignored(
        &self,
        path: &Path,
        is_dir: bool,
        chain: &[Gitignore],
        verdicts: &[Verdict],
    ) -> Option<Option<Arc<Vec<Verdict>>>> {
        if !self.respect_ignore {
            return Some(None);
        }
        let says = |(gi, up): (&Gitignore, &Verdict)| verdict(gi.matched(path, is_dir)).or(*up);
        if is_dir {
            let own: Vec<Verdict> = chain.iter().zip(verdicts.iter()).map(says).collect();
            let ignored = own.iter().rev().find_map(|v| *v).unwrap_or(false);
            (!ignored).then(|| Some(Arc::new(own)))
        } else {
            let ignored = chain.iter().zip(verdicts.iter()).rev().find_map(says).unwrap_or(false);
            (!ignored).then_some(None)
        }
    }

    /// Queues the directory `sub` (met in `parent`) for walking; `link` is
    /// what it leads to when it is a followed link. A link that loops is
    /// listed as what it is, a directory, so hashing it fails with a line
    /// naming the loop.
    fn descend(
        &self,
        parent: &Path,
        mut sub: DirJob,
        link: Option<&std::fs::Metadata>,
        out: &mut Vec<FileRef>,
        queue: &mut Vec<DirJob>,
    ) {
        if let Some(meta) = link {
            if link_loop(parent, &sub.dir, &sub.followed).is_some() {
                if self.filter.matches(sub.rel.get(self.skip..).unwrap_or_default()) {
                    out.push(FileRef {
                        rel: sub.rel,
                        abs: sub.dir,
                        stat: Some(FileStat::of(meta)),
                        via_link: sub.via_link,
                    });
                }
                return;
            }
            let mut longer = Vec::clone(&sub.followed);
            longer.extend(sub.dir.canonicalize());
            sub.followed = Arc::new(longer);
        }
        queue.push(sub);
    }

    fn read_dir(&self, job: DirJob, out: &mut Vec<FileRef>, queue: &mut Vec<DirJob>) -> usize {
        let Ok(entries) = std::fs::read_dir(&job.dir) else { return 0 };
        // Each name taken once: `DirEntry::file_name` copies it.
        let entries: Vec<(std::fs::DirEntry, std::ffi::OsString)> = entries
            .flatten()
            .map(|e| {
                let name = e.file_name();
                (e, name)
            })
            .collect();
        let (chain, verdicts) = self.own_ignore_files(&job, &entries);
        for (entry, name) in &entries {
            let Ok(kind) = entry.file_type() else { continue };
            // A link is followed for inputs: what the task reads through it
            // is what keys it. The `stat` is what it leads to (so the stat
            // index sees that content change); a dangling link keeps its
            // own and is keyed by its target's name.
            let followed = match kind.is_symlink() && self.follow_links {
                true => std::fs::metadata(entry.path()).ok(),
                false => None,
            };
            let is_dir = kind.is_dir() || followed.as_ref().is_some_and(std::fs::Metadata::is_dir);
            let via_link = job.via_link || followed.is_some();
            if is_dir && (name == ".git" || name == ".vx" || name == "node_modules") {
                continue;
            }
            let path = entry.path();
            if is_dir && self.skip_dirs.contains(&path) {
                continue;
            }
            let Some(below) = self.not_ignored(&path, is_dir, &chain, &verdicts) else { continue };
            // Built from the directory's own name rather than cut from the
            // path: `Path::strip_prefix` compares component by component,
            // once per file of a tree of 100,000.
            let name = name.to_string_lossy();
            let name = if name.contains('\\') { name.replace('\\', "/").into() } else { name };
            let rel = join_rel(&job.rel, &name);
            if is_dir {
                let link = followed.as_ref().filter(|_| kind.is_symlink());
                let verdicts = below.unwrap_or_else(|| verdicts.clone());
                let sub = DirJob {
                    dir: path,
                    rel,
                    chain: chain.clone(),
                    verdicts,
                    own_read: false,
                    via_link,
                    followed: job.followed.clone(),
                };
                self.descend(&job.dir, sub, link, out, queue);
                continue;
            }
            if !self.filter.matches(rel.get(self.skip..).unwrap_or_default()) {
                continue;
            }
            // A file removed since the listing is simply not there.
            let meta = match followed {
                Some(meta) => meta,
                None => match entry.metadata() {
                    Ok(meta) => meta,
                    Err(_) => continue,
                },
            };
            out.push(FileRef { rel, abs: path, stat: Some(FileStat::of(&meta)), via_link });
        }
        entries.len()
    }
}

/// Whether following the link at `link` (met in directory `dir`) would
/// walk a directory again: it leads to `dir` or above it, or to one of the
/// directories already `followed` to get here.
fn link_loop(dir: &Path, link: &Path, followed: &[PathBuf]) -> Option<()> {
    let target = link.canonicalize().ok()?;
    let here = dir.canonicalize().ok()?;
    (here.starts_with(&target) || followed.contains(&target)).then_some(())
}

/// Whether the literal prefix `root` under `base` has no symbolic link on
/// the way before its last part (the common case, a one-part prefix such
/// as `src`, costs nothing).
fn start_is_plain(base: &Path, root: &str) -> bool {
    if root.is_empty() {
        return true;
    }
    let mut at = base.to_path_buf();
    let parts: Vec<&str> = root.split('/').collect();
    // The last part is the caller's own `lstat`.
    for part in &parts[..parts.len() - 1] {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return false;
        }
    }
    true
}

/// What one ignore file says of a path: `Some(true)` ignore, `Some(false)`
/// re-include (`!`), `None` no opinion.
type Verdict = Option<bool>;

fn verdict<T>(m: ignore::Match<T>) -> Verdict {
    match m {
        ignore::Match::Ignore(_) => Some(true),
        ignore::Match::Whitelist(_) => Some(false),
        ignore::Match::None => None,
    }
}

/// `rel` (relative to `base`) relative to what `base` is relative to: the
/// two joined by `/`, either side possibly empty.
pub(super) fn join_rel(base: &str, rel: &str) -> String {
    match (base.is_empty(), rel.is_empty()) {
        (true, _) => rel.to_string(),
        (false, true) => base.to_string(),
        (false, false) => {
            // Not `format!`: this runs once per file of a walk.
            let mut joined = String::with_capacity(base.len() + 1 + rel.len());
            joined.push_str(base);
            joined.push('/');
            joined.push_str(rel);
            joined
        }
    }
}

#[cfg(test)]
mod tests {
    use ignore::gitignore::GitignoreBuilder;

    use super::super::ignores::{dir_ignores, ignored_by};
    use super::*;

    /// Writes `text` at `rel` under `dir`, making the directories.
    fn write_file(dir: &Path, rel: &str, text: &str) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// The walk carries ignore verdicts from a directory to its entries;
    /// the result must be what matching each entry and all its parents
    /// against every ignore file above it says (`ignored_by`), with
    /// negations, directory-only patterns, nested ignore files and glob
    /// roots inside an ignored directory.
    #[test]
    fn carried_verdicts_ignore_exactly_what_matching_every_parent_does() {
        let dir = std::env::temp_dir().join(format!("vx-verdicts-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let write = |rel: &str, text: &str| write_file(&dir, rel, text);
        for rel in [
            "a/x.txt",
            "a/x.log",
            "a/keep.log",
            "a/b/x.txt",
            "a/b/y.log",
            "a/b/c/z.txt",
            "a/b/c/keep.log",
            "build/out.js",
            "build/sub/deep.js",
            "gen/a.ts",
            "gen/b.ts",
            "docs/build/page.md",
            "docs/x.md",
            "e/f/g/h.txt",
            "e/f/g/h.tmp",
            "e/keep/f.tmp",
        ] {
            write(rel, "x");
        }
        write("a/.gitignore", "*.log\n!keep.log\nb/c/\n");
        write("a/b/.ignore", "!*.log\n");
        write("e/f/.gitignore", "*.tmp\n");
        write("e/.gitignore", "!keep/\n");
        let mut root = GitignoreBuilder::new(&dir);
        for line in ["build/", "gen/*", "!gen/b.ts", "/docs/build", "*.tmp"] {
            root.add_line(None, line).unwrap();
        }
        let chain = Arc::new(vec![root.build().unwrap()]);
        // The rule as it was written before verdicts were carried: every
        // entry matched, with all its parents, against every ignore file
        // from the root down to its directory (`ignored_by`).
        fn by_every_parent(dir: &Path, base: &Path, chain: &[Gitignore], filter: &GlobFilter, out: &mut Vec<String>) {
            let mut chain = chain.to_vec();
            chain.extend(dir_ignores(dir, false));
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                let is_dir = entry.file_type().unwrap().is_dir();
                if ignored_by(&chain, &path, is_dir) {
                    continue;
                }
                if is_dir {
                    by_every_parent(&path, base, &chain, filter, out);
                    continue;
                }
                let rel = path.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                if filter.matches(&rel) {
                    out.push(rel);
                }
            }
        }
        let expected_for = |filter: &GlobFilter| {
            let mut kept = Vec::new();
            for root in filter.roots() {
                by_every_parent(&dir.join(root), &dir, &chain, filter, &mut kept);
            }
            kept.sort();
            kept
        };
        let walks = [None, Some(vec!["build/**".to_string(), "a/b/**".to_string()]), Some(vec!["gen/**".to_string()])];
        for patterns in walks {
            let filter = GlobFilter::new(patterns.as_deref(), &[]).unwrap();
            let walked: Vec<String> =
                list_files(&dir, &filter, Listing::Inputs(Some(&chain)), &[]).into_iter().map(|f| f.rel).collect();
            assert_eq!(walked, expected_for(&filter), "{patterns:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn walk_honours_ignore_files_met_on_the_way_and_stats_each_file() {
        let dir = std::env::temp_dir().join(format!("vx-walk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let write = |rel: &str, text: &str| write_file(&dir, rel, text);
        // Enough files that the walk spreads over threads.
        for d in 0..8 {
            for f in 0..400 {
                write(&format!("src/d{d}/f{f}.txt"), "x");
            }
        }
        write("src/d0/keep.log", "log");
        write("src/d1/.gitignore", "*.log\n");
        write("src/d1/a.log", "log");
        write("src/d1/sub/b.log", "log");
        write("src/d2/.ignore", "f1*.txt\n!f10.txt\n");
        write("src/node_modules/x.txt", "x");
        write("src/nested/y.txt", "y");
        write("top.log", "log");
        std::os::unix::fs::symlink("d0", dir.join("src/link")).unwrap();
        let mut root = GitignoreBuilder::new(&dir);
        root.add_line(None, "top.log").unwrap();
        let chain = Arc::new(vec![root.build().unwrap()]);

        let filter = GlobFilter::new(None, &[]).unwrap();
        let files = list_files(&dir, &filter, Listing::Inputs(Some(&chain)), &[dir.join("src/nested")]);
        let rels: Vec<&str> = files.iter().map(|f| f.rel.as_str()).collect();
        assert!(rels.contains(&"src/d0/keep.log"));
        assert!(
            !rels.iter().any(|r| r.starts_with("src/d1/") && r.ends_with(".log")),
            "a walked .gitignore applies below it"
        );
        assert!(rels.contains(&"src/d2/f10.txt") && !rels.contains(&"src/d2/f11.txt"), ".ignore and its negation");
        assert!(rels.contains(&"src/d2/f2.txt"));
        assert!(!rels.iter().any(|r| r.contains("node_modules") || r.contains("nested") || *r == "top.log"));
        assert!(rels.contains(&"src/link/keep.log"), "a link to a directory is followed for inputs");
        assert!(!rels.contains(&"src/link"));
        assert!(rels.windows(2).all(|w| w[0] < w[1]), "sorted, no duplicates");
        // d0's 401 files once more, through the link.
        let expected = 8 * 400 + 1 + 2 - 111 + 1 + 401;
        assert_eq!(files.len(), expected);
        for f in &files {
            let stat = f.stat.expect("the walk stats each listed file");
            // What a reader sees: through the link, its target's.
            let meta = std::fs::metadata(&f.abs).unwrap();
            assert_eq!(stat, FileStat::of(&meta), "{}", f.rel);
            assert_eq!(f.via_link, f.rel.starts_with("src/link/"), "{}", f.rel);
        }
        let outputs = list_files(&dir, &filter, Listing::Outputs, &[dir.join("src/nested")]);
        let link = outputs.iter().find(|f| f.rel == "src/link").expect("an output link is listed as itself");
        assert!(link.stat.unwrap().is_symlink() && !outputs.iter().any(|f| f.rel.starts_with("src/link/")));

        let unignored = list_files(&dir, &filter, Listing::Inputs(None), &[]);
        assert!(unignored.iter().any(|f| f.rel == "top.log") && unignored.iter().any(|f| f.rel == "src/d1/a.log"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
