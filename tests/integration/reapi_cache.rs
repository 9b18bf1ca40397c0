//! The REAPI remote cache tier (`[remote]`) against a real BuildGrid 0.4.4
//! server (common::buildgrid): entries written by one run and restored
//! into an empty local cache by the next (outputs byte for byte, modes,
//! links, logs; a blob too big for a batch; twenty projects at once),
//! signatures, write-once, `--cache remote:r`, uploads the server refuses,
//! a blob tampered with in the server's disk CAS, a server that dies or
//! was never there, and the `[remote]` configuration errors.
//!
//! Which tasks ran is read from the test log each task appends to; the
//! traffic from the `VX_REMOTE_STATS` line every run here prints.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;

use sha2::Digest as _;

use crate::common::buildgrid::BuildGrid;
use crate::common::fixtures::{task, toml_str};
use crate::common::{Checked, Output, TestEnv, log_cmd};

const SIGNING_KEY: &str = "VX_REMOTE_SIGNING_KEY";
/// In the one warning a run gives for the entries it could not trust.
const NOT_USED: &str = "not used";

/// One project of a test workspace: its name, the projects it depends on,
/// and what its `build` does after logging its name.
struct Project<'a> {
    name: &'a str,
    deps: &'a [&'a str],
    build: &'a str,
}

/// `packages/*` with `remote` appended to the root `vx.toml`, and each
/// project's `build` (outputs `dist/**`, after its dependencies' builds).
fn workspace(remote: &str, projects: &[Project]) -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", &format!("[workspace]\nprojects = [\"packages/*\"]\n{remote}"));
    for p in projects {
        let deps: Vec<String> = p.deps.iter().map(|d| toml_str(d)).collect();
        let mut text = format!("[project]\nname = \"{}\"\ndepends-on = [{}]\n", p.name, deps.join(", "));
        let command = format!("{} && {}", log_cmd(p.name), p.build);
        text.push_str(&task("build", &command, "outputs = [\"dist/**\"]\ndepends-on = [\"^build\"]"));
        env.write(&format!("packages/{}/vx.toml", p.name), &text);
    }
    env
}

/// Three projects that each write one file of their own to `dist/`.
fn three(remote: &str) -> TestEnv {
    let build = |n: &str| format!("mkdir -p dist && echo 'the output of {n}' > dist/out.txt");
    let (a, b, c) = (build("a"), build("b"), build("c"));
    workspace(
        remote,
        &[
            Project { name: "a", deps: &[], build: &a },
            Project { name: "b", deps: &["a"], build: &b },
            Project { name: "c", deps: &[], build: &c },
        ],
    )
}

/// `vx run build --report markdown` (whose table names each hit's tier)
/// with the traffic line on and `vars` set.
fn run(env: &TestEnv, vars: &[(&str, &str)], extra: &[&str]) -> Output {
    let mut args = vec!["run", "build", "--report", "markdown"];
    args.extend_from_slice(extra);
    let mut cmd = env.vx_command(&args).env("VX_REMOTE_STATS", "1");
    for (k, v) in vars {
        cmd = cmd.env(k, v);
    }
    cmd.output()
}

/// [`run`], which must succeed.
#[track_caller]
fn run_ok(env: &TestEnv, vars: &[(&str, &str)], extra: &[&str]) -> Checked {
    run(env, vars, extra).checked_success()
}

/// Forgets everything local (`.vx/`, every `dist/`) and clears the task log.
fn forget_local(env: &TestEnv) {
    std::fs::remove_dir_all(env.path(".vx")).expect("remove .vx");
    for project in std::fs::read_dir(env.path("packages")).expect("read packages/").flatten() {
        let dist = project.path().join("dist");
        if dist.exists() {
            std::fs::remove_dir_all(&dist).expect("remove dist/");
        }
    }
    env.clear_log();
}

/// The `VX_REMOTE_STATS` line: `H hits, B bytes down; U uploads, B bytes up`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Traffic {
    hits: u64,
    down: u64,
    uploads: u64,
    up: u64,
}

#[track_caller]
fn traffic(out: &Output) -> Traffic {
    let line = out
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("vx: remote cache: "))
        .unwrap_or_else(|| panic!("no `vx: remote cache:` line\n{out}"));
    let n: Vec<u64> =
        line.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    let [hits, down, uploads, up] = n[..] else { panic!("malformed traffic line `{line}`\n{out}") };
    Traffic { hits, down, uploads, up }
}

