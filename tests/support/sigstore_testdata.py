#!/usr/bin/env python3
"""Writes a private Sigstore instance and keyless bundles signed through it, for the tests of
`olmpack verify-blob` (tests/cli/sigstore_verify.rs) and the same checks by sigstore-python.

Everything is made here with fresh keys (python3 `cryptography`): a Fulcio-like CA, a CT log,
a Rekor-like log (SET, Merkle tree, signed checkpoint), and one bundle per case:

  good.json            a valid keyless bundle for artifact.txt
  expired.json         the log took the signature after the certificate expired
  not-in-log.json      the inclusion proof leads to a root of a tree without this entry
  checkpoint-key.json  the checkpoint is signed by another key (with the log's key hint)
  origin.json          the checkpoint, signed by the log's key, names another log as origin
  sct-hash.json        the SCT names an unknown hash algorithm (0), its signature is SHA-256
  lookalike.json       the certificate's identity is a non-ASCII lookalike of signer@olmpack.test
                       (a Fulcio username SAN, UTF8String) that Go's RE2 `\w` does not match
  key-good.json        signed with key.pem (key.pub), the log entry names that key
  key-logged-cert.json signed with key.pem, but carrying a certificate for another key, and
                       the log entry names that certificate, not the key

Usage: sigstore_testdata.py OUTDIR   (writes trusted_root.json, artifact.txt, other.txt,
trust_config.json for sigstore-python, the bundles, and instance.json: the instance's private
keys, so that the `image` command signs through the same instance).

Keyless signatures of an image, pushed to the test registry (plain HTTP, loopback) beside it:

  sigstore_testdata.py image OUTDIR HOST REPO DIGEST CASE [--identity REF] [--tag-digest D]

CASE is one of
  sig            a keyless cosign .sig layer (simple-signing payload; annotations: signature,
                 certificate, chain, and the Rekor receipt: a SET over a hashedrekord body)
  sig-expired    the same, logged after the certificate expired
  sig-set-key    the same, its SET signed by another key than the log's
  bundle-dsse    cosign 3's signature: a bundle v0.3 referrer holding a DSSE envelope over the
                 in-toto statement https://sigstore.dev/cosign/sign/v1 (a dsse 0.0.1 entry)
  bundle-msg     a bundle v0.3 referrer holding a message signature over the image digest (a
                 hashedrekord 0.0.1 entry)
  attest         an SLSA provenance v1 attestation: a bundle v0.3 referrer (DSSE, dsse 0.0.1 entry
                 with inclusion proof, checkpoint and SET) announcing its predicate type
  attest-intoto  the same, logged as an intoto 0.0.2 entry
--identity names the repository the payload or statement claims (default HOST/REPO);
--no-announce 1 leaves out the referrer's predicate-type annotations (an unannounced attestation);
--tag-digest puts the signature beside another image (the .sig tag of D, or a referrer whose
subject is D) while it still signs DIGEST. Bundles are also written to OUTDIR/CASE.sigstore.json
(for sigstore-python).
"""

import base64
import datetime
import hashlib
import json
import os
import struct
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

IDENTITY = "https://github.com/olmpack/test/.github/workflows/release.yml@refs/heads/main"
ISSUER = "https://token.actions.githubusercontent.com"
UTC = datetime.timezone.utc
NOW = datetime.datetime.now(UTC).replace(microsecond=0)
# The last instance's keys, for sigstore_tsa_testdata.py (which builds on this one).
LAST = {}


def b64(b):
    return base64.b64encode(b).decode()


def spki(key):
    return key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def sign(key, msg):
    return key.sign(msg, ec.ECDSA(hashes.SHA256()))


def canon(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def der_octet_string(b):
    n = len(b)
    if n < 0x80:
        return bytes([0x04, n]) + b
    ln = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x04, 0x80 | len(ln)]) + ln + b


def rfc3339(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def make_ca():
    key = ec.generate_private_key(ec.SECP384R1())
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "olmpack-test"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "olmpack-test-fulcio")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOW - datetime.timedelta(days=365))
        .not_valid_after(NOW + datetime.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(key, hashes.SHA384())
    )
    return key, cert


