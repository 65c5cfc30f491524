"""certomancer's Animator (TSA, OCSP responder, CRLs) on a free loopback port, for the tests.

Usage: python3 serve.py CONFIG OUTPUT_DIR

Binds 127.0.0.1:0, builds the PKI with that address as the service URL prefix (so the certificates'
AIA and CDP point at this server), writes every certificate and PKCS#12 file (certomancer's flat dump: NAME.cert.pem,
NAME.pfx with password 'test') and each signer's key (NAME.key.der) into OUTPUT_DIR, prints the port on the first
line of standard output, then serves until killed. Every request's method and path is appended to
OUTPUT_DIR/requests.log, so a test can count what was asked.
"""

import os
import socket
import sys
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from certomancer.integrations.animator import Animator, AnimatorArchStore
from certomancer.registry import CertomancerConfig

config_path, output = sys.argv[1], sys.argv[2]
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(64)
port = listener.getsockname()[1]

config = CertomancerConfig.from_file(
    config_path,
    key_search_dir=os.path.dirname(os.path.abspath(config_path)),
    external_url_prefix=f"http://127.0.0.1:{port}",
)
arch = config.get_pki_arch("testing")
arch.dump_certs(output, flat=True, include_pkcs12=True, pkcs12_pass=b"test")
for label in ("signer-rsa", "signer-ec", "signer-revoked", "signer-crl", "signer-revoked-later"):
    key = arch.key_set.get_private_key(arch.get_cert_spec(label).subject_key)
    with open(os.path.join(output, f"{label}.key.der"), "wb") as f:
        f.write(key.dump())

log = open(os.path.join(output, "requests.log"), "a", buffering=1)
animator = Animator(AnimatorArchStore(config.pki_archs), with_web_ui=False)


def app(environ, start_response):
    log.write(f"{environ['REQUEST_METHOD']} {environ.get('PATH_INFO', '')}\n")
    return animator(environ, start_response)


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


class Server(WSGIServer):
    def server_bind(self):
        self.socket = listener
        self.server_address = listener.getsockname()
        self.server_name, self.server_port = "127.0.0.1", port
        self.setup_environ()

    def server_activate(self):
        pass


server = Server(("127.0.0.1", port), QuietHandler, bind_and_activate=False)
server.server_bind()
server.set_app(app)
print(port, flush=True)
server.serve_forever()