/// How many tasks the markdown report calls a hit from the remote.
fn remote_hits(out: &Output) -> usize {
    out.stdout.matches("| hit (remote) |").count()
}

/// The task log, sorted: which tasks ran since the last clear.
fn ran(env: &TestEnv) -> Vec<String> {
    env.log_set()
}

fn names(list: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = list.iter().map(|s| (*s).to_string()).collect();
    v.sort();
    v
}

/// The lines of stderr that are warnings.
fn warnings(out: &Output) -> Vec<&str> {
    out.stderr.lines().filter(|l| l.starts_with("vx: warning: ")).collect()
}

/// Asserts that a run succeeded with every task of `all` run, none a hit.
#[track_caller]
fn assert_all_ran(env: &TestEnv, out: &Output, all: &[&str]) {
    out.assert_success();
    assert_eq!(ran(env), names(all), "every task ran\n{out}");
    assert_eq!(out.summary().cached, 0, "{out}");
}

/// Asserts that a run was all hits from the remote, `n` of them, running nothing.
#[track_caller]
fn assert_all_remote_hits(env: &TestEnv, out: &Output, n: usize) {
    out.assert_success();
    assert_eq!(ran(env), Vec::<String>::new(), "a hit runs nothing\n{out}");
    let s = out.summary();
    assert_eq!((s.run, s.cached, s.failed), (n, n, 0), "{out}");
    assert_eq!(remote_hits(out), n, "every hit came from the remote\n{out}");
    assert_eq!(traffic(out).hits, n as u64, "{out}");
}

/// What a `dist/` file is: its bytes and mode, or a link's target.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    File(Vec<u8>, u32),
    Link(String),
}

/// Every file and link under the `dist/` of every project.
fn outputs(env: &TestEnv) -> BTreeMap<String, Node> {
    let mut out = BTreeMap::new();
    let mut stack = vec![env.path("packages")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("read a directory").flatten() {
            let path = e.path();
            let rel = path.strip_prefix(env.root()).expect("inside the workspace").to_string_lossy().into_owned();
            let meta = std::fs::symlink_metadata(&path).expect("stat");
            if meta.file_type().is_symlink() {
                out.insert(rel, Node::Link(std::fs::read_link(&path).unwrap().to_string_lossy().into_owned()));
            } else if meta.is_dir() {
                stack.push(path);
            } else if rel.contains("/dist/") {
                out.insert(rel, Node::File(std::fs::read(&path).unwrap(), meta.permissions().mode() & 0o7777));
            }
        }
    }
    out
}

fn sha256_hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The key `--dry=json` plans for `id`.
#[track_caller]
fn key_of(env: &TestEnv, id: &str) -> String {
    let out = env.vx(&["run", id, "--dry=json"]);
    out.assert_success();
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("--dry=json is JSON");
    let task = plan["tasks"].as_array().expect("tasks").iter().find(|t| t["id"] == id).expect("the task is planned");
    task["key"].as_str().expect("a key").to_string()
}

/// An endpoint nothing listens on: a port that was free a moment ago.
fn closed_endpoint() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    format!("grpc://127.0.0.1:{port}")
}

// ---------------------------------------------------------------------
// Round trips.
// ---------------------------------------------------------------------

/// Text, binary bytes, a 0600 file, an executable, a directory and two
/// links (to a file and to that directory, both inside the outputs).
const LIB_BUILD: &str = "mkdir -p dist/bin && echo 'lib text' > dist/out.txt && chmod 600 dist/out.txt \
    && printf 'bin\\000\\377\\001\\n' > dist/data.bin \
    && printf '#!/bin/sh\\necho tool\\n' > dist/bin/tool && chmod 755 dist/bin/tool \
    && ln -s out.txt dist/latest && mkdir -p dist/etc && echo conf > dist/etc/app.conf && ln -s etc dist/config";
/// Reads its dependency's output and prints to stdout and stderr.
const APP_BUILD: &str =
    "echo 'app line one'; echo 'app line two' >&2; mkdir -p dist && cat ../lib/dist/out.txt > dist/app.txt";

