//! What the fuzz targets (tests/fuzz) reach of this module's private
//! decoding: a stored `ActionResult` rebuilt into a cache entry, and the
//! directory trees a server sends back. Not part of vx's API.

use std::collections::HashMap;

use prost::Message;

use super::digest::DigestFn;
use super::re;
use super::tree::tree_entries;
use crate::cache::CacheKey;

/// The key every fuzzed entry is looked up for (the seeds' headers carry it).
pub const FUZZ_KEY: &str = "fuzz-key";

/// Why a fuzzed reply was refused, as the tier's warning says it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Rejected(pub String);

/// Decodes `reply` as the `ActionResult` the action cache returned for
/// [`FUZZ_KEY`] and rebuilds the entry from `blobs`, the server's answers to
/// the digests the result needs, in the order vx asks for them. Returns the
/// entry's size, or the reason as the tier's warning shows it.
pub fn action_result(reply: &[u8], blobs: &[Vec<u8>]) -> Result<usize, Rejected> {
    let rebuilt = || {
        let result = re::ActionResult::decode(reply).map_err(|e| e.to_string())?;
        let needed = super::entry::needed(&result, true)?;
        let downloaded: HashMap<String, Vec<u8>> =
            needed.iter().zip(blobs).map(|(d, b)| (d.hash.clone(), b.clone())).collect();
        super::entry::from_result(&CacheKey(FUZZ_KEY.to_string()), &result, &downloaded)
    };
    rebuilt().map(|entry| entry.len()).map_err(|why| Rejected(crate::error::one_line(&why)))
}

/// Decodes `reply` as an output directory's `Tree` and lists its files.
///
/// A fuzzer cannot forge SHA-256, so before the walk each directory node is
/// pointed at a real child: the one its digest's `size_bytes` selects
/// (children only at later ones, so every digest settles from the last
/// child back). Any shape of tree, sharing included, is then reachable.
pub fn tree(reply: &[u8]) -> Result<usize, Rejected> {
    let f = DigestFn::Sha256;
    let mut tree = re::Tree::decode(reply).map_err(|e| Rejected(e.to_string()))?;
    let n = tree.children.len();
    let mut digests = vec![re::Digest::default(); n];
    for i in (0..n).rev() {
        let later = n - i - 1;
        for node in &mut tree.children[i].directories {
            if later > 0 {
                node.digest = Some(digests[i + 1 + pick(node) % later].clone());
            }
        }
        digests[i] = f.of_message(&tree.children[i]).0;
    }
    if let Some(root) = &mut tree.root {
        for node in &mut root.directories {
            if n > 0 {
                node.digest = Some(digests[pick(node) % n].clone());
            }
        }
    }
    let (files, links) = tree_entries(f, &tree, "out").map_err(|e| Rejected(e.to_string()))?;
    Ok(files.len() + links.len())
}

fn pick(node: &re::DirectoryNode) -> usize {
    node.digest.as_ref().map_or(0, |d| d.size_bytes.unsigned_abs() as usize)
}
