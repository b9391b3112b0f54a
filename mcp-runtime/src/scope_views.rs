//! Scope views: what a caller of a catalog whose methods require scopes may see, one bit per
//! distinct scope set, so that what is shown is built once per view and kept.

use crate::catalog::Catalog;

/// What a catalog shows a caller when its methods require scopes, per view: which of the
/// catalog's distinct scope sets a caller has (one bit each). The MCP lists and the JSON-RPC
/// discovery documents are kept per view. Built the first time a view is asked for
/// and kept, so a list request never rebuilds one: at most [`KEPT_VIEWS`] views per
/// endpoint are kept (a view past that is built for its request), and a catalog with more
/// than 64 distinct scope sets builds every scoped list per request.
#[derive(Debug)]
pub(crate) struct ScopeViews<L> {
    /// The distinct scope sets of the catalog's methods, resources, prompts and skills.
    pub(crate) sets: Vec<&'static [&'static str]>,
    /// What is kept per view, then per language.
    pub(crate) kept:
        std::sync::RwLock<std::collections::HashMap<u64, std::collections::BTreeMap<String, L>>>,
}

/// How many views (sets of granted scope sets) an endpoint keeps.
const KEPT_VIEWS: usize = 256;

impl<L> ScopeViews<L> {
    /// `None` when no method of `catalog` requires a scope (lists then cost nothing more).
    pub(crate) fn of(catalog: &Catalog) -> Option<Self> {
        let defs = catalog
            .methods()
            .iter()
            .map(|m| m.def)
            .chain(catalog.resources().iter().map(|r| r.call.def))
            .chain(catalog.resource_templates().iter().map(|r| r.call.def))
            .chain(catalog.prompts().iter().map(|p| p.call.def));
        let skills = catalog.skills().iter().map(|s| s.def.scopes);
        let mut sets: Vec<&'static [&'static str]> = Vec::new();
        // Seen through a set: linear in the methods however many distinct scope sets they have.
        let mut seen = std::collections::HashSet::new();
        for scopes in defs.map(|d| d.scopes).chain(skills) {
            if !scopes.is_empty() && seen.insert(scopes) {
                sets.push(scopes);
            }
        }
        (!sets.is_empty()).then(|| ScopeViews {
            sets,
            kept: Default::default(),
        })
    }
}

impl<L: Clone> ScopeViews<L> {
    /// The view of `identity`: bit `i` set when it has every scope of set `i`; `None` past 64
    /// sets.
    pub(crate) fn view(&self, identity: Option<&crate::Identity>) -> Option<u64> {
        (self.sets.len() <= 64).then(|| {
            self.sets
                .iter()
                .enumerate()
                .filter(|(_, set)| crate::catalog::admits(set, identity))
                .fold(0u64, |mask, (i, _)| mask | (1 << i))
        })
    }

    /// The lists kept for `view` in `lang`.
    pub(crate) fn kept(&self, view: u64, lang: &str) -> Option<L> {
        let kept = self.kept.read().ok()?;
        kept.get(&view)
            .and_then(|by_lang| by_lang.get(lang))
            .cloned()
    }

    /// Keeps `lists` for `view` in `lang`, unless [`KEPT_VIEWS`] other views are kept already
    /// (languages are bounded by the translations, views by this).
    pub(crate) fn keep(&self, view: u64, lang: &str, lists: &L) {
        if let Ok(mut kept) = self.kept.write()
            && (kept.len() < KEPT_VIEWS || kept.contains_key(&view))
        {
            kept.entry(view)
                .or_default()
                .insert(lang.to_owned(), lists.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` distinct scope sets, `[s0]` to `[s{n-1}]`.
    fn views(n: usize) -> ScopeViews<u64> {
        let sets = (0..n)
            .map(|i| {
                let scope: &'static str = Box::leak(format!("s{i}").into_boxed_str());
                let set: &'static [&'static str] = Box::leak(vec![scope].into_boxed_slice());
                set
            })
            .collect();
        ScopeViews {
            sets,
            kept: Default::default(),
        }
    }

    /// The identity granted scope `s{i}` for every bit `i` of `bits`.
    fn granted(bits: u64) -> crate::Identity {
        crate::Identity::new(
            "who",
            (0..9)
                .filter(|i| bits & (1 << i) != 0)
                .map(|i| format!("s{i}")),
        )
    }

    #[test]
    fn views_are_one_bit_per_granted_set_and_at_most_256_are_kept() {
        // Nine sets: 512 possible views, more than an endpoint keeps.
        let views = views(9);
        assert_eq!(views.view(None), Some(0));
        for bits in 0..512u64 {
            let view = views.view(Some(&granted(bits))).expect("under 64 sets");
            assert_eq!(view, bits);
            views.keep(view, "en", &bits);
        }
        let kept = views.kept.read().expect("not poisoned").len();
        assert_eq!(kept, KEPT_VIEWS);
        // The first 256 views are kept; a kept view gains languages; the others are not kept.
        assert_eq!(views.kept(7, "en"), Some(7));
        views.keep(7, "uk", &70);
        assert_eq!(views.kept(7, "uk"), Some(70));
        assert_eq!(views.kept(300, "en"), None);
        assert_eq!(views.kept.read().expect("not poisoned").len(), KEPT_VIEWS);
    }

    #[test]
    fn past_64_scope_sets_no_view_is_computed() {
        assert_eq!(views(65).view(Some(&granted(1))), None);
    }
}