#[test]
fn an_empty_local_cache_is_restored_from_the_server_byte_for_byte() {
    let server = BuildGrid::start();
    let env = workspace(
        &server.remote_toml(),
        &[
            Project { name: "lib", deps: &[], build: LIB_BUILD },
            Project { name: "app", deps: &["lib"], build: APP_BUILD },
            Project { name: "cli", deps: &["lib"], build: "mkdir -p dist && echo cli > dist/cli.txt" },
        ],
    );
    let first = run_ok(&env, &[], &[]);
    assert_all_ran(&env, &first, &["lib", "app", "cli"]);
    assert_eq!(warnings(&first), Vec::<&str>::new(), "{first}");
    let t = traffic(&first);
    assert_eq!((t.hits, t.uploads), (0, 3), "every task uploaded\n{first}");
    assert!(t.up > 0, "{first}");
    let built = outputs(&env);
    assert_eq!(built.len(), 8, "the fixture writes what the test expects: {built:#?}");
    let printed = first.task_lines("app#build");
    assert_eq!(printed, ["app line one", "app line two"], "{first}");

    forget_local(&env);
    let second = run_ok(&env, &[], &[]);
    assert_all_remote_hits(&env, &second, 3);
    assert_eq!(warnings(&second), Vec::<&str>::new(), "{second}");
    let t = traffic(&second);
    assert_eq!(t.uploads, 0, "a hit uploads nothing\n{second}");
    assert!(t.down > 0, "{second}");
    assert_eq!(outputs(&env), built, "every output, mode and link restored exactly");
    assert_eq!(outputs(&env)["packages/lib/dist/bin/tool"], Node::File(b"#!/bin/sh\necho tool\n".to_vec(), 0o755));
    #[expect(clippy::disallowed_methods, reason = "the test runs the restored executable itself")]
    let tool = std::process::Command::new(env.path("packages/lib/dist/bin/tool")).output().expect("run the tool");
    assert_eq!(String::from_utf8_lossy(&tool.stdout), "tool\n", "the restored executable runs");
    let replayed = second.task_lines("app#build");
    let key = key_of(&env, "app#build");
    assert_eq!(replayed[0], format!("cache hit, replaying logs {}", &key[..16]), "{second}");
    assert_eq!(replayed[1..], printed[..], "the log is replayed from the server\n{second}");

    let local = run_ok(&env, &[], &["--cache", "local:rw"]);
    assert_eq!(local.stdout.matches("| hit (local) |").count(), 3, "remote hits were kept locally\n{local}");
    assert_eq!(ran(&env), Vec::<String>::new(), "{local}");
}

#[test]
fn an_output_larger_than_a_batch_round_trips_through_bytestream() {
    let server = BuildGrid::start();
    // 6 MiB of random bytes: over the 4 MiB batch limit BuildGrid
    // advertises, so only ByteStream can move the blob either way.
    let build = "mkdir -p dist && head -c 6291456 /dev/urandom > dist/big.bin && echo small > dist/small.txt";
    let env = workspace(&server.remote_toml(), &[Project { name: "big", deps: &[], build }]);
    let first = run_ok(&env, &[], &[]);
    assert_all_ran(&env, &first, &["big"]);
    assert_eq!(warnings(&first), Vec::<&str>::new(), "{first}");
    let big = std::fs::read(env.path("packages/big/dist/big.bin")).expect("the task wrote big.bin");
    assert_eq!(big.len(), 6 << 20);
    assert!(traffic(&first).up >= 6 << 20, "{first}");
    let stored = std::fs::read(server.cas_file(&sha256_hex(&big))).expect("read the blob");
    assert!(stored == big, "the server holds the whole blob");

    forget_local(&env);
    let second = run_ok(&env, &[], &[]);
    assert_all_remote_hits(&env, &second, 1);
    assert!(traffic(&second).down >= 6 << 20, "{second}");
    let restored = std::fs::read(env.path("packages/big/dist/big.bin")).expect("big.bin restored");
    assert!(restored == big, "the 6 MiB output comes back byte for byte");
    assert_eq!(env.read("packages/big/dist/small.txt"), "small\n");
}

