//! Directory trees in the CAS: input roots built from files (Merkle
//! `Directory` messages, children before parents), and trees read back
//! into a list of files, whether from a chain of `Directory` blobs (a
//! worker's input root) or from one `Tree` message (an output directory).
//!
//! Names from the server are checked before any path is made of them: one
//! normal component each, so nothing can land outside the directory it is
//! materialised into.

use std::collections::{BTreeMap, HashMap};

use super::client::{Reapi, RemoteError};
use super::digest::DigestFn;
use super::re;

/// A file of a tree, by workspace- or root-relative path.
#[derive(Debug, Clone)]
pub(crate) struct TreeFile {
    pub rel: String,
    pub digest: re::Digest,
    pub executable: bool,
}

/// A symbolic link of a tree.
#[derive(Debug, Clone)]
pub(crate) struct TreeLink {
    pub rel: String,
    pub target: String,
}

/// A tree built for upload.
#[derive(Debug)]
pub(crate) struct Built {
    pub root_digest: re::Digest,
    pub root: re::Directory,
    /// Every other directory (a `Tree`'s children).
    pub children: Vec<re::Directory>,
    /// The encoded directories, to upload beside the file blobs.
    pub dir_blobs: Vec<(re::Digest, Vec<u8>)>,
}

#[derive(Default)]
struct Dir {
    files: Vec<re::FileNode>,
    links: Vec<re::SymlinkNode>,
    dirs: Vec<String>,
}

/// Builds the Merkle tree of `files` and `links` (paths `/`-separated,
/// relative, already checked by the caller).
pub(crate) fn build(f: DigestFn, files: &[TreeFile], links: &[TreeLink]) -> Built {
    let mut dirs: BTreeMap<String, Dir> = BTreeMap::new();
    dirs.entry(String::new()).or_default();
    let ensure = |dirs: &mut BTreeMap<String, Dir>, path: &str| {
        let mut cur = String::new();
        for part in path.split('/').filter(|p| !p.is_empty()) {
            let parent = cur.clone();
            cur = if cur.is_empty() { part.to_string() } else { format!("{cur}/{part}") };
            if !dirs.contains_key(&cur) {
                dirs.insert(cur.clone(), Dir::default());
                dirs.get_mut(&parent).expect("parents come first").dirs.push(part.to_string());
            }
        }
    };
    for file in files {
        let (dir, name) = split(&file.rel);
        ensure(&mut dirs, dir);
        dirs.get_mut(dir).expect("just made").files.push(re::FileNode {
            name: name.to_string(),
            digest: Some(file.digest.clone()),
            is_executable: file.executable,
            node_properties: None,
        });
    }
    for link in links {
        let (dir, name) = split(&link.rel);
        ensure(&mut dirs, dir);
        dirs.get_mut(dir).expect("just made").links.push(re::SymlinkNode {
            name: name.to_string(),
            target: link.target.clone(),
            node_properties: None,
        });
    }
    // Deepest first, so every child's digest is known before its parent.
    let mut order: Vec<String> = dirs.keys().cloned().collect();
    order.sort_by_key(|p| std::cmp::Reverse(if p.is_empty() { 0 } else { p.matches('/').count() + 1 }));
    let mut digests: HashMap<String, re::Digest> = HashMap::new();
    let mut built: HashMap<String, re::Directory> = HashMap::new();
    let mut dir_blobs = Vec::new();
    for path in order {
        let dir = dirs.remove(&path).expect("each dir once");
        let mut msg = re::Directory { files: dir.files, symlinks: dir.links, ..Default::default() };
        msg.directories = dir
            .dirs
            .iter()
            .map(|name| {
                let child = if path.is_empty() { name.clone() } else { format!("{path}/{name}") };
                re::DirectoryNode { name: name.clone(), digest: digests.get(&child).cloned() }
            })
            .collect();
        msg.files.sort_by(|a, b| a.name.cmp(&b.name));
        msg.directories.sort_by(|a, b| a.name.cmp(&b.name));
        msg.symlinks.sort_by(|a, b| a.name.cmp(&b.name));
        let (digest, bytes) = f.of_message(&msg);
        dir_blobs.push((digest.clone(), bytes));
        digests.insert(path.clone(), digest);
        built.insert(path, msg);
    }
    let root = built.remove("").expect("the root exists");
    let root_digest = digests.remove("").expect("the root exists");
    let children = built.into_values().collect();
    Built { root_digest, root, children, dir_blobs }
}

