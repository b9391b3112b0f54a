//! Autoref-specialization probes over a parameter type and fallbacks for the result: when a
//! type lacks a trait, the code resolves to an inert fallback and only the `assert_*` checks
//! report it (once, with their own messages) instead of every use repeating it.

use proc_macro2::TokenStream;
use quote::quote;

pub(super) fn probes(rt: &TokenStream) -> TokenStream {
    let take = take(rt);
    let schema = param_schema(rt);
    let output = no_output(rt);
    quote! {
        struct __RpcTy<T>(::core::marker::PhantomData<T>);

        #take
        #schema
        #output
    }
}

/// For parameters named like context types (`ParamKind::MaybeContext`): `__RPC_IS_CONTEXT`,
/// whether a type implements `FromContext` (an inherent constant where it does, which comes
/// before the trait's `false`), and `__rpc_from_context`, the value from the context, or `None`
/// for a type that is not a context type.
///
/// `__RPC_IS_STATE` says whether it is the runtime's `State<T>`, whatever `T`: such a
/// parameter is a context parameter even when `T` cannot be shared, and
/// `__rpc_assert_shared` then reports that (its bound is the method's, so it is checked once
/// the method is chosen, not used to choose it), instead of a JSON parameter's messages.
pub(super) fn context_probes(rt: &TokenStream) -> TokenStream {
    quote! {
        trait __RpcNotContext {
            const __RPC_IS_CONTEXT: bool = false;
        }
        impl<T> __RpcNotContext for __RpcTy<T> {}
        impl<T: #rt::FromContext> __RpcTy<T> {
            const __RPC_IS_CONTEXT: bool = true;
        }

        trait __RpcNotState {
            const __RPC_IS_STATE: bool = false;
        }
        impl<T> __RpcNotState for __RpcTy<T> {}
        impl<T> __RpcTy<#rt::State<T>> {
            const __RPC_IS_STATE: bool = true;
            fn __rpc_assert_shared(&self)
            where
                T: #rt::SharedState,
            {
            }
        }
        trait __RpcNoSharedCheck {
            fn __rpc_assert_shared(&self) {}
        }
        impl<T> __RpcNoSharedCheck for &__RpcTy<T> {}

        trait __RpcFromContext<T> {
            fn __rpc_from_context(
                &self,
                ctx: &#rt::RequestContext,
            ) -> ::core::option::Option<::core::result::Result<T, #rt::RpcError>>;
        }
        impl<T: #rt::FromContext> __RpcFromContext<T> for __RpcTy<T> {
            fn __rpc_from_context(
                &self,
                ctx: &#rt::RequestContext,
            ) -> ::core::option::Option<::core::result::Result<T, #rt::RpcError>> {
                ::core::option::Option::Some(#rt::from_context::<T>(ctx))
            }
        }
        trait __RpcNeededState {
            fn __rpc_needed_state(&self) -> ::core::option::Option<(::core::any::TypeId, &'static str)>;
        }
        impl<T: #rt::FromContext> __RpcNeededState for __RpcTy<T> {
            fn __rpc_needed_state(&self) -> ::core::option::Option<(::core::any::TypeId, &'static str)> {
                #rt::needed_state::<T>()
            }
        }
        impl<T> __RpcNeededState for &__RpcTy<T> {
            fn __rpc_needed_state(&self) -> ::core::option::Option<(::core::any::TypeId, &'static str)> {
                ::core::option::Option::None
            }
        }

        impl<T> __RpcFromContext<T> for &__RpcTy<T> {
            fn __rpc_from_context(
                &self,
                _: &#rt::RequestContext,
            ) -> ::core::option::Option<::core::result::Result<T, #rt::RpcError>> {
                ::core::option::Option::None
            }
        }
    }
}

/// `__rpc_take`: a JSON parameter from the params, or `None` for a type that cannot be one.
fn take(rt: &TokenStream) -> TokenStream {
    quote! {
        trait __RpcTake<T> {
            fn __rpc_take(
                &self,
                params: &mut #rt::Params,
                name: &'static str,
                errs: &mut ::std::vec::Vec<#rt::Violation>,
                default: ::core::option::Option<fn() -> T>,
            ) -> ::core::option::Option<T>;
        }
        impl<T: #rt::serde::de::DeserializeOwned> __RpcTake<T> for __RpcTy<T> {
            fn __rpc_take(
                &self,
                params: &mut #rt::Params,
                name: &'static str,
                errs: &mut ::std::vec::Vec<#rt::Violation>,
                default: ::core::option::Option<fn() -> T>,
            ) -> ::core::option::Option<T> {
                match default {
                    ::core::option::Option::Some(d) => #rt::or_default::<T>(params, name, errs, d),
                    ::core::option::Option::None => #rt::required::<T>(params, name, errs),
                }
            }
        }
        impl<T> __RpcTake<T> for &__RpcTy<T> {
            fn __rpc_take(
                &self,
                _: &mut #rt::Params,
                _: &'static str,
                _: &mut ::std::vec::Vec<#rt::Violation>,
                _: ::core::option::Option<fn() -> T>,
            ) -> ::core::option::Option<T> {
                ::core::option::Option::None
            }
        }
    }
}

/// `__rpc_schema`: a parameter type's schema, or an empty one.
fn param_schema(rt: &TokenStream) -> TokenStream {
    quote! {
        trait __RpcParamSchema {
            fn __rpc_schema(&self, g: &mut #rt::SchemaGenerator) -> #rt::Schema;
        }
        impl<T: #rt::JsonSchema> __RpcParamSchema for __RpcTy<T> {
            fn __rpc_schema(&self, g: &mut #rt::SchemaGenerator) -> #rt::Schema {
                #rt::param_schema::<T>(g)
            }
        }
        impl<T> __RpcParamSchema for &__RpcTy<T> {
            fn __rpc_schema(&self, _: &mut #rt::SchemaGenerator) -> #rt::Schema {
                ::core::default::Default::default()
            }
        }
    }
}

/// The fallbacks of the result probes, after `SpecialOutput` (by value) and `JsonOutput`
/// (autoref): autoref-mut.
fn no_output(rt: &TokenStream) -> TokenStream {
    quote! {
        // After `SpecialOutput` (by value) and `JsonOutput` (autoref): autoref-mut.
        trait __RpcNoOutput {
            fn __rpc_output(&mut self) -> ::core::result::Result<#rt::Output, #rt::RpcError>;
        }
        impl<T: ?::core::marker::Sized> __RpcNoOutput for &#rt::Probe<'_, T> {
            fn __rpc_output(&mut self) -> ::core::result::Result<#rt::Output, #rt::RpcError> {
                ::core::result::Result::Err(#rt::RpcError::internal("the result cannot be serialized"))
            }
        }
        trait __RpcNoOutputSchema {
            fn __rpc_output_schema(&mut self, g: &mut #rt::SchemaGenerator) -> ::core::option::Option<#rt::Schema>;
        }
        impl<T: ?::core::marker::Sized> __RpcNoOutputSchema for &#rt::SchemaProbe<T> {
            fn __rpc_output_schema(&mut self, _: &mut #rt::SchemaGenerator) -> ::core::option::Option<#rt::Schema> {
                ::core::option::Option::None
            }
        }
    }
}
