//! `public-api-list RUSTDOC_JSON`: every public item of the crate, one a line, sorted: what
//! `cargo public-api` lists, but for the blanket impls every type has (`From<T> for T`,
//! `Any`, ...), which say nothing about this crate.

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: public-api-list RUSTDOC_JSON");
        return ExitCode::from(2);
    };
    let api = match public_api::Builder::from_rustdoc_json(&path)
        .omit_blanket_impls(true)
        .build()
    {
        Ok(api) => api,
        Err(e) => {
            eprintln!("public-api-list: {}: {e}", path.to_string_lossy());
            return ExitCode::FAILURE;
        }
    };
    print!("{api}");
    ExitCode::SUCCESS
}
