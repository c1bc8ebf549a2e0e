//! Registry integration tests against the real CNCF distribution registry
//! (`/usr/bin/docker-registry`), in three configurations (plain HTTP, TLS + htpasswd, bearer
//! tokens), cross-checked with skopeo, and with a fault-injecting proxy in front.

use crate::support::proc::Bounded;
use crate::support::registry as support;

use assert_cmd::Command;
use olmpack::action::bundle_image::{compare_labels, parse_annotations};
use olmpack::commands::flags::{ConnectionArgs, RegistryArgs};

/// The library calls these tests drive, taking the command-line flags as `bundle` commands do
/// (flags -> `RegistryOptions` -> transport), with errors as the commands report them.
mod image_source {
    use olmpack::action::bundle_image::{self, FetchedBundle};
    use olmpack::commands::Failure;
    use olmpack::commands::flags::RegistryArgs;
    use olmpack::image::{Artifact, Image};
    use olmpack::registry::push::{PushOptions, PushReport};
    use olmpack::transport::sink;

    pub fn push_image_with(
        image: &Image,
        tags: &[String],
        args: &RegistryArgs,
        opts: &PushOptions,
    ) -> Result<Vec<(PushReport, [usize; 7])>, Failure> {
        let named: Vec<&str> = tags.iter().map(String::as_str).collect();
        Ok(sink::push(
            Artifact::Image(image),
            tags,
            &args.options(&named)?,
            opts,
        )?)
    }

    pub fn push_image(
        image: &Image,
        tags: &[String],
        args: &RegistryArgs,
        mount_from: Option<&str>,
    ) -> Result<Vec<String>, Failure> {
        let opts = PushOptions {
            mount_from: mount_from.map(str::to_string),
            ..PushOptions::default()
        };
        let reports = push_image_with(image, tags, args, &opts)?;
        Ok(reports.into_iter().flat_map(|(r, _)| r.refs).collect())
    }

    pub fn fetch_bundle(source: &str, args: &RegistryArgs) -> Result<FetchedBundle, Failure> {
        let location = olmpack::location::Location::parse(source)?;
        Ok(bundle_image::fetch_bundle(
            &location,
            &args.options(&[source])?,
        )?)
    }
}
use olmpack::image::Image;
use olmpack::registry::auth::{self, AuthOptions};
use olmpack::registry::client::{Client, ClientOptions};
use olmpack::registry::push::{self, BlobAction, Progress, PushOptions};
use olmpack::registry::{Reference, RetryPolicy};
use std::path::Path;
use std::time::{Duration, Instant};
use support::{Fault, Mode, PASSWORD, Proxy, Registry, USER};

const REPO: &str = "olm/bundle";

/// The binary with an isolated credential environment.
fn olmpack(home: &Path) -> Command {
    let mut c = crate::support::cmd::olmpack_without_credentials(home);
    c.timeout(Duration::from_secs(120));
    c
}

fn silent() -> PushOptions {
    PushOptions {
        progress: Progress::Silent,
        ..PushOptions::default()
    }
}

fn args_for(reg: &Registry) -> RegistryArgs {
    RegistryArgs {
        connection: ConnectionArgs {
            creds: (reg.mode != Mode::Plain).then(|| format!("{USER}:{PASSWORD}")),
            ca_file: reg.ca.clone(),
            ..ConnectionArgs::default()
        },
        ..RegistryArgs::default()
    }
}

/// A library client with a fast retry policy (fault tests) for `host`.
fn fast_client(host: &str, creds: Option<(&str, &str)>, ca: Option<&Path>) -> Client {
    let opts = AuthOptions {
        explicit: creds
            .map(|(u, p)| {
                auth::bind_user(u, auth::Secret::new(p), &[host.to_string()], "--creds")
                    .expect("bind")
            })
            .unwrap_or_default(),
        ..AuthOptions::default()
    };
    let cred = auth::resolve(host, REPO, &opts).expect("resolve");
    let copts = ClientOptions {
        retry: RetryPolicy::fast(),
        ca_file: ca.map(Path::to_path_buf),
        ..ClientOptions::default()
    };
    Client::new(host, cred, &copts).expect("client")
}

