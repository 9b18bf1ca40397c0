//! Sorted runs of a walk and their merge.
//!
//! A walk of a big tree lists it on several threads, and each thread sorts
//! its own part: a run. A listing is the runs merged in [`listing_order`].
//! A task's inputs are hashed run by run and merged only into the hashed
//! list (a name and a digest each), so a tree of 100,000 files is not
//! moved once more as whole file records first.

use super::walk::FileRef;

/// The order of a listing: by the relative path, then by the real one:
/// two names that differ only in bytes that are not UTF-8 share a lossy
/// `rel`, and both must count (a change to either re-keys the task).
pub(super) fn listing_order(a: &FileRef, b: &FileRef) -> std::cmp::Ordering {
    a.rel.cmp(&b.rel).then_with(|| a.abs.cmp(&b.abs))
}

/// One list in [`listing_order`] from lists each in that order, merged two
/// at a time into lists of their exact size. Concatenating them and
/// sorting again would copy the whole list twice and touch a scratch
/// buffer as large.
pub(super) fn merge_runs(mut runs: Vec<Vec<FileRef>>) -> Vec<FileRef> {
    while runs.len() > 1 {
        let mut merged = Vec::with_capacity(runs.len().div_ceil(2));
        let mut pairs = runs.into_iter();
        while let Some(a) = pairs.next() {
            merged.push(match pairs.next() {
                Some(b) => merge_two(a, b),
                None => a,
            });
        }
        runs = merged;
    }
    runs.pop().unwrap_or_default()
}

/// Two sorted lists as one; on a tie, `a`'s file first.
fn merge_two(a: Vec<FileRef>, b: Vec<FileRef>) -> Vec<FileRef> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
        let next = if listing_order(y, x).is_lt() { b.next() } else { a.next() };
        out.extend(next);
    }
    out.extend(a);
    out.extend(b);
    out
}

/// Runs past which [`merge_hashed`] would scan too many heads per file:
/// the runs are merged as records first instead.
pub(super) const MAX_HASHED_RUNS: usize = 8;

/// The files of `runs` with their digests (`hashes[k][i]` is the digest
/// of `runs[k][i]`) as one list in [`listing_order`], each name moved out
/// of its record.
pub(super) fn merge_hashed(runs: &mut [Vec<FileRef>], hashes: &[Vec<blake3::Hash>]) -> Vec<(String, blake3::Hash)> {
    let mut out = Vec::with_capacity(runs.iter().map(Vec::len).sum());
    let mut at = vec![0; runs.len()];
    loop {
        let mut best: Option<usize> = None;
        for (k, run) in runs.iter().enumerate() {
            let Some(head) = run.get(at[k]) else { continue };
            if best.is_none_or(|b| listing_order(head, &runs[b][at[b]]).is_lt()) {
                best = Some(k);
            }
        }
        let Some(k) = best else { break };
        out.push((std::mem::take(&mut runs[k][at[k]].rel), hashes[k][at[k]]));
        at[k] += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn file(rel: &str, abs: &str) -> FileRef {
        FileRef { rel: rel.into(), abs: PathBuf::from(abs), stat: None, via_link: false }
    }

    fn digest(n: u8) -> blake3::Hash {
        blake3::Hash::from_bytes([n; 32])
    }

    /// Runs as a parallel walk hands them over: each sorted, interleaved.
    fn runs() -> Vec<Vec<FileRef>> {
        let mut runs = vec![
            vec![file("a/1", "/w/a/1"), file("c/1", "/w/c/1"), file("e", "/w/e")],
            vec![file("b/1", "/w/b/1"), file("b/2", "/w/b/2"), file("d\u{fffd}", "/w/d\u{1}")],
            vec![file("a/2", "/w/a/2"), file("d\u{fffd}", "/w/d\u{0}")],
            vec![],
        ];
        for run in &mut runs {
            run.sort_by(listing_order);
        }
        runs
    }

    fn sorted() -> Vec<FileRef> {
        let mut all: Vec<FileRef> = runs().concat();
        all.sort_by(listing_order);
        all
    }

    #[test]
    fn merged_runs_are_the_sorted_listing() {
        assert_eq!(merge_runs(runs()), sorted());
        assert_eq!(merge_runs(vec![]), vec![]);
    }

    #[test]
    fn merged_hashed_runs_follow_the_listing_even_on_lossy_names() {
        let mut runs = runs();
        // Each file's digest names its place in the sorted listing, so the
        // order of the merged list can be checked against it.
        let listing = sorted();
        let place = |f: &FileRef| listing.iter().position(|g| g.abs == f.abs).unwrap() as u8;
        let hashes: Vec<Vec<blake3::Hash>> =
            runs.iter().map(|run| run.iter().map(|f| digest(place(f))).collect()).collect();
        let merged = merge_hashed(&mut runs, &hashes);
        let expected: Vec<(String, blake3::Hash)> =
            listing.into_iter().enumerate().map(|(i, f)| (f.rel, digest(i as u8))).collect();
        assert_eq!(merged, expected);
    }
}
