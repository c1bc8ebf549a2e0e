#!/usr/bin/python3
"""An independent cosign implementation for the signing tests (Debian's python3-cryptography
and python3-nacl, standard library otherwise): key files as cosign and go-securesystemslib
write them, tag-based signatures as specs/SIGNATURE_SPEC.md of sigstore/cosign lays them out,
and cosign v3 Sigstore bundles as OCI 1.1 referrers (fallback tag schema). Talks to the test
registry over plain HTTP on loopback only.

Usage (COSIGN_PASSWORD in the environment for key files):
  genkey PREFIX [p256|p384|p521|ed25519|rsa]
  checkkey KEY PUB                      decrypts KEY, checks it matches PUB, prints "ok"
  sign HOST REPO DIGEST KEY [options]   writes the .sig manifest (replacing it); --copies N
                                        lists the signature layer N times
  verify HOST REPO DIGEST PUB           prints the number of verified signatures
  bundle HOST REPO DIGEST KEY [--subject-digest D]
"""
import base64
import hashlib
import json
import os
import sys
import urllib.request

import nacl.secret
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa

PAYLOAD_MT = "application/vnd.dev.cosign.simplesigning.v1+json"
SIG_ANN = "dev.cosignproject.cosign/signature"
BUNDLE_MT = "application/vnd.dev.sigstore.bundle.v0.3+json"


def password():
    return os.environ.get("COSIGN_PASSWORD", "").encode()


def new_key(kind):
    if kind == "ed25519":
        return ed25519.Ed25519PrivateKey.generate()
    if kind == "rsa":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    curves = {"p256": ec.SECP256R1(), "p384": ec.SECP384R1(), "p521": ec.SECP521R1()}
    return ec.generate_private_key(curves[kind])


def sign_bytes(key, data):
    """As sigstore's signers with SHA-256 (containers/image's hard-coded hash)."""
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return key.sign(data)
    if isinstance(key, rsa.RSAPrivateKey):
        return key.sign(data, padding.PKCS1v15(), hashes.SHA256())
    return key.sign(data, ec.ECDSA(hashes.SHA256()))


def verify_bytes(pub, sig, data):
    if isinstance(pub, ed25519.Ed25519PublicKey):
        pub.verify(sig, data)
    elif isinstance(pub, rsa.RSAPublicKey):
        pub.verify(sig, data, padding.PKCS1v15(), hashes.SHA256())
    else:
        pub.verify(sig, data, ec.ECDSA(hashes.SHA256()))


def genkey(prefix, kind="p256"):
    key = new_key(kind)
    der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    salt = os.urandom(32)
    nonce = os.urandom(24)
    box_key = hashlib.scrypt(password(), salt=salt, n=32768, r=8, p=1, maxmem=64 << 20, dklen=32)
    ct = nacl.secret.SecretBox(box_key).encrypt(der, nonce).ciphertext  # tag || ciphertext
    b64 = lambda b: base64.b64encode(b).decode()
    # Go's struct order, as go-securesystemslib's encrypted package marshals it.
    body = ('{"kdf":{"name":"scrypt","params":{"N":32768,"r":8,"p":1},"salt":"%s"},'
            '"cipher":{"name":"nacl/secretbox","nonce":"%s"},"ciphertext":"%s"}'
            % (b64(salt), b64(nonce), b64(ct))).encode()
    pem = "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n"
    text = base64.b64encode(body).decode()
    for i in range(0, len(text), 64):
        pem += text[i:i + 64] + "\n"
    pem += "-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n"
    with open(prefix + ".key", "w") as f:
        f.write(pem)
    with open(prefix + ".pub", "wb") as f:
        f.write(key.public_key().public_bytes(serialization.Encoding.PEM,
                                              serialization.PublicFormat.SubjectPublicKeyInfo))


