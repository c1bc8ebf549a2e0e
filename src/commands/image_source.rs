//! Shared glue between the command line and `registry`: the registry flags every command that
//! touches images flattens in ([`RegistryArgs`]), opening an image from a registry or a local
//! source ([`open_image`]), fetching a bundle image into a temp folder ([`fetch_bundle`]),
//! pushing a built image under several tags ([`push_image`]) and comparing image labels with
//! `annotations.yaml` ([`compare_labels`]).
//!
//! Bundle knowledge lives here, not in `registry`: which layer holds `metadata/`, which files a
//! bundle image should contain, which labels must agree with the annotations.

use super::Failure;
use crate::image::Image;
use crate::registry::auth::{self, AuthOptions, Secret};
use crate::registry::client::{Client, ClientOptions};
use crate::registry::layout_source;
use crate::registry::pull::{self, Platform, VerifyingReader};
use crate::registry::push::{self, Progress, PushOptions, PushReport};
use crate::registry::unpack::{self, EntryInfo, Limits};
use crate::registry::{Reference, RegistryError, RetryPolicy};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Registry flags shared by `inspect`, `pull`, `validate --image` and `build --push`.
#[derive(Clone, Default, clap::Args)]
#[command(next_help_heading = "Registry and platform options")]
pub struct RegistryArgs {
    /// Credentials as USER:PASSWORD (or just USER with --password-stdin).
    #[arg(long, value_name = "USER[:PASSWORD]")]
    pub creds: Option<String>,
    /// Read the password from standard input (use with --creds USER).
    #[arg(long)]
    pub password_stdin: bool,
    /// Auth file (docker config.json or containers auth.json format) to read credentials from
    /// before the default locations.
    #[arg(long, value_name = "FILE")]
    pub authfile: Option<PathBuf>,
    /// PEM file of extra CA certificates to trust for registry TLS.
    #[arg(long, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,
    /// Talk plain HTTP to the registry (automatic for localhost and 127.0.0.0/8).
    #[arg(long)]
    pub plain_http: bool,
    /// Skip TLS certificate verification.
    #[arg(long)]
    pub insecure: bool,
    /// Platform: recorded in the image by `build`; picked from a multi-platform index by
    /// `validate --image`, `inspect` and `pull`.
    #[arg(long, value_name = "OS/ARCH[/VARIANT]", default_value = "linux/amd64")]
    pub platform: String,
    /// Attempts per request on connection errors, 408, 429 and 5xx (1 = no retry, 0 = default).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub retries: u32,
}

impl std::fmt::Debug for RegistryArgs {
    /// Written by hand so `--creds USER:PASSWORD` never reaches a debug print of the arguments.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let creds = self.creds.as_ref().map(|c| match c.split_once(':') {
            Some((u, _)) => format!("{u}:<redacted>"),
            None => c.clone(),
        });
        f.debug_struct("RegistryArgs")
            .field("creds", &creds)
            .field("password_stdin", &self.password_stdin)
            .field("authfile", &self.authfile)
            .field("ca_file", &self.ca_file)
            .field("plain_http", &self.plain_http)
            .field("insecure", &self.insecure)
            .field("platform", &self.platform)
            .field("retries", &self.retries)
            .finish()
    }
}

impl RegistryArgs {
    /// Credential options: `--creds`, `--password-stdin` (read now, once), `--authfile`, and
    /// the process environment for the default locations.
    pub fn auth_options(&self) -> Result<AuthOptions, Failure> {
        let mut opts = AuthOptions::from_env();
        opts.authfile = self.authfile.clone();
        match (&self.creds, self.password_stdin) {
            (Some(c), false) => {
                let (u, p) = auth::parse_creds(c)?;
                opts.explicit = Some((u, p));
            }
            (Some(user), true) => {
                let user = user.split(':').next().unwrap_or("").to_string();
                if user.is_empty() {
                    return Err(Failure::usage("--password-stdin needs --creds USER"));
                }
                let mut pw = String::new();
                std::io::stdin().read_to_string(&mut pw).map_err(|e| {
                    Failure::usage(format!("cannot read the password from stdin: {e}"))
                })?;
                let pw = pw.trim_end_matches(['\n', '\r']).to_string();
                opts.explicit = Some((user, Secret::new(pw)));
            }
            (None, true) => return Err(Failure::usage("--password-stdin needs --creds USER")),
            (None, false) => {}
        }
        Ok(opts)
    }

