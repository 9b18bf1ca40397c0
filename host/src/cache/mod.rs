//! The content-hash cache: input hashing, keys, the local store, outputs
//! archive and restore, log replay and history (DESIGN §4).
//!
//! Not built yet: every task runs. The run loop calls into this module at
//! two points, before a task starts (lookup) and after it ends (store), so
//! the cache slots in without the scheduler knowing how it works.