/// Twenty projects in a binary tree, each output built from its parent's.
#[test]
fn twenty_projects_are_restored_from_the_server_without_running_a_task() {
    let server = BuildGrid::start();
    let names: Vec<String> = (0..20).map(|i| format!("p{i:02}")).collect();
    let parents: Vec<Vec<&str>> =
        (0..20).map(|i| if i == 0 { vec![] } else { vec![names[(i - 1) / 2].as_str()] }).collect();
    let builds: Vec<String> = (0..20)
        .map(|i| match parents[i].first() {
            Some(p) => format!("mkdir -p dist && {{ cat ../{p}/dist/out.txt; echo {}; }} > dist/out.txt", names[i]),
            None => format!("mkdir -p dist && echo {} > dist/out.txt", names[i]),
        })
        .collect();
    let projects: Vec<Project> =
        (0..20).map(|i| Project { name: &names[i], deps: &parents[i], build: &builds[i] }).collect();
    let env = workspace(&server.remote_toml(), &projects);
    let all: Vec<&str> = names.iter().map(String::as_str).collect();

    let first = run_ok(&env, &[], &[]);
    assert_all_ran(&env, &first, &all);
    assert_eq!(traffic(&first).uploads, 20, "{first}");
    let built = outputs(&env);
    assert_eq!(built.len(), 20);
    assert_eq!(env.read("packages/p19/dist/out.txt"), "p00\np01\np04\np09\np19\n", "outputs chain down the tree");

    forget_local(&env);
    let second = run_ok(&env, &[], &[]);
    assert_all_remote_hits(&env, &second, 20);
    assert_eq!(warnings(&second), Vec::<&str>::new(), "{second}");
    assert_eq!(outputs(&env), built);
}

// ---------------------------------------------------------------------
// Signatures and write-once.
// ---------------------------------------------------------------------

#[test]
fn signed_entries_hit_with_their_key_and_are_refused_with_another() {
    let server = BuildGrid::start();
    let env = three(&server.remote_toml());
    let write = run_ok(&env, &[(SIGNING_KEY, "key-a")], &[]);
    assert_eq!(traffic(&write).uploads, 3, "{write}");
    let built = outputs(&env);

    forget_local(&env);
    let same = run_ok(&env, &[(SIGNING_KEY, "key-a")], &[]);
    assert_all_remote_hits(&env, &same, 3);
    assert!(!same.stderr.contains(NOT_USED), "{same}");

    forget_local(&env);
    let other = run_ok(&env, &[(SIGNING_KEY, "key-b")], &[]);
    assert_all_ran(&env, &other, &["a", "b", "c"]);
    let refused: Vec<&str> = warnings(&other).into_iter().filter(|l| l.contains(NOT_USED)).collect();
    assert_eq!(refused.len(), 1, "one warning for the run\n{other}");
    for line in refused {
        assert!(line.contains("3 REAPI cache entries at"), "it counts them\n{other}");
        assert!(line.contains("its signature does not match VX_REMOTE_SIGNING_KEY"), "{other}");
    }
    assert_eq!(outputs(&env), built, "the tasks ran and wrote their outputs");
}

#[test]
fn unsigned_entries_are_refused_when_a_signing_key_is_set() {
    let server = BuildGrid::start();
    let env = three(&server.remote_toml());
    run_ok(&env, &[], &[]);

    forget_local(&env);
    let signed = run_ok(&env, &[(SIGNING_KEY, "key-a")], &[]);
    assert_all_ran(&env, &signed, &["a", "b", "c"]);
    let refused: Vec<&str> = warnings(&signed).into_iter().filter(|l| l.contains(NOT_USED)).collect();
    assert_eq!(refused.len(), 1, "{signed}");
    assert!(refused[0].contains("3 REAPI cache entries at") && refused[0].contains("it is not signed"), "{signed}");
    let keys = ["a#build", "b#build", "c#build"].map(|id| key_of(&env, id));
    assert!(keys.iter().any(|k| refused[0].contains(&k[..16])), "the warning names the first entry's key\n{signed}");
}