fn split(rel: &str) -> (&str, &str) {
    rel.rsplit_once('/').unwrap_or(("", rel))
}

/// One path component from the server: a plain name, nothing else.
fn check_name(name: &str) -> Result<&str, RemoteError> {
    let bad = name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0');
    if bad {
        Err(RemoteError::Invalid(format!("refused the tree entry name `{name}`: it is not a plain file name")))
    } else {
        Ok(name)
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() { name.to_string() } else { format!("{prefix}/{name}") }
}

/// A tree listing more files, links and directories than this is refused.
/// A server's tree may name one directory many times: each level of a
/// chain of directories with two entries for the next doubles the listing,
/// so a tree of a few kilobytes would otherwise list 2^256 files.
pub(super) const MAX_TREE_ENTRIES: usize = 1_000_000;

/// The entries a walk may still list.
struct Budget(usize);

impl Budget {
    fn take(&mut self, n: usize) -> Result<(), RemoteError> {
        self.0 = self.0.checked_sub(n).ok_or_else(|| {
            RemoteError::Invalid(format!("refused a directory tree of more than {MAX_TREE_ENTRIES} entries"))
        })?;
        Ok(())
    }
}

/// Walks directories given by digest, with `lookup` finding each one.
fn walk(
    root: &re::Directory,
    prefix: &str,
    lookup: &dyn Fn(&re::Digest) -> Result<re::Directory, RemoteError>,
    out: (&mut Vec<TreeFile>, &mut Vec<TreeLink>),
    budget: &mut Budget,
    depth: usize,
) -> Result<(), RemoteError> {
    if depth > 256 {
        return Err(RemoteError::Invalid("refused a directory tree deeper than 256 levels".into()));
    }
    budget.take(root.files.len() + root.symlinks.len() + root.directories.len())?;
    let (files, links) = out;
    for f in &root.files {
        let digest = f.digest.clone().ok_or_else(|| RemoteError::Invalid(format!("file {} has no digest", f.name)))?;
        files.push(TreeFile { rel: join(prefix, check_name(&f.name)?), digest, executable: f.is_executable });
    }
    for l in &root.symlinks {
        links.push(TreeLink { rel: join(prefix, check_name(&l.name)?), target: l.target.clone() });
    }
    for d in &root.directories {
        let digest =
            d.digest.clone().ok_or_else(|| RemoteError::Invalid(format!("directory {} has no digest", d.name)))?;
        let child = lookup(&digest)?;
        walk(&child, &join(prefix, check_name(&d.name)?), lookup, (&mut *files, &mut *links), budget, depth + 1)?;
    }
    Ok(())
}

/// The files and links of an output directory's `Tree`, under `prefix`.
pub(crate) fn tree_entries(
    f: DigestFn,
    tree: &re::Tree,
    prefix: &str,
) -> Result<(Vec<TreeFile>, Vec<TreeLink>), RemoteError> {
    let by_digest: HashMap<String, re::Directory> =
        tree.children.iter().map(|c| (f.of_message(c).0.hash, c.clone())).collect();
    let lookup = |d: &re::Digest| {
        by_digest
            .get(&d.hash)
            .cloned()
            .ok_or_else(|| RemoteError::Invalid(format!("the tree lacks directory {}", d.hash)))
    };
    let root = tree.root.clone().unwrap_or_default();
    let (mut files, mut links) = (Vec::new(), Vec::new());
    walk(&root, prefix, &lookup, (&mut files, &mut links), &mut Budget(MAX_TREE_ENTRIES), 0)?;
    Ok((files, links))
}

impl Reapi {
    /// The files and links of the input root `root`, fetching its
    /// directories level by level.
    pub(crate) async fn fetch_tree(&self, root: &re::Digest) -> Result<(Vec<TreeFile>, Vec<TreeLink>), RemoteError> {
        use prost::Message;
        let mut known: HashMap<String, re::Directory> = HashMap::new();
        let mut wanted = vec![root.clone()];
        while !wanted.is_empty() {
            let got = self.download(&wanted).await?;
            let mut next = Vec::new();
            for d in &wanted {
                let dir = re::Directory::decode(got[&d.hash].as_slice())
                    .map_err(|e| RemoteError::Invalid(format!("directory {} does not decode: {e}", d.hash)))?;
                next.extend(
                    dir.directories.iter().filter_map(|c| c.digest.clone()).filter(|c| !known.contains_key(&c.hash)),
                );
                known.insert(d.hash.clone(), dir);
            }
            next.sort_by(|a, b| a.hash.cmp(&b.hash));
            next.dedup_by(|a, b| a.hash == b.hash);
            wanted = next;
            if known.len() > 1_000_000 {
                return Err(RemoteError::Invalid("refused an input root of more than a million directories".into()));
            }
        }
        let lookup = |d: &re::Digest| {
            known.get(&d.hash).cloned().ok_or_else(|| RemoteError::Invalid(format!("missing directory {}", d.hash)))
        };
        let (mut files, mut links) = (Vec::new(), Vec::new());
        walk(&lookup(root)?, "", &lookup, (&mut files, &mut links), &mut Budget(MAX_TREE_ENTRIES), 0)?;
        Ok((files, links))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_reads_back_a_tree() {
        let f = DigestFn::Sha256;
        let file = |rel: &str, data: &[u8], executable| TreeFile { rel: rel.into(), digest: f.of(data), executable };
        let files = vec![file("a/b/c.txt", b"c", false), file("a/run.sh", b"#!", true), file("top", b"t", false)];
        let links = vec![TreeLink { rel: "a/link".into(), target: "run.sh".into() }];
        let built = build(f, &files, &links);
        assert_eq!(built.children.len(), 2, "a and a/b");
        let tree = re::Tree { root: Some(built.root.clone()), children: built.children.clone() };
        let (mut got, got_links) = tree_entries(f, &tree, "out").unwrap();
        got.sort_by(|a, b| a.rel.cmp(&b.rel));
        let rels: Vec<&str> = got.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(rels, ["out/a/b/c.txt", "out/a/run.sh", "out/top"]);
        assert!(got[1].executable);
        assert_eq!(got_links[0].rel, "out/a/link");
        // The same files in another order give the same root.
        let mut shuffled = files.clone();
        shuffled.reverse();
        assert_eq!(build(f, &shuffled, &links).root_digest, built.root_digest);
    }

    #[test]
    fn refuses_names_that_leave_the_tree() {
        let f = DigestFn::Sha256;
        for bad in ["..", ".", "a/b", ""] {
            let root = re::Directory {
                files: vec![re::FileNode { name: bad.into(), digest: Some(f.of(b"x")), ..Default::default() }],
                ..Default::default()
            };
            let tree = re::Tree { root: Some(root), children: Vec::new() };
            assert!(tree_entries(f, &tree, "").is_err(), "{bad:?}");
        }
    }

    /// A server's tree of 40 directories, each naming the next twice, lists
    /// 2^40 files (the fuzz target `reapi_tree` builds such shapes); the
    /// walk stops at the budget instead of running out of memory.
    #[test]
    fn refuses_a_tree_whose_shared_directories_list_without_end() {
        use prost::Message;
        let f = DigestFn::Sha256;
        let mut dir = re::Directory {
            files: vec![re::FileNode { name: "f".into(), digest: Some(f.of(b"x")), ..Default::default() }],
            ..Default::default()
        };
        let mut children = Vec::new();
        for _ in 0..40 {
            let digest = f.of(&dir.encode_to_vec());
            children.push(dir);
            let node = |name: &str| re::DirectoryNode { name: name.into(), digest: Some(digest.clone()) };
            dir = re::Directory { directories: vec![node("x"), node("y")], ..Default::default() };
        }
        let tree = re::Tree { root: Some(dir), children };
        let err = tree_entries(f, &tree, "out").unwrap_err().to_string();
        assert!(err.contains("more than 1000000 entries"), "{err}");
    }

    /// Found by fuzzing (tests/fuzz/regressions/reapi_tree): a digest from
    /// the server is quoted in the error, and held a newline.
    #[test]
    fn a_servers_digest_in_an_error_stays_on_one_line() {
        let f = DigestFn::Sha256;
        let node =
            re::DirectoryNode { name: "d".into(), digest: Some(re::Digest { hash: "ab\ncd".into(), size_bytes: 1 }) };
        let tree =
            re::Tree { root: Some(re::Directory { directories: vec![node], ..Default::default() }), children: vec![] };
        let err = tree_entries(f, &tree, "").unwrap_err().to_string();
        assert_eq!(err, "the tree lacks directory ab cd");
    }
}
