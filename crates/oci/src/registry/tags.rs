//! A repository's tag list (`GET …/<name>/tags/list`, [`super::api::tags`]), following `Link: <…>; rel="next"`
//! pages. The registry is a remote party: a relative link is resolved against the URL of the
//! page that carried it (RFC 8288, RFC 3986 reference resolution), a link to another host is
//! refused, and the pages together are capped in count and in bytes.

use super::client::{Client, Request, header};
use super::errors::{RegistryError, redact_url};
use super::token::pull_scope;
use reqwest::Method;
use std::collections::HashSet;
use std::io::Read;

/// At most this many pages are read.
pub const MAX_TAG_PAGES: usize = 100;

/// At most this many bytes of tag-list pages are read in all (a million short tags).
pub const MAX_TAG_LIST_BYTES: u64 = 16 << 20;

#[derive(serde::Deserialize)]
struct TagPage {
    tags: Option<Vec<String>>,
}

/// Every tag of `repository`, from all its pages; an error when a page fails, is not a tag
/// list, links elsewhere, or the pages go past [`MAX_TAG_PAGES`] or [`MAX_TAG_LIST_BYTES`].
pub fn list(client: &Client, repository: &str) -> Result<HashSet<String>, RegistryError> {
    let mut url = client.resolve_location(&super::api::tags(repository));
    let mut tags = HashSet::new();
    let mut left = MAX_TAG_LIST_BYTES;
    for _ in 0..MAX_TAG_PAGES {
        let req = Request::new(Method::GET, url.clone(), &[pull_scope(repository)]);
        let resp = client.expect(&req, &[200])?;
        let next = header(&resp, "Link").and_then(|l| next_link(&l));
        let mut bytes = Vec::new();
        resp.take(left + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| RegistryError::Interrupted {
                what: format!("tag list of {repository}"),
                reason: e.to_string(),
            })?;
        if bytes.len() as u64 > left {
            return Err(RegistryError::TooLarge {
                what: format!("tag list of {repository}"),
                limit: MAX_TAG_LIST_BYTES,
            });
        }
        left -= bytes.len() as u64;
        let page: TagPage = serde_json::from_slice(&bytes).map_err(|e| {
            RegistryError::Protocol(format!("the tag list of {repository} is not JSON: {e}"))
        })?;
        tags.extend(page.tags.unwrap_or_default());
        match next {
            Some(n) => url = resolve_link(&url, &n)?,
            None => return Ok(tags),
        }
    }
    Err(RegistryError::Protocol(format!(
        "the tag list of {repository} has more than {MAX_TAG_PAGES} pages"
    )))
}

/// `target` resolved against `base` (the page that carried it); only the registry's own
/// scheme, host and port are followed.
fn resolve_link(base: &str, target: &str) -> Result<String, RegistryError> {
    let bad = |why: &str| {
        RegistryError::Protocol(format!(
            "tag list page link {}: {why}",
            super::errors::printable(target)
        ))
    };
    let base_url = reqwest::Url::parse(base).map_err(|_| bad("the page URL is not a URL"))?;
    let next = base_url
        .join(target)
        .map_err(|_| bad("not a URL reference"))?;
    if next.origin() != base_url.origin() {
        return Err(bad(&format!(
            "points away from {}",
            redact_url(&base_url.origin().ascii_serialization())
        )));
    }
    Ok(next.to_string())
}

/// The target of a `Link` header's `rel="next"` entry.
fn next_link(link: &str) -> Option<String> {
    link.split(',').find_map(|part| {
        let (target, params) = part.trim().split_once(';')?;
        let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
        params
            .split(';')
            .any(|p| matches!(p.trim(), "rel=\"next\"" | "rel=next"))
            .then(|| target.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_resolve_against_the_page_and_stay_on_the_registry() {
        let page = "http://127.0.0.1:5000/r/a/b/tags/list?n=2";
        let r = |t: &str| resolve_link(page, t);
        assert_eq!(
            r("/r/a/b/tags/list?n=2&last=x").unwrap(),
            "http://127.0.0.1:5000/r/a/b/tags/list?n=2&last=x"
        );
        assert_eq!(
            r("list?last=x").unwrap(),
            "http://127.0.0.1:5000/r/a/b/tags/list?last=x"
        );
        assert_eq!(
            r("?last=y").unwrap(),
            "http://127.0.0.1:5000/r/a/b/tags/list?last=y"
        );
        assert!(r("http://127.0.0.1:5001/r/a/b/tags/list").is_err());
        assert!(r("//elsewhere.example/r/").is_err());
        assert!(r("https://127.0.0.1:5000/r/").is_err(), "another scheme");
        assert_eq!(
            next_link(r#"</r/x/tags/list?last=a>; rel="next""#).as_deref(),
            Some("/r/x/tags/list?last=a")
        );
        assert_eq!(next_link(r#"<a>; rel="prev""#), None);
    }

    #[test]
    fn tag_list_pages_follow_the_next_link() {
        assert_eq!(
            next_link(r#"</r/a/tags/list?last=b&n=2>; rel="next""#).as_deref(),
            Some("/r/a/tags/list?last=b&n=2")
        );
        assert_eq!(
            next_link(r#"<https://r/x>; rel="prev", <https://r/y>; rel=next"#).as_deref(),
            Some("https://r/y")
        );
        assert_eq!(next_link(r#"</r/a/tags/list>; rel="prev""#), None);
        assert_eq!(next_link("garbage"), None);
    }
}
