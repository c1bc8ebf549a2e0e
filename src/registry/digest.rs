//! `sha256:<hex>` digests (sha2 0.11 no longer formats its output as hex, so we do).

use sha2::{Digest as _, Sha256};

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

/// `sha256:<hex>` of a finished hasher.
pub fn finish(h: Sha256) -> String {
    format!("sha256:{}", hex(&h.finalize()))
}

/// `sha256:<hex>` of bytes.
pub fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn empty() {
        assert_eq!(
            super::sha256(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
