//! Accept-Language negotiation: never panics, only ever picks an available language.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_runtime::i18n::negotiate;

fuzz_target!(|data: &[u8]| {
    let Ok(header) = std::str::from_utf8(data) else { return };
    let langs = ["en", "uk", "pt-br"];
    if let Some(l) = negotiate(Some(header), &langs, "en") {
        assert!(langs.contains(&l));
    }
});
