#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vx_fuzz::targets::lockfile::lock_npm(data));
