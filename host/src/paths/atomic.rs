//! Writes that a crash or a concurrent reader never sees half done: the
//! cache's entries and state files, the stat index, the dashboard's
//! marker. A temporary name no other writer uses, then a rename.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A name no other writer (thread or process) uses at the same time.
pub(crate) fn unique_suffix() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{}.{}.{nanos}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// Writes `bytes` to a temporary file beside `path` and renames it into
/// place, so a reader (or a crash) sees the old file or the new one, never
/// a part.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = parent.join(format!(".{name}.{}.tmp", unique_suffix()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_data()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
