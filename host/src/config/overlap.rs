//! Whether two lists of globs can match one path: decided exactly, by
//! walking the product of their automata, not guessed from their text.
//!
//! `dist/**/*.js` and `dist/**/*.css` share a prefix and never meet;
//! `dist/**` and `**/*.map` share nothing written and meet in
//! `dist/a.map`. Each list (includes and `!` exclusions) is compiled as
//! vx matches it (globset, `*` crossing `/`) to a regex, each regex to a
//! DFA, and a breadth-first walk over the tuple of their states looks for
//! a path every include list accepts and no exclusion list does. The
//! walk is bounded: past [`MAX_STATES`] it answers "no overlap", so a
//! pathological glob can slow a load by milliseconds, never hang it, and
//! the on-disk protections still hold for what it could not decide.

use std::collections::{HashMap, HashSet, VecDeque};

use regex_automata::dfa::{Automaton, dense};
use regex_automata::util::primitives::StateID;
use regex_automata::util::{start, syntax};
use regex_automata::{Anchored, MatchKind};

/// Product states explored before giving up (answering "no overlap").
const MAX_STATES: usize = 20_000;

/// A compiled glob list: what it includes, minus what it excludes.
#[derive(Debug)]
pub(crate) struct GlobLanguage {
    include: dense::DFA<Vec<u32>>,
    exclude: Option<dense::DFA<Vec<u32>>>,
}

impl GlobLanguage {
    /// Compiles `globs` (`!` marks an exclusion; a leading `./` and a
    /// trailing `/` are dropped, and a literal name also means everything
    /// beneath it, as `GlobFilter` reads them). `None` when a glob does
    /// not compile (the config check reports that elsewhere) or there is
    /// nothing to include.
    pub(crate) fn new<S: AsRef<str>>(globs: &[S]) -> Option<GlobLanguage> {
        let mut include = Vec::new();
        let mut exclude = Vec::new();
        for g in globs {
            let g = g.as_ref();
            match g.strip_prefix('!') {
                Some(neg) => exclude.push(regex_of(neg.trim_start_matches("./"))?),
                None => {
                    let g = g.trim_start_matches("./").trim_end_matches('/');
                    include.push(regex_of(g)?);
                    if !g.contains(['*', '?', '[', '{']) {
                        include.push(regex_of(&format!("{g}/**"))?);
                    }
                }
            }
        }
        if include.is_empty() {
            return None;
        }
        let exclude = if exclude.is_empty() { None } else { Some(dfa(&exclude)?) };
        Some(GlobLanguage { include: dfa(&include)?, exclude })
    }

    /// The language of one literal path and everything beneath it (a
    /// directory).
    pub(crate) fn path_and_below(path: &str) -> Option<GlobLanguage> {
        let path = globset::escape(path);
        Some(GlobLanguage { include: dfa(&[regex_of(&path)?, regex_of(&format!("{path}/**"))?])?, exclude: None })
    }

    /// The language of one literal path alone (a file).
    pub(crate) fn exact(path: &str) -> Option<GlobLanguage> {
        Some(GlobLanguage { include: dfa(&[regex_of(&globset::escape(path))?])?, exclude: None })
    }
}

/// The regex globset matches `glob` with.
fn regex_of(glob: &str) -> Option<String> {
    globset::Glob::new(glob).ok().map(|g| g.regex().to_string())
}

/// One DFA matching any of `patterns`, anchored at both ends.
fn dfa(patterns: &[String]) -> Option<dense::DFA<Vec<u32>>> {
    dense::Builder::new()
        .syntax(syntax::Config::new().unicode(false).utf8(false))
        .configure(dense::Config::new().match_kind(MatchKind::All).start_kind(regex_automata::dfa::StartKind::Anchored))
        .build_many(patterns)
        .ok()
}

