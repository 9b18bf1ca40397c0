//! A 2,000-package `package-lock.json` for 500 workspaces, the size the
//! issue's performance target names. The test checks every slice against
//! a closure computed from the generator's own description; the timing is
//! measured by hand (docs/lockfiles.md):
//!
//! ```text
//! cargo test --release -p vx --lib lockfile::perf_tests -- --ignored --nocapture
//! ```

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;

use super::testutil::ScratchDir;
use super::{Lockfile, LockfileKind};

const PACKAGES: usize = 2_000;
const PROJECTS: usize = 500;

/// A generated workspace: the lockfile text and, per project, the
/// `name version` lines its slice must hold.
struct Generated {
    text: String,
    expected: Vec<BTreeSet<String>>,
}

/// Packages `pkg-0` … `pkg-1999`, each depending on up to three
/// later-numbered ones; every 40th has a nested copy of its first
/// dependency at another version (npm's conflict layout). Project `k`
/// depends on five packages and on the workspace package of project
/// `k + 1`, whose dependencies must not enter `k`'s slice.
fn generate() -> Generated {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = |bound: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % bound as u64) as usize
    };
    let deps: Vec<Vec<usize>> = (0..PACKAGES)
        .map(|i| {
            let later = PACKAGES - i - 1;
            (0..later.min(3)).map(|_| i + 1 + next(later)).collect::<BTreeSet<_>>().into_iter().collect()
        })
        .collect();
    let version = |i: usize| format!("1.{}.{}", i % 7, i % 3);
    let nested = |i: usize| i.is_multiple_of(40) && !deps[i].is_empty();

    let mut text =
        String::from("{\n  \"name\": \"perf\",\n  \"lockfileVersion\": 3,\n  \"requires\": true,\n  \"packages\": {\n");
    let entry = |text: &mut String, key: &str, name: &str, version: &str, deps: &[usize]| {
        let deps = deps.iter().map(|d| format!("\"pkg-{d}\": \"^1.0.0\"")).collect::<Vec<_>>().join(", ");
        let _ = writeln!(
            text,
            "    \"{key}\": {{\"version\": \"{version}\", \"resolved\": \"https://registry.example/{name}/-/{name}-{version}.tgz\", \
             \"integrity\": \"sha512-{name}-{version}==\", \"license\": \"MIT\", \"dependencies\": {{{deps}}}}},"
        );
    };
    let _ = writeln!(text, "    \"\": {{\"name\": \"perf\", \"workspaces\": [\"packages/*\"]}},");
    for (i, out) in deps.iter().enumerate() {
        entry(&mut text, &format!("node_modules/pkg-{i}"), &format!("pkg-{i}"), &version(i), out);
        if nested(i) {
            let d = out[0];
            entry(&mut text, &format!("node_modules/pkg-{i}/node_modules/pkg-{d}"), &format!("pkg-{d}"), "2.0.0", &[]);
        }
    }
    let mut direct = Vec::new();
    for k in 0..PROJECTS {
        let mine: Vec<usize> = (0..5).map(|_| next(PACKAGES)).collect();
        let ws = (k + 1) % PROJECTS;
        let listed = mine.iter().map(|d| format!("\"pkg-{d}\": \"^1.0.0\"")).collect::<Vec<_>>().join(", ");
        let _ = writeln!(
            text,
            "    \"packages/p{k}\": {{\"name\": \"@ws/p{k}\", \"version\": \"0.0.0\", \"dependencies\": {{{listed}, \"@ws/p{ws}\": \"*\"}}}},"
        );
        let _ = writeln!(text, "    \"node_modules/@ws/p{k}\": {{\"resolved\": \"packages/p{k}\", \"link\": true}},");
        direct.push(mine);
    }
    text.truncate(text.trim_end().trim_end_matches(',').len());
    text.push_str("\n  }\n}\n");

    let expected = direct
        .iter()
        .map(|roots| {
            let mut seen = BTreeSet::new();
            let mut out = BTreeSet::new();
            let mut stack: Vec<(usize, bool)> = roots.iter().map(|&r| (r, false)).collect();
            while let Some((i, is_nested_copy)) = stack.pop() {
                if is_nested_copy {
                    out.insert(format!("pkg-{i} 2.0.0"));
                    continue;
                }
                if !seen.insert(i) {
                    continue;
                }
                out.insert(format!("pkg-{i} {}", version(i)));
                for (n, &d) in deps[i].iter().enumerate() {
                    stack.push((d, n == 0 && nested(i)));
                }
            }
            out
        })
        .collect();
    Generated { text, expected }
}

fn parse(text: &str) -> Lockfile {
    let ws = ScratchDir::new("perf");
    let path = ws.write("package-lock.json", text);
    Lockfile::parse_file(ws.path(), LockfileKind::Npm, &path).expect("the generated lockfile parses")
}

#[test]
fn a_two_thousand_package_lockfile_slices_every_project_right() {
    let generated = generate();
    let lock = parse(&generated.text);
    for (k, expected) in generated.expected.iter().enumerate() {
        let slice: BTreeSet<String> = lock.slice(&format!("packages/p{k}")).iter().map(ToString::to_string).collect();
        assert_eq!(&slice, expected, "packages/p{k}");
    }
    let in_lockfile: HashMap<&str, ()> = lock.projects().map(|p| (p, ())).collect();
    assert_eq!(in_lockfile.len(), PROJECTS + 1);
}

/// Prints the fastest and the median of ten runs of each step: reading and
/// parsing the lockfile, and digesting every project's slice.
#[test]
#[ignore = "a measurement, run by hand in release mode"]
fn measure_parse_and_slice_time() {
    let generated = generate();
    let ws = ScratchDir::new("perf-measure");
    let path = ws.write("package-lock.json", &generated.text);
    let dirs: Vec<String> = (0..PROJECTS).map(|k| format!("packages/p{k}")).collect();
    let (mut parse, mut slice) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        let start = std::time::Instant::now();
        let lock = Lockfile::parse_file(ws.path(), LockfileKind::Npm, &path).expect("parses");
        parse.push(start.elapsed());
        let start = std::time::Instant::now();
        for dir in &dirs {
            std::hint::black_box(lock.slice_digest(dir));
        }
        slice.push(start.elapsed());
    }
    parse.sort();
    slice.sort();
    let deps: usize = generated.expected.iter().map(BTreeSet::len).sum();
    println!(
        "{} bytes, {PACKAGES} packages: read and parse {:?} (median {:?}); \
         {PROJECTS} slice digests of {} deps on average {:?} (median {:?})",
        generated.text.len(),
        parse[0],
        parse[5],
        deps / PROJECTS,
        slice[0],
        slice[5],
    );
}
