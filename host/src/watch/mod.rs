//! The watch loop (DESIGN §6): file events, debouncing, mapping changes to
//! tasks, re-runs and restarts. Not built yet.
