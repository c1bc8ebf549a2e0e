//! Hostile registries for the registry-client tests (issue 40): `hostile_registry.py` started
//! on two free loopback ports, every request it receives recorded, killed on drop (and gone by
//! itself after its lifetime in any case).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// A running `hostile_registry.py`.
pub struct Hostile {
    child: Child,
    /// `127.0.0.1:PORT` of the registry the command names.
    pub front: String,
    /// `127.0.0.1:PORT` of the second host.
    pub other: String,
    dir: tempfile::TempDir,
}

impl Drop for Hostile {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One request a hostile server received.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Seen {
    /// `front` or `other`.
    pub server: String,
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
}

impl Hostile {
    /// Starts the servers in `mode` (see the script's documentation), alive at most 300 s.
    pub fn start(mode: &str) -> Hostile {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("requests.jsonl");
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/hostile_registry.py");
        let mut child = Command::new("/usr/bin/python3")
            .arg(script)
            .arg(mode)
            .arg(&log)
            .arg("300")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start python3");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read ports");
        let mut ports = line.split_whitespace();
        let (Some(front), Some(other)) = (ports.next(), ports.next()) else {
            let _ = child.kill();
            panic!("hostile_registry.py printed no ports: {line:?}");
        };
        Hostile {
            front: format!("127.0.0.1:{front}"),
            other: format!("127.0.0.1:{other}"),
            child,
            dir,
        }
    }

    /// Every request received so far.
    pub fn seen(&self) -> Vec<Seen> {
        let text =
            std::fs::read_to_string(self.dir.path().join("requests.jsonl")).unwrap_or_default();
        text.lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The requests that carried an `Authorization` header naming `secret` (Basic, base64).
    pub fn leaked(&self, user: &str, secret: &str) -> Vec<Seen> {
        use base64::Engine;
        let basic = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{secret}"))
        );
        self.seen()
            .into_iter()
            .filter(|s| s.authorization.as_deref() == Some(basic.as_str()))
            .collect()
    }
}
