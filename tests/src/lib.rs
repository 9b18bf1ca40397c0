//! Helper processes for the integration tests (see `src/bin/`): small
//! programs that fork, ignore signals or leave their session, so the guard
//! can be tested against real processes.