def load_private(path):
    lines = open(path).read().strip().splitlines()
    label = lines[0][len("-----BEGIN "):-len("-----")]
    assert label in ("ENCRYPTED SIGSTORE PRIVATE KEY", "ENCRYPTED COSIGN PRIVATE KEY"), label
    env = json.loads(base64.b64decode("".join(lines[1:-1])))
    assert env["kdf"]["name"] == "scrypt" and env["cipher"]["name"] == "nacl/secretbox", env
    p = env["kdf"]["params"]
    box_key = hashlib.scrypt(password(), salt=base64.b64decode(env["kdf"]["salt"]), n=p["N"],
                             r=p["r"], p=p["p"], maxmem=256 << 20, dklen=32)
    der = nacl.secret.SecretBox(box_key).decrypt(base64.b64decode(env["ciphertext"]),
                                                 base64.b64decode(env["cipher"]["nonce"]))
    return serialization.load_der_private_key(der, None)


def load_public(path):
    return serialization.load_pem_public_key(open(path, "rb").read())


def checkkey(keyp, pubp):
    key = load_private(keyp)
    pub = load_public(pubp)
    assert isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1"
    assert key.public_key().public_numbers() == pub.public_numbers(), "public key differs"
    print("ok")


def req(method, url, data=None, headers=None):
    r = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(r, timeout=30) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def sha(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()


def put_blob(host, repo, data):
    st, h, _ = req("POST", f"http://{host}/v2/{repo}/blobs/uploads/")
    assert st == 202, st
    loc = h["Location"]
    if loc.startswith("/"):
        loc = f"http://{host}{loc}"
    sep = "&" if "?" in loc else "?"
    st, _, body = req("PUT", f"{loc}{sep}digest={sha(data)}", data,
                      {"Content-Type": "application/octet-stream"})
    assert st == 201, (st, body)
    return {"digest": sha(data), "size": len(data)}


def put_manifest(host, repo, ref, manifest, mt="application/vnd.oci.image.manifest.v1+json"):
    data = json.dumps(manifest, separators=(",", ":")).encode()
    st, _, body = req("PUT", f"http://{host}/v2/{repo}/manifests/{ref}", data, {"Content-Type": mt})
    assert st == 201, (st, body)
    return sha(data), len(data)


def get_manifest(host, repo, ref):
    st, _, body = req("GET", f"http://{host}/v2/{repo}/manifests/{ref}", None,
                      {"Accept": "application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json"})
    return st, body


def cosign_payload(identity, digest):
    return json.dumps({"critical": {"identity": {"docker-reference": identity},
                                    "image": {"docker-manifest-digest": digest},
                                    "type": "cosign container image signature"},
                       "optional": None}, separators=(",", ":")).encode()


def sign(host, repo, digest, keyp, args):
    opts = dict(zip(args[::2], args[1::2]))
    key = load_private(keyp)
    identity = opts.get("--identity", f"{host}/{repo}")
    payload = cosign_payload(identity, opts.get("--payload-digest", digest))
    sig = sign_bytes(key, payload)
    if opts.get("--tamper") == "payload":
        payload = payload.replace(b'"optional":null', b'"optional":{"x":"y"}')
    if opts.get("--tamper") == "truncate":
        sig = sig[: len(sig) // 2]
    mt = opts.get("--media-type", PAYLOAD_MT)
    layer = put_blob(host, repo, payload)
    layer.update({"mediaType": mt, "annotations": {SIG_ANN: base64.b64encode(sig).decode()}})
    cfg = json.dumps({"architecture": "", "os": "", "config": {},
                      "rootfs": {"type": "layers", "diff_ids": [layer["digest"]]}}).encode()
    c = put_blob(host, repo, cfg)
    c["mediaType"] = "application/vnd.oci.image.config.v1+json"
    tag_digest = opts.get("--tag-digest", digest)
    copies = int(opts.get("--copies", "1"))
    put_manifest(host, repo, tag_digest.replace(":", "-") + ".sig",
                 {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                  "config": c, "layers": [layer] * copies})


def verify(host, repo, digest, pubp):
    pub = load_public(pubp)
    st, body = get_manifest(host, repo, digest.replace(":", "-") + ".sig")
    assert st == 200, st
    m = json.loads(body)
    good = 0
    for layer in m["layers"]:
        assert layer["mediaType"] == PAYLOAD_MT, layer
        st, _, payload = req("GET", f"http://{host}/v2/{repo}/blobs/{layer['digest']}")
        assert st == 200 and sha(payload) == layer["digest"]
        try:
            verify_bytes(pub, base64.b64decode(layer["annotations"][SIG_ANN]), payload)
        except Exception:
            continue
        p = json.loads(payload)
        assert p["critical"]["type"] == "cosign container image signature", p
        assert p["critical"]["image"]["docker-manifest-digest"] == digest, p
        good += 1
    print(good)


def pae(ptype, body):
    return b"DSSEv1 %d %s %d %s" % (len(ptype), ptype.encode(), len(body), body)


def bundle(host, repo, digest, keyp, args):
    """Writes a key-signed Sigstore bundle referrer of `digest` (DSSE over an in-toto
    statement), listed in the referrers fallback tag (merged with what it lists). Options to
    forge one: `--subject-digest D` (the statement names another image), `--predicate-type T`
    and `--predicate JSON`, `--announce T` (the referrer's predicate-type annotation),
    `--alter-payload 1` (the payload changed after signing)."""
    opts = dict(zip(args[::2], args[1::2]))
    key = load_private(keyp)
    subject = opts.get("--subject-digest", digest)
    ptype_stmt = opts.get("--predicate-type", "https://sigstore.dev/cosign/sign/v1")
    predicate = json.loads(opts.get("--predicate", "{}"))
    statement = json.dumps({"_type": "https://in-toto.io/Statement/v1",
                            "subject": [{"digest": {"sha256": subject.split(":", 1)[1]}}],
                            "predicateType": ptype_stmt,
                            "predicate": predicate}).encode()
    ptype = "application/vnd.in-toto+json"
    sig = key.sign(pae(ptype, statement), ec.ECDSA(hashes.SHA256()))
    if opts.get("--alter-payload"):
        statement = statement.replace(b'"predicate": {', b'"predicate": {"forged": true, ', 1)
    b = json.dumps({"mediaType": BUNDLE_MT,
                    "verificationMaterial": {"publicKey": {"hint": "test"}, "tlogEntries": []},
                    "dsseEnvelope": {"payload": base64.b64encode(statement).decode(),
                                     "payloadType": ptype,
                                     "signatures": [{"sig": base64.b64encode(sig).decode()}]}}).encode()
    layer = put_blob(host, repo, b)
    layer["mediaType"] = BUNDLE_MT
    empty = put_blob(host, repo, b"{}")
    empty["mediaType"] = "application/vnd.oci.empty.v1+json"
    st, subj = get_manifest(host, repo, digest)
    assert st == 200
    m = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
         "artifactType": BUNDLE_MT, "config": empty, "layers": [layer],
         "subject": {"mediaType": "application/vnd.oci.image.manifest.v1+json",
                     "digest": digest, "size": len(subj)}}
    entry_annotations = {}
    if "--announce" in opts:
        m["annotations"] = {"dev.sigstore.bundle.predicateType": opts["--announce"]}
        entry_annotations = dict(m["annotations"])
    mdigest, msize = put_manifest(host, repo, "bundle-" + sha(json.dumps(m).encode())[7:19], m)
    entry = {"mediaType": "application/vnd.oci.image.manifest.v1+json",
             "digest": mdigest, "size": msize, "artifactType": BUNDLE_MT}
    if entry_annotations:
        entry["annotations"] = entry_annotations
    st, old = get_manifest(host, repo, digest.replace(":", "-"))
    manifests = json.loads(old)["manifests"] if st == 200 else []
    manifests.append(entry)
    index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
             "manifests": manifests}
    put_manifest(host, repo, digest.replace(":", "-"), index,
                 "application/vnd.oci.image.index.v1+json")


