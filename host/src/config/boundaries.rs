//! `[[workspace.boundaries]]`: rules on which projects a project may
//! depend on, by their tags, as Nx's `depConstraints` and moon's
//! `constraints` have them.
//!
//! A rule applies to the projects that match every pattern of its `from`
//! (every project when it has none). Each direct dependency of such a
//! project (declared in `depends-on` or a workspace package in
//! `package.json`) must match one of the rule's `allow` patterns, when it
//! has an `allow`, and none of its `deny` patterns. Every rule that applies
//! is checked. A pattern is a tag glob: a project matches it when one of
//! its tags does; `!GLOB` matches a project none of whose tags does.
//!
//! The rules are checked when the workspace loads (`config::resolve`
//! refuses the first violation) and by `vx lock --check`, which lists them
//! all. This file parses the rules and finds the violations; it knows no
//! files but the root `vx.toml` the rules are read from.

use std::fmt;

use globset::{Glob, GlobMatcher};
use toml::Spanned;

use super::diag::Source;
use super::error::Diagnostic;
use super::raw::{RawBoundary, RawFile};

/// One tag pattern: `GLOB` or `!GLOB`.
#[derive(Debug, Clone)]
pub(crate) struct TagPattern {
    text: String,
    negated: bool,
    glob: GlobMatcher,
}

impl TagPattern {
    /// Parses `[!]GLOB`; the error says what is wrong with it.
    pub(super) fn parse(text: &str) -> Result<TagPattern, String> {
        let (negated, glob) = match text.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        if glob.is_empty() || glob.starts_with('!') {
            return Err(format!("`{text}` is not a tag pattern"));
        }
        let glob = Glob::new(glob).map_err(|e| format!("invalid tag glob `{text}`: {}", e.kind()))?.compile_matcher();
        Ok(TagPattern { text: text.to_string(), negated, glob })
    }

    /// Whether a project with `tags` matches.
    pub(crate) fn matches(&self, tags: &[String]) -> bool {
        tags.iter().any(|t| self.glob.is_match(t)) != self.negated
    }

    /// The tags of `tags` that make a positive pattern match.
    fn matching<'a>(&self, tags: &'a [String]) -> Vec<&'a str> {
        if self.negated {
            return Vec::new();
        }
        tags.iter().filter(|t| self.glob.is_match(t)).map(String::as_str).collect()
    }
}

impl fmt::Display for TagPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One `[[workspace.boundaries]]` table, checked.
#[derive(Debug, Clone)]
pub(crate) struct BoundaryRule {
    /// All must match for the rule to apply; empty: every project.
    pub from: Vec<TagPattern>,
    /// `None`: any dependency not denied.
    pub allow: Option<Vec<TagPattern>>,
    pub deny: Vec<TagPattern>,
    /// Where the rule is written (`vx.toml:12:1`), for messages.
    pub at: String,
}

/// Why a rule refuses a dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// It matches this `deny` pattern.
    Denied(usize),
    /// It matches none of the `allow` patterns.
    NotAllowed,
}

impl BoundaryRule {
    /// Whether the rule is about a project with `tags`.
    pub(crate) fn applies_to(&self, tags: &[String]) -> bool {
        self.from.iter().all(|p| p.matches(tags))
    }

    /// Why a project this rule applies to may not depend on one with
    /// `tags`, or `None` when it may.
    pub(crate) fn refuses(&self, tags: &[String]) -> Option<Refusal> {
        if let Some(i) = self.deny.iter().position(|p| p.matches(tags)) {
            return Some(Refusal::Denied(i));
        }
        match &self.allow {
            Some(allow) if !allow.iter().any(|p| p.matches(tags)) => Some(Refusal::NotAllowed),
            _ => None,
        }
    }
}

/// The rules of the root `vx.toml`, each pattern checked.
pub(crate) fn boundary_rules(file: Option<&(Source, RawFile)>) -> Result<Vec<BoundaryRule>, Diagnostic> {
    let Some((source, raw)) = file else { return Ok(Vec::new()) };
    let rules = raw.workspace.as_ref().and_then(|w| w.boundaries.as_ref());
    rules.into_iter().flatten().map(|rule| boundary_rule(source, rule)).collect()
}