/// The shortest path matched by both `a` and `b`, if there is one.
/// Undecided (too many states) counts as none.
pub(crate) fn overlap(a: &GlobLanguage, b: &GlobLanguage) -> Option<String> {
    let autos: [Option<&dense::DFA<Vec<u32>>>; 4] =
        [Some(&a.include), a.exclude.as_ref(), Some(&b.include), b.exclude.as_ref()];
    let cfg = start::Config::new().anchored(Anchored::Yes);
    let mut first = [StateID::ZERO; 4];
    for (slot, auto) in first.iter_mut().zip(autos) {
        if let Some(d) = auto {
            *slot = d.start_state(&cfg).ok()?;
        }
    }
    // One representative byte per combination of the automata's byte
    // classes: bytes in the same class of each move every automaton alike.
    let mut reps = Vec::new();
    let mut seen_classes = HashSet::new();
    for byte in 0..=255u8 {
        let classes: Vec<u8> = autos.iter().map(|d| d.map_or(0, |d| d.byte_classes().get(byte))).collect();
        if seen_classes.insert(classes) {
            reps.push(byte);
        }
    }
    let accepts = |state: &[StateID; 4]| {
        let eoi = |i: usize| autos[i].is_some_and(|d| d.is_match_state(d.next_eoi_state(state[i])));
        eoi(0) && !eoi(1) && eoi(2) && !eoi(3)
    };
    // Each state reached, with the state and byte it was first reached
    // from: the path back is the shortest shared path.
    let mut seen: HashMap<[StateID; 4], Option<([StateID; 4], u8)>> = HashMap::from([(first, None)]);
    let mut queue = VecDeque::from([first]);
    while let Some(state) = queue.pop_front() {
        if accepts(&state) {
            let mut bytes = Vec::new();
            let mut at = state;
            while let Some(Some((from, byte))) = seen.get(&at) {
                bytes.push(*byte);
                at = *from;
            }
            bytes.reverse();
            return Some(String::from_utf8_lossy(&bytes).into_owned());
        }
        for &byte in &reps {
            let mut next = state;
            for (slot, auto) in next.iter_mut().zip(autos) {
                if let Some(d) = auto {
                    *slot = d.next_state(*slot, byte);
                }
            }
            let dead = |i: usize| autos[i].is_some_and(|d| d.is_dead_state(next[i]));
            if dead(0) || dead(2) {
                continue;
            }
            if seen.len() >= MAX_STATES {
                return None;
            }
            if let std::collections::hash_map::Entry::Vacant(slot) = seen.entry(next) {
                slot.insert(Some((state, byte)));
                queue.push_back(next);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meet(a: &[&str], b: &[&str]) -> bool {
        overlap(&GlobLanguage::new(a).expect("a compiles"), &GlobLanguage::new(b).expect("b compiles")).is_some()
    }

    #[test]
    fn globs_that_share_a_path_overlap() {
        assert!(meet(&["dist/**"], &["dist/**"]));
        assert!(meet(&["dist/**"], &["**/*.map"]), "dist/a.map");
        assert!(meet(&["**"], &["vx.toml"]));
        assert!(meet(&["src/**/*.js"], &["src/legacy.js"]));
        assert!(meet(&["dist"], &["dist/a/b.js"]), "a literal directory means everything in it");
        assert!(meet(&["./out/"], &["out/**"]));
        assert!(meet(&["gen/{a,b}/**"], &["gen/b/x.ts"]));
    }

    #[test]
    fn globs_that_cannot_share_a_path_do_not() {
        assert!(!meet(&["dist/**/*.js"], &["dist/**/*.css"]));
        assert!(!meet(&["dist/**"], &["build/**"]));
        assert!(!meet(&["dist/**"], &["vx.toml"]));
        let file = GlobLanguage::exact("vx.toml").expect("compiles");
        let all_but = GlobLanguage::new(&["**", "!vx.toml"]).expect("compiles");
        assert!(overlap(&all_but, &file).is_none(), "an exclusion takes the path out");
        assert!(overlap(&GlobLanguage::new(&["**"]).expect("compiles"), &file).is_some());
        assert!(!meet(&["dist/**", "!dist/b/**"], &["dist/b/**"]));
        assert!(meet(&["dist/**", "!dist/b/**"], &["dist/**/*.js"]), "dist/a.js is still shared");
    }

    #[test]
    fn a_literal_path_and_what_lies_below_it() {
        let below = GlobLanguage::path_and_below("packages/ui").expect("compiles");
        let glob = |g: &str| GlobLanguage::new(&[g]).expect("compiles");
        assert_eq!(overlap(&glob("packages/**"), &below).as_deref(), Some("packages/ui"), "the shortest shared path");
        assert!(overlap(&glob("packages/*/dist/**"), &below).is_some());
        assert!(overlap(&glob("packages/uikit/**"), &below).is_none(), "a sibling with a longer name");
        assert!(overlap(&glob("gen/**"), &below).is_none());
        let odd = GlobLanguage::path_and_below("packages/[x]").expect("meta characters are literal");
        assert!(overlap(&glob("packages/*/a.js"), &odd).is_some());
        assert!(overlap(&glob("packages/x/a.js"), &odd).is_none());
    }

    #[test]
    fn a_glob_that_does_not_compile_is_none() {
        assert!(GlobLanguage::new(&["a/[b"]).is_none());
        assert!(GlobLanguage::new(&["!only/exclusions"]).is_none());
    }
}
