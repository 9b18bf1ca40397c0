//! Hashing a task's listed input files into the digests its key takes:
//! each through git's index when git vouches for it (`gitview`), else
//! through the stat index (`hasher`), its execute bit marked; a large
//! list on several threads, merged back into listing order (`runs`).

use std::path::Path;

use super::error::InputError;
use super::fingerprints::Fingerprints;
use super::hasher::FileStat;
use super::runs;
use super::walk::FileRef;

impl Fingerprints {
    /// One listed file's BLAKE3: from git's index and `.vx/oid-map` when
    /// git vouches for it (`monitor = "git"`), else through the stat index.
    /// `next` carries where git's index is read from one file of a sorted
    /// list to the next.
    pub(super) fn hash_ref(&self, f: &FileRef, next: &mut usize) -> std::io::Result<blake3::Hash> {
        let Some(stat) = &f.stat else { return self.hasher.hash(&f.abs) };
        let content = match self.git_view().filter(|_| !f.via_link) {
            Some(view) => view.hash(&f.abs, stat, next, || self.hasher.hash_stat(&f.abs, stat))?,
            None => self.hasher.hash_stat(&f.abs, stat)?,
        };
        Ok(key_digest(stat, content))
    }

    /// Hashes the files of sorted runs (`runs`), on several threads when
    /// there are many (a task of a large project; tasks themselves already
    /// run side by side), into one list in listing order.
    pub(super) fn hash_all(&self, runs: Vec<Vec<FileRef>>) -> Result<Vec<(String, blake3::Hash)>, InputError> {
        const PER_THREAD: usize = 512;
        let mut runs = if runs.len() > runs::MAX_HASHED_RUNS { vec![runs::merge_runs(runs)] } else { runs };
        let total: usize = runs.iter().map(Vec::len).sum();
        // Each part fills its own stretch of its run's digests: no list
        // per thread copied after.
        let mut hashes: Vec<Vec<blake3::Hash>> =
            runs.iter().map(|run| vec![blake3::Hash::from_bytes([0; 32]); run.len()]).collect();
        let hash_part = |part: &[FileRef], into: &mut [blake3::Hash]| {
            let mut next = 0;
            for (f, slot) in part.iter().zip(into) {
                *slot =
                    self.hash_ref(f, &mut next).map_err(|source| InputError::Hash { path: f.rel.clone(), source })?;
            }
            Ok::<_, InputError>(())
        };
        let threads = crate::sys::cores().min(total / PER_THREAD);
        // Parts of about a quarter of a thread's share, taken in turn: the
        // runs of a walk need not be of a size.
        let chunk = total.div_ceil(threads.max(1) * 4).max(PER_THREAD);
        let mut parts: Vec<_> = runs
            .iter()
            .zip(&mut hashes)
            .flat_map(|(run, into)| run.chunks(chunk).zip(into.chunks_mut(chunk)))
            .collect();
        if threads <= 1 {
            parts.into_iter().try_for_each(|(part, into)| hash_part(part, into))?;
        } else {
            parts.reverse();
            let queue = std::sync::Mutex::new(parts);
            let worker = || loop {
                let Some((part, into)) = queue.lock().expect("hash queue poisoned").pop() else { return Ok(()) };
                hash_part(part, into)?;
            };
            std::thread::scope(|scope| {
                let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(worker)).collect();
                let mine = worker();
                helpers
                    .into_iter()
                    .map(|h| h.join().expect("hash thread panicked"))
                    .chain([mine])
                    .collect::<Result<(), InputError>>()
            })?;
        }
        // The names move into the list: no copy of 100,000 paths.
        Ok(runs::merge_hashed(&mut runs, &hashes))
    }

    /// A file's key digest as a walk would give it now (through links,
    /// its execute bit marked).
    pub(crate) fn digest_now(&self, abs: &Path) -> std::io::Result<blake3::Hash> {
        let stat = FileStat::of(&std::fs::metadata(abs)?);
        let content = self.hasher.hash_stat(abs, &stat)?;
        Ok(key_digest(&stat, content))
    }
}

/// The digest a file's key entry has when its owner may execute it: its
/// content's digest, marked. A task that copies or runs a file sees its
/// mode as well as its bytes (`cp -p`, a script run directly), so a
/// `chmod +x` is a miss, as git's index records the same bit; other mode
/// bits are not kept by git and would differ between checkouts.
fn key_digest(stat: &FileStat, content: blake3::Hash) -> blake3::Hash {
    if !(stat.is_file() && stat.perm() & 0o100 != 0) {
        return content;
    }
    let mut h = blake3::Hasher::new();
    h.update(b"vx-executable\0");
    h.update(content.as_bytes());
    h.finalize()
}