def username_san(name):
    """Fulcio's username SAN: otherName 1.3.6.1.4.1.57264.1.7 holding a UTF8String."""
    raw = name.encode()
    return x509.OtherName(x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.7"),
                          b"\x0c" + bytes([len(raw)]) + raw)


def make_leaf(ca_key, ca_cert, ct_key, not_before, lifetime, *, san=None, sct_hash=4):
    """A Fulcio-like code-signing certificate with an embedded SCT from ct_key."""
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    serial = x509.random_serial_number()
    exts = [
        (x509.KeyUsage(True, False, False, False, False, False, False, False, False), True),
        (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), False),
        (x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False),
        (x509.SubjectAlternativeName([san or x509.UniformResourceIdentifier(IDENTITY)]), True),
        (x509.UnrecognizedExtension(x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.1"), ISSUER.encode()), False),
        (x509.UnrecognizedExtension(x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.8"),
                                    b"\x0c" + bytes([len(ISSUER)]) + ISSUER.encode()), False),
    ]

    def builder():
        b = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([]))
            .issuer_name(ca_cert.subject)
            .public_key(leaf_key.public_key())
            .serial_number(serial)
            .not_valid_before(not_before)
            .not_valid_after(not_before + lifetime)
        )
        for e, crit in exts:
            b = b.add_extension(e, critical=crit)
        return b

    precert = builder().sign(ca_key, hashes.SHA384())
    tbs = precert.tbs_certificate_bytes
    ts = int(not_before.timestamp() * 1000) + 1000
    issuer_key_hash = hashlib.sha256(spki(ca_key)).digest()
    signed = (b"\x00\x00" + struct.pack(">Q", ts) + b"\x00\x01" + issuer_key_hash
              + len(tbs).to_bytes(3, "big") + tbs + b"\x00\x00")
    sig = sign(ct_key, signed)
    log_id = hashlib.sha256(spki(ct_key)).digest()
    sct = b"\x00" + log_id + struct.pack(">Q", ts) + b"\x00\x00" + bytes([sct_hash, 3]) + struct.pack(">H", len(sig)) + sig
    sct_list = struct.pack(">H", len(sct) + 2) + struct.pack(">H", len(sct)) + sct
    cert = (
        builder()
        .add_extension(x509.UnrecognizedExtension(
            x509.ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2"), der_octet_string(sct_list)), critical=False)
        .sign(ca_key, hashes.SHA384())
    )
    return leaf_key, cert


def leaf_hash(body):
    return hashlib.sha256(b"\x00" + body).digest()


def node(l, r):
    return hashlib.sha256(b"\x01" + l + r).digest()


def tree_root(leaves):
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return node(tree_root(leaves[:k]), tree_root(leaves[k:]))


def audit_path(leaves, i):
    if len(leaves) == 1:
        return []
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    if i < k:
        return audit_path(leaves[:k], i) + [tree_root(leaves[k:])]
    return audit_path(leaves[k:], i - k) + [tree_root(leaves[:k])]


ORIGIN = "rekor.olmpack.invalid - 1"


def tlog_entry(rekor_key, body, integrated, *, tamper=None, other_key=None, origin=ORIGIN):
    """A Rekor v1 entry of `body` as a bundle holds it: the SET, an inclusion proof in a small
    tree and the checkpoint of that tree. `tamper`: "not-in-log" (the proof leads to a tree
    holding another entry), "checkpoint-key" or "set-key" (signed by other_key)."""
    log_id = hashlib.sha256(spki(rekor_key)).digest()
    others = [hashlib.sha256(bytes([n])).digest() for n in range(4)]
    index = 2
    leaves = others[:index] + [leaf_hash(body)] + others[index:]
    proof_leaves = leaves
    if tamper == "not-in-log":
        # The log's tree holds another entry where this one claims to be.
        proof_leaves = others[:index] + [leaf_hash(b"another entry")] + others[index:]
    root = tree_root(proof_leaves)
    path = audit_path(proof_leaves, index)
    note = f"{origin}\n{len(leaves)}\n{b64(root)}\n".encode()
    signer = other_key if tamper == "checkpoint-key" else rekor_key
    note_sig = log_id[:4] + sign(signer, note)
    checkpoint = note.decode() + "\n\u2014 olmpack-test-rekor " + b64(note_sig) + "\n"
    set_payload = canon({"body": b64(body), "integratedTime": integrated,
                         "logID": log_id.hex(), "logIndex": 1000 + index})
    set_signer = other_key if tamper == "set-key" else rekor_key
    return {
        "logIndex": str(1000 + index),
        "logId": {"keyId": b64(log_id)},
        "kindVersion": {"kind": json.loads(body)["kind"], "version": json.loads(body)["apiVersion"]},
        "integratedTime": str(integrated),
        "inclusionPromise": {"signedEntryTimestamp": b64(sign(set_signer, set_payload))},
        "inclusionProof": {
            "logIndex": str(index), "rootHash": b64(root), "treeSize": str(len(leaves)),
            "hashes": [b64(h) for h in path], "checkpoint": {"envelope": checkpoint},
        },
        "canonicalizedBody": b64(body),
    }


def make_bundle(rekor_key, leaf_key, leaf_cert, artifact, integrated, *, tamper=None, other_key=None,
                origin=ORIGIN, logged_pem=None):
    """A message-signature bundle by leaf_key; leaf_cert None makes a key-signed bundle (a
    public-key hint). The log entry names logged_pem, by default the certificate (or key)."""
    digest = hashlib.sha256(artifact).digest()
    sig = leaf_key.sign(artifact, ec.ECDSA(hashes.SHA256()))
    if leaf_cert is not None:
        cert_der = leaf_cert.public_bytes(serialization.Encoding.DER)
        default_pem = leaf_cert.public_bytes(serialization.Encoding.PEM)
    else:
        cert_der = None
        default_pem = leaf_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    body = canon({
        "apiVersion": "0.0.1", "kind": "hashedrekord",
        "spec": {"data": {"hash": {"algorithm": "sha256", "value": digest.hex()}},
                 "signature": {"content": b64(sig),
                               "publicKey": {"content": b64(logged_pem or default_pem)}}},
    })
    entry = tlog_entry(rekor_key, body, integrated, tamper=tamper, other_key=other_key, origin=origin)
    material = ({"certificate": {"rawBytes": b64(cert_der)}} if cert_der is not None
                else {"publicKey": {"hint": "olmpack-test"}})
    return {
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "verificationMaterial": {**material, "tlogEntries": [entry]},
        "messageSignature": {
            "messageDigest": {"algorithm": "SHA2_256", "digest": b64(digest)},
            "signature": b64(sig),
        },
    }


def save_instance(out, ca_key, ca_cert, ct_key, rekor_key, other_key):
    """The instance's private keys, for later `image` runs (a throwaway test instance)."""
    def pem(k):
        return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                               serialization.NoEncryption()).decode()
    with open(os.path.join(out, "instance.json"), "w") as f:
        json.dump({"ca_key": pem(ca_key),
                   "ca_cert": ca_cert.public_bytes(serialization.Encoding.PEM).decode(),
                   "ct_key": pem(ct_key), "rekor_key": pem(rekor_key),
                   "other_key": pem(other_key)}, f)


def load_instance(out):
    with open(os.path.join(out, "instance.json")) as f:
        inst = json.load(f)
    key = lambda n: serialization.load_pem_private_key(inst[n].encode(), None)
    return (key("ca_key"), x509.load_pem_x509_certificate(inst["ca_cert"].encode()),
            key("ct_key"), key("rekor_key"), key("other_key"))


def hashedrekord(digest, sig, cert_pem):
    return canon({
        "apiVersion": "0.0.1", "kind": "hashedrekord",
        "spec": {"data": {"hash": {"algorithm": "sha256", "value": digest.hex()}},
                 "signature": {"content": b64(sig), "publicKey": {"content": b64(cert_pem)}}},
    })


def dsse_entry_body(kind, envelope, statement, sig, cert_pem):
    """The Rekor body of a DSSE envelope: `dsse` 0.0.1, or `intoto` 0.0.2 (which logs the
    envelope with the signature base64-encoded twice, and the certificate PEM base64)."""
    if kind == "dsse":
        return canon({
            "apiVersion": "0.0.1", "kind": "dsse",
            "spec": {"envelopeHash": {"algorithm": "sha256",
                                      "value": hashlib.sha256(canon(envelope)).hexdigest()},
                     "payloadHash": {"algorithm": "sha256",
                                     "value": hashlib.sha256(statement).hexdigest()},
                     "signatures": [{"signature": b64(sig), "verifier": b64(cert_pem)}]},
        })
    return canon({
        "apiVersion": "0.0.2", "kind": "intoto",
        "spec": {"content": {
            "envelope": {"payloadType": envelope["payloadType"],
                         "signatures": [{"sig": b64(b64(sig).encode()), "publicKey": b64(cert_pem)}]},
            "hash": {"algorithm": "sha256", "value": hashlib.sha256(canon(envelope)).hexdigest()},
            "payloadHash": {"algorithm": "sha256", "value": hashlib.sha256(statement).hexdigest()},
        }},
    })


SIGN_PREDICATE = "https://sigstore.dev/cosign/sign/v1"
SLSA = "https://slsa.dev/provenance/v1"


def image(args):
    """Signs the image DIGEST keyless through the saved instance and pushes the CASE."""
    from cryptography.hazmat.primitives.asymmetric import utils
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cosign_interop as ci

    out, host, repo, digest, case = args[:5]
    opts = dict(zip(args[5::2], args[6::2]))
    identity = opts.get("--identity", f"{host}/{repo}")
    beside = opts.get("--tag-digest", digest)
    ca_key, ca_cert, ct_key, rekor_key, other_key = load_instance(out)
    nb = NOW - datetime.timedelta(hours=2)
    leaf_key, leaf = make_leaf(ca_key, ca_cert, ct_key, nb, datetime.timedelta(minutes=10))
    leaf_pem = leaf.public_bytes(serialization.Encoding.PEM)
    integrated = int(nb.timestamp()) + (3600 if case == "sig-expired" else 60)
    log_id = hashlib.sha256(spki(rekor_key)).digest()

    if case.startswith("sig"):
        payload = ci.cosign_payload(identity, digest)
        sig = sign(leaf_key, payload)
        body = hashedrekord(hashlib.sha256(payload).digest(), sig, leaf_pem)
        set_payload = canon({"body": b64(body), "integratedTime": integrated,
                             "logID": log_id.hex(), "logIndex": 1002})
        set_key = other_key if case == "sig-set-key" else rekor_key
        receipt = {"SignedEntryTimestamp": b64(sign(set_key, set_payload)),
                   "Payload": {"body": b64(body), "integratedTime": integrated,
                               "logIndex": 1002, "logID": log_id.hex()}}
        layer = ci.put_blob(host, repo, payload)
        layer.update({"mediaType": ci.PAYLOAD_MT, "annotations": {
            ci.SIG_ANN: b64(sig),
            "dev.sigstore.cosign/certificate": leaf_pem.decode(),
            "dev.sigstore.cosign/chain": ca_cert.public_bytes(serialization.Encoding.PEM).decode(),
            "dev.sigstore.cosign/bundle": json.dumps(receipt, separators=(",", ":")),
        }})
        cfg = json.dumps({"architecture": "", "os": "", "config": {},
                          "rootfs": {"type": "layers", "diff_ids": [layer["digest"]]}}).encode()
        c = ci.put_blob(host, repo, cfg)
        c["mediaType"] = "application/vnd.oci.image.config.v1+json"
        ci.put_manifest(host, repo, beside.replace(":", "-") + ".sig",
                        {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                         "config": c, "layers": [layer]})
        return

    raw_digest = bytes.fromhex(digest.split(":", 1)[1])
    material = {"certificate": {"rawBytes": b64(leaf.public_bytes(serialization.Encoding.DER))}}
    annotations = {}
    if case == "bundle-msg":
        sig = leaf_key.sign(raw_digest, ec.ECDSA(utils.Prehashed(hashes.SHA256())))
        body = hashedrekord(raw_digest, sig, leaf_pem)
        content = {"messageSignature": {
            "messageDigest": {"algorithm": "SHA2_256", "digest": b64(raw_digest)},
            "signature": b64(sig)}}
    else:
        ptype = SIGN_PREDICATE if case == "bundle-dsse" else SLSA
        predicate = {} if case == "bundle-dsse" else {
            "buildDefinition": {"buildType": "urn:olmpack:test", "externalParameters": {}},
            "runDetails": {"builder": {"id": "urn:olmpack:test-builder"}}}
        statement = json.dumps({"_type": "https://in-toto.io/Statement/v1",
                                "subject": [{"name": identity,
                                             "digest": {"sha256": raw_digest.hex()}}],
                                "predicateType": ptype, "predicate": predicate}).encode()
        ptype_env = "application/vnd.in-toto+json"
        sig = sign(leaf_key, ci.pae(ptype_env, statement))
        envelope = {"payload": b64(statement), "payloadType": ptype_env,
                    "signatures": [{"sig": b64(sig)}]}
        kind = "intoto" if case == "attest-intoto" else "dsse"
        body = dsse_entry_body(kind, envelope, statement, sig, leaf_pem)
        content = {"dsseEnvelope": envelope}
        if "--no-announce" not in opts:
            annotations = {"dev.sigstore.bundle.content": "dsse-envelope",
                           "dev.sigstore.bundle.predicateType": ptype}
    entry = tlog_entry(rekor_key, body, integrated)
    bundle = {"mediaType": ci.BUNDLE_MT,
              "verificationMaterial": {**material, "tlogEntries": [entry]}, **content}
    data = json.dumps(bundle, indent=1).encode()
    with open(os.path.join(out, case + ".sigstore.json"), "wb") as f:
        f.write(data)
    push_referrer(ci, host, repo, beside, data, annotations)


def push_referrer(ci, host, repo, subject, data, annotations):
    """A bundle referrer of `subject` (OCI 1.1 artifact manifest), listed in the referrers tag
    `sha256-<hex>` (merged with what it lists), as on a registry without the referrers API."""
    layer = ci.put_blob(host, repo, data)
    layer["mediaType"] = ci.BUNDLE_MT
    empty = ci.put_blob(host, repo, b"{}")
    empty["mediaType"] = "application/vnd.oci.empty.v1+json"
    st, subj = ci.get_manifest(host, repo, subject)
    assert st == 200, (subject, st)
    m = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
         "artifactType": ci.BUNDLE_MT, "config": empty, "layers": [layer],
         "subject": {"mediaType": "application/vnd.oci.image.manifest.v1+json",
                     "digest": subject, "size": len(subj)}}
    if annotations:
        m["annotations"] = annotations
    mdigest, msize = ci.put_manifest(host, repo, "bundle-" + ci.sha(json.dumps(m).encode())[7:19], m)
    entry = {"mediaType": "application/vnd.oci.image.manifest.v1+json",
             "digest": mdigest, "size": msize, "artifactType": ci.BUNDLE_MT}
    if annotations:
        entry["annotations"] = annotations
    st, old = ci.get_manifest(host, repo, subject.replace(":", "-"))
    manifests = json.loads(old)["manifests"] if st == 200 else []
    manifests.append(entry)
    ci.put_manifest(host, repo, subject.replace(":", "-"),
                    {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                     "manifests": manifests}, "application/vnd.oci.image.index.v1+json")