def verify_att(host, repo, digest, pubp, args):
    """cosign 2's attestations: the layers of the `sha256-<hex>.att` manifest, each a DSSE
    envelope (application/vnd.dsse.envelope.v1+json) with a `predicateType` annotation.
    Prints how many verify with the key and name `digest` (and `--predicate-type T`)."""
    opts = dict(zip(args[::2], args[1::2]))
    want = opts.get("--predicate-type")
    pub = load_public(pubp)
    st, body = get_manifest(host, repo, digest.replace(":", "-") + ".att")
    if st != 200:
        print(0)
        return
    def check(layer):
        assert layer["mediaType"] == "application/vnd.dsse.envelope.v1+json", layer
        st, _, raw = req("GET", f"http://{host}/v2/{repo}/blobs/{layer['digest']}")
        assert st == 200 and sha(raw) == layer["digest"]
        env = json.loads(raw)
        payload = base64.b64decode(env["payload"])
        verify_bytes(pub, base64.b64decode(env["signatures"][0]["sig"]),
                     pae(env["payloadType"], payload))
        stmt = json.loads(payload)
        assert digest.split(":", 1)[1] in [s["digest"].get("sha256") for s in stmt["subject"]]
        assert layer["annotations"]["predicateType"] == stmt["predicateType"], layer
        return not (want and stmt["predicateType"] != want)

    print_verified(json.loads(body)["layers"], check)


