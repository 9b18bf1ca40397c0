//! `[cache] monitor = "git"`: in a git repository, a file whose stat git's
//! index vouches for is keyed from its blob through `.vx/oid-map`, never
//! read, and every change (an edit, one that keeps the size and mtime, a
//! staged edit, a new file, a removal, an ignore file, a revert) gives the
//! key a walk gives.

use crate::common::TestEnv;

/// A committed repository whose `big#hash` takes `src/**`, with git's
/// index written more than a second after the files (so no entry is
/// racily clean and git's stat vouches for each).
fn repository() -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojects = [\"big\"]\n\n[cache]\nmonitor = \"git\"\n");
    env.write("big/vx.toml", "[tasks.hash]\ncommand = \"true\"\ninputs = [\"src/**\", \"lib/deep/**\"]\n");
    for i in 0..60 {
        env.write(&format!("big/src/d{}/f{i}.txt", i % 6), &format!("file {i}\n"));
    }
    env.write("big/lib/deep/a.txt", "a\n");
    env.write(".gitignore", ".vx/\nnode_modules/\n");
    env.git_init("main");
    env.git_commit_all("init");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    env.git(&["status", "--short"]);
    env
}

fn key(env: &TestEnv) -> String {
    let out = env.vx(&["run", "big#hash", "--dry=json"]);
    out.assert_success();
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    plan["tasks"][0]["key"].as_str().expect("a key").to_string()
}

/// The key a walk gives (`monitor = "off"`), the same tree.
fn walked_key(env: &TestEnv) -> String {
    let config = env.read("vx.toml");
    env.write("vx.toml", &config.replace("monitor = \"git\"", "monitor = \"off\""));
    let key = key(env);
    env.write("vx.toml", &config);
    key
}

#[test]
fn every_change_git_reports_gives_the_walked_key() {
    let env = repository();
    let first = key(&env);
    assert_eq!(first, walked_key(&env));
    let map = std::fs::metadata(env.root().join(".vx/oid-map")).expect("the run keeps blobs' BLAKE3s");
    assert!(map.len() > 60 * 53, "one record per clean input file: {} bytes", map.len());
    assert_eq!(key(&env), first, "unchanged, now from the map");

    env.write("big/src/d3/f3.txt", "edited\n");
    let edited = key(&env);
    assert_ne!(edited, first, "an edit");
    assert_eq!(edited, walked_key(&env));

    env.git(&["add", "big/src/d3/f3.txt"]);
    assert_eq!(key(&env), edited, "staged, the same bytes");

    env.git(&["checkout", "HEAD", "--", "big/src/d3/f3.txt"]);
    assert_eq!(key(&env), first, "reverted");

    // The same size and mtime as the version git verified: the inode
    // change time still tells them apart, as it does for git.
    let f4 = env.root().join("big/src/d4/f4.txt");
    let mtime = std::fs::metadata(&f4).expect("stat").modified().expect("mtime");
    env.write("big/src/d4/f4.txt", "FILE 4\n");
    std::fs::File::options().write(true).open(&f4).and_then(|f| f.set_modified(mtime)).expect("set mtime back");
    let sneaky = key(&env);
    assert_ne!(sneaky, first, "an edit that keeps size and mtime");
    assert_eq!(sneaky, walked_key(&env));
    env.git(&["checkout", "HEAD", "--", "big/src/d4/f4.txt"]);

    env.write("big/src/d9/new.txt", "new\n");
    let added = key(&env);
    assert_ne!(added, first, "an untracked file");
    assert_eq!(added, walked_key(&env));

    env.remove("big/src/d1/f1.txt");
    let removed = key(&env);
    assert_ne!(removed, added, "a removal");
    assert_eq!(removed, walked_key(&env));

    env.write("big/src/.gitignore", "f2*.txt\n");
    let ignored = key(&env);
    assert_ne!(ignored, removed, "an ignore file");
    assert_eq!(ignored, walked_key(&env));

    env.write("big/src/node_modules/x.txt", "x\n");
    env.write("big/dist/out.js", "built\n");
    assert_eq!(key(&env), ignored, "node_modules and files outside the inputs");

    // The walk reads no ignore file between the project and a glob's
    // root (`lib/deep`), git does: git ignores this file, the walk takes
    // it. The list is the walk's, so it counts.
    env.write("big/lib/.gitignore", "*.log\n");
    env.write("big/lib/deep/b.log", "log\n");
    let quirk = key(&env);
    assert_ne!(quirk, ignored);
    assert_eq!(quirk, walked_key(&env));

    env.git_commit_all("more");
    assert_eq!(key(&env), quirk, "committed, the same bytes");
}

