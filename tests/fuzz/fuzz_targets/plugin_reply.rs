#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vx_fuzz::targets::plugin::plugin_reply(data));
