//! The translation loader: any text is a file or an error naming a line, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_runtime::i18n::translations::parse;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match parse("fuzz.yaml", Some("mcp"), "en", text) {
        Ok(file) => assert_eq!(file.lang, "en"),
        Err(e) => assert!(e.to_string().starts_with("fuzz.yaml:")),
    }
});
