//! What history stores of a failed attempt's output: at most
//! [`KEEP_HEAD`] bytes from its start and [`KEEP_TAIL`] bytes from its
//! end, with one line between them that says how much was left out,
//! compressed with zstd.
//!
//! The head is kept because that is where a tool says what it is doing
//! and the first error usually is; the tail because that is where its
//! summary and its last error are. Both cuts fall on line ends when a
//! line end is near, so no kept line is half a line. Reading a blob back
//! is bounded too: a blob that would inflate past what any vx writes is
//! refused, not read into memory.

use std::borrow::Cow;
use std::io::Read;

/// The most of an attempt's output kept from its start (1 MiB).
pub(crate) const KEEP_HEAD: usize = 1 << 20;
/// The most of an attempt's output kept from its end (1 MiB).
pub(crate) const KEEP_TAIL: usize = 1 << 20;
/// How far back (or forward) a cut looks for a line end before it cuts
/// inside a line.
const LINE_SEARCH: usize = 4096;
/// zstd's level: text compresses about tenfold at the default level, in
/// a few milliseconds per MiB, on the task's own thread.
const LEVEL: i32 = 3;
/// The most a stored blob may inflate to: the two kept parts and the line
/// between them, with room to spare.
const MAX_INFLATED: u64 = (KEEP_HEAD + KEEP_TAIL + 4096) as u64;

/// An attempt's output as history stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogBlob {
    /// The kept text, zstd-compressed.
    pub(crate) zstd: Vec<u8>,
    /// How many bytes the attempt wrote (as the executor kept them).
    pub(crate) bytes: u64,
    /// Whether its middle was left out.
    pub(crate) truncated: bool,
}

impl LogBlob {
    /// `log` bounded and compressed.
    pub(crate) fn of(log: &[u8]) -> std::io::Result<LogBlob> {
        let (kept, truncated) = bounded(log);
        Ok(LogBlob { zstd: zstd::bulk::compress(&kept, LEVEL)?, bytes: log.len() as u64, truncated })
    }
}

/// `log` whole when it fits in [`KEEP_HEAD`] + [`KEEP_TAIL`]; otherwise
/// its head, a line saying how many bytes were left out, and its tail.
/// The `bool` says whether anything was left out.
pub(crate) fn bounded(log: &[u8]) -> (Cow<'_, [u8]>, bool) {
    if log.len() <= KEEP_HEAD + KEEP_TAIL {
        return (Cow::Borrowed(log), false);
    }
    let head_end = cut_after_line(log, KEEP_HEAD);
    let tail_start = cut_before_line(log, log.len() - KEEP_TAIL);
    let left_out = tail_start - head_end;
    let mut out = Vec::with_capacity(head_end + (log.len() - tail_start) + 200);
    out.extend_from_slice(&log[..head_end]);
    if !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    out.extend_from_slice(
        format!(
            "[vx: {left_out} bytes left out here; history keeps the first {} MiB and the last {} MiB of a failed attempt's output]\n",
            KEEP_HEAD >> 20,
            KEEP_TAIL >> 20
        )
        .as_bytes(),
    );
    out.extend_from_slice(&log[tail_start..]);
    (Cow::Owned(out), true)
}

/// Where the head ends: just after the last line end before `at`, when one
/// is within [`LINE_SEARCH`] bytes of it; else at `at`.
fn cut_after_line(log: &[u8], at: usize) -> usize {
    let from = at.saturating_sub(LINE_SEARCH);
    log[from..at].iter().rposition(|&b| b == b'\n').map_or(at, |i| from + i + 1)
}

/// Where the tail starts: just after the first line end from `at`, when
/// one is within [`LINE_SEARCH`] bytes of it; else at `at`.
fn cut_before_line(log: &[u8], at: usize) -> usize {
    let to = (at + LINE_SEARCH).min(log.len());
    log[at..to].iter().position(|&b| b == b'\n').map_or(at, |i| at + i + 1)
}

/// A stored blob inflated back to the kept text; an error when it is not
/// zstd or inflates past what vx ever stores.
pub(crate) fn inflate(zstd: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    zstd::stream::read::Decoder::new(zstd)?.take(MAX_INFLATED + 1).read_to_end(&mut out)?;
    if out.len() as u64 > MAX_INFLATED {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "a kept log inflates past what vx stores: the database was written by something else",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<u8> {
        (0..n).map(|i| format!("line {i:06} of the task's output\n")).collect::<String>().into_bytes()
    }

    #[test]
    fn a_log_within_the_bound_is_kept_whole_and_reads_back() {
        let log = lines(5_000);
        let blob = LogBlob::of(&log).unwrap();
        assert!(!blob.truncated);
        assert_eq!(blob.bytes, log.len() as u64);
        assert!(blob.zstd.len() * 4 < log.len(), "text compresses: {} of {}", blob.zstd.len(), log.len());
        assert_eq!(inflate(&blob.zstd).unwrap(), log);
        assert_eq!(inflate(&LogBlob::of(b"").unwrap().zstd).unwrap(), b"");
    }

    #[test]
    fn a_longer_log_keeps_whole_lines_of_its_head_and_tail_and_says_what_it_left_out() {
        let log = lines(200_000);
        let blob = LogBlob::of(&log).unwrap();
        assert!(blob.truncated);
        let kept = inflate(&blob.zstd).unwrap();
        let text = String::from_utf8(kept).unwrap();
        assert!(text.starts_with("line 000000 of"));
        assert!(text.ends_with("line 199999 of the task's output\n"));
        let lines: Vec<&str> = text.lines().collect();
        let marker = lines.iter().position(|l| l.starts_with("[vx: ")).expect("a marker line");
        assert!(lines.iter().all(|l| l.starts_with("line ") || l.starts_with("[vx: ")), "no half line is kept");
        let first_after: usize = lines[marker + 1][5..11].parse().unwrap();
        let last_before: usize = lines[marker - 1][5..11].parse().unwrap();
        let line_len = "line 000000 of the task's output\n".len();
        let left_out = (first_after - last_before - 1) * line_len;
        assert!(lines[marker].contains(&format!("{left_out} bytes left out here")), "{}", lines[marker]);
        assert!(text.len() <= KEEP_HEAD + KEEP_TAIL + 200, "bounded: {}", text.len());
        assert!(text.len() > KEEP_HEAD + KEEP_TAIL - 2 * LINE_SEARCH, "both sides are used: {}", text.len());
    }

    #[test]
    fn output_without_line_ends_is_cut_at_the_bound() {
        let log = vec![b'x'; 3 * (KEEP_HEAD + KEEP_TAIL)];
        let (kept, truncated) = bounded(&log);
        assert!(truncated);
        let marker = format!("\n[vx: {} bytes left out here;", log.len() - KEEP_HEAD - KEEP_TAIL);
        assert!(String::from_utf8_lossy(&kept[KEEP_HEAD..]).starts_with(&marker));
        assert!(kept.ends_with(&vec![b'x'; KEEP_TAIL]));
    }

    #[test]
    fn a_blob_that_is_not_zstd_or_inflates_too_far_is_refused() {
        assert!(inflate(b"not zstd at all").is_err());
        let bomb = zstd::bulk::compress(&vec![0u8; MAX_INFLATED as usize + 1], 3).unwrap();
        let err = inflate(&bomb).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData, "{err}");
    }
}