#[test]
fn an_entry_on_the_server_is_never_overwritten() {
    let server = BuildGrid::start();
    let env = three(&server.remote_toml());
    run_ok(&env, &[(SIGNING_KEY, "key-a")], &[]);

    // Key b refuses the entries, runs the tasks and offers its own
    // entries: the server already has results for those keys.
    forget_local(&env);
    let other = run_ok(&env, &[(SIGNING_KEY, "key-b")], &[]);
    assert_all_ran(&env, &other, &["a", "b", "c"]);
    let t = traffic(&other);
    assert_eq!((t.uploads, t.up), (3, 0), "three uploads offered, not a byte sent\n{other}");

    forget_local(&env);
    let first_key = run_ok(&env, &[(SIGNING_KEY, "key-a")], &[]);
    assert_all_remote_hits(&env, &first_key, 3);

    forget_local(&env);
    let again = run_ok(&env, &[(SIGNING_KEY, "key-b")], &[]);
    assert_all_ran(&env, &again, &["a", "b", "c"]);
    assert_eq!(again.stderr.matches(NOT_USED).count(), 1, "{again}");
    assert!(again.stderr.contains("3 REAPI cache entries at"), "still key a's entries\n{again}");
}

// ---------------------------------------------------------------------
// What is written, and what is refused.
// ---------------------------------------------------------------------

#[test]
fn a_read_only_remote_mode_uploads_nothing() {
    let server = BuildGrid::start();
    let env = three(&server.remote_toml());
    let first = run_ok(&env, &[], &["--cache", "local:rw,remote:r"]);
    assert_all_ran(&env, &first, &["a", "b", "c"]);
    let t = traffic(&first);
    assert_eq!((t.uploads, t.up), (0, 0), "{first}");
    assert_eq!(server.cas_blob_count(), 0, "nothing reached the server's CAS");

    forget_local(&env);
    let second = run_ok(&env, &[], &[]);
    assert_all_ran(&env, &second, &["a", "b", "c"]);
    assert_eq!(remote_hits(&second), 0, "{second}");
}

#[test]
fn uploads_the_server_refuses_are_counted_and_reported() {
    let server = BuildGrid::start_readonly();
    let env = three(&server.remote_toml());
    let first = run_ok(&env, &[], &[]);
    assert_all_ran(&env, &first, &["a", "b", "c"]);
    let want = format!(
        "vx: warning: the REAPI cache refused 3 of 3 uploads: the server at {} does not accept action cache writes",
        server.endpoint()
    );
    assert!(first.stderr.lines().any(|l| l.starts_with(&want)), "{first}");
    assert_eq!(warnings(&first).len(), 1, "one line for all refusals\n{first}");
    assert_eq!(server.cas_blob_count(), 0, "no blob is sent for a result the server will refuse");

    forget_local(&env);
    let second = run_ok(&env, &[], &[]);
    assert_all_ran(&env, &second, &["a", "b", "c"]);
}

#[test]
fn a_blob_tampered_with_in_the_server_cas_is_never_restored() {
    let server = BuildGrid::start();
    let env = three(&server.remote_toml());
    run_ok(&env, &[], &[]);
    let built = outputs(&env);
    let good = std::fs::read(env.path("packages/b/dist/out.txt")).expect("b's output");
    let blob = server.cas_file(&sha256_hex(&good));
    std::fs::write(&blob, vec![b'X'; good.len()]).expect("tamper with the blob");

    forget_local(&env);
    let out = run_ok(&env, &[], &[]);
    assert_eq!(ran(&env), names(&["b"]), "only the tampered entry's task ran\n{out}");
    assert_eq!(remote_hits(&out), 2, "{out}");
    let refused: Vec<&str> = warnings(&out).into_iter().filter(|l| l.contains(NOT_USED)).collect();
    assert_eq!(refused.len(), 1, "{out}");
    let key = key_of(&env, "b#build");
    assert!(refused[0].contains(&key[..16]), "the warning names b's entry\n{out}");
    assert!(refused[0].contains("the CAS returned"), "{out}");
    assert_eq!(outputs(&env), built, "every output is the one the tasks wrote");
}

// ---------------------------------------------------------------------
// A server that dies, or was never there.
// ---------------------------------------------------------------------