def verify_bundle(host, repo, digest, pubp, args):
    """Finds the Sigstore bundle referrers of `digest` as the OCI 1.1 spec says a client
    does (the referrers API, else the `sha256-<hex>` tag) and checks each bundle with the
    public key: DSSE over an in-toto statement naming the digest, or a message signature over
    the manifest bytes. Prints how many verify; `--predicate-type T` counts only statements
    of type T."""
    opts = dict(zip(args[::2], args[1::2]))
    want = opts.get("--predicate-type")
    pub = load_public(pubp)
    st, _, body = req("GET", f"http://{host}/v2/{repo}/referrers/{digest}")
    if st != 200:
        st, body = get_manifest(host, repo, digest.replace(":", "-"))
        if st != 200:
            print(0)
            return
    bundles = []
    for entry in json.loads(body)["manifests"]:
        if entry.get("artifactType") != BUNDLE_MT:
            continue
        st, mbody = get_manifest(host, repo, entry["digest"])
        assert st == 200 and sha(mbody) == entry["digest"], st
        m = json.loads(mbody)
        assert m["artifactType"] == BUNDLE_MT, m
        assert m["subject"]["digest"] == digest, m
        assert m["config"]["mediaType"] == "application/vnd.oci.empty.v1+json", m
        layer = m["layers"][0]
        assert layer["mediaType"] == BUNDLE_MT, layer
        st, _, raw = req("GET", f"http://{host}/v2/{repo}/blobs/{layer['digest']}")
        assert st == 200 and sha(raw) == layer["digest"]
        b = json.loads(raw)
        assert b["mediaType"] == BUNDLE_MT, b
        bundles.append(b)

    def check(b):
        if "dsseEnvelope" in b:
            env = b["dsseEnvelope"]
            payload = base64.b64decode(env["payload"])
            sig = base64.b64decode(env["signatures"][0]["sig"])
            verify_bytes(pub, sig, pae(env["payloadType"], payload))
            stmt = json.loads(payload)
            assert env["payloadType"] == "application/vnd.in-toto+json"
            assert stmt["_type"] == "https://in-toto.io/Statement/v1", stmt
            hexes = [s["digest"].get("sha256") for s in stmt["subject"]]
            assert digest.split(":", 1)[1] in hexes, stmt
            return not (want and stmt["predicateType"] != want)
        ms = b["messageSignature"]
        assert ms["messageDigest"]["algorithm"] == "SHA2_256"
        assert "sha256:" + base64.b64decode(ms["messageDigest"]["digest"]).hex() == digest
        st, subj = get_manifest(host, repo, digest)
        verify_bytes(pub, base64.b64decode(ms["signature"]), subj)
        return not want

    print_verified(bundles, check)


def print_verified(items, check):
    """Prints how many of `items` verify: `check` raises on a signature that does not (the
    reason goes to stderr, the item is not counted) and returns False for one that verifies
    but is not what was asked for (another predicate type)."""
    good = 0
    for item in items:
        try:
            if not check(item):
                continue
        except Exception as e:
            print("refused:", e, file=sys.stderr)
            continue
        good += 1
    print(good)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "genkey":
        genkey(*args[:2])
    elif cmd == "checkkey":
        checkkey(args[0], args[1])
    elif cmd == "sign":
        sign(args[0], args[1], args[2], args[3], args[4:])
    elif cmd == "verify":
        verify(args[0], args[1], args[2], args[3])
    elif cmd == "bundle":
        bundle(args[0], args[1], args[2], args[3], args[4:])
    elif cmd == "verify-att":
        verify_att(args[0], args[1], args[2], args[3], args[4:])
    elif cmd == "verify-bundle":
        verify_bundle(args[0], args[1], args[2], args[3], args[4:])
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
