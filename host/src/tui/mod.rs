//! The terminal UI of `vx run` (`--ui=tui`): a list of tasks with live
//! status and ETAs, the selected task's log in a pane, and keys to move,
//! search, scroll, pin, type into an interactive task and restart a
//! server. It is a subscriber of the run's events in place of the stream
//! output, and it asks the engine for restarts and input through
//! [`Controls`](crate::run::Controls).
//!
//! Threads: events arrive on the engine's threads and only update the
//! `State` under its lock; one thread of the UI's own draws (when
//! something changed, and every quarter second for the running clocks and
//! a resized terminal) and applies the keys a second one reads (`input`). The terminal is in raw mode on the alternate screen
//! while the run lasts; [`Tui::close`] (or dropping the UI) gives it back
//! as it was, and the run's summary is then printed on the normal screen.
//!
//! | file | owns |
//! |------|------|
//! | `app` | [`Tui`]: starting, the drawing thread, closing; whether a run wants it |
//! | `state` | what is shown, updated from events |
//! | `draw` | the layout and widgets |
//! | `input` | reading keys from the terminal |
//! | `keys` | what each key does |
//! | `screen` | raw mode and the alternate screen, and giving them back |

mod app;
mod draw;
mod input;
mod keys;
mod screen;
mod state;

pub(crate) use app::{Tui, wanted};