    /// Transport options from the flags. `--ca-file` and `--insecure` imply HTTPS even for
    /// loopback hosts (which otherwise get plain HTTP automatically).
    pub fn client_options(&self) -> ClientOptions {
        ClientOptions {
            plain_http: self.plain_http,
            insecure: self.insecure,
            ca_file: self.ca_file.clone(),
            retry: if self.retries == 0 {
                RetryPolicy::default()
            } else {
                RetryPolicy {
                    max_attempts: self.retries,
                    ..RetryPolicy::default()
                }
            },
            ..ClientOptions::default()
        }
    }

    /// The platform flag, parsed.
    /// An empty value (as `Default` gives) means linux/amd64.
    pub fn platform(&self) -> Result<Platform, Failure> {
        if self.platform.is_empty() {
            return Ok(Platform::default());
        }
        self.platform
            .parse::<Platform>()
            .map_err(|e| Failure::usage(e.to_string()))
    }

    /// A client for `reference`'s registry with its resolved credential.
    pub fn client(&self, reference: &Reference, auth: &AuthOptions) -> Result<Client, Failure> {
        let cred = auth::resolve(&reference.registry, &reference.repository, auth)?;
        Ok(Client::new(
            &reference.registry,
            cred,
            &self.client_options(),
        )?)
    }
}

/// An opened image: manifest, config and a way to stream each layer, from a registry or a local
/// source.
pub struct OpenedImage {
    /// The source as the user typed it.
    pub name: String,
    /// Manifest digest.
    pub digest: String,
    /// Manifest media type.
    pub media_type: String,
    /// Raw config JSON.
    pub config: Vec<u8>,
    /// Config descriptor.
    pub config_descriptor: crate::image::Descriptor,
    /// Layer descriptors.
    pub layers: Vec<crate::image::Descriptor>,
    /// Warnings (index resolved...).
    pub warnings: Vec<String>,
    access: Access,
}

enum Access {
    Registry {
        client: Box<Client>,
        repository: String,
    },
    Local {
        image: Image,
        _dir: Option<tempfile::TempDir>,
    },
}

/// Largest layer accepted (bundles are kilobytes; this is a sanity bound).
const MAX_LAYER_BYTES: u64 = 1 << 30;

impl OpenedImage {
    /// Opens layer `i` as a verifying stream (compressed bytes); call `finish` after reading.
    pub fn open_layer(&self, i: usize) -> Result<VerifyingReader<Box<dyn Read>>, RegistryError> {
        let desc = self
            .layers
            .get(i)
            .ok_or_else(|| RegistryError::Protocol(format!("no layer {i}")))?
            .clone();
        match &self.access {
            Access::Registry { client, repository } => {
                pull::open_blob(client, repository, &desc, MAX_LAYER_BYTES)
            }
            Access::Local { image, .. } => {
                let blob = image
                    .layers
                    .get(i)
                    .ok_or_else(|| RegistryError::Protocol(format!("no layer {i}")))?;
                let reader: Box<dyn Read> = match &blob.source {
                    crate::image::BlobSource::Memory(b) => {
                        Box::new(std::io::Cursor::new(b.clone()))
                    }
                    crate::image::BlobSource::File(p) => Box::new(
                        std::fs::File::open(p)
                            .map_err(|e| RegistryError::io("cannot open layer", p, e))?,
                    ),
                };
                Ok(VerifyingReader::new(reader, desc, MAX_LAYER_BYTES))
            }
        }
    }

