//! Opaque, tamper-evident pagination cursors.
//!
//! A cursor is `base64url(payload ‖ tag)` where the payload records the
//! method, a digest of the query and filter it was issued for, the catalog
//! generation and the offset, and the tag is a truncated HMAC-SHA256 under a
//! per-process random key. A client therefore cannot forge an offset, reuse a
//! cursor with another query, or keep paging across a catalog change.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

/// Longest cursor accepted, in bytes.
pub const MAX_CURSOR_LEN: usize = 512;
const TAG_LEN: usize = 16;
const VERSION: u8 = 1;

type HmacSha256 = Hmac<Sha256>;

/// What a cursor stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    pub method: String,
    pub scope: [u8; 8],
    pub generation: u64,
    pub offset: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CursorError {
    #[error("invalid cursor: longer than {MAX_CURSOR_LEN} bytes")]
    TooLong,
    #[error("invalid cursor")]
    Invalid,
    #[error("cursor does not belong to this query")]
    WrongScope,
    #[error("invalid cursor: the list changed since it was issued; start again without a cursor")]
    Stale,
}

/// Signs and checks cursors.
pub struct CursorKey {
    key: [u8; 32],
}

impl CursorKey {
    /// A key from the operating system's random source; a fixed fallback key
    /// still gives tamper evidence within one process if that source fails.
    pub fn random() -> Self {
        let mut key = [0u8; 32];
        if getrandom::fill(&mut key).is_err() {
            key = *b"mcp-conform reference cursor key";
        }
        CursorKey { key }
    }

    pub fn with_key(key: [u8; 32]) -> Self {
        CursorKey { key }
    }

    fn mac(&self) -> HmacSha256 {
        // HMAC accepts keys of any length, so this cannot fail.
        match HmacSha256::new_from_slice(&self.key) {
            Ok(mac) => mac,
            Err(_) => unreachable!("HMAC takes keys of any length"),
        }
    }

    pub fn encode(&self, pos: &Position) -> String {
        let mut payload = vec![VERSION];
        payload.extend_from_slice(&pos.scope);
        payload.extend_from_slice(&pos.generation.to_be_bytes());
        payload.extend_from_slice(&(pos.offset as u64).to_be_bytes());
        payload.extend_from_slice(pos.method.as_bytes());
        let mut mac = self.mac();
        mac.update(&payload);
        let tag = mac.finalize().into_bytes();
        payload.extend_from_slice(&tag[..TAG_LEN]);
        URL_SAFE_NO_PAD.encode(payload)
    }

    pub fn decode(&self, cursor: &str) -> Result<Position, CursorError> {
        if cursor.len() > MAX_CURSOR_LEN {
            return Err(CursorError::TooLong);
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(cursor)
            .map_err(|_| CursorError::Invalid)?;
        if bytes.len() < 1 + 8 + 8 + 8 + TAG_LEN || bytes[0] != VERSION {
            return Err(CursorError::Invalid);
        }
        let (payload, tag) = bytes.split_at(bytes.len() - TAG_LEN);
        let mut mac = self.mac();
        mac.update(payload);
        mac.verify_truncated_left(tag)
            .map_err(|_| CursorError::Invalid)?;
        let scope = take8(&payload[1..9]);
        let generation = u64::from_be_bytes(take8(&payload[9..17]));
        let offset = u64::from_be_bytes(take8(&payload[17..25]));
        let method = String::from_utf8(payload[25..].to_vec()).map_err(|_| CursorError::Invalid)?;
        Ok(Position {
            method,
            scope,
            generation,
            offset: usize::try_from(offset).map_err(|_| CursorError::Invalid)?,
        })
    }

    /// Decodes and checks that the cursor was issued for this method, scope
    /// and catalog generation.
    pub fn resume(
        &self,
        cursor: &str,
        method: &str,
        scope: [u8; 8],
        generation: u64,
    ) -> Result<usize, CursorError> {
        let pos = self.decode(cursor)?;
        if pos.method != method || pos.scope != scope {
            return Err(CursorError::WrongScope);
        }
        if pos.generation != generation {
            return Err(CursorError::Stale);
        }
        Ok(pos.offset)
    }
}

fn take8(bytes: &[u8]) -> [u8; 8] {
    let mut out = [0u8; 8];
    out.copy_from_slice(&bytes[..8]);
    out
}

/// A digest of everything that shapes a list: the query and the filter.
/// Parts are length-prefixed so no two different inputs share an encoding.
pub fn scope(parts: &[&str]) -> [u8; 8] {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    take8(&hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos() -> Position {
        Position {
            method: "tools/list".into(),
            scope: scope(&["create"]),
            generation: 3,
            offset: 50,
        }
    }

    #[test]
    fn round_trips() {
        let key = CursorKey::with_key([7; 32]);
        let c = key.encode(&pos());
        assert!(c.len() < MAX_CURSOR_LEN);
        assert_eq!(key.decode(&c), Ok(pos()));
        assert_eq!(key.resume(&c, "tools/list", scope(&["create"]), 3), Ok(50));
    }

    #[test]
    fn rejects_tampering_and_misuse() {
        let key = CursorKey::with_key([7; 32]);
        let c = key.encode(&pos());
        let mut bytes = URL_SAFE_NO_PAD.decode(&c).expect("b64");
        bytes[20] ^= 1;
        let forged = URL_SAFE_NO_PAD.encode(bytes);
        assert_eq!(key.decode(&forged), Err(CursorError::Invalid));
        assert_eq!(key.decode("!!!"), Err(CursorError::Invalid));
        assert_eq!(key.decode(""), Err(CursorError::Invalid));
        assert_eq!(key.decode(&"A".repeat(600)), Err(CursorError::TooLong));
        let other = CursorKey::with_key([8; 32]);
        assert_eq!(other.decode(&c), Err(CursorError::Invalid));
        assert_eq!(
            key.resume(&c, "prompts/list", scope(&["create"]), 3),
            Err(CursorError::WrongScope)
        );
        assert_eq!(
            key.resume(&c, "tools/list", scope(&["other"]), 3),
            Err(CursorError::WrongScope)
        );
        assert_eq!(
            key.resume(&c, "tools/list", scope(&["create"]), 4),
            Err(CursorError::Stale)
        );
    }

    #[test]
    fn scope_is_unambiguous() {
        assert_ne!(scope(&["ab", "c"]), scope(&["a", "bc"]));
    }
}
