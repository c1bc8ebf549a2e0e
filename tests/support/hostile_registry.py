#!/usr/bin/python3
"""Small hostile registries on 127.0.0.1 for the registry-client tests (issue 40).

Usage: hostile_registry.py MODE LOG LIFETIME_SECONDS

Starts two HTTP servers on free loopback ports ("front", the registry the command names, and
"other", a second host) and prints "FRONT_PORT OTHER_PORT" on one line. Every request either
server receives is appended to LOG as one JSON line {server, method, path, authorization}.
The process exits by itself after LIFETIME_SECONDS.

Modes:
  redirect   front is a registry asking for Basic credentials (user olm); its blob downloads
             redirect to other, which answers 401 with a Bearer realm on itself (/steal).
  record     other answers every /v2/ request with 401 Bearer realm=other/token; /token hands
             out a token. front is unused (a recording registry that asks for credentials).
  tokenbomb  front asks for a Bearer token at front/token, which streams an endless token.
  escape     front answers every /v2/ request except the ping with 404 and an error envelope
             carrying terminal escape sequences.
  trickle    front serves the ping, then a manifest whose body comes one byte a second.
  tags       front serves a tag list in pages linked by relative `Link` targets; /v2/big/...
             serves endless pages of 1 MiB each.
  upload     front is a registry asking for Basic credentials whose blob uploads go to other
             (an absolute upload Location on another host).
  bigmanifest front serves a valid image manifest of 64 MiB (a huge annotation).
"""

import base64
import hashlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE, LOG, LIFETIME = sys.argv[1], sys.argv[2], float(sys.argv[3])
USER, PASSWORD = "olm", "olm-Secret-42"
LOCK = threading.Lock()
PORTS = {}
CONFIG = b"{}"
CONFIG_DIGEST = "sha256:" + hashlib.sha256(CONFIG).hexdigest()
MANIFEST = json.dumps(
    {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": CONFIG_DIGEST,
            "size": len(CONFIG),
        },
        "layers": [],
    }
).encode()
ESC = "\x1b]0;pwned\x07\x1b[2J\x1b[31mREGISTRY SAYS\x1b[0m\r\x08\x9b"


def log(server, handler):
    entry = {
        "server": server,
        "method": handler.command,
        "path": handler.path,
        "authorization": handler.headers.get("Authorization"),
    }
    with LOCK:
        with open(LOG, "a") as f:
            f.write(json.dumps(entry) + "\n")


