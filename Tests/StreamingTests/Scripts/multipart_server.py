"""Parses multipart/form-data uploads with Python's standard library, for the multipart tests.

Usage: python3 multipart_server.py
Prints the port it listens on (127.0.0.1), then answers every POST with a JSON array, one
object per part as the standard library's MIME parser (email.parser, policy HTTP) reads it:
name, filename, content type, size and SHA-256 of the content. A body that is not valid
multipart/form-data, or whose length disagrees with Content-Length, is answered 400. It exits
when its standard input closes (the test process ended).
"""

import email.parser
import email.policy
import hashlib
import http.server
import json
import sys
import threading


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        length = self.headers.get("Content-Length")
        if length is None:
            return self.answer(400, {"error": "no Content-Length"})
        body = self.rfile.read(int(length))
        if len(body) != int(length):
            return self.answer(400, {"error": "body shorter than Content-Length"})
        content_type = self.headers.get("Content-Type", "")
        if not content_type.startswith("multipart/form-data"):
            return self.answer(400, {"error": "not multipart/form-data: " + content_type})
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body
        )
        if message.defects or not message.is_multipart():
            return self.answer(400, {"error": "malformed multipart: %s" % message.defects})
        parts = []
        for part in message.iter_parts():
            if part.defects:
                return self.answer(400, {"error": "malformed part: %s" % part.defects})
            content = part.get_payload(decode=True) or b""
            parts.append(
                {
                    "name": part.get_param("name", header="content-disposition"),
                    "filename": part.get_filename(),
                    "contentType": part.get("Content-Type"),
                    "size": len(content),
                    "sha256": hashlib.sha256(content).hexdigest(),
                }
            )
        self.answer(200, parts)

    def answer(self, status: int, value) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args) -> None:
        pass


def main() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
