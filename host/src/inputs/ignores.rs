//! Ignore files as a walk of a task's inputs reads them: each
//! directory's `.gitignore` and `.ignore`, `.git/info/exclude` at the
//! workspace root, read only when they are regular files and bounded, and
//! the deepest file with an opinion on a path deciding it, as git does.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// `chain` with a directory's own ignore files after it, as a walk reads
/// them on entering that directory (the same chain when it has none).
pub(super) fn chained(chain: &Arc<Vec<Gitignore>>, own: Vec<Gitignore>) -> Arc<Vec<Gitignore>> {
    if own.is_empty() {
        return chain.clone();
    }
    let mut longer = Vec::with_capacity(chain.len() + own.len());
    longer.extend(chain.iter().cloned());
    longer.extend(own);
    Arc::new(longer)
}

/// Whether the deepest ignore file that has an opinion on `path` ignores it.
pub(super) fn ignored_by(ancestors: &[Gitignore], path: &Path, is_dir: bool) -> bool {
    for gi in ancestors.iter().rev() {
        if !path.starts_with(gi.path()) {
            continue;
        }
        match gi.matched_path_or_any_parents(path, is_dir) {
            ignore::Match::Ignore(_) => return true,
            ignore::Match::Whitelist(_) => return false,
            ignore::Match::None => {}
        }
    }
    false
}

/// The ignore files of one directory (`.gitignore`, `.ignore`), and
/// `.git/info/exclude` when `with_exclude` (the workspace root).
pub(crate) fn dir_ignores(dir: &Path, with_exclude: bool) -> Vec<Gitignore> {
    let mut files = Vec::new();
    if with_exclude {
        files.push(dir.join(".git/info/exclude"));
    }
    files.push(dir.join(".gitignore"));
    files.push(dir.join(".ignore"));
    files.into_iter().filter(|f| f.is_file()).filter_map(|f| ignore_file(dir, &f)).collect()
}

/// Says once per process that an ignore file was not read (a FIFO, one
/// past the limit): what it would ignore is then an input, which a user
/// should hear of rather than find in a key.
fn warn_once_unread(file: &Path, e: &std::io::Error) {
    use std::sync::{Mutex, OnceLock};
    static WARNED: OnceLock<Mutex<std::collections::HashSet<PathBuf>>> = OnceLock::new();
    if e.kind() == std::io::ErrorKind::NotFound {
        return;
    }
    let mut warned = WARNED.get_or_init(Mutex::default).lock().expect("warned set poisoned");
    if warned.insert(file.to_path_buf()) {
        tracing::warn!("{} is not read ({e}); what it would ignore is not ignored", file.display());
    }
}

/// Ignore files larger than this are not read (a real one is kilobytes).
const IGNORE_FILE_LIMIT: u64 = 4 << 20;

/// One ignore file of `dir`, parsed; `None` when it cannot be read. It
/// is read only if it is a regular file, without blocking and bounded
/// (`paths::read_regular`): a FIFO named `.gitignore` would otherwise
/// stop every walk that meets it, and Ctrl-C with it.
pub(crate) fn ignore_file(dir: &Path, file: &Path) -> Option<Gitignore> {
    let bytes = match crate::paths::read_regular(file, IGNORE_FILE_LIMIT) {
        Ok(bytes) => bytes,
        Err(e) => {
            warn_once_unread(file, &e);
            return None;
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut b = GitignoreBuilder::new(dir);
    // As `GitignoreBuilder::add` reads a file: a byte-order mark dropped,
    // a line that is not a valid pattern skipped.
    for line in text.trim_start_matches('\u{feff}').lines() {
        let _ = b.add_line(Some(file.to_path_buf()), line);
    }
    b.build().ok()
}