fn assert_same_files(dir: &Path, extra: usize) {
    for (path, data) in support::bundle_files(extra) {
        let got = std::fs::read(dir.join(&path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(got == data, "{path} differs");
    }
}

fn inspect_json(home: &Path, image: &str, flags: &[String], extra: &[&str]) -> serde_json::Value {
    let out = olmpack(home)
        .args(["bundle", "inspect", image, "--output", "json"])
        .args(flags)
        .args(extra)
        .bounded_output()
        .expect("run");
    assert!(
        out.status.success(),
        "inspect failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

/// push (two tags), inspect (text, json, metadata-only), pull (byte-equal), fetch_bundle and
/// label comparison, re-push (every blob skipped), as one scenario per registry mode.
fn roundtrip(reg: &Registry) -> (Image, tempfile::TempDir) {
    let work = tempfile::tempdir().expect("tmp");
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let image = support::bundle_image(work.path(), 0, "testop");
    let digest = image.manifest.descriptor.digest.clone();
    let tags = vec![reg.reference(REPO, "v0.1.0"), reg.reference(REPO, "latest")];
    let args = args_for(reg);

    let reports = image_source::push_image_with(&image, &tags, &args, &silent()).expect("push");
    assert_eq!(reports.len(), 1);
    let (report, _) = &reports[0];
    assert_eq!(
        report.refs,
        vec![
            format!("{}@{digest}", tags[0]),
            format!("{}@{digest}", tags[1])
        ]
    );
    assert_eq!(report.blobs.len(), 3);
    assert!(
        report
            .blobs
            .iter()
            .all(|b| b.action == BlobAction::Uploaded),
        "{:?}",
        report.blobs
    );

    // inspect, text
    let flags = reg.cli_flags();
    let out = olmpack(&home)
        .args(["bundle", "inspect", &tags[0]])
        .args(&flags)
        .bounded_output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains(&format!("Digest:     {digest}")), "{text}");
    assert!(text.contains("Platform:   linux/amd64"), "{text}");
    assert!(
        text.contains("operators.operatorframework.io.bundle.package.v1=testop"),
        "{text}"
    );
    assert!(text.contains("manifests/x.yaml ("), "{text}");
    assert!(
        text.contains("Annotations (metadata/annotations.yaml in layer 1)"),
        "{text}"
    );

    // inspect, json, and the metadata-only path reads one layer
    let v = inspect_json(&home, &tags[1], &flags, &[]);
    assert_eq!(v["digest"], digest);
    assert_eq!(v["mediaType"], "application/vnd.oci.image.manifest.v1+json");
    assert_eq!(v["layers"].as_array().map(Vec::len), Some(2));
    assert_eq!(v["layers"][0]["digest"], image.layers[0].descriptor.digest);
    assert!(
        v["layers"][0]["files"]
            .as_array()
            .expect("files")
            .iter()
            .any(|f| f["path"] == "manifests/x.yaml")
    );
    assert_eq!(
        v["annotations"]["operators.operatorframework.io.bundle.package.v1"],
        "testop"
    );
    assert_eq!(v["layersRead"], 2);
    let v = inspect_json(&home, &tags[1], &flags, &["--no-files"]);
    assert_eq!(v["layersRead"], 1, "only the metadata layer is fetched");
    assert_eq!(v["annotationsLayer"], 1);

    // pull: byte-equal files; refuses a non-empty folder
    let out_dir = work.path().join("pulled");
    let out = olmpack(&home)
        .args(["bundle", "pull", &tags[0]])
        .arg(&out_dir)
        .args(&flags)
        .succeeds();
    assert_same_files(&out_dir, 0);
    assert!(String::from_utf8_lossy(&out.stdout).contains(&digest));
    let out = olmpack(&home)
        .args(["bundle", "pull", &tags[0]])
        .arg(&out_dir)
        .args(&flags)
        .bounded_output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not empty"));

    // fetch_bundle + compare_labels (the validate --image building blocks)
    let fetched = image_source::fetch_bundle(&tags[0], &args).expect("fetch");
    assert_eq!(fetched.digest, digest);
    assert!(fetched.warnings.is_empty(), "{:?}", fetched.warnings);
    let ann = parse_annotations(
        &std::fs::read_to_string(fetched.dir.path().join("metadata/annotations.yaml"))
            .expect("read"),
    )
    .expect("parse");
    assert!(compare_labels(&fetched.labels, &ann).is_empty());

    // re-push: every blob is skipped; a few HEADs and one manifest PUT per tag
    let reports = image_source::push_image_with(&image, &tags, &args, &silent()).expect("re-push");
    let (report, stats) = &reports[0];
    assert!(
        report
            .blobs
            .iter()
            .all(|b| b.action == BlobAction::Existing),
        "{:?}",
        report.blobs
    );
    let [head, _get, post, put, patch, _token, retries] = *stats;
    // With auth, the first HEAD is answered 401 with the challenge and sent again.
    let challenge = usize::from(reg.mode != Mode::Plain);
    assert_eq!(
        (head, post, put, patch, retries),
        (3 + challenge, 0, 2, 0, 0),
        "head, post, put, patch, retries"
    );
    (image, work)
}

#[test]
fn plain_http_roundtrip() {
    let reg = Registry::start(Mode::Plain);
    let (image, _work) = roundtrip(&reg);
    // A mount from a repository that lacks the blobs: the registry answers 202 with an upload
    // session, which we use (no second POST).
    let proxy = Proxy::start(reg.port, |_, _| Fault::Pass);
    let client = fast_client(&proxy.host(), None, None);
    let opts = PushOptions {
        mount_from: Some("olm/empty".into()),
        ..silent()
    };
    let report =
        push::push_image(&client, &image, "olm/fresh", &["v1".to_string()], &opts).expect("push");
    assert!(
        report
            .blobs
            .iter()
            .all(|b| b.action == BlobAction::Uploaded),
        "{:?}",
        report.blobs
    );
    assert_eq!(proxy.count("POST", "?mount=sha256:"), 3);
    assert_eq!(
        proxy.count("POST", "/blobs/uploads/"),
        3,
        "the 202 session was used"
    );
}

#[test]
fn tls_basic_auth_roundtrip_and_credential_errors() {
    let reg = Registry::start(Mode::TlsBasic);
    roundtrip(&reg);
    let work = tempfile::tempdir().expect("tmp");
    let home = work.path();
    let tag = reg.reference(REPO, "v0.1.0");
    let ca = reg.ca.clone().expect("ca").display().to_string();

    // --insecure works without the CA; without either, loopback means plain HTTP, which fails.
    olmpack(home)
        .args([
            "bundle",
            "inspect",
            &tag,
            "--insecure",
            "--creds",
            &format!("{USER}:{PASSWORD}"),
        ])
        .succeeds();

    // A wrong password: a clear 401 naming host and source, never the password.
    let wrong = "Wr0ng-Passw0rd-Zebra";
    let out = olmpack(home)
        .args([
            "bundle",
            "inspect",
            &tag,
            "--ca-file",
            &ca,
            "--creds",
            &format!("{USER}:{wrong}"),
        ])
        .bounded_output()
        .expect("run");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains(&format!(
            "authentication failed for {}: check credentials (source: --creds",
            reg.host
        )),
        "{stderr}"
    );
    assert!(
        !stderr.contains(wrong) && !stdout.contains(wrong),
        "the password leaked: {stderr}"
    );
    // Same through the library push.
    let work2 = tempfile::tempdir().expect("tmp");
    let image = support::bundle_image(work2.path(), 0, "testop");
    let args = RegistryArgs {
        connection: ConnectionArgs {
            creds: Some(format!("{USER}:{wrong}")),
            ca_file: reg.ca.clone(),
            ..ConnectionArgs::default()
        },
        ..RegistryArgs::default()
    };
    let err = image_source::push_image(&image, &[reg.reference(REPO, "bad")], &args, None)
        .expect_err("must fail");
    assert!(
        err.message.contains("authentication failed") && !err.message.contains(wrong),
        "{}",
        err.message
    );

    // Docker config file with the right and then a wrong password.
    let cfg_dir = work.path().join("docker");
    std::fs::create_dir_all(&cfg_dir).expect("mkdir");
    support::write_auth_file(&cfg_dir.join("config.json"), &reg.host, USER, PASSWORD);
    olmpack(home)
        .env("DOCKER_CONFIG", &cfg_dir)
        .args(["bundle", "inspect", &tag, "--ca-file", &ca])
        .succeeds();
    std::fs::write(
        cfg_dir.join("config.json"),
        format!(
            r#"{{"auths":{{"{}/olm":{{"username":"{USER}","password":"{wrong}"}}}}}}"#,
            reg.host
        ),
    )
    .expect("write");
    let out = olmpack(home)
        .env("DOCKER_CONFIG", &cfg_dir)
        .args(["bundle", "inspect", &tag, "--ca-file", &ca])
        .bounded_output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("authentication failed")
            && stderr.contains("config.json")
            && stderr.contains("/olm"),
        "{stderr}"
    );
    assert!(!stderr.contains(wrong), "{stderr}");
    // $REGISTRY_AUTH_FILE (containers auth.json format) comes before the docker config.
    let reg_auth = work.path().join("auth.json");
    support::write_auth_file(&reg_auth, &reg.host, USER, PASSWORD);
    olmpack(home)
        .env("REGISTRY_AUTH_FILE", &reg_auth)
        .env("DOCKER_CONFIG", &cfg_dir)
        .args(["bundle", "inspect", &tag, "--ca-file", &ca])
        .succeeds();
    // No credentials at all.
    let out = olmpack(home)
        .args(["bundle", "inspect", &tag, "--ca-file", &ca])
        .bounded_output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("authentication failed") && stderr.contains("anonymous"),
        "{stderr}"
    );
    // --password-stdin
    olmpack(home)
        .args([
            "bundle",
            "inspect",
            &tag,
            "--ca-file",
            &ca,
            "--creds",
            USER,
            "--password-stdin",
        ])
        .write_stdin(format!("{PASSWORD}\n"))
        .succeeds();
}

