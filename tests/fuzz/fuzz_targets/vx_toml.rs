#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vx_fuzz::targets::config::vx_toml(data));
