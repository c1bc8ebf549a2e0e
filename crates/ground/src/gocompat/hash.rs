//! operator-controller's `DeepHashObject`: SHA-224 of Go's `json.Encoder` output (the caller
//! passes those bytes, trailing newline included) written as `big.Int.Text(36)`. OLM v1 names
//! every Role and ClusterRole it creates this way, so names can only match if the hash does.

use sha2::{Digest, Sha224};

/// Lower-case base-36 of the SHA-224 of `encoded`, without leading zeros, as Go's
/// `big.Int.SetBytes(sum).Text(36)` writes it.
pub fn deep_hash(encoded: &[u8]) -> String {
    let sum = Sha224::digest(encoded);
    base36(&sum)
}

/// Big-endian bytes as an unsigned base-36 number.
pub fn base36(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut num: Vec<u8> = bytes.iter().copied().skip_while(|b| *b == 0).collect();
    if num.is_empty() {
        return "0".to_string();
    }
    let mut out = Vec::new();
    while !num.is_empty() {
        let mut rem: u32 = 0;
        let mut next = Vec::with_capacity(num.len());
        for &b in &num {
            let cur = (rem << 8) | u32::from(b);
            let q = cur / 36;
            rem = cur % 36;
            if !(next.is_empty() && q == 0) {
                next.push(q as u8);
            }
        }
        out.push(DIGITS[rem as usize]);
        num = next;
    }
    out.reverse();
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::base36;

    #[test]
    fn base36_matches_go_big_int() {
        assert_eq!(base36(&[0]), "0");
        assert_eq!(base36(&[35]), "z");
        assert_eq!(base36(&[36]), "10");
        assert_eq!(base36(&[1, 0]), "74");
    }
}
