#!/usr/bin/env python3
"""Times keyless verification of N bundles of one artifact: olmpack verify-blob (one process
per bundle, as a CI loop runs it) against sigstore-python's Verifier (in one process, its
start-up paid once, so the comparison favours sigstore-python).

Usage: bench-sigstore.py OLMPACK N   (with PyPI `sigstore` importable; no network needed).
The data comes from tests/support/sigstore_testdata.py (a private instance, fresh keys).
"""

import os
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
olmpack, n = sys.argv[1], int(sys.argv[2])
IDENTITY = "https://github.com/olmpack/test/.github/workflows/release.yml@refs/heads/main"
ISSUER = "https://token.actions.githubusercontent.com"

with tempfile.TemporaryDirectory() as d:
    subprocess.run([sys.executable, os.path.join(here, "../tests/support/sigstore_testdata.py"), d, str(n)], check=True)
    bundles = [os.path.join(d, f"bench-{i}.json") for i in range(n)]
    art = os.path.join(d, "artifact.txt")

    t = time.monotonic()
    for b in bundles:
        subprocess.run([olmpack, "verify-blob", "--bundle", b, "--certificate-identity", IDENTITY,
                        "--certificate-oidc-issuer", ISSUER, "--trusted-root", os.path.join(d, "trusted_root.json"), art],
                       check=True, stdout=subprocess.DEVNULL)
    t_olm = time.monotonic() - t

    from sigstore.models import Bundle, ClientTrustConfig
    from sigstore.verify import Verifier
    from sigstore.verify.policy import Identity

    cfg = ClientTrustConfig.from_json(open(os.path.join(d, "trust_config.json")).read())
    t = time.monotonic()
    verifier = Verifier(trusted_root=cfg.trusted_root)
    policy = Identity(identity=IDENTITY, issuer=ISSUER)
    data = open(art, "rb").read()
    for b in bundles:
        verifier.verify_artifact(data, Bundle.from_json(open(b).read()), policy)
    t_py = time.monotonic() - t
    print(f"{n} bundles: olmpack {t_olm:.2f}s ({1000 * t_olm / n:.1f} ms each, a process each); "
          f"sigstore-python {t_py:.2f}s ({1000 * t_py / n:.1f} ms each, in one process); "
          f"ratio {t_py / t_olm:.2f}")
