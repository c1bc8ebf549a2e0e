#!/usr/bin/python3
"""Keyless, Rekor and PKI cosign signatures for the policy.json `sigstoreSigned` tests
(tests/cli/policy_sigstore.rs), made independently of olmpack (python3-cryptography) and
pushed to the test registry on loopback.

  setup OUT                              fresh CAs and keys in OUT (PEM): a Fulcio-like root and
                                         intermediate (fulcio_ca.pem), another CA
                                         (other_ca.pem), a Rekor key (rekor.pub) and another,
                                         a signing key (key.pub), a PKI root and intermediate
                                         (pki_root.pem, pki_inter.pem)
  sign OUT HOST REPO DIGEST CASE         writes the `.sig` tag of DIGEST with one cosign layer
                                         (payload, signature, and the certificate, chain and
                                         Rekor SET annotations the case calls for)
  bundle OUT HOST REPO DIGEST CASE       attaches a Sigstore bundle v0.3 referrer as cosign 3
                                         signs images (DSSE over an in-toto statement naming
                                         the image, a dsse entry with its SET) through the
                                         referrers tag

Cases: fulcio (good), fulcio-other-ca, fulcio-wrong-email, fulcio-wrong-issuer,
fulcio-set-other-key, fulcio-set-other-payload, fulcio-expired, key-rekor (good),
key-rekor-other-key, pki (good), pki-other-host, pki-other-ca.
"""
import base64
import datetime
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cosign_interop import BUNDLE_MT, PAYLOAD_MT, SIG_ANN, cosign_payload, get_manifest, put_blob, put_manifest, sha  # noqa: E402

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

EMAIL = "signer@olmpack.test"
ISSUER = "https://issuer.olmpack.test"
HOST_NAME = "signer.olmpack.test"
UTC = datetime.timezone.utc
NOW = datetime.datetime.now(UTC).replace(microsecond=0)


def b64(b):
    return base64.b64encode(b).decode()


def pem_cert(c):
    return c.public_bytes(serialization.Encoding.PEM)


def save_key(out, name, key):
    with open(os.path.join(out, name + ".key"), "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    with open(os.path.join(out, name + ".pub"), "wb") as f:
        f.write(key.public_key().public_bytes(serialization.Encoding.PEM,
                                              serialization.PublicFormat.SubjectPublicKeyInfo))


def load_key(out, name):
    with open(os.path.join(out, name + ".key"), "rb") as f:
        return serialization.load_pem_private_key(f.read(), None)


def load_cert(out, name):
    with open(os.path.join(out, name + ".pem"), "rb") as f:
        return x509.load_pem_x509_certificate(f.read())


def ca(name, key, issuer=None, issuer_key=None, path_len=None):
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "olmpack-test"),
                         x509.NameAttribute(NameOID.COMMON_NAME, name)])
    return (x509.CertificateBuilder()
            .subject_name(subject).issuer_name(issuer.subject if issuer else subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(NOW - datetime.timedelta(days=365))
            .not_valid_after(NOW + datetime.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=path_len), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .sign(issuer_key or key, hashes.SHA384()))


def setup(out):
    os.makedirs(out, exist_ok=True)
    for name in ["fulcio_root", "fulcio_inter", "other_ca", "rekor", "other_rekor", "key",
                 "pki_root", "pki_inter"]:
        k = ec.generate_private_key(ec.SECP384R1() if "root" in name else ec.SECP256R1())
        save_key(out, name, k)
    root = ca("olmpack-test-fulcio-root", load_key(out, "fulcio_root"))
    inter = ca("olmpack-test-fulcio-intermediate", load_key(out, "fulcio_inter"), root,
               load_key(out, "fulcio_root"), 0)
    other = ca("olmpack-test-other-ca", load_key(out, "other_ca"))
    proot = ca("olmpack-test-pki-root", load_key(out, "pki_root"))
    pinter = ca("olmpack-test-pki-intermediate", load_key(out, "pki_inter"), proot,
                load_key(out, "pki_root"), 0)
    for name, c in [("fulcio_ca", root), ("fulcio_inter", inter), ("other_ca", other),
                    ("pki_root", proot), ("pki_inter", pinter)]:
        with open(os.path.join(out, name + ".pem"), "wb") as f:
            f.write(pem_cert(c))


def leaf(issuer, issuer_key, not_before, lifetime, *, email=EMAIL, oidc=ISSUER, dns=None):
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.RFC822Name(email)] + ([x509.DNSName(dns)] if dns else [])
    b = (x509.CertificateBuilder()
         .subject_name(x509.Name([])).issuer_name(issuer.subject)
         .public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(not_before).not_valid_after(not_before + lifetime)
         .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
         .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False)
         .add_extension(x509.SubjectAlternativeName(names), critical=True))
    if oidc:
        b = (b.add_extension(x509.UnrecognizedExtension(x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.1"),
                                                        oidc.encode()), critical=False)
             .add_extension(x509.UnrecognizedExtension(x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.8"),
                                                       b"\x0c" + bytes([len(oidc)]) + oidc.encode()), critical=False))
    return key, b.sign(issuer_key, hashes.SHA256())


