"""An HTTP/2 server over TLS that sends, frame by frame, what a server library would not.

Usage: python3 h2_server.py CERTIFICATE KEY
Prints the port it listens on (127.0.0.1, ALPN h2 only), then answers every stream by its path:
- /head?fields=N&bytes=M: 200, "ok", with N fields x-big-0... of M bytes each (a header block
  of any size, in HEADERS and CONTINUATION frames);
- /status?s=S: a response whose `:status` is S, as given;
- /fields?name=value&...: 200, "ok", with those fields as given (upper-case names included);
- anything else: 404.
Exits when its standard input closes (the test process ended).
"""

import os
import socket
import ssl
import sys
import threading
import urllib.parse

try:
    import h2.config
    import h2.connection
    import h2.events
    import h2.exceptions
    import hpack
except ImportError:
    # The Debian package (python3-h2, which scripts/install-deps.sh installs) is the system
    # Python's: a python3 found first on the PATH (pyenv, a virtual environment) may lack it.
    if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3", *sys.argv])
    raise

# Header values go out as they are, not Huffman-coded: pure Python codes 100 KB in a second or
# more on a loaded machine, and a field's size on the wire is then its size.
_encode = hpack.Encoder.encode
hpack.Encoder.encode = lambda self, headers, huffman=True: _encode(self, headers, huffman=False)


def respond(conn, stream, path, query):
    if path == "/head":
        fields = int(query.get("fields", ["1"])[0])
        size = int(query.get("bytes", ["1"])[0])
        headers = [(":status", "200"), ("content-length", "2")]
        headers += [("x-big-%d" % i, "b" * size) for i in range(fields)]
        conn.send_headers(stream, headers)
        conn.send_data(stream, b"ok", end_stream=True)
    elif path == "/status":
        conn.send_headers(stream, [(":status", query.get("s", ["200"])[0]), ("content-length", "2")])
        conn.send_data(stream, b"ok", end_stream=True)
    elif path == "/fields":
        headers = [(":status", "200")] + [(name, value) for name, values in query.items() for value in values]
        conn.send_headers(stream, headers)
        conn.send_data(stream, b"ok", end_stream=True)
    else:
        conn.send_headers(stream, [(":status", "404"), ("content-length", "0")], end_stream=True)


def serve(sock):
    # What it sends is not checked: sending what breaks the rules is its point.
    config = h2.config.H2Configuration(
        client_side=False, header_encoding=None, validate_outbound_headers=False, normalize_outbound_headers=False
    )
    conn = h2.connection.H2Connection(config)
    conn.initiate_connection()
    conn.max_inbound_frame_size = 1 << 24
    try:
        sock.sendall(conn.data_to_send())
        while True:
            data = sock.recv(65536)
            if not data:
                break
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    target = dict(event.headers).get(b":path", b"/").decode()
                    url = urllib.parse.urlsplit(target)
                    respond(conn, event.stream_id, url.path, urllib.parse.parse_qs(url.query))
                elif isinstance(event, h2.events.DataReceived):
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            sock.sendall(conn.data_to_send())
    except (OSError, ssl.SSLError, h2.exceptions.ProtocolError):
        pass
    finally:
        sock.close()


def main():
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(sys.argv[1], sys.argv[2])
    context.set_alpn_protocols(["h2"])
    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)

    def accept():
        while True:
            client, _ = listener.accept()
            try:
                tls = context.wrap_socket(client, server_side=True)
            except (OSError, ssl.SSLError):
                client.close()
                continue
            threading.Thread(target=serve, args=(tls,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()


if __name__ == "__main__":
    main()