    /// Config `Labels`.
    pub fn labels(&self) -> BTreeMap<String, String> {
        let v: serde_json::Value =
            serde_json::from_slice(&self.config).unwrap_or(serde_json::Value::Null);
        let mut out = BTreeMap::new();
        if let Some(map) = v.pointer("/config/Labels").and_then(|l| l.as_object()) {
            for (k, val) in map {
                out.insert(
                    k.clone(),
                    val.as_str().map_or_else(|| val.to_string(), str::to_string),
                );
            }
        }
        out
    }

    /// `os/architecture[/variant]` from the config.
    pub fn platform(&self) -> String {
        let v: serde_json::Value =
            serde_json::from_slice(&self.config).unwrap_or(serde_json::Value::Null);
        let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
        let mut p = format!("{}/{}", s("os"), s("architecture"));
        if !s("variant").is_empty() {
            p = format!("{p}/{}", s("variant"));
        }
        p
    }

    /// Config `Entrypoint` and `Cmd` when set (a bundle image should have neither).
    pub fn runnable(&self) -> Vec<String> {
        let v: serde_json::Value =
            serde_json::from_slice(&self.config).unwrap_or(serde_json::Value::Null);
        ["Entrypoint", "Cmd"]
            .iter()
            .filter_map(|k| {
                v.pointer(&format!("/config/{k}"))
                    .filter(|x| !x.is_null() && x.as_array().is_none_or(|a| !a.is_empty()))
                    .map(|x| format!("{k} {x}"))
            })
            .collect()
    }

    /// Lists layer `i` (streamed, verified, nothing written), capturing `metadata/annotations.yaml`.
    pub fn list_layer(&self, i: usize) -> Result<(Vec<EntryInfo>, Option<Vec<u8>>), RegistryError> {
        let mut vr = self.open_layer(i)?;
        let media_type = self.layers[i].media_type.clone();
        let (entries, mut captured) = {
            let r = unpack::decompress(&mut vr, &media_type, &self.layers[i].digest)?;
            unpack::list_layer(
                r,
                &self.layers[i].digest,
                &Limits::default(),
                &|p| p == ANNOTATIONS_PATH,
                1 << 20,
            )?
        };
        vr.finish()?;
        Ok((entries, captured.remove(ANNOTATIONS_PATH)))
    }

    /// Finds and reads `metadata/annotations.yaml` fetching as few layers as possible.
    ///
    /// Heuristic: olmpack and `docker build` of a `bundle.Dockerfile` put `COPY metadata` in its
    /// own, last and small layer. So we try the last layer first if it is at most 1 MiB, then the
    /// other layers of at most 1 MiB smallest first, then the rest; we stop at the first layer
    /// holding the file. Returns the layer index, the bytes and how many layers were read. A
    /// later layer could still whiteout the file; bundles never do, and `pull` honours it.
    pub fn find_annotations(&self) -> Result<Option<(usize, Vec<u8>, usize)>, RegistryError> {
        let n = self.layers.len();
        let mut order: Vec<usize> = Vec::new();
        const SMALL: u64 = 1 << 20;
        if n > 0 && self.layers[n - 1].size <= SMALL {
            order.push(n - 1);
        }
        let mut small: Vec<usize> = (0..n)
            .filter(|i| !order.contains(i) && self.layers[*i].size <= SMALL)
            .collect();
        small.sort_by_key(|i| self.layers[*i].size);
        order.extend(small);
        order.extend((0..n).filter(|i| self.layers[*i].size > SMALL));
        for (read, i) in order.into_iter().enumerate() {
            let (_, captured) = self.list_layer(i)?;
            if let Some(bytes) = captured {
                return Ok(Some((i, bytes, read + 1)));
            }
        }
        Ok(None)
    }

