//! The local store's files: an entry as read for a key, the outputs archive
//! inside one (read, then restored into a project), and the stat index.

use std::path::Path;

use vx::fuzzing::{CacheKey, Entry, FileHasher, GlobFilter, OutputDirs, read_members};

use crate::assert_one_line;
use crate::scratch::with_dir;

/// The key every fuzzed entry is read for (the seeds carry it).
const KEY: &str = "fuzz-key";

/// An entry that verifies has its archive read, as a hit would.
pub fn cache_entry(data: &[u8]) {
    match Entry::decode(data, &CacheKey(KEY.to_string())) {
        Ok(entry) => {
            if let Err(e) = read_members(&entry.archive) {
                assert_one_line(&e.to_string());
            }
        }
        Err(e) => assert_one_line(&e.to_string()),
    }
}

/// The input as the archive (zstd first), and as the tar inside one (so the
/// fuzzer's mutations reach the tar reader and the path checks rather than
/// stopping at zstd's frame checks). A tar that reads is then restored into
/// a project holding a symbolic link to a sibling directory: nothing may
/// appear outside the project.
pub fn cache_archive(data: &[u8]) {
    if let Err(e) = read_members(data) {
        assert_one_line(&e.to_string());
    }
    let archive = zstd::encode_all(data, 1).expect("zstd compresses in memory");
    with_dir(&[("outside/kept", b"x")], |root| {
        let project = root.join("project");
        std::fs::create_dir_all(&project).expect("project dir");
        std::os::unix::fs::symlink("../outside", project.join("link")).expect("planted link");
        let outputs = GlobFilter::new(None, &[]).expect("every file");
        let hasher = FileHasher::load(root.join("index"));
        if let Err(e) = vx::fuzzing::unpack_archive(
            OutputDirs { workspace: root, project: &project, globs: &outputs, root: None },
            &archive,
            &[],
            &hasher,
        ) {
            assert_one_line(&e.to_string());
        }
        assert_outside_untouched(root);
    });
}

fn assert_outside_untouched(root: &Path) {
    let names: Vec<String> = std::fs::read_dir(root)
        .expect("scratch lists")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "project")
        .collect();
    assert_eq!(names, ["outside"], "a restore wrote beside the project");
    let outside: Vec<_> = std::fs::read_dir(root.join("outside")).expect("outside lists").flatten().collect();
    assert_eq!(outside.len(), 1, "a restore wrote through a link, out of the project");
    assert_eq!(std::fs::read(root.join("outside/kept")).expect("kept"), b"x", "a restore overwrote a file outside");
}

/// The stat index as loaded at the start of a run, then saved with a fresh
/// record and loaded again.
pub fn stat_index(data: &[u8]) {
    with_dir(&[("index", data), ("file", b"content")], |root| {
        let hasher = FileHasher::load(root.join("index"));
        let file = root.join("file");
        let first = hasher.hash(&file).expect("a scratch file hashes");
        assert_eq!(first, hasher.hash(&file).expect("again"), "one file, two hashes");
        // An unwritable index is a warning in a run; here it must simply return.
        let _ = hasher.save();
        let again = FileHasher::load(root.join("index"));
        let _ = again.hash(&file);
    });
}
