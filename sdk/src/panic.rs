//! A panic hook that sends the panic text to vx's log before the trap, so
//! the user sees "panicked at src/lib.rs:12: index out of bounds" instead
//! of an opaque `unreachable` trap. The export macros install it on every
//! call; installing is idempotent.

use std::any::Any;
use std::sync::Once;

use crate::log::{Level, log};

pub fn install() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        // The default hook is dropped on purpose: it would print the same
        // text to stderr, which the host forwards to the same log.
        std::panic::set_hook(Box::new(|info| {
            let location = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
            let message = format!("panicked at {location}: {}", payload_text(info.payload()));
            log(Level::Error, &message, &[("panic", "true"), ("location", &location)]);
        }));
    });
}

/// The text of a panic payload: `panic!` produces `&str` or `String`.
fn payload_text(payload: &(dyn Any + Send)) -> &str {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text
    } else {
        "Box<dyn Any>"
    }
}

#[cfg(test)]
mod tests {
    use super::payload_text;

    #[test]
    fn reads_both_payload_kinds() {
        let literal = std::panic::catch_unwind(|| panic!("plain")).unwrap_err();
        assert_eq!(payload_text(literal.as_ref()), "plain");
        let formatted = std::panic::catch_unwind(|| panic!("n = {}", 3)).unwrap_err();
        assert_eq!(payload_text(formatted.as_ref()), "n = 3");
        let other = std::panic::catch_unwind(|| std::panic::panic_any(7u8)).unwrap_err();
        assert_eq!(payload_text(other.as_ref()), "Box<dyn Any>");
    }
}