    /// Unpacks every layer in order into `root` (safe extraction, digests verified while
    /// streaming; on error the caller discards `root`).
    pub fn unpack_into(
        &self,
        root: &Path,
        limits: &Limits,
    ) -> Result<unpack::Stats, RegistryError> {
        let mut stats = unpack::Stats::default();
        // Registry layers are downloaded (verified, retried when cut off) to a temp file first
        // so a dropped connection costs a re-download, not a failed pull.
        let spool = match &self.access {
            Access::Registry { .. } => Some(
                tempfile::Builder::new()
                    .prefix("olmpack-layers-")
                    .tempdir()
                    .map_err(|e| {
                        RegistryError::io("cannot create temp dir in", std::env::temp_dir(), e)
                    })?,
            ),
            Access::Local { .. } => None,
        };
        for i in 0..self.layers.len() {
            let desc = &self.layers[i];
            let mut vr = match (&self.access, &spool) {
                (Access::Registry { client, repository }, Some(dir)) => {
                    let path = dir.path().join(format!("layer-{i}"));
                    pull::fetch_blob_to_file(client, repository, desc, &path, MAX_LAYER_BYTES)?;
                    let f = std::fs::File::open(&path)
                        .map_err(|e| RegistryError::io("cannot open layer", &path, e))?;
                    VerifyingReader::new(
                        Box::new(f) as Box<dyn Read>,
                        desc.clone(),
                        MAX_LAYER_BYTES,
                    )
                }
                _ => self.open_layer(i)?,
            };
            {
                let r = unpack::decompress(&mut vr, &desc.media_type, &desc.digest)?;
                unpack::unpack_layer(r, root, &desc.digest, limits, &mut stats)?;
            }
            vr.finish()?;
        }
        Ok(stats)
    }
}

/// The path of the annotations file inside a bundle image.
pub const ANNOTATIONS_PATH: &str = "metadata/annotations.yaml";

/// Opens `source`: `oci:PATH[:TAG]`, `oci-archive:FILE[:TAG]`, `docker-archive:FILE`, or a
/// registry reference. Registry manifests and configs are verified against their digests.
pub fn open_image(source: &str, args: &RegistryArgs) -> Result<OpenedImage, Failure> {
    let platform = args.platform()?;
    if let Some(local) = layout_source::parse_source(source) {
        let loaded = layout_source::load(&local, &platform, source)?;
        let parsed = pull::parse_manifest(&push::read_small(
            &loaded.image.manifest,
            pull::MAX_MANIFEST_BYTES,
        )?)?;
        let config = push::read_small(&loaded.image.config, pull::MAX_MANIFEST_BYTES)?;
        return Ok(OpenedImage {
            name: source.to_string(),
            digest: loaded.image.manifest.descriptor.digest.clone(),
            media_type: loaded.image.manifest.descriptor.media_type.clone(),
            config,
            config_descriptor: parsed.config,
            layers: parsed.layers,
            warnings: loaded.warnings,
            access: Access::Local {
                image: loaded.image,
                _dir: loaded.dir,
            },
        });
    }
    let reference = Reference::parse(source)?;
    let auth = args.auth_options()?;
    let client = args.client(&reference, &auth)?;
    let m = pull::fetch_manifest(&client, &reference, &platform)?;
    let config = pull::fetch_small_blob(&client, &reference.repository, &m.parsed.config)?;
    Ok(OpenedImage {
        name: source.to_string(),
        digest: m.digest,
        media_type: m.media_type,
        config,
        config_descriptor: m.parsed.config,
        layers: m.parsed.layers,
        warnings: m.warnings,
        access: Access::Registry {
            client: Box::new(client),
            repository: reference.repository,
        },
    })
}

/// A bundle image unpacked into a temp folder, for `validate --image`.
#[derive(Debug)]
pub struct FetchedBundle {
    /// Unpacked bundle root holding `manifests/`, `metadata/` (and maybe `tests/`); deleted on drop.
    pub dir: tempfile::TempDir,
    /// Image config labels.
    pub labels: BTreeMap<String, String>,
    /// Manifest digest.
    pub digest: String,
    /// Manifest media type.
    pub media_type: String,
    /// Things a bundle image should not have: an index, files outside manifests/ metadata/
    /// tests/, a runnable Entrypoint/Cmd.
    pub warnings: Vec<String>,
}

