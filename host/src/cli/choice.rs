//! Flags whose value is one of a few words (`--format text|json`,
//! `--continue`, `--output-logs`, `--log-order`, `--env-mode`, …), parsed by clap into
//! an enum ([`ValueEnum`]) and refused in vx's words rather than clap's:
//! `--log-order expects stream or grouped, got `random`; see `vx run --help``.
//!
//! The spellings of the run's own enums (`ContinueMode`, `OutputLogs`,
//! `LogOrder`) are the command line's business, so their `ValueEnum`
//! impls live here, not beside the types. Possible values are not listed
//! in `--help`: each flag's doc says what it takes.

use std::ffi::OsStr;
use std::marker::PhantomData;

use clap::ValueEnum;
use clap::builder::{PossibleValue, TypedValueParser};

use crate::config::EnvMode;
use crate::error::Error;
use crate::graph::ContinueMode;
use crate::report::{LogOrder, LogPrefix, OutputLogs};
use crate::run::Download;

/// A flag value that is one of a few words.
pub(crate) trait Choice: ValueEnum + Clone + Send + Sync + 'static {
    /// What the flag accepts, as the refusal says it: `text or json`.
    const WANTS: &'static str;

    /// The refusal of `got` as the value of `flag` in `command` (`vx run`).
    fn refuse(flag: &str, got: &str, command: &str) -> Error {
        Error::usage(format!("{flag} expects {}, got `{got}`", Self::WANTS))
            .with_hint(format!("see `{command} --help`"))
    }
}

/// clap's value parser for a [`Choice`]: `value_parser = choice::<Format>()`.
pub(crate) fn choice<E: Choice>() -> ChoiceParser<E> {
    ChoiceParser(PhantomData)
}

#[derive(Debug)]
pub(crate) struct ChoiceParser<E>(PhantomData<E>);

// Derived `Clone` would ask `E: Clone` of the marker; it is always cloneable.
impl<E> Clone for ChoiceParser<E> {
    fn clone(&self) -> Self {
        ChoiceParser(PhantomData)
    }
}

impl<E: Choice> TypedValueParser for ChoiceParser<E> {
    type Value = E;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &OsStr) -> Result<E, clap::Error> {
        let flag = match arg {
            Some(a) => a.get_long().map_or_else(|| a.get_id().to_string(), |long| format!("--{long}")),
            None => "the value".to_string(),
        };
        let command = command_path(cmd);
        // A closure parser keeps its error as the clap error's source, which
        // `args::clap_error` hands to the user as it is.
        let parse = move |got: &str| E::from_str(got, false).map_err(|_| E::refuse(&flag, got, &command));
        parse.parse_ref(cmd, arg, value)
    }
}

/// `vx run`, `vx cache stats`: the subcommand's path as the user types it,
/// whatever the binary is called.
fn command_path(cmd: &clap::Command) -> String {
    let bin = cmd.get_bin_name().unwrap_or(cmd.get_name());
    format!("vx{}", bin.find(' ').map_or("", |i| &bin[i..]))
}

/// `--format` of `vx show`, `vx why`, `vx history` and `vx cache stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    Text,
    Json,
}

impl Choice for Format {
    const WANTS: &'static str = "text or json";
}

/// `vx run --verify=KIND`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Verify {
    /// Run the requested tasks twice and compare their outputs.
    Determinism,
    /// Run the requested tasks traced and report what they touched
    /// outside their declarations.
    Inputs,
}

impl Choice for Verify {
    const WANTS: &'static str = "inputs or determinism";
}

/// `vx run --ui=KIND`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Ui {
    /// The terminal UI: a task list, the selected task's log, keys.
    Tui,
    /// Prefixed lines as tasks write them.
    Stream,
}

impl Choice for Ui {
    const WANTS: &'static str = "tui or stream";
}

impl Choice for EnvMode {
    const WANTS: &'static str = "strict or loose";
}

impl ValueEnum for EnvMode {
    fn value_variants<'a>() -> &'a [Self] {
        &[EnvMode::Strict, EnvMode::Loose]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()))
    }
}

impl Choice for ContinueMode {
    const WANTS: &'static str = "one of never, dependents-ok, always";
}

impl ValueEnum for ContinueMode {
    fn value_variants<'a>() -> &'a [Self] {
        &[ContinueMode::Never, ContinueMode::DependentsOk, ContinueMode::Always]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            ContinueMode::Never => PossibleValue::new("never"),
            // Turborepo 2.x spells the same mode `dependencies-successful`.
            ContinueMode::DependentsOk => PossibleValue::new("dependents-ok").alias("dependencies-successful"),
            // `--continue=` (nothing after the `=`) is the bare flag.
            ContinueMode::Always => PossibleValue::new("always").alias(""),
        })
    }
}

impl Choice for OutputLogs {
    const WANTS: &'static str = "one of full, new-only, errors-only, hash-only, none";
}

impl ValueEnum for OutputLogs {
    fn value_variants<'a>() -> &'a [Self] {
        &[OutputLogs::Full, OutputLogs::NewOnly, OutputLogs::ErrorsOnly, OutputLogs::HashOnly, OutputLogs::None]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(match self {
            OutputLogs::Full => "full",
            OutputLogs::NewOnly => "new-only",
            OutputLogs::ErrorsOnly => "errors-only",
            OutputLogs::HashOnly => "hash-only",
            OutputLogs::None => "none",
        }))
    }
}

impl Choice for Download {
    const WANTS: &'static str = "one of all, needed, none";
}

impl ValueEnum for Download {
    fn value_variants<'a>() -> &'a [Self] {
        &[Download::All, Download::Needed, Download::None]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()))
    }
}

impl Choice for LogOrder {
    const WANTS: &'static str = "stream or grouped";
}

impl ValueEnum for LogOrder {
    fn value_variants<'a>() -> &'a [Self] {
        &[LogOrder::Stream, LogOrder::Grouped]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            // Turborepo's `auto` streams, as vx's default does.
            LogOrder::Stream => PossibleValue::new("stream").alias("auto"),
            LogOrder::Grouped => PossibleValue::new("grouped"),
        })
    }
}

impl Choice for LogPrefix {
    const WANTS: &'static str = "auto, task or none";
}

impl ValueEnum for LogPrefix {
    fn value_variants<'a>() -> &'a [Self] {
        &[LogPrefix::Auto, LogPrefix::Task, LogPrefix::None]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(match self {
            LogPrefix::Auto => "auto",
            LogPrefix::Task => "task",
            LogPrefix::None => "none",
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_parse_to_their_variants() {
        assert_eq!(ContinueMode::from_str("dependents-ok", false), Ok(ContinueMode::DependentsOk));
        assert_eq!(ContinueMode::from_str("dependencies-successful", false), Ok(ContinueMode::DependentsOk));
        assert_eq!(ContinueMode::from_str("", false), Ok(ContinueMode::Always));
        assert_eq!(OutputLogs::from_str("hash-only", false), Ok(OutputLogs::HashOnly));
        assert_eq!(LogOrder::from_str("grouped", false), Ok(LogOrder::Grouped));
        assert_eq!(Format::from_str("json", false), Ok(Format::Json));
        assert!(Format::from_str("JSON", false).is_err(), "spellings are exact");
    }

    #[test]
    fn refusals_name_the_flag_the_value_and_the_help() {
        let e = LogOrder::refuse("--log-order", "random", "vx run");
        assert_eq!(e.to_string(), "--log-order expects stream or grouped, got `random`; see `vx run --help`");
    }
}