/// `vx run big#hash --dry=json` in `dir` (relative to the workspace root)
/// under `strace -f`: its output, and the regular files named `needle`
/// that vx opened (directories it lists are left out; git runs only
/// `git config`, which opens no source file).
fn traced(env: &TestEnv, dir: &str, needle: &str) -> (crate::common::Output, Vec<String>) {
    let trace = env.root().join("../trace");
    let _ = std::fs::remove_file(&trace);
    let bin = crate::common::vx_bin().to_string_lossy().into_owned();
    let args = ["-f", "-e", "trace=open,openat,execve", "-o", trace.to_str().expect("utf-8")];
    let mut all: Vec<&str> = args.to_vec();
    all.extend([bin.as_str(), "run", "big#hash", "--dry=json"]);
    let out = env.tool_in(dir, "strace", &all, &[]);
    out.assert_success();
    let calls = std::fs::read_to_string(&trace).expect("the trace");
    assert!(calls.contains("oid-map"), "the trace holds vx's calls:\n{calls}");
    assert!(calls.contains("execve(") && calls.contains("\"config\""), "vx asked git its configuration:\n{calls}");
    let listed = format!("{needle}d0\"");
    assert!(calls.lines().any(|l| l.contains(&listed) && l.contains("O_DIRECTORY")), "vx listed {listed}:\n{calls}");
    let opened = calls
        .lines()
        .filter(|l| l.contains(needle) && !l.contains("O_DIRECTORY"))
        .filter(|l| !l.contains("/.gitignore") && !l.contains("/.ignore"))
        .map(str::to_string)
        .collect();
    (out, opened)
}

#[test]
fn clean_files_are_not_read() {
    let env = repository();
    key(&env);
    env.write("big/src/d0/dirty.txt", "dirty\n");
    let expected = key(&env);
    // Without vx's own stat index, a file git cannot vouch for is read.
    std::fs::remove_file(env.root().join(".vx/stat-index")).expect("the stat index");
    let (out, opened) = traced(&env, ".", "/src/");
    assert!(out.stdout.contains(&expected), "{out}");
    assert!(opened.iter().any(|l| l.contains("dirty.txt")), "the dirty file is read: {opened:#?}");
    assert!(opened.iter().all(|l| l.contains("dirty.txt")), "and no clean one: {opened:#?}");
}

#[test]
fn a_carried_map_keys_a_fresh_clone_without_reading_it() {
    let env = repository();
    let expected = key(&env);
    let clone = env.root().join("../clone");
    env.git(&["clone", "--quiet", ".", clone.to_str().expect("utf-8")]);
    std::fs::create_dir_all(clone.join(".vx")).expect("mkdir");
    std::fs::copy(env.root().join(".vx/oid-map"), clone.join(".vx/oid-map")).expect("carry the map");
    // A clone this small is checked out within the second its index is
    // written, so every entry is racily clean; git settles that on its
    // next look a second later, as any `git status` in CI does.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    env.tool_in("../clone", "git", &["status", "--short"], &[]).assert_success();
    let (out, opened) = traced(&env, "../clone", "/clone/big/src/");
    assert!(out.stdout.contains(&expected), "the walk's key, in another clone: {out}");
    assert!(opened.is_empty(), "no source file of the clone read: {opened:#?}");
}

#[test]
fn converting_attributes_and_a_bad_index_walk_instead() {
    let env = repository();
    env.write(".gitattributes", "*.txt text=auto\n");
    let walked = walked_key(&env);
    assert_eq!(key(&env), walked);
    assert!(!env.root().join(".vx/oid-map").exists(), "git's bytes may not be the file's: no blob is mapped");

    env.remove(".gitattributes");
    std::fs::write(env.root().join(".git/index"), b"DIRC garbage").expect("write");
    let out = env.vx(&["run", "big#hash", "--dry=json"]);
    out.assert_success();
    assert!(out.stdout.contains(&walked), "a corrupt index: walked, same key\n{out}");
}

#[test]
fn a_conflicted_file_deleted_on_one_side_still_counts() {
    let env = repository();
    env.git(&["checkout", "--quiet", "-b", "theirs"]);
    env.remove("big/src/d2/f2.txt");
    env.git_commit_all("delete");
    env.git(&["checkout", "--quiet", "main"]);
    env.write("big/src/d2/f2.txt", "ours\n");
    env.git_commit_all("edit");
    let out = env.tool_in(".", "git", &["merge", "--quiet", "theirs"], &[]);
    assert_ne!(out.code, 0, "a modify/delete conflict: {out}");
    assert!(env.git(&["status", "--porcelain"]).contains("UD big/src/d2/f2.txt"));
    let conflicted = key(&env);
    assert_eq!(conflicted, walked_key(&env), "the file on disk is an input, as the walk finds it");
}
