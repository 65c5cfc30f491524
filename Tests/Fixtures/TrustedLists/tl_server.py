"""A local HTTP server publishing the test trusted lists, as `trust refresh` tests download them.

Usage: python3 tl_server.py SERVE_DIR LOG_FILE

Binds 127.0.0.1 on an ephemeral port and prints the port on its first line. It then writes
SERVE_DIR/EU/lotl.xml, a list of the lists signed by lotl-signer (generate.py's, with xmlsec1) whose
pointers name this server's BE/tl-qc.xml and LU/tl-qtst.xml, and copies those two TLs there unless
the test put its own. Every file under SERVE_DIR is served as it is at the time of the request, with
an ETag (its SHA-256) and a Last-Modified (its mtime); a conditional request (If-None-Match, else
If-Modified-Since) for an unchanged file gets 304 Not Modified. Each request is appended to
LOG_FILE as one JSON line: {"path", "status", "ifNoneMatch", "ifModifiedSince"}.
"""

import email.utils
import hashlib
import http.server
import json
import os
import shutil
import socketserver
import sys
import warnings

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate  # noqa: E402
from certomancer.registry import CertomancerConfig  # noqa: E402


def make_handler(root, log_file):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            path = os.path.realpath(os.path.join(root, self.path.lstrip("/").split("?")[0]))
            if not path.startswith(os.path.realpath(root) + os.sep) or not os.path.isfile(path):
                return self.answer(404, b"not found\n")
            with open(path, "rb") as f:
                body = f.read()
            tag = '"' + hashlib.sha256(body).hexdigest() + '"'
            modified = int(os.stat(path).st_mtime)
            headers = {"ETag": tag, "Last-Modified": email.utils.formatdate(modified, usegmt=True)}
            match = self.headers.get("If-None-Match")
            since = self.headers.get("If-Modified-Since")
            if match is not None:
                unchanged = tag in [t.strip() for t in match.split(",")]
            elif since is not None:
                parsed = email.utils.parsedate_to_datetime(since)
                unchanged = parsed is not None and modified <= int(parsed.timestamp())
            else:
                unchanged = False
            if unchanged:
                return self.answer(304, b"", headers)
            self.answer(200, body, dict(headers, **{"Content-Type": "application/vnd.etsi.tsl+xml"}))

        def answer(self, status, body, headers=None):
            with open(log_file, "a", encoding="utf-8") as log:
                entry = {
                    "path": self.path,
                    "status": status,
                    "ifNoneMatch": self.headers.get("If-None-Match"),
                    "ifModifiedSince": self.headers.get("If-Modified-Since"),
                }
                log.write(json.dumps(entry) + "\n")
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            if status != 304:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if status != 304:
                self.wfile.write(body)

        def log_message(self, *args):
            pass

    return Handler


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def main(root, log_file):
    server = Server(("127.0.0.1", 0), make_handler(root, log_file))
    port = server.server_address[1]
    config = CertomancerConfig.from_file(os.path.join(HERE, "pki.yml"), key_search_dir=HERE)
    arch = config.get_pki_arch("tl")
    for territory, file in (("EU", None), ("BE", "tl-qc.xml"), ("LU", "tl-qtst.xml")):
        os.makedirs(os.path.join(root, territory), exist_ok=True)
        if file and not os.path.exists(os.path.join(root, territory, file)):
            shutil.copyfile(os.path.join(HERE, file), os.path.join(root, territory, file))
    lotl = os.path.join(root, "EU", "lotl.xml")
    if not os.path.exists(lotl):
        generate.sign(generate.lotl(arch, base=f"http://127.0.0.1:{port}"), "lotl-signer", lotl)
    print(port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
