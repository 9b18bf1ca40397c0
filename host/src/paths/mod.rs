//! Path helpers shared by modules that must not depend on each other: the
//! cache restores archives, the REAPI client writes downloaded outputs and
//! `vx worker` materialises input roots, and all three refuse the same
//! paths for the same reasons.
//!
//! | file | owns |
//! |------|------|
//! | `lexical` | resolving `.` and `..` without touching the filesystem |
//! | `inside` | paths and links that must stay inside a directory, and why one was refused |
//! | `regular` | opening workspace files only when they are regular files, without blocking; bounded reads |
//! | `git` | where a repository's git directory is (`.git`, or the one a `.git` file names) |
//! | `atomic` | writing a file whole or not at all (a temporary file renamed into place) |
//! | `contained` | writing beneath a directory through handles that never follow a link (the kernel's check, after the lexical one) |

mod atomic;
mod contained;
mod git;
mod inside;
mod lexical;
mod regular;

pub(crate) use atomic::{unique_suffix, write_atomic};
pub(crate) use contained::Contained;
pub(crate) use git::git_dir_at;
pub(crate) use inside::{PathError, check_link, check_no_link_on_the_way, check_relative};
pub(crate) use lexical::normalize_lexically;
pub(crate) use regular::{CONFIG_LIMIT, STATE_LIMIT, open_regular, read_config, read_regular, read_regular_string};
