//! Output of any size keeps vx's memory bounded (issue 15, items 5 and
//! 8): a task that writes one 256 MiB line, and a restore of an output
//! that inflates from a few kilobytes of archive to 256 MiB (what a
//! "zstd bomb" from a hostile cache looks like to vx). Before the bounds,
//! vx held each about three times over.
//!
//! vx's stdout goes to a file, read here a line at a time: the test must
//! stay small itself (`TestEnv::vx_peak_rss`).

use std::io::BufRead;

use crate::common::TestEnv;
use crate::common::fixtures::task;

const MIB: usize = 1 << 20;
/// What each case writes: far above any bound below, so holding it
/// whole even once shows.
const SIZE: usize = 256 * MIB;
/// vx's peak resident memory in each case, with room for a debug build:
/// a line is read 1 MiB at a time, and a task's kept log is at most
/// 32 MiB (docs/reliability.md).
const PEAK_BOUND_MIB: u64 = 160;
/// `events::output::MAX_LINE`.
const MAX_LINE: usize = MIB;

/// One project `p` with a cached `build` running `command`.
fn project(env: &TestEnv, command: &str) {
    env.workspace(&["packages/*"]);
    let build = task("build", command, "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]\n");
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{build}"));
    env.write("packages/p/src/in.txt", "in");
}

/// `vx run build`, asserting it succeeded within the bound; returns the
/// lengths of task `p#build`'s lines (prefix removed) and the lines that
/// are not made of `a` alone, with the last summary line.
fn measured_build(env: &TestEnv, what: &str) -> (Vec<usize>, Vec<String>, String) {
    let stdout = env.root().join("../stdout.txt");
    let (code, stderr, peak) = env.vx_peak_rss(&["run", "build"], &stdout);
    assert_eq!(code, 0, "{what}: vx failed\n{stderr}");
    assert!(peak < PEAK_BOUND_MIB, "{what}: vx peaked at {peak} MiB, over {PEAK_BOUND_MIB} MiB");
    let (mut lengths, mut other, mut summary) = (Vec::new(), Vec::new(), String::new());
    for line in std::io::BufReader::new(std::fs::File::open(&stdout).expect("stdout")).lines() {
        let line = line.expect("a UTF-8 line");
        if let Some(text) = line.strip_prefix("p#build: ") {
            lengths.push(text.len());
            if !text.bytes().all(|b| b == b'a') {
                other.push(text.chars().take(200).collect());
            }
        } else if line.starts_with("Tasks:") {
            summary = line;
        }
    }
    (lengths, other, summary)
}

#[test]
fn a_256_mib_line_streams_through_in_pieces_and_is_kept_bounded() {
    let env = TestEnv::new();
    project(&env, &format!("head -c {SIZE} /dev/zero | tr '\\0' a; echo; echo done"));
    let (lengths, other, _) = measured_build(&env, "the run");
    assert_eq!(other, ["done"], "nothing but the line's bytes and `done`");
    assert_eq!(lengths.len(), SIZE / MAX_LINE + 1, "the line in 1 MiB pieces, then `done`");
    assert!(lengths.iter().all(|&n| n <= MAX_LINE), "each shown piece is at most 1 MiB");
    assert_eq!(lengths.iter().sum::<usize>(), SIZE + 4, "every byte of the line is shown");

    // The hit replays the kept log: its head, a line saying what was left
    // out, and its tail, which ends the way the task did.
    let (lengths, other, summary) = measured_build(&env, "the replay");
    assert!(summary.contains("1 cached"), "a hit: {summary}");
    assert_eq!(other.len(), 3, "the cache note, the left-out line and `done`: {other:?}");
    assert!(other[0].contains("cache hit, replaying logs"), "{other:?}");
    let left_out = SIZE + 6 - 32 * MIB;
    assert!(other[1].starts_with(&format!("[vx: {left_out} bytes of this output left out;")), "{other:?}");
    assert_eq!(other[2], "done", "the tail is kept");
    assert!(lengths.iter().sum::<usize>() < 33 * MIB, "the kept log is bounded");
}

#[test]
fn restoring_an_output_that_inflates_to_256_mib_streams_it_to_disk() {
    let env = TestEnv::new();
    project(&env, &format!("mkdir -p dist && head -c {SIZE} /dev/zero > dist/zeros.bin"));
    env.vx(&["run", "build"]).assert_success();
    let stored: u64 = crate::common::store::entry_files(&crate::common::store::store(&env))
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum();
    assert!(stored < MIB as u64, "zeros compress: the entry is {stored} bytes, a bomb's ratio");

    std::fs::remove_dir_all(env.path("packages/p/dist")).expect("remove dist");
    let (_, _, summary) = measured_build(&env, "the restore");
    assert!(summary.contains("1 cached"), "a hit: {summary}");
    let restored = std::fs::metadata(env.path("packages/p/dist/zeros.bin")).expect("restored");
    assert_eq!(restored.len(), SIZE as u64, "restored whole");
}