def main():
    if sys.argv[1] == "image":
        image(sys.argv[2:])
        return
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    ca_key, ca_cert = make_ca()
    ct_key = ec.generate_private_key(ec.SECP256R1())
    rekor_key = ec.generate_private_key(ec.SECP256R1())
    other_key = ec.generate_private_key(ec.SECP256R1())
    LAST.update(ca_key=ca_key, ca_cert=ca_cert, ct_key=ct_key, rekor_key=rekor_key)
    save_instance(out, ca_key, ca_cert, ct_key, rekor_key, other_key)
    start = rfc3339(NOW - datetime.timedelta(days=365))
    root = {
        "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
        "tlogs": [{"baseUrl": "https://rekor.olmpack.invalid", "hashAlgorithm": "SHA2_256",
                   "publicKey": {"rawBytes": b64(spki(rekor_key)), "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                                 "validFor": {"start": start}},
                   "logId": {"keyId": b64(hashlib.sha256(spki(rekor_key)).digest())}}],
        "certificateAuthorities": [{"subject": {"organization": "olmpack-test", "commonName": "olmpack-test-fulcio"},
                                    "uri": "https://fulcio.olmpack.invalid",
                                    "certChain": {"certificates": [{"rawBytes": b64(ca_cert.public_bytes(serialization.Encoding.DER))}]},
                                    "validFor": {"start": start}}],
        "ctlogs": [{"baseUrl": "https://ctfe.olmpack.invalid", "hashAlgorithm": "SHA2_256",
                    "publicKey": {"rawBytes": b64(spki(ct_key)), "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                                  "validFor": {"start": start}},
                    "logId": {"keyId": b64(hashlib.sha256(spki(ct_key)).digest())}}],
        "timestampAuthorities": [],
    }
    artifact = b"olmpack keyless test artifact\n"
    with open(os.path.join(out, "artifact.txt"), "wb") as f:
        f.write(artifact)
    with open(os.path.join(out, "other.txt"), "wb") as f:
        f.write(b"another artifact\n")
    with open(os.path.join(out, "trusted_root.json"), "w") as f:
        json.dump(root, f, indent=1)
    trust_config = {
        "mediaType": "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json",
        "trustedRoot": root,
        "signingConfig": {
            "mediaType": "application/vnd.dev.sigstore.signingconfig.v0.2+json",
            "caUrls": [{"url": "https://fulcio.olmpack.invalid", "majorApiVersion": 1, "operator": "",
                        "validFor": {"start": "1970-01-01T01:01:01Z"}}],
            "oidcUrls": [], "tsaUrls": [],
            "rekorTlogUrls": [{"url": "https://rekor.olmpack.invalid", "majorApiVersion": 1, "operator": "",
                               "validFor": {"start": "1970-01-01T01:01:01Z"}}],
            "rekorTlogConfig": {"selector": "ANY"}, "tsaConfig": {"selector": "ANY"},
        },
    }
    with open(os.path.join(out, "trust_config.json"), "w") as f:
        json.dump(trust_config, f)

    nb = NOW - datetime.timedelta(hours=2)
    leaf_key, leaf = make_leaf(ca_key, ca_cert, ct_key, nb, datetime.timedelta(minutes=10))
    t_ok = int(nb.timestamp()) + 60
    t_late = int(nb.timestamp()) + 3600
    cases = {
        "good": make_bundle(rekor_key, leaf_key, leaf, artifact, t_ok),
        "expired": make_bundle(rekor_key, leaf_key, leaf, artifact, t_late),
        "not-in-log": make_bundle(rekor_key, leaf_key, leaf, artifact, t_ok, tamper="not-in-log"),
        "checkpoint-key": make_bundle(rekor_key, leaf_key, leaf, artifact, t_ok,
                                      tamper="checkpoint-key", other_key=other_key),
    }
    cases["origin"] = make_bundle(rekor_key, leaf_key, leaf, artifact, t_ok,
                                  origin="rekor.elsewhere.invalid - 1")
    sct_key, sct_leaf = make_leaf(ca_key, ca_cert, ct_key, nb, datetime.timedelta(minutes=10), sct_hash=0)
    cases["sct-hash"] = make_bundle(rekor_key, sct_key, sct_leaf, artifact, t_ok)
    # "\u0455igner": CYRILLIC SMALL LETTER DZE, which looks like "s".
    look_key, look_leaf = make_leaf(ca_key, ca_cert, ct_key, nb, datetime.timedelta(minutes=10),
                                    san=username_san("\u0455igner@olmpack.test"))
    cases["lookalike"] = make_bundle(rekor_key, look_key, look_leaf, artifact, t_ok)
    signing_key = ec.generate_private_key(ec.SECP256R1())
    with open(os.path.join(out, "key.pub"), "wb") as f:
        f.write(signing_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    cases["key-good"] = make_bundle(rekor_key, signing_key, None, artifact, t_ok)
    # Signed with the key, but carrying (and logged for) a certificate of another key: the log
    # never saw the key.
    logged = make_bundle(rekor_key, signing_key, leaf, artifact, t_ok)
    cases["key-logged-cert"] = logged
    for name, b in cases.items():
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(b, f, indent=1)
    # Many copies of the good bundle's check, for timing (`bench` in the guide).
    if len(sys.argv) > 2:
        for i in range(int(sys.argv[2])):
            with open(os.path.join(out, f"bench-{i}.json"), "w") as f:
                json.dump(cases["good"], f)


if __name__ == "__main__":
    main()