/// The system's CA store is read at the first TLS handshake, not when a client is built: on a
/// machine without one (a scratch or distroless image; here `SSL_CERT_FILE` and `SSL_CERT_DIR`
/// name nothing), a plain-HTTP registry is pushed to and read, an HTTPS one with `--ca-file`
/// too, and an HTTPS URL without says what is missing and how to give it. Before, every registry
/// command failed there with "BUILD HOST: TLS with HOST failed: … No CA certificates were
/// loaded from the system", plain HTTP included.
#[test]
fn no_system_ca_store_costs_only_the_tls_that_needs_it() {
    let work = tempfile::tempdir().expect("tmp");
    let home = work.path();
    let empty = home.join("no-roots");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let without_store = |c: &mut Command| {
        c.env("SSL_CERT_FILE", empty.join("none.pem"))
            .env("SSL_CERT_DIR", &empty);
    };
    let plain = Registry::start(Mode::Plain);
    let tag = plain.reference(REPO, "v1");
    let bundle = crate::support::fixtures::valid_basic()
        .display()
        .to_string();
    let mut c = olmpack(home);
    without_store(&mut c);
    c.args(["bundle", "build", &bundle, "--push", "-t", &tag])
        .succeeds();
    let mut c = olmpack(home);
    without_store(&mut c);
    c.args(["bundle", "inspect", &tag, "--no-files"]).succeeds();

    let tls = Registry::start(Mode::TlsBasic);
    let tag = tls.reference(REPO, "v1");
    let creds = format!("{USER}:{PASSWORD}");
    let ca = tls.ca.clone().expect("ca").display().to_string();
    let mut c = olmpack(home);
    without_store(&mut c);
    c.args(["bundle", "build", &bundle, "--push", "-t", &tag])
        .args(["--creds", &creds, "--ca-file", &ca])
        .succeeds();
    // A loopback registry is spoken to over HTTPS only with a TLS option; a catalogd URL says
    // https itself: without a store and without --ca-file, the refusal names both.
    let url = format!("https://{}/catalogs/x", tls.host);
    let mut c = olmpack(home);
    without_store(&mut c);
    let out = c
        .args(["catalog", "query", &url])
        .bounded_output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("TLS with {} failed: ", tls.host))
            && err.contains("no CA certificates on this system")
            && err.contains("--ca-file"),
        "{err}"
    );
    let mut c = olmpack(home);
    without_store(&mut c);
    let out = c
        .args(["catalog", "query", &url, "--ca-file", &ca])
        .bounded_output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/api/v1/all: 404 Not Found"), "{err}");
}