def basic_ok(handler):
    want = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    return handler.headers.get("Authorization") == want


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_name = "front"

    def log_message(self, *args):
        pass

    def send(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        log(self.server_name, self)
        getattr(self, f"{MODE}_{self.server_name}")()

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def do_POST(self):
        self.body = self.read_body()
        self.do_GET()

    do_PUT = do_POST
    do_PATCH = do_POST

    def front_url(self):
        return f"http://127.0.0.1:{PORTS['front']}"

    def other_url(self):
        return f"http://127.0.0.1:{PORTS['other']}"

    # redirect: the registry redirects blobs to a host that asks for credentials itself.
    def redirect_front(self):
        if not basic_ok(self):
            return self.send(401, b"", [("WWW-Authenticate", 'Basic realm="front"')])
        if self.path == "/v2/":
            return self.send(200, b"{}")
        if "/manifests/" in self.path:
            return self.send(
                200,
                MANIFEST,
                [("Content-Type", "application/vnd.oci.image.manifest.v1+json")],
            )
        if "/blobs/" in self.path:
            digest = self.path.rsplit("/", 1)[1]
            return self.send(307, b"", [("Location", f"{self.other_url()}/storage/{digest}")])
        self.send(404)

    def redirect_other(self):
        if self.path.startswith("/steal"):
            return self.send(200, b'{"token":"stolen"}', [("Content-Type", "application/json")])
        challenge = f'Bearer realm="{self.other_url()}/steal",service="storage"'
        self.send(401, b"", [("WWW-Authenticate", challenge)])

    # record: a registry (other) that wants a token from itself.
    def record_front(self):
        self.send(404)

    def record_other(self):
        if self.path.startswith("/token"):
            return self.send(200, b'{"token":"t"}', [("Content-Type", "application/json")])
        challenge = f'Bearer realm="{self.other_url()}/token",service="other"'
        self.send(401, b"", [("WWW-Authenticate", challenge)])

    # tokenbomb: the token service never stops sending.
    def tokenbomb_front(self):
        if self.path.startswith("/token"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            chunk = b"a" * (1 << 20)
            try:
                self.wfile.write(b'{"token":"')
                for _ in range(256):  # at most 256 MiB
                    self.wfile.write(chunk)
            except OSError:
                pass
            self.close_connection = True
            return
        challenge = f'Bearer realm="{self.front_url()}/token",service="bomb"'
        self.send(401, b"", [("WWW-Authenticate", challenge)])

    def tokenbomb_other(self):
        self.send(404)

    # escape: error texts carrying terminal control sequences.
    def escape_front(self):
        if self.path == "/v2/":
            return self.send(200, b"{}")
        body = json.dumps(
            {"errors": [{"code": "DENIED" + ESC, "message": ESC, "detail": ESC}]}
        ).encode()
        self.send(403, body, [("Content-Type", "application/json")])

    def escape_other(self):
        self.send(404)

    # trickle: a manifest body that comes one byte a second.
    def trickle_front(self):
        if self.path == "/v2/":
            return self.send(200, b"{}")
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
        self.send_header("Content-Length", str(len(MANIFEST)))
        self.end_headers()
        try:
            for b in MANIFEST:
                self.wfile.write(bytes([b]))
                self.wfile.flush()
                time.sleep(1)
        except OSError:
            pass
        self.close_connection = True

    def trickle_other(self):
        self.send(404)

    # tags: relative Link targets, and endless 1 MiB pages.
    def tags_front(self):
        if self.path == "/v2/":
            return self.send(200, b"{}")
        if self.path.startswith("/v2/small/tags/list"):
            page = 1
            if "last=" in self.path:
                page = int(self.path.rsplit("last=t", 1)[1]) + 1
            body = json.dumps({"name": "small", "tags": [f"t{page}", f"sha256-{page}.sig"]})
            headers = [("Content-Type", "application/json")]
            if page < 3:
                # Relative to the request URL: /v2/small/tags/list?n=2&last=tN.
                headers.append(("Link", f'<list?n=2&last=t{page}>; rel="next"'))
            return self.send(200, body.encode(), headers)
        if self.path.startswith("/v2/big/tags/list"):
            n = 0
            if "last=" in self.path:
                n = int(self.path.rsplit("last=", 1)[1]) + 1
            tags = [f"tag-{n}-{i:07d}" for i in range((1 << 20) // 20)]
            body = json.dumps({"name": "big", "tags": tags}).encode()
            headers = [
                ("Content-Type", "application/json"),
                ("Link", f'</v2/big/tags/list?n=65536&last={n}>; rel="next"'),
            ]
            return self.send(200, body, headers)
        self.send(404)

    def tags_other(self):
        self.send(404)


    # upload: blob uploads sent to another host.
    def upload_front(self):
        if not basic_ok(self):
            return self.send(401, b"", [("WWW-Authenticate", 'Basic realm="front"')])
        if self.path == "/v2/":
            return self.send(200, b"{}")
        if self.command == "POST" and "/blobs/uploads/" in self.path:
            return self.send(
                202,
                b"",
                [
                    ("Location", f"{self.other_url()}/upload/1"),
                    ("Docker-Upload-UUID", "1"),
                    ("Range", "0-0"),
                ],
            )
        if self.command == "PUT" and "/manifests/" in self.path:
            digest = "sha256:" + hashlib.sha256(self.body).hexdigest()
            return self.send(201, b"", [("Docker-Content-Digest", digest)])
        self.send(404)

    def upload_other(self):
        if self.path.startswith("/upload/"):
            status = 201 if self.command == "PUT" else 202
            return self.send(
                status,
                b"",
                [("Location", f"{self.other_url()}/upload/1"), ("Range", "0-0")],
            )
        self.send(404)

    # bigmanifest: a manifest far over any sane size, valid JSON all the same.
    def bigmanifest_front(self):
        if self.path == "/v2/":
            return self.send(200, b"{}")
        if "/manifests/" not in self.path:
            return self.send(404)
        head = MANIFEST[:-1] + b', "annotations": {"filler": "'
        tail = b'"}}'
        filler = 64 * (1 << 20)
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
        self.send_header("Content-Length", str(len(head) + filler + len(tail)))
        self.end_headers()
        if self.command == "HEAD":
            return
        try:
            self.wfile.write(head)
            chunk = b"a" * (1 << 20)
            for _ in range(64):
                self.wfile.write(chunk)
            self.wfile.write(tail)
        except OSError:
            pass

    def bigmanifest_other(self):
        self.send(404)


class Front(Handler):
    server_name = "front"


class Other(Handler):
    server_name = "other"


def main():
    servers = {
        "front": ThreadingHTTPServer(("127.0.0.1", 0), Front),
        "other": ThreadingHTTPServer(("127.0.0.1", 0), Other),
    }
    for name, s in servers.items():
        s.daemon_threads = True
        PORTS[name] = s.server_address[1]
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print(PORTS["front"], PORTS["other"], flush=True)
    time.sleep(LIFETIME)


if __name__ == "__main__":
    main()
