//! Error accumulation, as serde_derive's `Ctxt`: every problem is reported, each at its span.

use std::cell::RefCell;

use proc_macro2::TokenStream;
use quote::ToTokens;

#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records an error at the span of `tokens`.
    pub fn error_spanned_by<T: ToTokens, M: std::fmt::Display>(&self, tokens: T, message: M) {
        self.errors
            .borrow_mut()
            .push(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Records a `syn` error.
    pub fn syn_error(&self, err: syn::Error) {
        self.errors.borrow_mut().push(err);
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.borrow().is_empty()
    }

    /// The errors as `compile_error!` invocations.
    pub fn into_compile_errors(self) -> TokenStream {
        self.errors
            .into_inner()
            .into_iter()
            .map(|e| e.to_compile_error())
            .collect()
    }
}