/// A CA file that holds no certificate is named as a CA file, with what is wrong, before any
/// request (the registry named here does not exist); a missing one is named too.
#[test]
fn a_ca_file_without_a_certificate_is_named_as_one() {
    let work = tempfile::tempdir().expect("tmp");
    let home = work.path();
    let junk = home.join("junk.pem");
    std::fs::write(&junk, "not a certificate\n").expect("write");
    let broken = home.join("broken.pem");
    std::fs::write(
        &broken,
        "-----BEGIN CERTIFICATE-----\n!!not base64!!\n-----END CERTIFICATE-----\n",
    )
    .expect("write");
    let missing = home.join("missing.pem");
    for (file, said) in [
        (&junk, "no PEM certificate in the file"),
        (&broken, "not a PEM certificate bundle"),
        (&missing, "No such file"),
    ] {
        let out = olmpack(home)
            .args(["bundle", "inspect", "127.0.0.1:1/x/y:v1", "--ca-file"])
            .arg(file)
            .bounded_output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&file.display().to_string()) && err.contains(said),
            "{}: {err}",
            file.display()
        );
        assert!(!err.contains("image source"), "{err}");
    }
}

#[test]
fn token_auth_roundtrip_reuses_tokens_and_mounts() {
    let reg = Registry::start(Mode::Token);
    let token = reg.token.as_ref().expect("token server");
    let (image, _work) = roundtrip(&reg);
    let calls = token.calls();
    // The first push needed exactly one token (pull,push on the repo), reused for 3 HEADs,
    // 3 POSTs, 3 PUTs and 2 manifest PUTs.
    let first = &calls[0];
    assert_eq!(first.method, "GET");
    assert!(first.authorized);
    assert_eq!(first.scopes, vec![format!("repository:{REPO}:pull,push")]);
    assert_eq!(first.service.as_deref(), Some("test"));
    let push_scoped = calls
        .iter()
        .filter(|c| c.scopes == vec![format!("repository:{REPO}:pull,push")])
        .count();
    assert_eq!(push_scoped, 2, "one token per push (two pushes): {calls:?}");

    // Cross-repository mount: scopes for both repositories in one token request.
    let args = args_for(&reg);
    let before = token.calls().len();
    let opts = PushOptions {
        mount_from: Some(REPO.to_string()),
        ..silent()
    };
    let reports =
        image_source::push_image_with(&image, &[reg.reference("olm/other", "v1")], &args, &opts)
            .expect("mount push");
    let (report, stats) = &reports[0];
    assert!(
        report.blobs.iter().all(|b| b.action == BlobAction::Mounted),
        "{:?}",
        report.blobs
    );
    assert_eq!(stats[5], 1, "one token request");
    let mount_call = &token.calls()[before];
    let mut scopes = mount_call.scopes.clone();
    scopes.sort();
    assert_eq!(
        scopes,
        vec![
            format!("repository:{REPO}:pull"),
            "repository:olm/other:pull,push".to_string()
        ]
    );

    // Identity token (refresh token) from an auth file: OAuth2 POST.
    let work = tempfile::tempdir().expect("tmp");
    use base64::Engine;
    let authfile = work.path().join("auth.json");
    std::fs::write(
        &authfile,
        format!(
            r#"{{"auths":{{"{}":{{"auth":"{}","identitytoken":"refresh-{PASSWORD}"}}}}}}"#,
            reg.host,
            base64::engine::general_purpose::STANDARD.encode("<token>:")
        ),
    )
    .expect("write");
    olmpack(work.path())
        .args([
            "bundle",
            "inspect",
            &reg.reference(REPO, "latest"),
            "--authfile",
        ])
        .arg(&authfile)
        .succeeds();
    let last = token.calls().last().cloned().expect("call");
    assert_eq!(
        (
            last.method.as_str(),
            last.grant_type.as_deref(),
            last.authorized
        ),
        ("POST", Some("refresh_token"), true)
    );

    // Wrong password: the token service refuses; clear message, no secret.
    let wrong = "NotTheRightOne-991";
    let out = olmpack(work.path())
        .args([
            "bundle",
            "inspect",
            &reg.reference(REPO, "latest"),
            "--creds",
            &format!("{USER}:{wrong}"),
        ])
        .bounded_output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains(&format!("authentication failed for {}", reg.host))
            && stderr.contains("token service"),
        "{stderr}"
    );
    assert!(!stderr.contains(wrong), "{stderr}");
}

