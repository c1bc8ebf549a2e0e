//! The scopes a policy looks an image up by, most specific first, as containers/image computes
//! them (`PolicyConfigurationIdentity` then `PolicyConfigurationNamespaces`): for local images
//! the path is resolved fully first (`explicitfilepath`), so no spelling of the same folder or
//! file (`dir/`, `x/../dir`, a symbolic link) escapes a scope written for it.

use crate::location::{LocalImage, Location, Place};
use std::path::{Path, PathBuf};

/// The transport name and the scopes of an image, most specific first (`""` and `default`
/// are the caller's).
pub fn of(location: &Location) -> Result<(&'static str, Vec<String>), String> {
    Ok(match location.place() {
        Place::Registry(r) => {
            let mut scopes = Vec::new();
            if let Some(d) = &r.digest {
                scopes.push(format!("{}@{d}", r.name()));
            } else {
                scopes.push(format!(
                    "{}:{}",
                    r.name(),
                    r.tag.as_deref().unwrap_or("latest")
                ));
            }
            let mut name = r.name();
            scopes.push(name.clone());
            while let Some(i) = name.rfind('/') {
                name.truncate(i);
                scopes.push(name.clone());
            }
            // *.example.com wildcards, most specific first.
            let host = r.registry.split(':').next().unwrap_or_default().to_string();
            let mut parts: Vec<&str> = host.split('.').collect();
            while parts.len() > 1 {
                parts.remove(0);
                scopes.push(format!("*.{}", parts.join(".")));
            }
            ("docker", scopes)
        }
        Place::Local(LocalImage::OciLayout { path, .. }) => ("oci", path_scopes(path)?),
        Place::Local(LocalImage::OciArchive { path, .. }) => ("oci-archive", path_scopes(path)?),
        Place::Local(LocalImage::DockerArchive { .. }) => ("docker-archive", Vec::new()),
        Place::Path(_) => ("dir", Vec::new()),
    })
}

/// The resolved path, then each parent folder but `/` (the tag is no part of the identity: an
/// image of a layout may be named several ways).
fn path_scopes(path: &Path) -> Result<Vec<String>, String> {
    let resolved = resolve(path)?;
    let mut scopes = Vec::new();
    let mut p = resolved.as_path();
    loop {
        if p.parent().is_none() {
            break;
        }
        let text = p
            .to_str()
            .ok_or_else(|| format!("{}: the path is not UTF-8", p.display()))?;
        scopes.push(text.to_string());
        match p.parent() {
            Some(parent) => p = parent,
            None => break,
        }
    }
    Ok(scopes)
}

/// `ResolvePathToFullyExplicit`: an existing path made absolute with every symbolic link,
/// `.` and `..` resolved; a missing one resolved through its parent.
pub fn resolve(path: &Path) -> Result<PathBuf, String> {
    match std::fs::canonicalize(path) {
        Ok(p) => Ok(p),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let file = path
                .file_name()
                .ok_or_else(|| format!("{}: cannot resolve the path: {e}", path.display()))?;
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let parent = std::fs::canonicalize(parent)
                .map_err(|e| format!("{}: cannot resolve the path: {e}", path.display()))?;
            Ok(parent.join(file))
        }
        Err(e) => Err(format!("{}: cannot resolve the path: {e}", path.display())),
    }
}
