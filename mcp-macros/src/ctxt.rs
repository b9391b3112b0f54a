//! Error accumulation, as serde_derive's `Ctxt`: every problem is reported, each at its span,
//! and a `Ctxt` whose errors were never looked at ([`Ctxt::check`]) panics when dropped, so no
//! code path can lose them.

use std::cell::RefCell;
use std::fmt::Display;
use std::thread;

use quote::ToTokens;

pub struct Ctxt {
    /// `None` once [`Ctxt::check`] took them.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Records an error at the span of `tokens`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Records a `syn` error.
    pub fn syn_error(&self, err: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check")
            .push(err);
    }

    /// Consumes the context: `Err` with every recorded error (in the order they were recorded)
    /// if there was any.
    pub fn check(self) -> syn::Result<()> {
        let mut errors = self
            .errors
            .borrow_mut()
            .take()
            .expect("Ctxt checked twice")
            .into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for rest in errors {
            combined.combine(rest);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors");
        }
    }
}

#[cfg(test)]
mod tests {
    use proc_macro2::Span;

    use super::*;

    #[test]
    fn check_returns_every_error_in_order() {
        let cx = Ctxt::new();
        cx.syn_error(syn::Error::new(Span::call_site(), "first"));
        cx.syn_error(syn::Error::new(Span::call_site(), "second"));
        let err = cx.check().unwrap_err();
        let messages: Vec<String> = err.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(messages, ["first", "second"]);
    }

    #[test]
    fn check_without_errors_is_ok() {
        assert!(Ctxt::new().check().is_ok());
    }

    #[test]
    #[should_panic(expected = "forgot to check for errors")]
    fn dropping_unchecked_panics() {
        let _cx = Ctxt::new();
    }
}