/// Top-level entries a bundle image may hold.
const BUNDLE_DIRS: [&str; 3] = ["manifests", "metadata", "tests"];

/// Pulls `reference` (a registry reference or a local `oci:`/`oci-archive:`/`docker-archive:`
/// source) and unpacks it safely into a temp folder.
pub fn fetch_bundle(reference: &str, args: &RegistryArgs) -> Result<FetchedBundle, Failure> {
    let opened = open_image(reference, args)?;
    let dir = tempfile::Builder::new()
        .prefix("olmpack-bundle-")
        .tempdir()
        .map_err(|e| Failure::usage(format!("cannot create a temp folder: {e}")))?;
    opened.unpack_into(dir.path(), &Limits::default())?;
    let warnings = bundle_warnings(&opened, dir.path());
    Ok(FetchedBundle {
        labels: opened.labels(),
        digest: opened.digest.clone(),
        media_type: opened.media_type.clone(),
        warnings,
        dir,
    })
}

/// Warnings about an unpacked bundle image: index resolution, extra top-level files, and a
/// runnable config.
pub fn bundle_warnings(opened: &OpenedImage, root: &Path) -> Vec<String> {
    let mut w = opened.warnings.clone();
    if let Ok(rd) = std::fs::read_dir(root) {
        let mut extra: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| !BUNDLE_DIRS.contains(&n.as_str()))
            .collect();
        extra.sort();
        if !extra.is_empty() {
            w.push(format!(
                "{}: the image holds files outside manifests/, metadata/ and tests/: {}",
                opened.name,
                extra.join(", ")
            ));
        }
    }
    let run = opened.runnable();
    if !run.is_empty() {
        w.push(format!(
            "{}: a bundle image is data, not a program, but its config sets {}",
            opened.name,
            run.join(" and ")
        ));
    }
    w
}

/// Pushes `image` under every reference in `tags` (full references like
/// `quay.io/org/bundle:v1`; several tags and repositories in one call), mounting blobs from
/// `mount_from` (a repository on the same registry) when given. Returns `REF@sha256:…` per tag.
pub fn push_image(
    image: &Image,
    tags: &[String],
    args: &RegistryArgs,
    mount_from: Option<&str>,
) -> Result<Vec<String>, Failure> {
    let opts = PushOptions {
        mount_from: mount_from.map(str::to_string),
        progress: Progress::Auto,
        ..PushOptions::default()
    };
    let reports = push_image_with(image, tags, args, &opts)?;
    Ok(reports.into_iter().flat_map(|(r, _)| r.refs).collect())
}

/// [`push_image`] with explicit push options, returning each repository's report and request
/// counters `[head, get, post, put, patch, token, retries]` (for tests and benchmarks).
pub fn push_image_with(
    image: &Image,
    tags: &[String],
    args: &RegistryArgs,
    opts: &PushOptions,
) -> Result<Vec<(PushReport, [usize; 7])>, Failure> {
    if tags.is_empty() {
        return Err(Failure::usage(
            "nothing to push to: give at least one -t REF",
        ));
    }
    let auth = args.auth_options()?;
    // Group by repository, keeping the order the user gave.
    let mut groups: Vec<(Reference, Vec<String>)> = Vec::new();
    for t in tags {
        let r = Reference::parse(t)?;
        let tag = r
            .digest
            .clone()
            .or(r.tag.clone())
            .unwrap_or_else(|| "latest".to_string());
        if let Some(d) = &r.digest
            && *d != image.manifest.descriptor.digest
        {
            return Err(Failure::usage(format!(
                "{t} pins digest {d} but the image is {}",
                image.manifest.descriptor.digest
            )));
        }
        match groups
            .iter_mut()
            .find(|(g, _)| g.registry == r.registry && g.repository == r.repository)
        {
            Some((_, v)) => v.push(tag),
            None => groups.push((r, vec![tag])),
        }
    }
    let mut out = Vec::new();
    for (reference, group_tags) in groups {
        let client = args.client(&reference, &auth)?;
        let report = push::push_image(&client, image, &reference.repository, &group_tags, opts)?;
        out.push((report, client.stats.snapshot()));
    }
    Ok(out)
}

