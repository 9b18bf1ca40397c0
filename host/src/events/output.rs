//! A task's output as events carry it and as vx keeps it, both bounded.
//!
//! A task may write a line of any length (a minified bundle to stdout, a
//! gigabyte without a newline). vx never holds such a line whole: an
//! executor reads at most [`MAX_LINE`] bytes before it emits
//! [`Event::Output`](super::Event::Output), so a longer line reaches
//! subscribers as consecutive pieces, and the terminal shows each piece on
//! a line of its own. Nothing is lost on the way to the screen.
//!
//! What vx keeps of a task's output (the log stored with its cache entry,
//! the lines held back for `--log-order grouped`) is a [`BoundedLog`]: up
//! to [`LOG_LIMIT`] bytes whole; beyond that its first three quarters and
//! its last quarter, with a line in between that says how much was left
//! out. The tail is kept because that is where a tool's summary and its
//! errors are.

/// The longest piece of a line an [`Event::Output`](super::Event::Output)
/// carries.
pub(crate) const MAX_LINE: usize = 1 << 20;

/// The most of a task's output vx keeps whole (32 MiB).
pub(crate) const LOG_LIMIT: usize = 32 << 20;
const LOG_TAIL: usize = LOG_LIMIT / 4;
const LOG_HEAD: usize = LOG_LIMIT - LOG_TAIL;

/// How much of `data` the piece being read takes when it has `room` bytes
/// left, and whether the piece is then complete: up to and including a
/// newline, which may be the byte past `room` (so a line of exactly
/// `MAX_LINE` bytes is one piece with its newline, not two); else up to
/// `room` bytes, complete once the byte after them is known not to be a
/// newline. With `room` 0 it takes only a newline.
pub(crate) fn take_piece(data: &[u8], room: usize) -> (usize, bool) {
    let window = &data[..data.len().min(room + 1)];
    match window.iter().position(|&b| b == b'\n') {
        Some(end) => (end + 1, true),
        None => (window.len().min(room), window.len() > room),
    }
}

/// `log` as the output events carry it: each line with its newline, a
/// line longer than [`MAX_LINE`] in pieces of that size (a replayed log
/// shows as the live one did).
pub(crate) fn pieces(log: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = log;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (n, _) = take_piece(rest, MAX_LINE);
        let (piece, tail) = rest.split_at(n);
        rest = tail;
        Some(piece)
    })
}

/// Output kept up to [`LOG_LIMIT`]: the head whole, then a sliding tail.
#[derive(Debug, Default)]
pub(crate) struct BoundedLog {
    head: Vec<u8>,
    tail: Vec<u8>,
    /// Bytes that fell out of the tail.
    dropped: u64,
}

impl BoundedLog {
    /// Appends `bytes`.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        let room = LOG_HEAD - self.head.len();
        if room > 0 {
            let n = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        if bytes.len() >= LOG_TAIL {
            // Only its end can survive: skip the copy of the rest.
            self.dropped += (self.tail.len() + bytes.len() - LOG_TAIL) as u64;
            self.tail.clear();
            bytes = &bytes[bytes.len() - LOG_TAIL..];
        }
        self.tail.extend_from_slice(bytes);
        // Let the tail grow to twice its size before moving it down, so
        // each byte is moved at most once on average.
        if self.tail.len() > 2 * LOG_TAIL {
            self.trim_tail();
        }
    }

    fn trim_tail(&mut self) {
        let cut = self.tail.len().saturating_sub(LOG_TAIL);
        self.tail.drain(..cut);
        self.dropped += cut as u64;
    }

    /// The output kept: whole when it fit in [`LOG_LIMIT`], otherwise its
    /// head, a line saying how much was left out, and its tail.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        if self.head.len() + self.tail.len() > LOG_LIMIT {
            self.trim_tail();
        }
        if self.dropped == 0 {
            self.head.append(&mut self.tail);
            return self.head;
        }
        let mut out = self.head;
        if !out.ends_with(b"\n") {
            out.push(b'\n');
        }
        out.extend_from_slice(
            format!(
                "[vx: {} bytes of this output left out; vx keeps the first {} MiB and the last {} MiB of a task's output]\n",
                self.dropped,
                LOG_HEAD >> 20,
                LOG_TAIL >> 20
            )
            .as_bytes(),
        );
        out.append(&mut self.tail);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_within_the_limit_is_kept_whole() {
        let mut log = BoundedLog::default();
        let line = vec![b'x'; MAX_LINE];
        for _ in 0..LOG_LIMIT / MAX_LINE {
            log.push(&line);
        }
        let kept = log.finish();
        assert_eq!(kept.len(), LOG_LIMIT);
        assert!(kept.iter().all(|&b| b == b'x'));
    }

    #[test]
    fn longer_output_keeps_its_head_and_tail_and_says_what_it_left_out() {
        let mut log = BoundedLog::default();
        log.push(b"first line\n");
        let filler = vec![b'.'; MAX_LINE];
        let pieces = 3 * LOG_LIMIT / MAX_LINE;
        for _ in 0..pieces {
            log.push(&filler);
        }
        log.push(b"\nlast line\n");
        let total = 11 + pieces * MAX_LINE + 11;
        let kept = log.finish();
        assert!(kept.starts_with(b"first line\n"));
        assert!(kept.ends_with(b"\nlast line\n"));
        let text = String::from_utf8_lossy(&kept);
        let left_out = total - LOG_LIMIT;
        assert!(
            text.contains(&format!("[vx: {left_out} bytes of this output left out;")),
            "{}",
            &text[LOG_HEAD..][..200]
        );
        assert!(kept.len() < LOG_LIMIT + 200);
    }

    #[test]
    fn one_huge_push_is_bounded_too() {
        let mut log = BoundedLog::default();
        log.push(&vec![b'a'; LOG_LIMIT * 2]);
        log.push(b"end\n");
        let kept = log.finish();
        assert!(kept.len() < LOG_LIMIT + 200);
        assert!(kept.ends_with(b"aend\n"));
    }

    #[test]
    fn pieces_cut_long_lines_and_keep_newlines() {
        let mut log = vec![b'a'; MAX_LINE * 2 + 5];
        log.extend_from_slice(b"\nshort\nlast");
        let got: Vec<usize> = pieces(&log).map(<[u8]>::len).collect();
        assert_eq!(got, vec![MAX_LINE, MAX_LINE, 6, 6, 4]);
        assert_eq!(pieces(&log).collect::<Vec<_>>().concat(), log);
    }

    #[test]
    fn a_line_of_exactly_max_line_bytes_is_one_piece_with_its_newline() {
        let mut log = vec![b'a'; MAX_LINE];
        log.extend_from_slice(b"\nnext\n");
        let got: Vec<usize> = pieces(&log).map(<[u8]>::len).collect();
        assert_eq!(got, vec![MAX_LINE + 1, 5]);
        assert_eq!(take_piece(b"abc", 3), (3, false), "full, but a newline may come next");
        assert_eq!(take_piece(b"abcd", 3), (3, true), "full, and no newline next");
        assert_eq!(take_piece(b"abc\n", 3), (4, true));
        assert_eq!(take_piece(b"\nx", 0), (1, true), "a full piece takes the newline after it");
        assert_eq!(take_piece(b"x", 0), (0, true));
        assert_eq!(take_piece(b"ab", 3), (2, false), "more may come");
    }
}
