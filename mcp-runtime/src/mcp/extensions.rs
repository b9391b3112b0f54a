//! The extensions a group declares for what it publishes (besides tasks, which a revision
//! defines): MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`) and skills (SEP-2640,
//! `io.modelcontextprotocol/skills`), each only where the group has one. What they add to
//! lists and reads is written once, when the catalog and the endpoint are built: the `_meta.ui`
//! members by their records ([`AppUi::meta`](crate::record::AppUi::meta),
//! [`ToolApp::meta`](crate::record::ToolApp::meta)), a skill's entry by its `SkillInfo`.

use crate::record::APP_MIME_TYPE;

/// The MCP Apps extension's identifier in `capabilities.extensions`.
pub(crate) const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The skills extension's identifier in `capabilities.extensions`.
pub(crate) const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The member of `capabilities.extensions` a group with apps declares.
pub(crate) fn ui_capability() -> String {
    format!("\"{UI_EXTENSION}\":{{\"mimeTypes\":[\"{APP_MIME_TYPE}\"]}}")
}

/// The member of `capabilities.extensions` a group with skills declares: no `directoryRead`,
/// as every skill's entry lists all of its files.
pub(crate) fn skills_capability() -> String {
    format!("\"{SKILLS_EXTENSION}\":{{}}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{AppPermission, AppUi, ToolApp};
    use serde_json::json;

    #[test]
    fn the_capability_names_the_app_mime_type() {
        let caps: serde_json::Value =
            serde_json::from_str(&format!("{{{}}}", ui_capability())).unwrap();
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