/// A refresh token travels in a token POST's body, and a 307 or 308 keeps method and body:
/// a token service that redirects so to another origin does not get it carried there. Here a
/// proxy in front of the registry names a token "service" that answers every POST with a 307
/// to a second proxy before the real token server; that second proxy must see no request, and
/// the refusal says why. (Before, the POST followed, refresh token and all.)
#[test]
fn a_refresh_token_is_not_carried_by_a_redirect_to_another_origin() {
    let reg = Registry::start(Mode::Token);
    let token_port = reg.token.as_ref().expect("token server").port;
    let catcher = Proxy::start(token_port, |_, _| Fault::Pass);
    let catcher_port = catcher.port;
    let redirector = Proxy::start(token_port, move |seen, _| {
        if seen.method == "POST" {
            Fault::Status(
                307,
                vec![(
                    "Location".into(),
                    format!("http://127.0.0.1:{catcher_port}/token"),
                )],
            )
        } else {
            Fault::Pass
        }
    });
    let realm = format!(
        "Bearer realm=\"http://127.0.0.1:{}/token\",service=\"test\"",
        redirector.port
    );
    let front = Proxy::start(reg.port, move |_, _| {
        Fault::Status(401, vec![("WWW-Authenticate".into(), realm.clone())])
    });
    let host = format!("127.0.0.1:{}", front.port);
    let work = tempfile::tempdir().expect("tmp");
    let authfile = work.path().join("auth.json");
    std::fs::write(
        &authfile,
        format!(r#"{{"auths":{{"{host}":{{"identitytoken":"refresh-{PASSWORD}"}}}}}}"#),
    )
    .expect("write");
    let out = olmpack(work.path())
        .args([
            "bundle",
            "inspect",
            &format!("{host}/{REPO}:latest"),
            "--authfile",
        ])
        .arg(&authfile)
        .bounded_output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        redirector
            .seen
            .lock()
            .unwrap()
            .iter()
            .any(|s| s.method == "POST"),
        "the token POST reached the redirecting service"
    );
    assert_eq!(
        catcher.seen.lock().unwrap().len(),
        0,
        "the refresh token followed the redirect to another origin: {err}"
    );
    assert!(err.contains("another origin"), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");
}

#[test]
fn skopeo_reads_what_we_push_and_we_read_what_skopeo_pushes() {
    let reg = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().expect("tmp");
    let image = support::bundle_image(work.path(), 0, "testop");
    let tag = reg.reference(REPO, "v1");
    image_source::push_image_with(
        &image,
        std::slice::from_ref(&tag),
        &RegistryArgs::default(),
        &silent(),
    )
    .expect("push");
    let out = std::process::Command::new("skopeo")
        .args(["inspect", "--tls-verify=false", &format!("docker://{tag}")])
        .bounded_output()
        .expect("skopeo");
    assert!(
        out.status.success(),
        "skopeo inspect: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["Labels"], support::labels("testop"));
    assert_eq!(v["Digest"], image.manifest.descriptor.digest);
    let layers: Vec<String> = image
        .layers
        .iter()
        .map(|l| l.descriptor.digest.clone())
        .collect();
    assert_eq!(v["Layers"], serde_json::json!(layers));

    // An image skopeo pushed from an OCI layout.
    let img2_dir = work.path().join("img2");
    std::fs::create_dir_all(&img2_dir).expect("mkdir");
    let img2 = support::bundle_image(&img2_dir, 0, "skopeoop");
    let layout = work.path().join("layout");
    support::write_layout(&img2, &layout, "v2");
    let dest = reg.reference("olm/fromskopeo", "v2");
    let out = std::process::Command::new("skopeo")
        .args([
            "copy",
            "--dest-tls-verify=false",
            &format!("oci:{}:v2", layout.display()),
            &format!("docker://{dest}"),
        ])
        .bounded_output()
        .expect("skopeo");
    assert!(
        out.status.success(),
        "skopeo copy: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let v = inspect_json(&home, &dest, &[], &[]);
    assert_eq!(
        v["labels"]["operators.operatorframework.io.bundle.package.v1"],
        "skopeoop"
    );
    let fetched = image_source::fetch_bundle(&dest, &RegistryArgs::default()).expect("fetch");
    assert_same_files(fetched.dir.path(), 0);
    // Labels disagree with annotations.yaml: both values are reported.
    let ann = parse_annotations(
        &std::fs::read_to_string(fetched.dir.path().join("metadata/annotations.yaml"))
            .expect("read"),
    )
    .expect("parse");
    let m = compare_labels(&fetched.labels, &ann);
    assert_eq!(m.len(), 1);
    assert_eq!(
        (m[0].label.as_deref(), m[0].annotation.as_deref()),
        (Some("skopeoop"), Some("testop"))
    );
    let out_dir = work.path().join("pulled");
    olmpack(&home)
        .args(["bundle", "pull", &dest])
        .arg(&out_dir)
        .succeeds();
    assert_same_files(&out_dir, 0);
}

fn is_upload_put_with_body(s: &support::Seen) -> bool {
    s.method == "PUT" && s.path.contains("/blobs/uploads/") && s.body_len > 0
}

#[test]
fn dropped_connection_mid_upload_is_retried_from_a_fresh_session() {
    let reg = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().expect("tmp");
    let image = support::bundle_image(work.path(), 3000, "testop");
    let dropped = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let d2 = dropped.clone();
    let proxy = Proxy::start(reg.port, move |s, _| {
        if is_upload_put_with_body(s)
            && s.body_len > 1000
            && d2.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0
        {
            Fault::Drop
        } else {
            Fault::Pass
        }
    });
    let client2 = fast_client(&proxy.host(), None, None);
    let report = push::push_image(&client2, &image, REPO, &["v1".to_string()], &silent())
        .expect("push survives a dropped connection");
    assert_eq!(report.digest, image.manifest.descriptor.digest);
    assert_eq!(
        dropped.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "one dropped, one retried"
    );
    assert_eq!(
        proxy.count("POST", "/blobs/uploads/"),
        4,
        "3 blobs + 1 fresh session after the drop"
    );
    // What the registry holds is correct (read directly, not through the proxy).
    let fetched = image_source::fetch_bundle(&reg.reference(REPO, "v1"), &RegistryArgs::default())
        .expect("fetch");
    assert_eq!(fetched.digest, image.manifest.descriptor.digest);
    assert_same_files(fetched.dir.path(), 3000);
}

#[test]
fn server_errors_and_429_are_retried() {
    let reg = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().expect("tmp");
    let image = support::bundle_image(work.path(), 0, "testop");
    // 500s on the first two HEADs, a 503 on the first POST.
    let heads = std::sync::atomic::AtomicUsize::new(0);
    let posts = std::sync::atomic::AtomicUsize::new(0);
    let proxy = Proxy::start(reg.port, move |s, _| {
        use std::sync::atomic::Ordering::SeqCst;
        if s.method == "HEAD" && heads.fetch_add(1, SeqCst) < 2 {
            Fault::Status(500, vec![])
        } else if s.method == "POST" && posts.fetch_add(1, SeqCst) < 1 {
            Fault::Status(503, vec![])
        } else {
            Fault::Pass
        }
    });
    let client = fast_client(&proxy.host(), None, None);
    let report =
        push::push_image(&client, &image, REPO, &["v1".to_string()], &silent()).expect("push");
    assert_eq!(report.digest, image.manifest.descriptor.digest);
    assert!(
        client.stats.snapshot()[6] >= 3,
        "retries: {:?}",
        client.stats.snapshot()
    );
    drop(proxy);

    // 429 with Retry-After: 1 on the manifest PUT is honoured.
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let h2 = hits.clone();
    let proxy = Proxy::start(reg.port, move |s, _| {
        if s.method == "PUT"
            && s.path.contains("/manifests/")
            && h2.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0
        {
            Fault::Status(429, vec![("Retry-After".into(), "1".into())])
        } else {
            Fault::Pass
        }
    });
    let client = fast_client(&proxy.host(), None, None);
    let start = Instant::now();
    push::push_image(&client, &image, REPO, &["v2".to_string()], &silent()).expect("push");
    let elapsed = start.elapsed();
    assert!(
        elapsed >= Duration::from_millis(950),
        "Retry-After was not honoured: {elapsed:?}"
    );
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 2);

    // Exhausted retries give the status, not a hang.
    let proxy = Proxy::start(reg.port, |_, _| Fault::Status(503, vec![]));
    let client = fast_client(&proxy.host(), None, None);
    let err = push::push_image(&client, &image, REPO, &["v3".to_string()], &silent())
        .expect_err("must fail");
    assert!(err.to_string().contains("HTTP 503"), "{err}");
}

#[test]
fn altered_blob_on_pull_is_refused_and_leaves_nothing() {
    let reg = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().expect("tmp");
    let image = support::bundle_image(work.path(), 0, "testop");
    image_source::push_image_with(
        &image,
        &[reg.reference(REPO, "v1")],
        &RegistryArgs::default(),
        &silent(),
    )
    .expect("push");
    let layer = image.layers[0].descriptor.digest.clone();
    let l2 = layer.clone();
    let proxy = Proxy::start(reg.port, move |s, _| {
        if s.method == "GET" && s.path.ends_with(&l2) {
            Fault::Corrupt
        } else {
            Fault::Pass
        }
    });
    let parent = work.path().join("out");
    std::fs::create_dir_all(&parent).expect("mkdir");
    let dest = parent.join("bundle");
    let out = olmpack(work.path())
        .args(["bundle", "pull", &format!("{}/{REPO}:v1", proxy.host())])
        .arg(&dest)
        .bounded_output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("digest mismatch") && stderr.contains(&layer),
        "{stderr}"
    );
    assert!(!dest.exists(), "no output folder");
    assert_eq!(
        std::fs::read_dir(&parent).expect("read").count(),
        0,
        "no temp sibling left"
    );
    // inspect refuses too
    let out = olmpack(work.path())
        .args(["bundle", "inspect", &format!("{}/{REPO}:v1", proxy.host())])
        .bounded_output()
        .expect("run");
    assert!(String::from_utf8_lossy(&out.stderr).contains(&layer));
}

#[test]
fn download_cut_off_midway_is_retried() {
    let reg = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().expect("tmp");
    let image = support::bundle_image(work.path(), 50_000, "testop");
    image_source::push_image_with(
        &image,
        &[reg.reference(REPO, "v1")],
        &RegistryArgs::default(),
        &silent(),
    )
    .expect("push");
    let layer = image.layers[0].descriptor.digest.clone();
    let l2 = layer.clone();
    let cut = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c2 = cut.clone();
    let proxy = Proxy::start(reg.port, move |s, _| {
        if s.method == "GET"
            && s.path.ends_with(&l2)
            && c2.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0
        {
            Fault::Truncate
        } else {
            Fault::Pass
        }
    });
    let dest = work.path().join("pulled");
    olmpack(work.path())
        .args(["bundle", "pull", &format!("{}/{REPO}:v1", proxy.host())])
        .arg(&dest)
        .args(["--retries", "3"])
        .succeeds();
    assert_eq!(
        proxy.count("GET", &layer),
        2,
        "the cut download was fetched again"
    );
    assert_same_files(&dest, 50_000);
}

#[test]
fn chunked_uploads_by_size_and_as_fallback() {
    let reg = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().expect("tmp");
    let image = support::bundle_image(work.path(), 20_000, "testop");
    // Above the threshold: PATCH chunks.
    let client = fast_client(&reg.host, None, None);
    let opts = PushOptions {
        chunk_threshold: 4096,
        chunk_size: 4096,
        ..silent()
    };
    let report =
        push::push_image(&client, &image, REPO, &["chunked".to_string()], &opts).expect("push");
    assert_eq!(report.blobs[0].action, BlobAction::UploadedChunked);
    assert!(
        client.stats.snapshot()[4] >= 5,
        "patches: {:?}",
        client.stats.snapshot()
    );
    let fetched =
        image_source::fetch_bundle(&reg.reference(REPO, "chunked"), &RegistryArgs::default())
            .expect("fetch");
    assert_same_files(fetched.dir.path(), 20_000);

    // A registry refusing monolithic PUTs: fall back to chunks.
    let proxy = Proxy::start(reg.port, |s, _| {
        if is_upload_put_with_body(s) {
            Fault::Status(405, vec![])
        } else {
            Fault::Pass
        }
    });
    let client = fast_client(&proxy.host(), None, None);
    let report = push::push_image(
        &client,
        &image,
        "olm/fallback",
        &["v1".to_string()],
        &silent(),
    )
    .expect("push");
    assert!(
        report
            .blobs
            .iter()
            .all(|b| b.action == BlobAction::UploadedChunked),
        "{:?}",
        report.blobs
    );
    assert!(proxy.count("PATCH", "/blobs/uploads/") >= 3);
    let fetched = image_source::fetch_bundle(
        &reg.reference("olm/fallback", "v1"),
        &RegistryArgs::default(),
    )
    .expect("fetch");
    assert_same_files(fetched.dir.path(), 20_000);
}

#[test]
fn local_sources_oci_layout_archive_and_docker_archive() {
    let work = tempfile::tempdir().expect("tmp");
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let image = support::bundle_image(work.path(), 0, "testop");
    let layout = work.path().join("layout");
    support::write_layout(&image, &layout, "v1");
    let v = inspect_json(&home, &format!("oci:{}:v1", layout.display()), &[], &[]);
    assert_eq!(v["digest"], image.manifest.descriptor.digest);
    assert_eq!(
        v["annotations"]["operators.operatorframework.io.bundle.package.v1"],
        "testop"
    );

    // oci-archive: the layout as a tar
    let archive = work.path().join("bundle.oci.tar");
    let mut b = tar::Builder::new(std::fs::File::create(&archive).expect("create"));
    b.append_dir_all(".", &layout).expect("tar");
    b.finish().expect("finish");
    drop(b);
    let v = inspect_json(
        &home,
        &format!("oci-archive:{}:v1", archive.display()),
        &[],
        &[],
    );
    assert_eq!(v["digest"], image.manifest.descriptor.digest);

    // docker-archive: docker save layout with uncompressed layer tars
    let dsave = work.path().join("dsave");
    std::fs::create_dir_all(&dsave).expect("mkdir");
    let mut names = Vec::new();
    for (i, l) in image.layers.iter().enumerate() {
        let olmpack::image::BlobSource::File(p) = &l.source else {
            panic!("file layer")
        };
        let mut raw = Vec::new();
        use std::io::Read;
        flate2::read::GzDecoder::new(std::fs::File::open(p).expect("open"))
            .read_to_end(&mut raw)
            .expect("gunzip");
        std::fs::write(dsave.join(format!("l{i}.tar")), raw).expect("write");
        names.push(format!("l{i}.tar"));
    }
    let olmpack::image::BlobSource::Memory(cfg) = &image.config.source else {
        panic!("memory config")
    };
    std::fs::write(dsave.join("config.json"), cfg).expect("write");
    std::fs::write(
        dsave.join("manifest.json"),
        serde_json::to_vec(
            &serde_json::json!([{"Config": "config.json", "RepoTags": ["x:1"], "Layers": names}]),
        )
        .expect("json"),
    )
    .expect("write");
    let darchive = work.path().join("docker.tar");
    let mut b = tar::Builder::new(std::fs::File::create(&darchive).expect("create"));
    b.append_dir_all(".", &dsave).expect("tar");
    b.finish().expect("finish");
    drop(b);
    let v = inspect_json(
        &home,
        &format!("docker-archive:{}", darchive.display()),
        &[],
        &[],
    );
    assert_eq!(
        v["labels"]["operators.operatorframework.io.bundle.package.v1"],
        "testop"
    );
    assert!(
        v["layers"][1]["files"]
            .as_array()
            .expect("files")
            .iter()
            .any(|f| f["path"] == "metadata/annotations.yaml")
    );

    // pull from a layout
    let out_dir = work.path().join("pulled");
    olmpack(&home)
        .args(["bundle", "pull", &format!("oci:{}:v1", layout.display())])
        .arg(&out_dir)
        .succeeds();
    assert_same_files(&out_dir, 0);
}

#[test]
fn reference_errors_are_usage_errors() {
    use crate::support::proc::{can_unshare_network, without_network};
    let work = tempfile::tempdir().expect("tmp");
    // Without a network (`unshare -n`): if the refusal regressed, the run would fail on the
    // lookup of quay.io instead of reaching it.
    if !can_unshare_network() {
        crate::support::shared::skip(
            "`unshare -n` does not work here (util-linux, root or user namespaces)",
        );
        return;
    }
    let out = without_network(crate::support::cmd::olmpack_path())
        .args(["bundle", "inspect", "quay.io/Org/Bundle:v1"])
        .env("HOME", work.path())
        .env_remove("DOCKER_CONFIG")
        .env_remove("REGISTRY_AUTH_FILE")
        .bounded_output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("lowercase"));
    assert!(Reference::parse("127.0.0.1:5000/a:b").is_ok());
}

