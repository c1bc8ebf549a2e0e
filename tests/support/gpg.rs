//! A throwaway GnuPG home for the signing tests (`signing*.rs`, `kind_messages.rs`, the policy
//! tests): gpg starts an agent per home, which outlives the test unless it is stopped, so the
//! home and the stop are written once here.

use std::path::Path;
use std::process::Command;

/// A fresh `GNUPGHOME` in a temporary folder; its gpg-agent is stopped (`gpgconf --kill`)
/// before the folder is removed, so no agent is left running after a test.
pub struct GpgHome(tempfile::TempDir);

impl GpgHome {
    /// An empty home, holding no key yet.
    pub fn new() -> GpgHome {
        GpgHome(tempfile::tempdir().expect("tmp"))
    }

    /// The folder to pass as `GNUPGHOME`.
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for GpgHome {
    fn drop(&mut self) {
        let _ = Command::new("gpgconf")
            .args(["--kill", "gpg-agent"])
            .env("GNUPGHOME", self.path())
            .output();
    }
}