/// Asserts the warnings of a run whose server is unreachable: one, for
/// the first call that failed (a lookup or an upload), the cause named,
/// saying the remote is not used again.
#[track_caller]
fn assert_unreachable_warnings(out: &Output, cause: &str) {
    let lines = warnings(out);
    assert_eq!(lines.len(), 1, "one warning\n{out}");
    assert!(
        lines[0].starts_with("vx: warning: remote cache lookup failed (treated as a miss): ")
            || lines[0].starts_with("vx: warning: remote cache upload failed: "),
        "{out}"
    );
    assert!(lines[0].ends_with("not using the remote cache for the rest of this run"), "{out}");
    assert!(out.stderr.contains(cause), "the warnings say `{cause}`\n{out}");
    assert!(!out.stderr.contains("[plugins.reapi]"), "the REAPI tier is never taken for a plugin\n{out}");
}

#[test]
fn a_stopped_server_is_a_warning_and_every_task_runs() {
    let mut server = BuildGrid::start();
    let env = three(&server.remote_toml());
    run_ok(&env, &[], &[]);
    let built = outputs(&env);
    server.kill();

    forget_local(&env);
    let out = run_ok(&env, &[], &[]);
    assert_all_ran(&env, &out, &["a", "b", "c"]);
    assert_unreachable_warnings(&out, &format!("cannot reach the REAPI server at {}", server.endpoint()));
    assert_eq!(outputs(&env), built);
}

#[test]
fn a_server_killed_during_a_run_is_a_warning_and_the_run_finishes() {
    let server = BuildGrid::start();
    let kill = "kill -KILL -\"$VX_TEST_BUILDGRID_PGID\" && mkdir -p dist && echo killer > dist/out.txt";
    let env = workspace(
        &server.remote_toml(),
        &[
            Project { name: "first", deps: &[], build: "mkdir -p dist && echo first > dist/out.txt" },
            Project { name: "killer", deps: &["first"], build: kill },
            Project { name: "last", deps: &["killer"], build: "mkdir -p dist && echo last > dist/out.txt" },
        ],
    );
    let out = env
        .vx_command(&["run", "build"])
        .env("VX_TEST_BUILDGRID_PGID", &server.pid().to_string())
        .env("VX_REMOTE_STATS", "1")
        .output();
    assert_all_ran(&env, &out, &["first", "killer", "last"]);
    assert!(
        crate::common::process::poll(|| std::net::TcpStream::connect(server.endpoint().replace("grpc://", "")).is_err()),
        "the task killed the server"
    );
    // The connection breaks under a call, or refuses the next one.
    assert_unreachable_warnings(&out, "GetActionResult: ");
    assert_eq!(env.read("packages/last/dist/out.txt"), "last\n");
}

#[test]
fn an_endpoint_nobody_listens_on_is_a_warning_and_every_task_runs() {
    let endpoint = closed_endpoint();
    let env = three(&format!("\n[remote]\nendpoint = \"{endpoint}\"\n"));
    let out = run_ok(&env, &[], &[]);
    assert_all_ran(&env, &out, &["a", "b", "c"]);
    assert_unreachable_warnings(&out, &format!("cannot reach the REAPI server at {endpoint}"));
    assert_eq!(env.read("packages/c/dist/out.txt"), "the output of c\n");
}

// ---------------------------------------------------------------------
// Configuration.
// ---------------------------------------------------------------------

#[test]
fn an_endpoint_without_a_scheme_is_a_config_error_with_a_hint() {
    let env = three("\n[remote]\nendpoint = \"localhost:1\"\n");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("vx.toml:5:12: [remote] endpoint `localhost:1` is not a gRPC address"), "{out}");
    assert!(line.contains("write it like `grpc://127.0.0.1:50051`"), "the hint says how to write it\n{out}");
    assert_eq!(ran(&env), Vec::<String>::new(), "nothing runs after a config error");
}

#[test]
fn cache_remote_reapi_without_a_remote_table_is_a_config_error() {
    let env = three("\n[cache]\nremote = \"reapi\"\n");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("vx.toml:5:10: [cache] remote = \"reapi\" needs a [remote] table"), "{out}");
    assert!(line.contains("add [remote] with endpoint = "), "{out}");
    assert_eq!(ran(&env), Vec::<String>::new());
}

