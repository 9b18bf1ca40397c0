//! Helpers for this module's tests: scratch directories and the fixtures.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A directory under the system temp dir, removed on drop. Named by the
/// test, the process and a counter, so neither parallel test processes nor
/// tests running as threads of one process meet.
#[derive(Debug)]
pub(crate) struct ScratchDir(PathBuf);

impl ScratchDir {
    pub(crate) fn new(name: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("vx-lockfile-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a scratch dir");
        Self(dir)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }

    pub(crate) fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create a parent dir");
        }
        std::fs::write(&path, contents).expect("write a scratch file");
        path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `host/src/lockfile/fixtures/FORMAT/STAGE`: a workspace as a real package
/// manager left it (scripts/make-lockfile-fixtures).
pub(crate) fn fixture(format: &str, stage: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lockfile/fixtures").join(format).join(stage)
}
