//! The logs of a run's failed attempts on their way to history: each one
//! bounded and compressed as it fails ([`LogBlob`]), then written to an
//! unnamed file in `.vx/` until the run is recorded, so a long run with
//! many failures holds a few numbers per attempt in memory, not their
//! output.
//!
//! The file is made at the first failed attempt (a run that passes makes
//! none) beside the database, not in the system's temporary directory,
//! which is often memory (tmpfs). It has no name: it is gone when the
//! recorder is, whether the run was recorded, history could not be
//! written, or vx was killed.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::log_blob::LogBlob;

/// One failed attempt, as the recorder heard of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FailedAttempt {
    pub(crate) task: String,
    /// 1 for the first attempt.
    pub(crate) attempt: u32,
    pub(crate) exit_code: Option<i32>,
    /// Why it failed (`exit code 1`, `timed out after 5s`).
    pub(crate) reason: String,
    /// How many bytes it wrote, and whether the middle was left out.
    pub(crate) bytes: u64,
    pub(crate) truncated: bool,
}

/// An attempt's place in the spill file.
#[derive(Debug)]
struct Spilled {
    attempt: FailedAttempt,
    offset: u64,
    len: usize,
}

/// The failed attempts of one run, their logs in an unnamed file.
#[derive(Debug)]
pub(crate) struct Spill {
    dir: PathBuf,
    file: Option<File>,
    end: u64,
    spilled: Vec<Spilled>,
}

impl Spill {
    /// An empty spill whose file, once needed, is made in `dir`.
    pub(crate) fn new(dir: &Path) -> Spill {
        Spill { dir: dir.to_path_buf(), file: None, end: 0, spilled: Vec::new() }
    }

    /// Writes `blob` out and remembers `attempt` with it.
    pub(crate) fn push(&mut self, attempt: FailedAttempt, blob: &LogBlob) -> std::io::Result<()> {
        let file = match self.file.take() {
            Some(file) => file,
            None => {
                std::fs::create_dir_all(&self.dir)?;
                tempfile::tempfile_in(&self.dir)?
            }
        };
        let file = self.file.insert(file);
        file.seek(SeekFrom::Start(self.end))?;
        file.write_all(&blob.zstd)?;
        let attempt = FailedAttempt { bytes: blob.bytes, truncated: blob.truncated, ..attempt };
        self.spilled.push(Spilled { attempt, offset: self.end, len: blob.zstd.len() });
        self.end += blob.zstd.len() as u64;
        Ok(())
    }

    /// Each attempt in the order it failed, with its compressed log read
    /// back: one log in memory at a time.
    pub(crate) fn each(
        &mut self,
        mut f: impl FnMut(&FailedAttempt, &[u8]) -> rusqlite::Result<()>,
    ) -> Result<(), super::HistoryError> {
        let Some(file) = &mut self.file else { return Ok(()) };
        let mut buf = Vec::new();
        for s in &self.spilled {
            buf.resize(s.len, 0);
            file.seek(SeekFrom::Start(s.offset))?;
            file.read_exact(&mut buf)?;
            f(&s.attempt, &buf)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(task: &str, attempt: u32) -> FailedAttempt {
        FailedAttempt {
            task: task.into(),
            attempt,
            exit_code: Some(1),
            reason: "exit code 1".into(),
            bytes: 0,
            truncated: false,
        }
    }

    #[test]
    fn logs_read_back_in_order_from_a_file_without_a_name() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join(".vx");
        let mut spill = Spill::new(&state);
        let mut none = Vec::new();
        spill
            .each(|a, _| {
                none.push(a.task.clone());
                Ok(())
            })
            .unwrap();
        assert!(none.is_empty() && !state.exists(), "nothing failed: no file, not even its directory");
        spill.push(failed("a#test", 1), &LogBlob::of(b"first\n").unwrap()).unwrap();
        spill.push(failed("b#test", 1), &LogBlob::of(b"").unwrap()).unwrap();
        spill.push(failed("a#test", 2), &LogBlob::of(&vec![b'y'; 3 << 20]).unwrap()).unwrap();
        assert_eq!(std::fs::read_dir(&state).unwrap().count(), 0, "the file has no name");
        let mut seen = Vec::new();
        spill
            .each(|a, zstd| {
                let text = super::super::log_blob::inflate(zstd).expect("a blob");
                seen.push((a.task.clone(), a.attempt, a.bytes, a.truncated, text.len()));
                Ok(())
            })
            .unwrap();
        assert_eq!(seen[0], ("a#test".into(), 1, 6, false, 6));
        assert_eq!(seen[1], ("b#test".into(), 1, 0, false, 0));
        assert_eq!((seen[2].2, seen[2].3), (3 << 20, true));
    }
}
