#!/usr/bin/env python3
"""Writes a private Sigstore instance with an RFC 3161 timestamp authority and a Rekor v2-like
log, and bundles timestamped through it, for tests/cli/sigstore_tsa.rs (and sigstore-python).

Built on sigstore_testdata.py (the Fulcio-like CA, CT log, Merkle tree helpers); the timestamp
tokens (RFC 3161 TimeStampResp holding a CMS SignedData over a TSTInfo, RFC 5652) are DER
written here by hand, signed with python3 `cryptography`. Fresh keys every run.

  v2-good.json         hashedrekord 0.0.2 entry (no SET, no integrated time), inclusion proof
                       and checkpoint of the v2 log, one timestamp at the signing time
  v2-embedded.json     the same with the TSA's certificate embedded in the token
  v1-tsa-good.json     a Rekor v1 entry (SET) and a timestamp: two verified times
  v2-no-timestamp.json a v2 entry and no timestamp: nothing vouches for the time
  v2-imprint.json      the timestamp's imprint is the hash of another signature
  v2-untrusted.json    the timestamp is signed by a TSA the trusted root does not list
  v2-impostor.json     signed by another key under the trusted TSA's name and serial
  v2-late.json         the timestamp's time (by a trusted TSA) is after the signing certificate expired
  v2-tsa-window.json   the timestamp's time is past the trusted root's validFor end of the TSA
  v2-tsa-cert.json     the timestamp's time is before the TSA certificate's notBefore

Usage: sigstore_tsa_testdata.py OUTDIR
"""

import base64
import datetime
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sigstore_testdata as st  # noqa: E402

from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID  # noqa: E402

b64 = st.b64
V2_HOST = "rekor2.olmpack.invalid"


# --- DER, the few shapes a timestamp needs -------------------------------------------------

def tlv(tag, body):
    n = len(body)
    if n < 0x80:
        return bytes([tag, n]) + body
    ln = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(ln)]) + ln + body


def seq(*parts):
    return tlv(0x30, b"".join(parts))


def set_of(*parts):
    return tlv(0x31, b"".join(sorted(parts)))