def canon(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def rekor_entry(rekor_key, signer_pem, sig, signed, integrated):
    """A hashedrekord 0.0.1 body and the SET payload and signature over it."""
    body = canon({"apiVersion": "0.0.1", "kind": "hashedrekord",
                  "spec": {"data": {"hash": {"algorithm": "sha256", "value": hashlib.sha256(signed).hexdigest()}},
                           "signature": {"content": b64(sig), "publicKey": {"content": b64(signer_pem)}}}})
    log_id = hashlib.sha256(rekor_key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)).digest()
    payload = {"body": b64(body), "integratedTime": integrated, "logID": log_id.hex(), "logIndex": 7}
    set_sig = rekor_key.sign(canon(payload), ec.ECDSA(hashes.SHA256()))
    return body, log_id, payload, set_sig


def signer_for(out, case):
    """(signing key, certificate or None, chain PEM or None, signer PEM for the log,
    integrated time)."""
    nb = NOW - datetime.timedelta(hours=2)
    t_ok = int(nb.timestamp()) + 60
    life = datetime.timedelta(minutes=10)
    if case.startswith("fulcio"):
        inter = load_cert(out, "fulcio_inter")
        inter_key = load_key(out, "fulcio_inter")
        chain = pem_cert(inter) + pem_cert(load_cert(out, "fulcio_ca"))
        kw = {}
        if case == "fulcio-wrong-email":
            kw["email"] = "someone-else@olmpack.test"
        if case == "fulcio-wrong-issuer":
            kw["oidc"] = "https://other-issuer.olmpack.test"
        if case == "fulcio-other-ca":
            inter, inter_key = ca("olmpack-test-fulcio-intermediate", load_key(out, "other_ca")), load_key(out, "other_ca")
            chain = pem_cert(inter)
        key, cert = leaf(inter, inter_key, nb, life, **kw)
        t = int(nb.timestamp()) + 3600 if case == "fulcio-expired" else t_ok
        return key, cert, chain, pem_cert(cert), t
    if case.startswith("pki"):
        inter = load_cert(out, "pki_inter")
        inter_key = load_key(out, "pki_inter")
        chain = pem_cert(inter) + pem_cert(load_cert(out, "pki_root"))
        if case == "pki-other-ca":
            inter, inter_key = load_cert(out, "other_ca"), load_key(out, "other_ca")
            chain = pem_cert(inter)
        dns = "elsewhere.olmpack.test" if case == "pki-other-host" else HOST_NAME
        key, cert = leaf(inter, inter_key, NOW - datetime.timedelta(days=1), datetime.timedelta(days=30),
                         oidc=None, dns=dns)
        return key, cert, chain, pem_cert(cert), t_ok
    key = load_key(out, "key")
    pub = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return key, None, None, pub, t_ok


def rekor_for(out, case):
    return load_key(out, "other_rekor" if case.endswith("set-other-key") or case == "key-rekor-other-key" else "rekor")


def sign(out, host, repo, digest, case):
    payload = cosign_payload(f"{host}/{repo}", digest)
    key, cert, chain, signer_pem, t = signer_for(out, case)
    sig = key.sign(payload, ec.ECDSA(hashes.SHA256()))
    ann = {SIG_ANN: b64(sig)}
    if not case.startswith("pki"):
        logged = payload + b" " if case == "fulcio-set-other-payload" else payload
        _, _, set_payload, set_sig = rekor_entry(rekor_for(out, case), signer_pem, sig, logged, t)
        ann["dev.sigstore.cosign/bundle"] = json.dumps({"SignedEntryTimestamp": b64(set_sig), "Payload": set_payload})
    if cert is not None:
        ann["dev.sigstore.cosign/certificate"] = pem_cert(cert).decode()
        ann["dev.sigstore.cosign/chain"] = chain.decode()
    layer = put_blob(host, repo, payload)
    layer.update({"mediaType": PAYLOAD_MT, "annotations": ann})
    cfg = json.dumps({"architecture": "", "os": "", "config": {},
                      "rootfs": {"type": "layers", "diff_ids": [layer["digest"]]}}).encode()
    c = put_blob(host, repo, cfg)
    c["mediaType"] = "application/vnd.oci.image.config.v1+json"
    put_manifest(host, repo, digest.replace(":", "-") + ".sig",
                 {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                  "config": c, "layers": [layer]})


