//! `sha256:<hex>` digests for the registry client: the image module's, so a digest computed on
//! push and one computed on pull can never be formatted differently.

pub use crate::image::digest::{format_digest as finish, sha256_digest as sha256};

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
