//! Root-anchored globs: an input that starts with `/` is relative to the
//! workspace root, not the project (moon's convention), so a project can
//! take `/tsconfig.base.json` or `/packages/shared/schema/**`. `!/…` is
//! a root-anchored exclusion. Everything else stays project-relative.
//!
//! Keys, `--affected`, `vx watch` and `vx why` all decide what a task's
//! inputs are through [`InputGlobs`], so they cannot disagree.

use super::glob::{GlobError, GlobFilter};

/// A task's `inputs`, split into the project-relative and the
/// root-anchored patterns.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct InputGlobs {
    /// `None`: every file of the project (no `inputs` declared). `Some`
    /// and empty: none (every declared input is root-anchored).
    pub project: Option<Vec<String>>,
    /// Workspace-relative patterns (the leading `/` taken off; `!` kept).
    pub anchored: Vec<String>,
}

/// Whether a pattern is root-anchored (`/x` or `!/x`).
pub(crate) fn is_anchored(pattern: &str) -> bool {
    pattern.trim_start_matches('!').starts_with('/')
}

impl InputGlobs {
    pub(crate) fn split(inputs: Option<&[String]>) -> InputGlobs {
        let Some(inputs) = inputs else { return InputGlobs { project: None, anchored: Vec::new() } };
        let (anchored, project): (Vec<&String>, Vec<&String>) = inputs.iter().partition(|p| is_anchored(p));
        let anchored = anchored
            .into_iter()
            .map(|p| match p.strip_prefix('!') {
                Some(neg) => format!("!{}", neg.trim_start_matches('/')),
                None => p.trim_start_matches('/').to_string(),
            })
            .collect();
        InputGlobs { project: Some(project.into_iter().cloned().collect()), anchored }
    }

    /// Whether any pattern is root-anchored.
    pub(crate) fn has_anchored(&self) -> bool {
        self.anchored.iter().any(|p| !p.starts_with('!'))
    }
}

/// A task's `outputs`, split likewise. Root-anchored outputs are written
/// where they lie in the workspace (`/dist/shared/**`), archived under
/// the cache's `ROOT_MEMBERS` and restored there.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct OutputGlobs {
    pub project: Vec<String>,
    /// Workspace-relative patterns (the leading `/` taken off; `!` kept).
    pub anchored: Vec<String>,
}

impl OutputGlobs {
    pub(crate) fn split(outputs: &[String]) -> OutputGlobs {
        let globs = InputGlobs::split(Some(outputs));
        OutputGlobs { project: globs.project.unwrap_or_default(), anchored: globs.anchored }
    }

    /// Whether any pattern is root-anchored.
    pub(crate) fn has_anchored(&self) -> bool {
        self.anchored.iter().any(|p| !p.starts_with('!'))
    }
}

/// Compiled [`InputGlobs`] of one task, its outputs excluded, for asking
/// whether a changed file is one of its inputs.
#[derive(Debug)]
pub(crate) struct InputMatcher {
    project: GlobFilter,
    anchored: Option<GlobFilter>,
    /// Root-anchored outputs, which are never inputs either.
    anchored_outputs: Option<GlobFilter>,
}

impl InputMatcher {
    /// `outputs` (project-relative or root-anchored) are never inputs.
    pub(crate) fn new(inputs: Option<&[String]>, outputs: &[String]) -> Result<InputMatcher, GlobError> {
        let globs = InputGlobs::split(inputs);
        let outputs = OutputGlobs::split(outputs);
        let project = GlobFilter::new(globs.project.as_deref(), &outputs.project)?;
        let anchored = globs.has_anchored().then(|| GlobFilter::new(Some(&globs.anchored), &[])).transpose()?;
        let anchored_outputs =
            outputs.has_anchored().then(|| GlobFilter::new(Some(&outputs.anchored), &[])).transpose()?;
        Ok(InputMatcher { project, anchored, anchored_outputs })
    }

    /// Whether only files of the task's own project can be inputs (no
    /// root-anchored input pattern): `--affected` then looks at no other
    /// project's changes.
    pub(crate) fn project_only(&self) -> bool {
        self.anchored.is_none()
    }

    /// Whether a file is an input: `in_project` is its path relative to
    /// the task's project when the project owns it (the deepest project
    /// containing it), `in_root` its path relative to the workspace root.
    pub(crate) fn matches(&self, in_project: Option<&str>, in_root: &str) -> bool {
        if self.anchored_outputs.as_ref().is_some_and(|o| o.matches(in_root)) {
            return false;
        }
        in_project.is_some_and(|r| self.project.matches(r))
            || self.anchored.as_ref().is_some_and(|a| a.matches(in_root))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn splits_anchored_from_project_patterns() {
        let g = InputGlobs::split(Some(&strings(&["src/**", "/tsconfig.base.json", "!/shared/**/*.md", "!*.md"])));
        assert_eq!(g.project, Some(strings(&["src/**", "!*.md"])));
        assert_eq!(g.anchored, strings(&["tsconfig.base.json", "!shared/**/*.md"]));
        assert!(g.has_anchored());
        let only = InputGlobs::split(Some(&strings(&["/a.json"])));
        assert_eq!(only.project, Some(vec![]), "no project file is an input");
        assert_eq!(InputGlobs::split(None).project, None);
    }

    #[test]
    fn a_root_file_matches_only_through_an_anchored_pattern() {
        let m = InputMatcher::new(Some(&strings(&["src/**", "/tsconfig.base.json"])), &[]).unwrap();
        assert!(m.matches(None, "tsconfig.base.json"));
        assert!(m.matches(Some("src/a.ts"), "packages/web/src/a.ts"));
        assert!(!m.matches(Some("README.md"), "packages/web/README.md"));
        assert!(!m.matches(None, "tsconfig.json"));
        let all = InputMatcher::new(None, &strings(&["dist/**"])).unwrap();
        assert!(all.matches(Some("README.md"), "packages/web/README.md"));
        assert!(!all.matches(Some("dist/a.js"), "packages/web/dist/a.js"));
        assert!(!all.matches(None, "tsconfig.base.json"));
    }

    #[test]
    fn a_root_anchored_output_is_never_an_input() {
        let outputs = strings(&["dist/**", "/gen/web/**"]);
        let m = InputMatcher::new(Some(&strings(&["src/**", "/gen/**"])), &outputs).unwrap();
        assert!(m.matches(None, "gen/shared/types.ts"));
        assert!(!m.matches(None, "gen/web/api.ts"), "written by the task itself");
        let split = OutputGlobs::split(&outputs);
        assert_eq!(split.project, strings(&["dist/**"]));
        assert_eq!(split.anchored, strings(&["gen/web/**"]));
    }
}
