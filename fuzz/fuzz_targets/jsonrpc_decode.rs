//! Fuzz target `jsonrpc_decode`: see [`mcpl_fuzz::jsonrpc`] for the input and the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcpl_fuzz::jsonrpc::check(data));
