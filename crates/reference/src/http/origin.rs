//! `Origin` validation against DNS rebinding: a web page the user visits
//! must not be able to drive a server listening on their loopback
//! interface. Requests without `Origin` (every non-browser client) pass;
//! loopback origins pass whatever their port; anything else needs
//! `--allowed-origin`.

/// The origins a server accepts besides loopback ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OriginPolicy {
    allowed: Vec<String>,
}

impl OriginPolicy {
    /// Checks each `--allowed-origin` value; returns the first malformed one.
    pub fn new(allowed: &[String]) -> Result<Self, String> {
        let mut out = Vec::new();
        for a in allowed {
            let normal = normalize(a).ok_or_else(|| a.clone())?;
            out.push(normal);
        }
        Ok(OriginPolicy { allowed: out })
    }

    /// Whether a request with this `Origin` header value may proceed.
    pub fn allows(&self, origin: &str) -> bool {
        let Some(normal) = normalize(origin) else {
            // "null" (sandboxed frames, file: pages) and garbage.
            return false;
        };
        is_loopback(&normal) || self.allowed.contains(&normal)
    }
}

/// `scheme://host[:port]`, lower-cased and without a trailing slash, or
/// `None` when the value is not an origin.
fn normalize(origin: &str) -> Option<String> {
    let o = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    let (scheme, rest) = o.split_once("://")?;
    let valid_scheme = !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !valid_scheme || rest.is_empty() || rest.contains(['/', '?', '#', '@', ' ']) {
        return None;
    }
    Some(o)
}

fn is_loopback(normal: &str) -> bool {
    let Some((_, authority)) = normal.split_once("://") else {
        return false;
    };
    let host = if let Some(v6) = authority.strip_prefix('[') {
        match v6.split_once(']') {
            Some((h, rest)) if rest.is_empty() || rest.starts_with(':') => h,
            _ => return false,
        }
    } else {
        match authority.split_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
            Some(_) => return false,
            None => authority,
        }
    };
    matches!(host, "localhost" | "127.0.0.1" | "::1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins_pass_on_any_port() {
        let p = OriginPolicy::default();
        for o in [
            "http://localhost",
            "http://localhost:3000",
            "https://127.0.0.1:8443/",
            "http://[::1]:9",
            "HTTP://LOCALHOST:1",
        ] {
            assert!(p.allows(o), "{o}");
        }
        for o in [
            "null",
            "",
            "https://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.nip.io",
            "http://[::1].evil",
            "http://localhost:80x",
            "http://user@localhost",
        ] {
            assert!(!p.allows(o), "{o}");
        }
    }

    #[test]
    fn explicitly_allowed_origins_pass() {
        let p = OriginPolicy::new(&["https://App.example/".to_string()]).expect("valid");
        assert!(p.allows("https://app.example"));
        assert!(!p.allows("http://app.example"));
        assert!(OriginPolicy::new(&["app.example".to_string()]).is_err());
    }
}