#[test]
fn index_resolves_to_platform_with_a_warning_and_docker_v2s2_is_read() {
    let reg = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().expect("tmp");
    let image = support::bundle_image(work.path(), 0, "testop");
    let client = fast_client(&reg.host, None, None);
    // Push by digest only, then an index pointing at it for linux/amd64.
    let report = push::push_image(&client, &image, REPO, &[], &silent()).expect("push");
    let index = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{"mediaType": image.manifest.descriptor.media_type, "digest": report.digest, "size": image.manifest.descriptor.size, "platform": {"os": "linux", "architecture": "amd64"}}],
    });
    let req = olmpack::registry::client::Request::new(
        reqwest_method_put(),
        format!("/v2/{REPO}/manifests/multi"),
        &[],
    )
    .header("Content-Type", "application/vnd.oci.image.index.v1+json")
    .body(olmpack::registry::client::Body::Bytes(
        serde_json::to_vec(&index).expect("json"),
    ));
    client.expect(&req, &[201]).expect("put index");
    let fetched =
        image_source::fetch_bundle(&reg.reference(REPO, "multi"), &RegistryArgs::default())
            .expect("fetch");
    assert_eq!(fetched.digest, report.digest);
    assert!(
        fetched
            .warnings
            .iter()
            .any(|w| w.contains("multi-platform image index") && w.contains("single manifest")),
        "{:?}",
        fetched.warnings
    );
    let arm = RegistryArgs {
        platform: "linux/arm64".into(),
        ..RegistryArgs::default()
    };
    let err =
        image_source::fetch_bundle(&reg.reference(REPO, "multi"), &arm).expect_err("no arm64");
    assert!(
        err.message.contains("no manifest for platform linux/arm64"),
        "{}",
        err.message
    );

    // Docker v2-2: skopeo converts the layout while copying.
    let layout = work.path().join("layout");
    support::write_layout(&image, &layout, "v1");
    let dest = reg.reference("olm/docker", "v1");
    let out = std::process::Command::new("skopeo")
        .args([
            "copy",
            "--format",
            "v2s2",
            "--dest-tls-verify=false",
            &format!("oci:{}:v1", layout.display()),
            &format!("docker://{dest}"),
        ])
        .bounded_output()
        .expect("skopeo");
    assert!(
        out.status.success(),
        "skopeo copy: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let v = inspect_json(&home, &dest, &[], &[]);
    assert_eq!(
        v["mediaType"],
        "application/vnd.docker.distribution.manifest.v2+json"
    );
    let fetched = image_source::fetch_bundle(&dest, &RegistryArgs::default()).expect("fetch");
    assert_same_files(fetched.dir.path(), 0);
}