def bundle(out, host, repo, digest, case):
    """A cosign 3 keyless signature: DSSE over an in-toto statement naming the image, logged
    as a dsse 0.0.1 entry with its SET."""
    st, manifest = get_manifest(host, repo, digest)
    assert st == 200, st
    key, cert, chain, signer_pem, t = signer_for(out, case)
    statement = json.dumps({"_type": "https://in-toto.io/Statement/v1",
                            "subject": [{"name": f"{host}/{repo}", "digest": {"sha256": digest.split(":", 1)[1]}}],
                            "predicateType": "https://sigstore.dev/cosign/sign/v1",
                            "predicate": {}}).encode()
    ptype = "application/vnd.in-toto+json"
    pae = b"DSSEv1 %d %s %d %s" % (len(ptype), ptype.encode(), len(statement), statement)
    sig = key.sign(pae, ec.ECDSA(hashes.SHA256()))
    logged = statement + b" " if case == "fulcio-set-other-payload" else statement
    body = canon({"apiVersion": "0.0.1", "kind": "dsse",
                  "spec": {"payloadHash": {"algorithm": "sha256", "value": hashlib.sha256(logged).hexdigest()},
                           "signatures": [{"signature": b64(sig), "verifier": b64(signer_pem)}]}})
    rekor_key = rekor_for(out, case)
    log_id = hashlib.sha256(rekor_key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)).digest()
    set_payload = {"body": b64(body), "integratedTime": t, "logID": log_id.hex(), "logIndex": 7}
    set_sig = rekor_key.sign(canon(set_payload), ec.ECDSA(hashes.SHA256()))
    vm = {"tlogEntries": [{
        "logIndex": "7", "logId": {"keyId": b64(log_id)},
        "kindVersion": {"kind": "dsse", "version": "0.0.1"},
        "integratedTime": str(t),
        "inclusionPromise": {"signedEntryTimestamp": b64(set_sig)},
        "canonicalizedBody": b64(body)}]}
    if cert is not None:
        end = b"-----END CERTIFICATE-----\n"
        chain_certs = [x509.load_pem_x509_certificate(p + end) for p in chain.split(end) if p.strip()][:-1]
        vm["x509CertificateChain"] = {"certificates": [
            {"rawBytes": b64(c.public_bytes(serialization.Encoding.DER))} for c in [cert] + chain_certs]}
    else:
        vm["publicKey"] = {"hint": "olmpack-test"}
    b = json.dumps({"mediaType": BUNDLE_MT, "verificationMaterial": vm,
                    "dsseEnvelope": {"payload": b64(statement), "payloadType": ptype,
                                     "signatures": [{"sig": b64(sig)}]}}).encode()
    layer = put_blob(host, repo, b)
    layer["mediaType"] = BUNDLE_MT
    empty = put_blob(host, repo, b"{}")
    empty["mediaType"] = "application/vnd.oci.empty.v1+json"
    m = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
         "artifactType": BUNDLE_MT, "config": empty, "layers": [layer],
         "subject": {"mediaType": "application/vnd.oci.image.manifest.v1+json",
                     "digest": digest, "size": len(manifest)}}
    mdigest, msize = put_manifest(host, repo, "bundle-" + sha(json.dumps(m).encode())[7:19], m)
    entry = {"mediaType": "application/vnd.oci.image.manifest.v1+json",
             "digest": mdigest, "size": msize, "artifactType": BUNDLE_MT}
    st, old = get_manifest(host, repo, digest.replace(":", "-"))
    manifests = json.loads(old)["manifests"] if st == 200 else []
    manifests.append(entry)
    put_manifest(host, repo, digest.replace(":", "-"),
                 {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                  "manifests": manifests}, "application/vnd.oci.image.index.v1+json")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "setup":
        setup(args[0])
    elif cmd == "sign":
        sign(*args)
    elif cmd == "bundle":
        bundle(*args)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
