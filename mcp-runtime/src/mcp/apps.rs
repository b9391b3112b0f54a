//! MCP Apps (SEP-1865, the `io.modelcontextprotocol/ui` extension): the capability a group with
//! apps declares. The `_meta.ui` members of an app's page and of the tools linked to it are
//! written by their records ([`AppUi::meta`], [`ToolApp::meta`]), once, when the catalog and
//! the endpoint are built; a group without apps writes none of it.

use crate::record::APP_MIME_TYPE;

/// The extension's identifier in `capabilities.extensions`.
pub(crate) const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The member of `capabilities.extensions` a group with apps declares.
pub(crate) fn capability() -> String {
    format!("\"{UI_EXTENSION}\":{{\"mimeTypes\":[\"{APP_MIME_TYPE}\"]}}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{AppPermission, AppUi, ToolApp};
    use serde_json::json;

    #[test]
    fn the_capability_names_the_app_mime_type() {
        let caps: serde_json::Value =
            serde_json::from_str(&format!("{{{}}}", capability())).unwrap();
        assert_eq!(
            caps,
            json!({"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}})
        );
    }

    #[test]
    fn an_app_that_asks_for_nothing_has_an_empty_ui_member() {
        assert_eq!(AppUi::NONE.meta(), json!({"ui": {}}));
    }

    #[test]
    fn every_member_is_written_in_the_extension_s_words() {
        let app = AppUi {
            connect_domains: &["https://api.example.com"],
            resource_domains: &["https://*.cdn.example"],
            frame_domains: &[],
            base_uri_domains: &["https://example.com"],
            permissions: &[AppPermission::Camera, AppPermission::ClipboardWrite],
            domain: Some("shop.example"),
            prefers_border: Some(false),
        };
        assert_eq!(
            app.meta(),
            json!({"ui": {
                "csp": {
                    "connectDomains": ["https://api.example.com"],
                    "resourceDomains": ["https://*.cdn.example"],
                    "baseUriDomains": ["https://example.com"]
                },
                "permissions": {"camera": {}, "clipboardWrite": {}},
                "domain": "shop.example",
                "prefersBorder": false
            }})
        );
    }

    #[test]
    fn visibility_is_written_only_when_it_is_not_both() {
        let link = |model, app| ToolApp {
            resource_uri: "ui://a/b",
            model,
            app,
        };
        assert_eq!(
            link(true, true).meta(),
            json!({"ui": {"resourceUri": "ui://a/b"}})
        );
        assert_eq!(
            link(false, true).meta(),
            json!({"ui": {"resourceUri": "ui://a/b", "visibility": ["app"]}})
        );
        assert_eq!(
            link(true, false).meta(),
            json!({"ui": {"resourceUri": "ui://a/b", "visibility": ["model"]}})
        );
    }
}
