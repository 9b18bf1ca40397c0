//! What git says, for the rooms that must not ask it themselves: the
//! files changed since a revision and a file's text at one (`--affected`
//! and `[REV]` filters; the graph is handed the answers), and the branch
//! and commit a workspace is at, read from git's files (history).
//!
//! | file | owns |
//! |------|------|
//! | `changes` | the merge base with a revision, the files changed since it, a file's text at it; git run through the guard |
//! | `head` | the branch and commit HEAD names, without a `git` process |

mod changes;
mod head;

pub(crate) use changes::{base_label, changed_files, changes, text_at};
pub(crate) use head::read_head;
