"""A TLS server that tells each connection whether it resumed a TLS session, for the session
cache test.

Usage: python3 tls_resumption_server.py CERTIFICATE KEY
Prints the port it listens on (127.0.0.1), then answers one request per connection, closing it
after, with the body "resumed" or "new" (Python's SSLSocket.session_reused). It exits when its
standard input closes (the test process ended).
"""

import os
import socket
import ssl
import sys
import threading


def serve(connection: socket.socket, context: ssl.SSLContext) -> None:
    try:
        with context.wrap_socket(connection, server_side=True) as tls:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = tls.recv(4096)
                if not chunk:
                    return
                head += chunk
            body = b"resumed" if tls.session_reused else b"new"
            tls.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                % (len(body), body))
    except (OSError, ssl.SSLError):
        pass


def main() -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[1], sys.argv[2])
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print(listener.getsockname()[1], flush=True)
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=serve, args=(connection, context), daemon=True).start()


main()
