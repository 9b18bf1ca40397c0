//! Reading a lockfile or manifest: bounded in size, UTF-8, no BOM.

use std::io::Read;
use std::path::Path;

use super::LockfileError;

/// The largest lockfile vx reads. Real ones reach tens of megabytes in big
/// monorepos; anything past this is hashed whole instead of parsed, so a
/// runaway file costs a streamed hash, not gigabytes of parse tree.
pub(crate) const MAX_LOCKFILE_BYTES: u64 = 256 * 1024 * 1024;

/// Reads `path` as text, refusing more than `limit` bytes (checked before
/// reading, and again while reading, for a file that grows meanwhile).
pub(crate) fn read_text(path: &Path, limit: u64) -> Result<String, LockfileError> {
    let read_error = |source| LockfileError::Read { path: path.to_path_buf(), source };
    let too_large = |size| LockfileError::TooLarge { path: path.to_path_buf(), size, limit };
    let file = crate::paths::open_regular(path).map_err(read_error)?;
    let size = file.metadata().map_err(read_error)?.len();
    if size > limit {
        return Err(too_large(size));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(limit + 1).read_to_end(&mut bytes).map_err(read_error)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    let mut text = String::from_utf8(bytes).map_err(|e| LockfileError::Malformed {
        path: path.to_path_buf(),
        message: format!("not UTF-8 (at byte {})", e.utf8_error().valid_up_to()),
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockfile::testutil::ScratchDir;

    #[test]
    fn size_utf8_and_bom_are_checked() {
        let dir = ScratchDir::new("read");
        let path = dir.write("a.json", "\u{feff}{}");
        assert_eq!(read_text(&path, 100).expect("reads"), "{}");
        assert!(matches!(read_text(&path, 2), Err(LockfileError::TooLarge { size: 5, limit: 2, .. })));
        let bad = dir.write("b.json", [b'{', 0xff, b'}']);
        let err = read_text(&bad, 100).unwrap_err().to_string();
        assert!(err.ends_with("not UTF-8 (at byte 1)"), "{err}");
    }
}