fn boundary_rule(source: &Source, rule: &Spanned<RawBoundary>) -> Result<BoundaryRule, Diagnostic> {
    let at = source.locate(Some(rule.span()));
    let raw = rule.get_ref();
    if raw.allow.is_none() && raw.deny.is_none() {
        return Err(source
            .error(Some(rule.span()), "a [[workspace.boundaries]] rule needs `allow` or `deny`")
            .with_hint("add `allow = [\"scope:shared\"]` (the only tags its projects may depend on) or `deny = [\"type:app\"]` (tags they may not depend on)"));
    }
    let list = |list: &Option<Vec<Spanned<String>>>| -> Result<Vec<TagPattern>, Diagnostic> {
        list.iter().flatten().map(|p| pattern(source, p.get_ref(), p.span())).collect()
    };
    Ok(BoundaryRule {
        from: from_patterns(source, raw.from.as_ref())?,
        allow: raw.allow.as_ref().map(|_| list(&raw.allow)).transpose()?,
        deny: list(&raw.deny)?,
        at,
    })
}

/// `from`: a pattern, or a non-empty array of them.
fn from_patterns(source: &Source, from: Option<&Spanned<toml::Value>>) -> Result<Vec<TagPattern>, Diagnostic> {
    let Some(from) = from else { return Ok(Vec::new()) };
    let span = from.span();
    let wrong = || {
        source
            .error(Some(span.clone()), "`from` is a tag pattern or a non-empty array of them")
            .with_hint("write it like `from = \"scope:app\"`, or `from = [\"layer:app\", \"stack:web\"]` for projects with both tags; leave it out for every project")
    };
    match from.get_ref() {
        toml::Value::String(text) => Ok(vec![pattern(source, text, span.clone())?]),
        toml::Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(|item| item.as_str().ok_or_else(wrong).and_then(|text| pattern(source, text, span.clone())))
            .collect(),
        _ => Err(wrong()),
    }
}

fn pattern(source: &Source, text: &str, span: std::ops::Range<usize>) -> Result<TagPattern, Diagnostic> {
    TagPattern::parse(text).map_err(|why| {
        source.error(Some(span), why).with_hint(
            "a tag pattern is a glob of tags (`scope:app`, `scope:*`), with `!` before it for projects without such a tag",
        )
    })
}

/// A project as the rules see it: its tags and its direct dependencies.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node<'a> {
    pub tags: &'a [String],
    pub deps: &'a [usize],
}

/// One dependency one rule refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Violation {
    pub project: usize,
    pub dep: usize,
    pub rule: usize,
    pub why: Refusal,
}

