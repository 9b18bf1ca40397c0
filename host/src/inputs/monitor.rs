//! Unchanged trees without a stat per file: a task's hashed input list is
//! kept from one run to the next (`.vx/tree-snapshot`) beside a file-system
//! monitor's clock, and used again when the monitor says nothing changed
//! where the list was walked.
//!
//! Why it is sound: the clock is taken before any walk of the run that
//! saves it, so every change after it (during the walks included) is
//! reported by the next run's question, and a list is used again only when
//! no reported path is inside one of the directories its walk covered, is
//! one of their ancestors (a rename), or is an ignore file that applies to
//! them. Anything else — no monitor, a monitor that restarted or cannot
//! say (`Since::Everything`), a changed `.git/info/exclude`, a list of an
//! older format — means the list is walked and hashed as without one. The
//! monitor adds no trust: what it reports unchanged was hashed from the
//! files themselves, and the stat index still guards what it re-walks.
//!
//! docs/cache.md ("Unchanged trees") is the user's side of this.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::watchman::{Since, Watchman};

const MAGIC: &[u8] = b"VXTS1\n";

/// A task's hashed inputs as a key takes them: workspace-relative path
/// and content hash, sorted.
pub(crate) type Hashed = Arc<Vec<(String, blake3::Hash)>>;

pub(crate) use crate::config::MonitorMode;

/// One kept list: the directories its walk covered (workspace-relative,
/// "" for the root) and what it found.
#[derive(Debug, Clone)]
struct Listing {
    covered: Vec<String>,
    files: Hashed,
}

/// The monitor's answer for this run, the lists kept by the last one, and
/// the lists this run walked.
#[derive(Debug)]
pub(crate) struct Monitor {
    path: PathBuf,
    clock: String,
    /// What changed since the kept lists' clock; `None` voids them all.
    changed: Option<Vec<String>>,
    /// `.git/info/exclude` as it is now (size and mtime), which no monitor
    /// reports (watchman ignores `.git`).
    exclude: (u64, i64),
    kept: HashMap<String, Listing>,
    walked: Mutex<HashMap<String, Listing>>,
}

impl Monitor {
    /// Asks the monitor `mode` names; `None` when there is none to ask.
    pub(crate) fn open(root: &Path, state: &Path, mode: MonitorMode) -> Option<Monitor> {
        if matches!(mode, MonitorMode::Off | MonitorMode::Git) {
            return None;
        }
        let watchman = Watchman::connect(root, mode == MonitorMode::Watchman)?;
        let path = state.join("tree-snapshot");
        let exclude = exclude_stat(root);
        let saved = crate::paths::read_regular(&path, crate::paths::STATE_LIMIT).ok().and_then(|bytes| decode(&bytes));
        let (clock, changed, kept) = match saved {
            Some((clock, saved_exclude, kept)) if saved_exclude == exclude => {
                let answer = watchman.since(Some(&clock))?;
                match answer.since {
                    Since::Changed(paths) => (answer.clock, Some(paths), kept),
                    Since::Everything => (answer.clock, None, HashMap::new()),
                }
            }
            _ => (watchman.since(None)?.clock, None, HashMap::new()),
        };
        Some(Monitor { path, clock, changed, exclude, kept, walked: Mutex::default() })
    }

    /// The list kept under `id`, when nothing changed where it was walked.
    pub(crate) fn get(&self, id: &str) -> Option<Hashed> {
        let listing = self.kept.get(id)?;
        self.still_valid(listing).then(|| listing.files.clone())
    }

    /// Keeps what a walk of `covered` found, for the next run.
    pub(crate) fn put(&self, id: String, covered: Vec<String>, files: Hashed) {
        self.walked.lock().expect("monitor lock poisoned").insert(id, Listing { covered, files });
    }

    fn still_valid(&self, listing: &Listing) -> bool {
        let Some(changed) = &self.changed else { return false };
        !changed.iter().any(|c| listing.covered.iter().any(|dir| touches(c, dir)))
    }

    /// Saves the lists for the next run, with this run's clock: the ones
    /// walked now and the kept ones nothing changed. When nothing was
    /// walked the file stays as it is: its older clock only makes the next
    /// run's answer longer, never wrong.
    pub(crate) fn save(&self) -> std::io::Result<()> {
        let walked = self.walked.lock().expect("monitor lock poisoned");
        if walked.is_empty() {
            return Ok(());
        }
        let mut all: HashMap<&str, &Listing> =
            self.kept.iter().filter(|(_, l)| self.still_valid(l)).map(|(id, l)| (id.as_str(), l)).collect();
        all.extend(walked.iter().map(|(id, l)| (id.as_str(), l)));
        crate::paths::write_atomic(&self.path, &encode(&self.clock, self.exclude, &all))
    }
}