#[test]
fn a_token_variable_that_is_not_set_is_a_warning_and_the_run_succeeds() {
    let server = BuildGrid::start();
    let env = three(&format!("{}token-env = \"NOT_SET_VAR\"\n", server.remote_toml()));
    let out = run_ok(&env, &[], &[]);
    assert_all_ran(&env, &out, &["a", "b", "c"]);
    let lines = warnings(&out);
    assert!(!lines.is_empty() && lines.len() <= 3, "{out}");
    assert!(
        lines[0].starts_with("vx: warning: remote cache lookup failed (treated as a miss): [remote] token-env names `NOT_SET_VAR`, which is not set"),
        "{out}"
    );
    assert!(!out.stderr.contains("[plugins.reapi]"), "{out}");
    assert_eq!(server.cas_blob_count(), 0, "nothing was sent without the token");
}

/// The exec-mode fixture serves the cache tier too (its CAS and action
/// cache are the same services), with PostgreSQL up on its own port.
#[test]
fn an_exec_mode_server_also_serves_the_cache() {
    let server = BuildGrid::start_exec();
    let pg = server.pg_port().expect("exec mode has a PostgreSQL port");
    assert!(std::net::TcpStream::connect(("127.0.0.1", pg)).is_ok(), "PostgreSQL listens on {pg}");
    let env = three(&server.remote_toml());
    run_ok(&env, &[], &[]);
    forget_local(&env);
    let out = run_ok(&env, &[], &[]);
    assert_all_remote_hits(&env, &out, 3);
}

#[test]
fn dry_run_names_the_tier_each_hit_would_come_from() {
    let server = BuildGrid::start();
    let env = three(&server.remote_toml());
    run_ok(&env, &[], &[]);
    let statuses = |extra: &[&str]| -> BTreeMap<String, String> {
        let mut args = vec!["run", "build", "--dry=json"];
        args.extend_from_slice(extra);
        let out = env.vx(&args);
        out.assert_success();
        let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("--dry=json is JSON");
        plan["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .map(|t| (t["id"].as_str().unwrap().to_string(), t["cache_status"].as_str().unwrap().to_string()))
            .collect()
    };
    assert!(statuses(&[]).values().all(|s| s == "hit-local"), "{:?}", statuses(&[]));
    forget_local(&env);
    let remote = statuses(&[]);
    assert_eq!(remote.len(), 3);
    assert!(remote.values().all(|s| s == "hit-remote"), "an empty local cache, every entry on the server: {remote:?}");
    let local_only = statuses(&["--cache", "local:rw"]);
    assert!(local_only.values().all(|s| s == "miss"), "the server is not asked: {local_only:?}");
    assert_eq!(ran(&env), Vec::<String>::new(), "--dry runs nothing");
}

#[test]
fn a_tls_server_is_trusted_through_tls_ca_and_refused_without_it() {
    let server = BuildGrid::start_tls();
    let endpoint = server.endpoint().replace("grpc://", "grpcs://");
    let ca = server.tls_ca();
    let trusted = format!("\n[remote]\nendpoint = \"{endpoint}\"\ntls-ca = {}\n", toml_str(&ca.to_string_lossy()));
    let env = three(&trusted);
    let first = run_ok(&env, &[], &[]);
    assert_eq!(warnings(&first), Vec::<&str>::new(), "{first}");
    assert_eq!(traffic(&first).uploads, 3, "every entry went up over TLS\n{first}");
    forget_local(&env);
    let second = run_ok(&env, &[], &[]);
    assert_all_remote_hits(&env, &second, 3);

    // The same server without its CA: the certificate is not trusted, so
    // nothing is read from it; the run goes on without the remote.
    env.write("vx.toml", &format!("[workspace]\nprojects = [\"packages/*\"]\n[remote]\nendpoint = \"{endpoint}\"\n"));
    forget_local(&env);
    let untrusted = run_ok(&env, &[], &[]);
    assert_all_ran(&env, &untrusted, &["a", "b", "c"]);
    assert!(
        warnings(&untrusted).iter().any(|w| w.contains("cannot reach the REAPI server")),
        "the refused handshake is a warning\n{untrusted}"
    );

    // tls-ca with a plain endpoint is a mistake worth saying so.
    env.write(
        "vx.toml",
        &format!(
            "[workspace]\nprojects = [\"packages/*\"]\n[remote]\nendpoint = \"{}\"\ntls-ca = \"ca.pem\"\n",
            server.endpoint()
        ),
    );
    forget_local(&env);
    let plain = run_ok(&env, &[], &[]);
    assert!(plain.stderr.contains("write it as grpcs://"), "{plain}");
}
