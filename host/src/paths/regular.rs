//! Reading workspace files that anyone could have made something else: a
//! FIFO, a socket or a device where vx expects a file. Opening a FIFO for
//! reading blocks until a writer comes, for ever, and no signal handler
//! of vx's runs meanwhile on that thread; reading a device may never end.
//! So every file vx reads from the workspace is opened without blocking
//! and refused unless it is a regular file, and whole-file reads are
//! bounded.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Opens `path` for reading if it is a regular file (following links, as
/// a reader would); a FIFO, socket or device is an error at once.
pub(crate) fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC).open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, socket or device): vx reads only files",
        ));
    }
    // O_NONBLOCK stays set: it changes nothing for a regular file (whose
    // reads never block on its account), and clearing it cost two
    // syscalls per file hashed.
    Ok(file)
}

/// Reads the regular file at `path` whole, refusing one over `limit`
/// bytes (a file the caller expects to be small, such as a config).
pub(crate) fn read_regular(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("larger than {limit} bytes")));
    }
    Ok(bytes)
}

/// [`read_regular`] as UTF-8 text.
pub(crate) fn read_regular_string(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read_regular(path, limit)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// vx's own state files under `.vx/` (the stat index, git's oid map, the
/// lockfile memo) larger than this are taken as damaged and rebuilt.
pub(crate) const STATE_LIMIT: u64 = 1 << 30;

/// Configuration files larger than this are refused: a real one is
/// kilobytes, and a runaway one must not take vx's memory.
pub(crate) const CONFIG_LIMIT: u64 = 16 << 20;

/// A configuration file's text (`vx.toml`, `package.json`, `turbo.json`,
/// `pnpm-workspace.yaml`), `None` when there is none: a regular file of at
/// most [`CONFIG_LIMIT`] bytes, with a leading byte-order mark dropped
/// (editors on Windows write one; the JSON and TOML parsers refuse it).
pub(crate) fn read_config(path: &Path) -> io::Result<Option<String>> {
    match read_regular_string(path, CONFIG_LIMIT) {
        Ok(text) => Ok(Some(match text.strip_prefix('\u{feff}') {
            Some(rest) => rest.to_string(),
            None => text,
        })),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockfile::testutil::ScratchDir;

    #[test]
    fn a_fifo_is_refused_at_once() {
        let dir = ScratchDir::new("regular-fifo");
        let fifo = dir.path().join("pipe");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
        let err = open_regular(&fifo).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }

    #[test]
    fn reads_are_bounded() {
        let dir = ScratchDir::new("regular-bound");
        let path = dir.write("big", vec![b'x'; 100]);
        assert_eq!(read_regular(&path, 100).unwrap().len(), 100);
        assert!(read_regular(&path, 99).is_err());
        assert!(read_regular(dir.path(), 99).is_err(), "a directory is not a file");
    }

    #[test]
    fn a_config_loses_its_byte_order_mark_and_a_missing_one_is_none() {
        let dir = ScratchDir::new("regular-bom");
        let path = dir.write("package.json", "\u{feff}{\"name\": \"a\"}");
        assert_eq!(read_config(&path).unwrap().as_deref(), Some("{\"name\": \"a\"}"));
        assert_eq!(read_config(&dir.path().join("absent")).unwrap(), None);
    }
}