/// Label comparison lives with the other image rules; re-exported for callers of this module.
pub use crate::validate::image::{BUNDLE_KEY_PREFIX, LabelMismatch, compare_labels};

/// Reads the `annotations:` mapping of an `annotations.yaml` (scalar values as written; lists and
/// mappings as `<non-scalar>`), for display and label comparison. Full validation is the bundle
/// loader's job.
pub fn parse_annotations(text: &str) -> Result<BTreeMap<String, String>, String> {
    let _reading = crate::guard::reading(std::path::Path::new("metadata/annotations.yaml"));
    let docs = crate::bundle::yaml::parse_stream(text).map_err(|e| format!("invalid YAML: {e}"))?;
    let mut out = BTreeMap::new();
    let Some(map) = docs
        .first()
        .and_then(|d| d.root.get("annotations"))
        .and_then(|a| a.as_map())
    else {
        return Ok(out);
    };
    for (key, value) in map {
        let text = match &value.value {
            crate::bundle::yaml::Value::Scalar(t, _) => t.clone(),
            _ => "<non-scalar>".to_string(),
        };
        out.insert(key.text.clone(), text);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_of_args_hides_the_password() {
        let a = RegistryArgs {
            creds: Some("me:s3cr3t:x".into()),
            ..RegistryArgs::default()
        };
        let d = format!("{a:?}");
        assert!(d.contains("me:<redacted>") && !d.contains("s3cr3t"), "{d}");
    }

    #[test]
    fn annotations_are_read() {
        let y = "# c\nannotations:\n  operators.operatorframework.io.bundle.package.v1: etcd\n  operators.operatorframework.io.bundle.channels.v1: 'alpha,stable'\n  nested: {a: 1}\n  after: x\nother: {annotations: no}\n";
        let a = parse_annotations(y).unwrap();
        assert_eq!(
            a.get("operators.operatorframework.io.bundle.package.v1")
                .map(String::as_str),
            Some("etcd")
        );
        assert_eq!(
            a.get("operators.operatorframework.io.bundle.channels.v1")
                .map(String::as_str),
            Some("alpha,stable")
        );
        assert_eq!(a.get("nested").map(String::as_str), Some("<non-scalar>"));
        assert_eq!(a.get("after").map(String::as_str), Some("x"));
        assert_eq!(a.len(), 4);
        assert!(parse_annotations("a: [").is_err());
    }

    #[test]
    fn labels_compare_key_by_key() {
        let p = |k: &str| format!("{BUNDLE_KEY_PREFIX}{k}");
        let labels: BTreeMap<String, String> = [
            (p("package.v1"), "a".to_string()),
            (p("channels.v1"), "s".into()),
            (p("only.label"), "x".into()),
            ("other".into(), "1".into()),
        ]
        .into();
        let ann: BTreeMap<String, String> = [
            (p("package.v1"), "b".to_string()),
            (p("channels.v1"), "s".into()),
            (p("only.ann"), "y".into()),
        ]
        .into();
        let m = compare_labels(&labels, &ann);
        assert_eq!(m.len(), 3);
        assert_eq!(m[0].key, p("only.ann"));
        assert_eq!(
            (m[0].label.as_deref(), m[0].annotation.as_deref()),
            (None, Some("y"))
        );
        assert_eq!(
            (m[2].label.as_deref(), m[2].annotation.as_deref()),
            (Some("a"), Some("b"))
        );
        assert!(m[2].to_string().contains("\"a\"") && m[2].to_string().contains("\"b\""));
    }
}
