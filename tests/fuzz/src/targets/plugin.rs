//! A plugin's replies as the host checks them: the `info` record every
//! plugin answers on load, and the error values any call may return.
//!
//! Input: NUL-separated `name`, `version`, `min-vx-version` (absent when
//! empty), `config-schema`, the error (its first byte picks the variant),
//! then one request per remaining part.

use crate::assert_one_line;

pub fn plugin_reply(data: &[u8]) {
    let mut parts = data.split(|&b| b == 0).map(|p| String::from_utf8_lossy(p).into_owned());
    let mut next = || parts.next().unwrap_or_default();
    let (name, version, min, schema, error) = (next(), next(), next(), next(), next());
    let requests: Vec<String> = std::iter::from_fn(|| parts.next()).collect();
    let optional = |s: String| (!s.is_empty()).then_some(s);
    if let Err(e) = vx::fuzzing::plugin_info("fuzzed", name, version, optional(min), optional(schema), requests) {
        assert_one_line(&e.to_string());
    }
    let kind = error.bytes().next().unwrap_or(0);
    assert_one_line(&vx::fuzzing::plugin_error("fuzzed", "get", kind, error).to_string());
}
