//! Static assets, embedded in the binary and served under
//! `/ui/static/<name>.<hash>.<ext>`: the path changes with the content, so
//! each can be cached for a year (`immutable`) and a new build is never
//! served a stale copy.

use std::sync::OnceLock;

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The path prefix of static assets.
pub const STATIC_PREFIX: &str = "/ui/static";
/// The `Cache-Control` of a static asset.
pub const STATIC_CACHE_CONTROL: &str = "public, max-age=31536000, immutable";
/// Hex digits of the content hash in an asset's name.
const HASH_DIGITS: usize = 16;

struct Asset {
    stem: &'static str,
    ext: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

const ASSETS: [Asset; 3] = [
    Asset {
        stem: "app",
        ext: "css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../static/app.css"),
    },
    // htmx 2.0.11 from npm `htmx.org`, unmodified (static/VENDORED.md).
    Asset {
        stem: "htmx-2.0.11",
        ext: "min.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../static/htmx-2.0.11.min.js"),
    },
    Asset {
        stem: "icon",
        ext: "svg",
        content_type: "image/svg+xml",
        bytes: include_bytes!("../static/icon.svg"),
    },
];

fn file_names() -> &'static [String; 3] {
    static NAMES: OnceLock<[String; 3]> = OnceLock::new();
    NAMES.get_or_init(|| {
        ASSETS.each_ref().map(|a| {
            let digest = skilldeck::Digest::of(a.bytes).hex();
            format!("{}.{}.{}", a.stem, &digest[..HASH_DIGITS], a.ext)
        })
    })
}

fn href(index: usize) -> String {
    format!("{STATIC_PREFIX}/{}", file_names()[index])
}

/// Where pages link the stylesheet.
pub fn css_href() -> String {
    href(0)
}

/// Where pages load htmx from.
pub fn htmx_href() -> String {
    href(1)
}

/// Where pages link the icon.
pub fn icon_href() -> String {
    href(2)
}

/// `GET /ui/static/{file}`.
pub async fn serve_static(Path(file): Path<String>) -> Response {
    match file_names().iter().position(|n| *n == file) {
        Some(i) => (
            [
                (header::CONTENT_TYPE, ASSETS[i].content_type),
                (header::CACHE_CONTROL, STATIC_CACHE_CONTROL),
            ],
            ASSETS[i].bytes,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such asset").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asset_paths_carry_a_content_hash() {
        let css = css_href();
        assert!(
            css.starts_with("/ui/static/app.") && css.ends_with(".css"),
            "{css}"
        );
        let hash = css
            .trim_start_matches("/ui/static/app.")
            .trim_end_matches(".css");
        assert_eq!(hash.len(), HASH_DIGITS);
        assert!(htmx_href().contains("htmx-2.0.11."));
    }

    #[tokio::test]
    async fn assets_are_served_with_a_long_cache_and_unknown_names_are_404() {
        let name = css_href().trim_start_matches("/ui/static/").to_owned();
        let res = serve_static(Path(name)).await;
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(res.headers()[header::CACHE_CONTROL], STATIC_CACHE_CONTROL);
        assert_eq!(
            res.headers()[header::CONTENT_TYPE],
            "text/css; charset=utf-8"
        );
        let res = serve_static(Path("app.0000000000000000.css".into())).await;
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
    }
}