/// Every violation, by project, then dependency, then rule (the order of
/// the rules in the file).
pub(crate) fn violations(rules: &[BoundaryRule], nodes: &[Node<'_>]) -> Vec<Violation> {
    let mut out = Vec::new();
    for (project, node) in nodes.iter().enumerate() {
        let applying: Vec<usize> = (0..rules.len()).filter(|&r| rules[r].applies_to(node.tags)).collect();
        if applying.is_empty() {
            continue;
        }
        for &dep in node.deps {
            for &rule in &applying {
                if let Some(why) = rules[rule].refuses(nodes[dep].tags) {
                    out.push(Violation { project, dep, rule, why });
                }
            }
        }
    }
    out
}

/// The violation as a message: `web (scope:app) may not depend on admin
/// (scope:admin): the rule at vx.toml:12:1 allows only scope:shared`.
pub(crate) fn describe(v: &Violation, rules: &[BoundaryRule], names: &[&str], nodes: &[Node<'_>]) -> String {
    let rule = &rules[v.rule];
    let source_tags: Vec<&str> = {
        let shown: Vec<&str> = rule.from.iter().flat_map(|p| p.matching(nodes[v.project].tags)).collect();
        if shown.is_empty() { nodes[v.project].tags.iter().map(String::as_str).collect() } else { shown }
    };
    let dep_tags = nodes[v.dep].tags;
    let (dep_shown, reason): (Vec<&str>, String) = match v.why {
        Refusal::Denied(i) => {
            let shown = rule.deny[i].matching(dep_tags);
            (shown, format!("denies {}", rule.deny[i]))
        }
        Refusal::NotAllowed => {
            let allow = rule.allow.as_deref().unwrap_or_default();
            let reason = if allow.is_empty() {
                "allows no dependencies".to_string()
            } else {
                format!("allows only {}", allow.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))
            };
            (dep_tags.iter().map(String::as_str).collect(), reason)
        }
    };
    let dep_shown = if dep_shown.is_empty() { dep_tags.iter().map(String::as_str).collect() } else { dep_shown };
    format!(
        "{} ({}) may not depend on {} ({}): the rule at {} {reason}",
        names[v.project],
        tag_list(&source_tags),
        names[v.dep],
        tag_list(&dep_shown),
        rule.at,
    )
}

fn tag_list(tags: &[&str]) -> String {
    if tags.is_empty() { "no tags".to_string() } else { crate::error::one_line(&tags.join(", ")) }
}

/// What mends a violation, said once per error.
pub(crate) const VIOLATION_HINT: &str =
    "remove the dependency, or change the projects' tags or the rule ([[workspace.boundaries]] in docs/config.md)";

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(list: &[&str]) -> Vec<String> {
        list.iter().map(|t| t.to_string()).collect()
    }

    fn load(text: &str) -> Result<Vec<BoundaryRule>, Diagnostic> {
        let source = Source::new("vx.toml", text.to_string());
        let raw: RawFile = toml::from_str(text).map_err(|e| super::super::diag::toml_error(&source, &e))?;
        boundary_rules(Some(&(source, raw)))
    }

    #[test]
    fn patterns_match_by_any_tag_and_negate() {
        let p = TagPattern::parse("scope:*").unwrap();
        assert!(p.matches(&tags(&["type:lib", "scope:app"])));
        assert!(!p.matches(&tags(&["type:lib"])));
        assert!(!p.matches(&[]));
        let not = TagPattern::parse("!scope:*").unwrap();
        assert!(not.matches(&[]));
        assert!(!not.matches(&tags(&["scope:app"])));
        assert!(TagPattern::parse("!").is_err());
        assert!(TagPattern::parse("!!a").is_err());
        assert!(TagPattern::parse("a[").is_err());
    }

    #[test]
    fn rules_are_located_at_their_table() {
        let rules = load(
            "[workspace]\nprojects = [\"p\"]\n\n[[workspace.boundaries]]\nfrom = \"scope:app\"\nallow = [\"scope:shared\"]\n\n[[workspace.boundaries]]\ndeny = [\"type:app\"]\n",
        )
        .unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0].at, "vx.toml:4:1");
        assert_eq!(rules[1].at, "vx.toml:8:1");
        assert!(rules[1].from.is_empty() && rules[1].allow.is_none());
    }

    #[test]
    fn bad_rules_are_located_errors() {
        let err = load("[workspace]\n[[workspace.boundaries]]\nfrom = \"a\"\n").unwrap_err();
        assert_eq!(err.location, "vx.toml:2:1");
        assert!(err.message.contains("needs `allow` or `deny`"), "{err}");
        let err = load("[workspace]\n[[workspace.boundaries]]\ndeny = [\"ok\", \"a[\"]\n").unwrap_err();
        assert_eq!(err.location, "vx.toml:3:15");
        assert!(err.message.contains("invalid tag glob `a[`"), "{err}");
        let err = load("[workspace]\n[[workspace.boundaries]]\nfrom = []\ndeny = [\"x\"]\n").unwrap_err();
        assert_eq!(err.location, "vx.toml:3:8");
        let err = load("[workspace]\n[[workspace.boundaries]]\nform = \"a\"\ndeny = [\"x\"]\n").unwrap_err();
        assert!(err.message.contains("unknown key `form`; did you mean `from`?"), "{err}");
    }

    #[test]
    fn every_applying_rule_is_checked_and_deny_beats_allow() {
        let rules =
            load("[workspace]\n[[workspace.boundaries]]\nfrom = \"scope:app\"\nallow = [\"scope:*\"]\ndeny = [\"scope:admin\"]\n\n[[workspace.boundaries]]\ndeny = [\"type:app\"]\n")
                .unwrap();
        let (web, admin, ui, tool) =
            (tags(&["scope:app", "type:app"]), tags(&["scope:admin", "type:app"]), tags(&["scope:shared"]), tags(&[]));
        let nodes = [
            Node { tags: &web, deps: &[1, 2, 3] },
            Node { tags: &admin, deps: &[] },
            Node { tags: &ui, deps: &[0] },
            Node { tags: &tool, deps: &[] },
        ];
        let found: Vec<(usize, usize, usize, Refusal)> =
            violations(&rules, &nodes).iter().map(|v| (v.project, v.dep, v.rule, v.why)).collect();
        assert_eq!(
            found,
            vec![
                (0, 1, 0, Refusal::Denied(0)),
                (0, 1, 1, Refusal::Denied(0)),
                (0, 3, 0, Refusal::NotAllowed),
                (2, 0, 1, Refusal::Denied(0)),
            ]
        );
        let names = ["web", "admin", "ui", "tool"];
        let v = violations(&rules, &nodes);
        assert_eq!(
            describe(&v[0], &rules, &names, &nodes),
            "web (scope:app) may not depend on admin (scope:admin): the rule at vx.toml:2:1 denies scope:admin"
        );
        assert_eq!(
            describe(&v[2], &rules, &names, &nodes),
            "web (scope:app) may not depend on tool (no tags): the rule at vx.toml:2:1 allows only scope:*"
        );
        assert_eq!(
            describe(&v[3], &rules, &names, &nodes),
            "ui (scope:shared) may not depend on web (type:app): the rule at vx.toml:7:1 denies type:app"
        );
    }
}