def integer(v):
    b = v.to_bytes(max(1, (v.bit_length() + 8) // 8), "big", signed=True)
    return tlv(0x02, b)


def oid(dotted):
    arcs = [int(a) for a in dotted.split(".")]
    out = bytearray([40 * arcs[0] + arcs[1]])
    for a in arcs[2:]:
        chunk = [a & 0x7F]
        a >>= 7
        while a:
            chunk.append(0x80 | (a & 0x7F))
            a >>= 7
        out += bytes(reversed(chunk))
    return tlv(0x06, bytes(out))


def octets(b):
    return tlv(0x04, b)


def explicit(n, body):
    return tlv(0xA0 + n, body)


def gentime(t):
    return tlv(0x18, t.strftime("%Y%m%d%H%M%SZ").encode())


SHA256 = "2.16.840.1.101.3.4.2.1"
SIGNED_DATA = "1.2.840.113549.1.7.2"
TST_INFO = "1.2.840.113549.1.9.16.1.4"


def timestamp(tsa_key, tsa_cert, message, gen_time, *, embed=False, sid_cert=None):
    """A DER TimeStampResp (granted) whose TSTInfo imprints SHA-256(message) at gen_time,
    signed by tsa_key and naming sid_cert (default tsa_cert) as its signer."""
    sid_cert = sid_cert or tsa_cert
    alg = seq(oid(SHA256), b"\x05\x00")
    tst = seq(
        integer(1),
        oid("1.3.6.1.4.1.57264.2"),
        seq(alg, octets(hashlib.sha256(message).digest())),
        integer(int.from_bytes(os.urandom(8), "big")),
        gentime(gen_time),
    )
    attrs = [
        seq(oid("1.2.840.113549.1.9.3"), set_of(oid(TST_INFO))),
        seq(oid("1.2.840.113549.1.9.4"), set_of(octets(hashlib.sha256(tst).digest()))),
    ]
    signed_attrs = set_of(*attrs)
    sig = tsa_key.sign(signed_attrs, ec.ECDSA(hashes.SHA256()))
    signer = seq(
        integer(1),
        seq(sid_cert.issuer.public_bytes(), integer(sid_cert.serial_number)),
        alg,
        tlv(0xA0, b"".join(sorted(attrs))),  # [0] IMPLICIT: the SET's content
        seq(oid("1.2.840.10045.4.3.2")),
        octets(sig),
    )
    certs = tlv(0xA0, tsa_cert.public_bytes(serialization.Encoding.DER)) if embed else b""
    signed_data = seq(
        integer(3),
        set_of(alg),
        seq(oid(TST_INFO), explicit(0, octets(tst))),
        certs,
        set_of(signer),
    )
    token = seq(oid(SIGNED_DATA), explicit(0, signed_data))
    return seq(seq(integer(0)), token)


# --- the instance ----------------------------------------------------------------------------

def name(cn):
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "olmpack-test"),
                      x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_tsa(cn, not_before, not_after, *, serial=None, issuer=None):
    """A TSA: (leaf key, leaf cert, root cert), the leaf with a critical timeStamping EKU."""
    root_key = ec.generate_private_key(ec.SECP384R1())
    root = (
        x509.CertificateBuilder()
        .subject_name(name(cn + "-root")).issuer_name(name(cn + "-root"))
        .public_key(root_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before).not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(root_key, hashes.SHA384())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(name(cn)).issuer_name(issuer or root.subject)
        .public_key(key.public_key())
        .serial_number(serial or x509.random_serial_number())
        .not_valid_before(not_before).not_valid_after(not_after)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
        .sign(root_key, hashes.SHA384())
    )
    return key, leaf, root


def v2_bundle(rekor_key, leaf_key, leaf_cert, artifact, stamps):
    """A message-signature bundle whose log entry is Rekor v2's hashedrekord 0.0.2 (no SET, no
    integrated time), with inclusion proof and checkpoint, and the given timestamp makers
    (each called with the signature bytes)."""
    digest = hashlib.sha256(artifact).digest()
    sig = leaf_key.sign(artifact, ec.ECDSA(hashes.SHA256()))
    cert_der = leaf_cert.public_bytes(serialization.Encoding.DER)
    body = st.canon({
        "apiVersion": "0.0.2", "kind": "hashedrekord",
        "spec": {"hashedRekordV002": {
            "data": {"algorithm": "SHA2_256", "digest": b64(digest)},
            "signature": {"content": b64(sig), "verifier": {
                "keyDetails": "PKIX_ECDSA_P256_SHA_256", "x509Certificate": {"rawBytes": b64(cert_der)}}},
        }},
    })
    log_id = hashlib.sha256(st.spki(rekor_key)).digest()
    others = [hashlib.sha256(bytes([n])).digest() for n in range(4)]
    index = 1
    leaves = others[:index] + [st.leaf_hash(body)] + others[index:]
    root = st.tree_root(leaves)
    note = f"{V2_HOST}\n{len(leaves)}\n{b64(root)}\n".encode()
    checkpoint = note.decode() + f"\n\u2014 {V2_HOST} " + b64(log_id[:4] + st.sign(rekor_key, note)) + "\n"
    bundle = {
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "verificationMaterial": {
            "certificate": {"rawBytes": b64(cert_der)},
            "tlogEntries": [{
                "logIndex": str(index),
                "logId": {"keyId": b64(log_id)},
                "kindVersion": {"kind": "hashedrekord", "version": "0.0.2"},
                "inclusionProof": {
                    "logIndex": str(index), "rootHash": b64(root), "treeSize": str(len(leaves)),
                    "hashes": [b64(h) for h in st.audit_path(leaves, index)],
                    "checkpoint": {"envelope": checkpoint},
                },
                "canonicalizedBody": b64(body),
            }],
        },
        "messageSignature": {
            "messageDigest": {"algorithm": "SHA2_256", "digest": b64(digest)},
            "signature": b64(sig),
        },
    }
    if stamps:
        bundle["verificationMaterial"]["timestampVerificationData"] = {
            "rfc3161Timestamps": [{"signedTimestamp": b64(make(sig))} for make in stamps]}
    return bundle


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    # The base instance (Fulcio-like CA, CT log, Rekor v1 log) and its files.
    st.main()
    with open(os.path.join(out, "trusted_root.json")) as f:
        root = json.load(f)
    ca_key, ca_cert, ct_key, rekor_key = st.LAST["ca_key"], st.LAST["ca_cert"], st.LAST["ct_key"], st.LAST["rekor_key"]
    artifact = open(os.path.join(out, "artifact.txt"), "rb").read()

    now = st.NOW
    nb = now - datetime.timedelta(hours=2)      # the signing certificate: nb .. nb+30min
    t_ok = nb + datetime.timedelta(minutes=1)
    tsa_key, tsa_cert, tsa_root = make_tsa("olmpack-test-tsa", now - datetime.timedelta(days=30),
                                           now + datetime.timedelta(days=30))
    # A second authority, trusted, whose certificate starts after the signing time.
    young_key, young_cert, young_root = make_tsa("olmpack-test-young-tsa", nb + datetime.timedelta(minutes=5),
                                                 now + datetime.timedelta(days=30))
    other_key, other_cert, _ = make_tsa("olmpack-test-other-tsa", now - datetime.timedelta(days=30),
                                        now + datetime.timedelta(days=30))
    der = lambda c: {"rawBytes": b64(c.public_bytes(serialization.Encoding.DER))}  # noqa: E731
    root["timestampAuthorities"] = [
        {"subject": {"organization": "olmpack-test", "commonName": "olmpack-test-tsa"},
         "uri": "https://tsa.olmpack.invalid",
         "certChain": {"certificates": [der(tsa_cert), der(tsa_root)]},
         # Trusted until 10 minutes into the certificate's life (v2-tsa-window is after that).
         "validFor": {"start": st.rfc3339(now - datetime.timedelta(days=30)),
                      "end": st.rfc3339(nb + datetime.timedelta(minutes=10))}},
        {"subject": {"organization": "olmpack-test", "commonName": "olmpack-test-young-tsa"},
         "uri": "https://young-tsa.olmpack.invalid",
         "certChain": {"certificates": [der(young_cert), der(young_root)]},
         "validFor": {"start": st.rfc3339(now - datetime.timedelta(days=30))}},
    ]
    v2_key = ec.generate_private_key(ec.SECP256R1())
    root["tlogs"].append({
        "baseUrl": "https://" + V2_HOST, "hashAlgorithm": "SHA2_256",
        "publicKey": {"rawBytes": b64(st.spki(v2_key)), "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                      "validFor": {"start": st.rfc3339(now - datetime.timedelta(days=365))}},
        "logId": {"keyId": b64(hashlib.sha256(st.spki(v2_key)).digest())}})
    with open(os.path.join(out, "trusted_root.json"), "w") as f:
        json.dump(root, f, indent=1)
    with open(os.path.join(out, "trust_config.json")) as f:
        tc = json.load(f)
    tc["trustedRoot"] = root
    with open(os.path.join(out, "trust_config.json"), "w") as f:
        json.dump(tc, f)

    leaf_key, leaf = st.make_leaf(ca_key, ca_cert, ct_key, nb, datetime.timedelta(minutes=30))
    stamp = lambda t, **kw: (lambda sig: timestamp(tsa_key, tsa_cert, sig, t, **kw))  # noqa: E731
    cases = {
        "v2-good": v2_bundle(v2_key, leaf_key, leaf, artifact, [stamp(t_ok)]),
        "v2-embedded": v2_bundle(v2_key, leaf_key, leaf, artifact, [stamp(t_ok, embed=True)]),
        "v2-no-timestamp": v2_bundle(v2_key, leaf_key, leaf, artifact, []),
        "v2-imprint": v2_bundle(v2_key, leaf_key, leaf, artifact,
                                [lambda sig: timestamp(tsa_key, tsa_cert, sig + b"x", t_ok)]),
        "v2-untrusted": v2_bundle(v2_key, leaf_key, leaf, artifact,
                                  [lambda sig: timestamp(other_key, other_cert, sig, t_ok, embed=True)]),
        # Another key signs under the trusted TSA's issuer and serial (not embedded).
        "v2-impostor": v2_bundle(v2_key, leaf_key, leaf, artifact,
                                 [lambda sig: timestamp(other_key, tsa_cert, sig, t_ok)]),
        # The young TSA vouches for a time after the signing certificate expired.
        "v2-late": v2_bundle(v2_key, leaf_key, leaf, artifact,
                             [lambda sig: timestamp(young_key, young_cert, sig, nb + datetime.timedelta(minutes=40))]),
        "v2-tsa-window": v2_bundle(v2_key, leaf_key, leaf, artifact,
                                   [stamp(nb + datetime.timedelta(minutes=20))]),
        "v2-tsa-cert": v2_bundle(v2_key, leaf_key, leaf, artifact,
                                 [lambda sig: timestamp(young_key, young_cert, sig, t_ok)]),
    }
    v1 = st.make_bundle(rekor_key, leaf_key, leaf, artifact, int(t_ok.timestamp()) + 30)
    sig = base64.b64decode(v1["messageSignature"]["signature"])
    v1["verificationMaterial"]["timestampVerificationData"] = {
        "rfc3161Timestamps": [{"signedTimestamp": b64(timestamp(tsa_key, tsa_cert, sig, t_ok))}]}
    cases["v1-tsa-good"] = v1
    for n, b in cases.items():
        with open(os.path.join(out, n + ".json"), "w") as f:
            json.dump(b, f, indent=1)


if __name__ == "__main__":
    main()
