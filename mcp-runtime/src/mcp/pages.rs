//! Paginated lists (`tools/list`, `resources/list`, `resources/templates/list`,
//! `prompts/list`), precomputed as bytes per page and era: a list request writes only the
//! response's opening.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use bytes::Bytes;

use crate::error::RpcError;

/// One page per era: the result after its opening brace (and, on the modern era, after
/// `"resultType":"complete",`), up to the response's end: `"tools":[...],...}}`.
#[derive(Debug, Clone)]
pub struct Page {
    /// Handshake-era result members and closing.
    pub legacy: Bytes,
    /// Modern result members (with `ttlMs`, `cacheScope` and the `_meta` stamp) and closing.
    pub modern: Bytes,
}

/// Every page of one list.
#[derive(Debug, Clone)]
pub struct ListPages {
    pages: Vec<Page>,
    page_size: usize,
}

/// The opaque cursor of the page starting at `offset`.
pub fn cursor(offset: usize) -> String {
    B64.encode(offset.to_string())
}

impl ListPages {
    /// Builds every page once from the items' JSON objects; `key` is the list's member
    /// (`tools`), `meta_member` the `_meta` member stamped on modern results.
    pub fn build(
        key: &str,
        items: &[Vec<u8>],
        page_size: usize,
        ttl_ms: u64,
        meta_member: &str,
    ) -> Self {
        let size = page_size.max(1);
        let chunks: Vec<&[Vec<u8>]> = if items.is_empty() {
            vec![&[]]
        } else {
            items.chunks(size).collect()
        };
        let mut pages = Vec::with_capacity(chunks.len());
        let mut buf = Vec::new();
        for (i, chunk) in chunks.iter().enumerate() {
            buf.clear();
            buf.push(b'"');
            buf.extend_from_slice(key.as_bytes());
            buf.extend_from_slice(b"\":[");
            for (j, item) in chunk.iter().enumerate() {
                if j > 0 {
                    buf.push(b',');
                }
                buf.extend_from_slice(item);
            }
            buf.push(b']');
            let next = (i + 1) * size;
            if next < items.len() {
                buf.extend_from_slice(format!(",\"nextCursor\":\"{}\"", cursor(next)).as_bytes());
            }
            let members = buf.len();
            buf.extend_from_slice(b"}}");
            let legacy = Bytes::copy_from_slice(&buf);
            buf.truncate(members);
            buf.extend_from_slice(
                format!(",\"ttlMs\":{ttl_ms},\"cacheScope\":\"public\",{meta_member}}}}}")
                    .as_bytes(),
            );
            pages.push(Page {
                legacy,
                modern: Bytes::copy_from_slice(&buf),
            });
        }
        Self {
            pages,
            page_size: size,
        }
    }

    /// The page a cursor points at (`None` = the first); a cursor this list did not hand out
    /// is -32602.
    pub fn page(&self, cursor: Option<&str>) -> Result<&Page, RpcError> {
        let Some(c) = cursor else {
            return Ok(&self.pages[0]);
        };
        let bad = || {
            RpcError::invalid_params(format!(
                "Invalid value for pagination parameter \"cursor\": {}",
                serde_json::Value::from(c.chars().take(64).collect::<String>())
            ))
        };
        let offset: usize = B64
            .decode(c)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|s| s.parse().ok())
            .ok_or_else(bad)?;
        if offset == 0 || !offset.is_multiple_of(self.page_size) {
            return Err(bad());
        }
        self.pages.get(offset / self.page_size).ok_or_else(bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_chain_through_cursors_and_refuse_foreign_ones() {
        let items: Vec<Vec<u8>> = (0..5)
            .map(|i| format!("{{\"n\":{i}}}").into_bytes())
            .collect();
        let pages = ListPages::build("things", &items, 2, 10, "\"_meta\":{}");
        let first = pages.page(None).unwrap();
        assert_eq!(
            &first.legacy[..],
            format!(
                "\"things\":[{{\"n\":0}},{{\"n\":1}}],\"nextCursor\":\"{}\"}}}}",
                cursor(2)
            )
            .as_bytes()
        );
        let last = pages.page(Some(&cursor(4))).unwrap();
        assert_eq!(&last.legacy[..], b"\"things\":[{\"n\":4}]}}");
        assert_eq!(
            &last.modern[..],
            b"\"things\":[{\"n\":4}],\"ttlMs\":10,\"cacheScope\":\"public\",\"_meta\":{}}}"
        );
        for bad in [cursor(1), cursor(6), cursor(0), "!!".into()] {
            assert_eq!(pages.page(Some(&bad)).unwrap_err().code(), -32602);
        }
        let empty = ListPages::build("things", &[], 2, 10, "");
        assert_eq!(&empty.page(None).unwrap().legacy[..], b"\"things\":[]}}");
    }
}
