//! Docker credential helpers: `docker-credential-<name> get` with the server URL on stdin and
//! `{"ServerURL","Username","Secret"}` on stdout. A `Username` of `<token>` means `Secret` is an
//! identity (refresh) token.

use super::{Credential, CredentialSource, ResolvedCredential, Secret};
use crate::registry::errors::RegistryError;
use serde::Deserialize;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

#[derive(Deserialize)]
struct HelperOutput {
    #[serde(rename = "Username", default)]
    username: String,
    #[serde(rename = "Secret", default)]
    secret: String,
}

/// Runs a helper. "credentials not found" (exit non-zero with that text) gives `None` so the
/// search continues; any other failure is an error that names the helper but not its output
/// beyond the first line of stderr (helpers do not print secrets on failure).
pub fn run_helper(
    name: &str,
    server: &str,
    registry: &str,
    config: &Path,
) -> Result<Option<ResolvedCredential>, RegistryError> {
    let program = format!("docker-credential-{name}");
    let err = |reason: String| RegistryError::Credentials {
        host: registry.into(),
        source_desc: format!("{program} (named in {})", config.display()),
        reason,
    };
    let mut child = Command::new(&program)
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| err(format!("cannot run it: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(server.as_bytes())
            .map_err(|e| err(format!("cannot write to it: {e}")))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| err(format!("cannot read its output: {e}")))?;
    if !out.status.success() {
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        if text.to_ascii_lowercase().contains("credentials not found") {
            return Ok(None);
        }
        // Quote stderr only: a helper's stdout is where secrets go.
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first = stderr
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(200)
            .collect::<String>();
        return Err(err(format!("it failed ({}): {first}", out.status)));
    }
    let parsed: HelperOutput = serde_json::from_slice(&out.stdout)
        .map_err(|_| err("its output is not the expected JSON".into()))?;
    if parsed.secret.is_empty() {
        return Ok(None);
    }
    let credential = if parsed.username == "<token>" {
        Credential::IdentityToken {
            username: String::new(),
            token: Secret::new(parsed.secret),
        }
    } else {
        Credential::Basic {
            username: parsed.username,
            password: Secret::new(parsed.secret),
        }
    };
    Ok(Some(ResolvedCredential {
        credential,
        source: CredentialSource::Helper {
            name: name.to_string(),
            config: config.to_path_buf(),
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn helper_protocol_and_not_found() {
        let d = tempfile::tempdir().unwrap();
        let script = d.path().join("docker-credential-olmtest");
        std::fs::write(
            &script,
            "#!/bin/sh\nread server\nif [ \"$server\" = \"r.io\" ]; then echo '{\"ServerURL\":\"r.io\",\"Username\":\"helperuser\",\"Secret\":\"s3\"}'; \
             elif [ \"$server\" = \"t.io\" ]; then echo '{\"Username\":\"<token>\",\"Secret\":\"rt\"}'; else echo 'credentials not found in native keychain'; exit 1; fi\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cfg = d.path().join("config.json");
        std::fs::write(
            &cfg,
            r#"{"credHelpers":{"r.io":"olmtest"},"credsStore":"olmtest"}"#,
        )
        .unwrap();
        // PATH is process-global; this is the only test that changes it and it only appends.
        let path = format!(
            "{}:{}",
            d.path().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        // SAFETY: tests in this crate do not read PATH concurrently except to spawn processes,
        // which sees either value.
        unsafe { std::env::set_var("PATH", path) };
        let r = super::super::lookup_file(&cfg, "r.io", "x")
            .unwrap()
            .unwrap();
        assert!(
            matches!(r.credential, Credential::Basic { ref username, ref password } if username == "helperuser" && password.expose() == "s3")
        );
        assert!(r.source.to_string().contains("docker-credential-olmtest"));
        let r = super::super::lookup_file(&cfg, "t.io", "x")
            .unwrap()
            .unwrap();
        assert!(matches!(r.credential, Credential::IdentityToken { .. }));
        assert!(
            super::super::lookup_file(&cfg, "none.io", "x")
                .unwrap()
                .is_none()
        );
    }
}