/// Whether a change at `changed` can alter a walk of `dir` (both
/// workspace-relative): it is inside, it is the directory or one above it
/// (renamed or removed), or it is an ignore file of a directory at or
/// above it.
fn touches(changed: &str, dir: &str) -> bool {
    let within = |inner: &str, outer: &str| {
        outer.is_empty() || inner == outer || inner.strip_prefix(outer).is_some_and(|r| r.starts_with('/'))
    };
    if within(changed, dir) || within(dir, changed) {
        return true;
    }
    let (parent, name) = changed.rsplit_once('/').unwrap_or(("", changed));
    (name == ".gitignore" || name == ".ignore") && within(dir, parent)
}

fn exclude_stat(root: &Path) -> (u64, i64) {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(root.join(".git/info/exclude"))
        .map_or((0, 0), |m| (m.size(), m.mtime_nsec() + m.mtime() * 1_000_000_000))
}

fn encode(clock: &str, exclude: (u64, i64), lists: &HashMap<&str, &Listing>) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 << 16);
    let text = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    };
    out.extend_from_slice(MAGIC);
    text(&mut out, clock);
    out.extend_from_slice(&exclude.0.to_le_bytes());
    out.extend_from_slice(&exclude.1.to_le_bytes());
    out.extend_from_slice(&(lists.len() as u32).to_le_bytes());
    for (id, listing) in lists {
        text(&mut out, id);
        out.extend_from_slice(&(listing.covered.len() as u32).to_le_bytes());
        for dir in &listing.covered {
            text(&mut out, dir);
        }
        out.extend_from_slice(&(listing.files.len() as u32).to_le_bytes());
        for (rel, hash) in listing.files.iter() {
            text(&mut out, rel);
            out.extend_from_slice(hash.as_bytes());
        }
    }
    out
}

/// A saved snapshot: the clock, `.git/info/exclude`'s size and mtime, the lists.
type Saved = (String, (u64, i64), HashMap<String, Listing>);

/// Reads what [`encode`] wrote; `None` for anything else (another
/// version, a torn or foreign file), which only costs a walk.
fn decode(bytes: &[u8]) -> Option<Saved> {
    let mut r = Reader { bytes: bytes.strip_prefix(MAGIC)? };
    let clock = r.text()?;
    let exclude = (u64::from_le_bytes(r.take()?), i64::from_le_bytes(r.take()?));
    let lists = r.count()?;
    let mut kept = HashMap::with_capacity(lists);
    for _ in 0..lists {
        let id = r.text()?;
        let covered = (0..r.count()?).map(|_| r.text()).collect::<Option<Vec<_>>>()?;
        let n = r.count()?;
        let mut files = Vec::with_capacity(n);
        for _ in 0..n {
            files.push((r.text()?, blake3::Hash::from_bytes(r.take()?)));
        }
        kept.insert(id, Listing { covered, files: Arc::new(files) });
    }
    r.bytes.is_empty().then_some((clock, exclude, kept))
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.bytes.split_first_chunk::<N>()?;
        self.bytes = rest;
        Some(*head)
    }

    /// A count, bounded by what is left (a corrupt count cannot make a
    /// huge allocation).
    fn count(&mut self) -> Option<usize> {
        let n = u32::from_le_bytes(self.take()?) as usize;
        (n <= self.bytes.len()).then_some(n)
    }

    fn text(&mut self) -> Option<String> {
        let n = self.count()?;
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        String::from_utf8(head.to_vec()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_touches_the_walks_it_can_alter() {
        assert!(touches("big/src/a.txt", "big/src"), "inside");
        assert!(touches("big/src", "big/src"), "the directory itself");
        assert!(touches("big", "big/src"), "a directory above (renamed, removed)");
        assert!(touches("big/.gitignore", "big/src"), "an ignore file above");
        assert!(touches(".ignore", "big/src"), "the root's ignore file");
        assert!(touches("anything", ""), "a walk of the root covers everything");
        assert!(!touches("big/dist/out.js", "big/src"), "a sibling");
        assert!(!touches("big/srcs/a.txt", "big/src"), "a name that only starts the same");
        assert!(!touches("other/.gitignore", "big/src"), "another tree's ignore file");
    }

    #[test]
    fn the_file_round_trips_and_refuses_what_it_did_not_write() {
        let files: Hashed =
            Arc::new(vec![("big/src/a".into(), blake3::hash(b"a")), ("big/src/b".into(), blake3::hash(b"b"))]);
        let listing = Listing { covered: vec!["big/src".into()], files };
        let lists = HashMap::from([("id", &listing)]);
        let bytes = encode("c:1:2", (3, 4), &lists);
        let (clock, exclude, kept) = decode(&bytes).expect("decodes");
        assert_eq!((clock.as_str(), exclude), ("c:1:2", (3, 4)));
        assert_eq!(kept["id"].files, listing.files);
        assert_eq!(kept["id"].covered, listing.covered);
        for cut in [0, 5, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode(&bytes[..cut]).is_none(), "torn at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).is_none(), "trailing bytes");
        let mut huge = bytes;
        huge[MAGIC.len()..MAGIC.len() + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&huge).is_none(), "a count beyond the file");
    }
}
