//! `vx run`'s flag combinations, refused before any work: each is a usage
//! error that says which flag to drop or add.

use super::args::parse_tag;
use super::choice::{Format, Verify};
use super::run::{ReportFormat, RunArgs};
use crate::error::{Error, Result};

/// What the checked flags decide besides themselves.
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    /// `--tag KEY=VALUE`s, parsed.
    pub tags: Vec<(String, String)>,
    /// `--dry=json --format turbo`: the plan in Turborepo's schema.
    pub turbo_dry: bool,
    /// The report format `--verify=inputs` takes.
    pub verify_format: Option<Format>,
}

impl RunArgs {
    /// Refuses flags that contradict each other.
    pub(crate) fn check(&self) -> Result<Checked> {
        let tags = self.tag.iter().map(|t| parse_tag(t, "run")).collect::<Result<Vec<_>>>()?;
        let runs_nothing = self.dry.is_some() || self.graph.is_some();
        if self.verbose && self.dry.is_none() {
            return Err(Error::usage("--verbose adds each task's detail to the plan of --dry")
                .with_hint("add --dry: `vx run build --dry --verbose`"));
        }
        if self.verify.is_some() && runs_nothing {
            return Err(Error::usage("--verify runs the tasks, and --dry and --graph run nothing")
                .with_hint("drop one of them"));
        }
        if (self.summarize.is_some() || self.profile.is_some()) && runs_nothing {
            return Err(Error::usage("--summarize and --profile describe a run, and --dry and --graph run nothing")
                .with_hint("drop one of them"));
        }
        if self.framework_inference == Some(true) {
            return Err(Error::usage("vx infers no framework: a task's key holds the variables its `env` names")
                .with_hint("list them in the task's `env` (`NEXT_PUBLIC_*`), or drop --framework-inference"));
        }
        let turbo_dry = self.format == Some(ReportFormat::Turbo);
        if turbo_dry && self.dry != Some(Format::Json) {
            return Err(Error::usage("--format turbo is the schema of --dry=json")
                .with_hint("run `vx run TASK --dry=json --format turbo`"));
        }
        if !turbo_dry && self.format.is_some() && self.verify != Some(Verify::Inputs) {
            return Err(Error::usage("--format sets the report of --verify=inputs")
                .with_hint("add --verify=inputs, or drop --format"));
        }
        let verify_format = match self.format {
            Some(ReportFormat::Json) => Some(Format::Json),
            Some(ReportFormat::Text) => Some(Format::Text),
            _ => None,
        };
        Ok(Checked { tags, turbo_dry, verify_format })
    }
}
