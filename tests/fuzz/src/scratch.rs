//! One scratch directory per thread, emptied and refilled for each input:
//! a fuzz target runs millions of inputs, and a fresh temporary directory
//! each time would cost more than most parses.

use std::cell::RefCell;
use std::path::Path;

thread_local! {
    static SCRATCH: RefCell<Option<tempfile::TempDir>> = const { RefCell::new(None) };
}

/// Calls `f` with an empty directory holding exactly `files` (relative
/// paths, parents created).
pub fn with_dir<R>(files: &[(&str, &[u8])], f: impl FnOnce(&Path) -> R) -> R {
    let dir = SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        let tmp = s.get_or_insert_with(|| tempfile::tempdir().expect("a scratch directory"));
        tmp.path().to_path_buf()
    });
    let root = dir.join("ws");
    reset(&root);
    for (name, bytes) in files {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("scratch parent");
        std::fs::write(&path, bytes).expect("scratch file");
    }
    f(&root)
}

/// Empties `dir`, whatever a target left in it (read-only modes included).
fn reset(dir: &Path) {
    if dir.exists() {
        make_writable(dir);
        std::fs::remove_dir_all(dir).expect("scratch cleanup");
    }
    std::fs::create_dir_all(dir).expect("scratch dir");
}

fn make_writable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(dir) else { return };
    if !meta.is_dir() {
        return;
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755));
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        make_writable(&entry.path());
    }
}
