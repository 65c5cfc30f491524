"""A small loopback HTTP server in front of moto_server that answers faults first, for the aws-kms
retry tests. Prints its port on the first line of standard output.

usage: fault_proxy.py UPSTREAM_URL MODE LOG_FILE
MODE: 'always-500' (every request 500), 'always-429' (every request 429 with a ThrottlingException
body), 'throttle-2' (the first two requests 429, then everything forwarded to UPSTREAM_URL),
'delay' (every request forwarded after 0.2 s).
Each answer's status is appended to LOG_FILE, one line per request; in 'delay' mode followed by
'inflight=N', the most requests that were in the server at once so far.
"""
import http.server
import sys
import threading
import time
import urllib.error
import urllib.request

upstream, mode, log = sys.argv[1], sys.argv[2], sys.argv[3]
lock = threading.Lock()
seen = [0]
inflight = [0, 0]  # now, most


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, content_type="application/x-amz-json-1.1"):
        with open(log, "a") as f:
            f.write(f"{status}\n")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with lock:
            seen[0] += 1
            number = seen[0]
        if mode == "delay":
            with lock:
                inflight[0] += 1
                inflight[1] = max(inflight[1], inflight[0])
            time.sleep(0.2)
            with lock:
                inflight[0] -= 1
                with open(log, "a") as f:
                    f.write(f"inflight={inflight[1]}\n")
        if mode == "always-500":
            return self.answer(500, b'{"__type":"KMSInternalException","message":"internal failure"}')
        if mode == "always-429" or (mode == "throttle-2" and number <= 2):
            return self.answer(429, b'{"__type":"ThrottlingException","message":"Rate exceeded"}')
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
        headers["Host"] = self.headers["Host"]  # signed: forwarded unchanged
        request = urllib.request.Request(upstream, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request) as response:
                self.answer(response.status, response.read(), response.headers.get("Content-Type", ""))
        except urllib.error.HTTPError as error:
            self.answer(error.code, error.read(), error.headers.get("Content-Type", ""))


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