fn reqwest_method_put() -> reqwest::Method {
    reqwest::Method::PUT
}

#[test]
fn bundle_warnings_for_extra_files_and_a_runnable_config() {
    let work = tempfile::tempdir().expect("tmp");
    let ann = support::ANNOTATIONS.as_bytes();
    let sets = vec![
        vec![
            ("manifests/x.yaml", &b"kind: ClusterServiceVersion\n"[..]),
            ("auth.json", &b"{}"[..]),
        ],
        vec![("metadata/annotations.yaml", ann)],
    ];
    let image = support::image_from_layers(
        work.path(),
        &sets,
        support::labels("other"),
        serde_json::json!({"Cmd": ["/bin/sh"]}),
    );
    let layout = work.path().join("layout");
    support::write_layout(&image, &layout, "v1");
    let fetched = image_source::fetch_bundle(
        &format!("oci:{}:v1", layout.display()),
        &RegistryArgs::default(),
    )
    .expect("fetch");
    let w = fetched.warnings.join("\n");
    assert!(
        w.contains("outside manifests/, metadata/ and tests/: auth.json"),
        "{w}"
    );
    assert!(w.contains("Cmd [\"/bin/sh\"]"), "{w}");
    let annotations = parse_annotations(
        &std::fs::read_to_string(fetched.dir.path().join("metadata/annotations.yaml"))
            .expect("read"),
    )
    .expect("parse");
    let m = compare_labels(&fetched.labels, &annotations);
    assert_eq!(m.len(), 1);
    assert!(
        m[0].to_string().contains("\"other\"") && m[0].to_string().contains("\"testop\""),
        "{}",
        m[0]
    );
}

#[test]
fn credentials_are_not_sent_to_a_plain_http_token_service_of_a_tls_registry() {
    let reg = Registry::start(Mode::TlsTokenOverHttp);
    let work = tempfile::tempdir().expect("tmp");
    let image = support::bundle_image(work.path(), 0, "testop");
    let args = RegistryArgs {
        connection: ConnectionArgs {
            creds: Some(format!("{USER}:{PASSWORD}")),
            ca_file: reg.ca.clone(),
            ..ConnectionArgs::default()
        },
        ..RegistryArgs::default()
    };
    let err = image_source::push_image(&image, &[reg.reference("olm/guarded", "v1")], &args, None)
        .expect_err("must refuse");
    assert!(
        err.message
            .contains("plain HTTP while the registry uses HTTPS"),
        "{}",
        err.message
    );
    assert!(!err.message.contains(PASSWORD), "{}", err.message);
    let calls = reg.token.as_ref().map(|t| t.calls()).unwrap_or_default();
    assert!(
        calls.is_empty(),
        "the token service must not be called: {calls:?}"
    );
}
