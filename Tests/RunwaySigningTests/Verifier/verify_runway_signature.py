#!/usr/bin/env python3
"""Verifies Runway request signatures (RUNWAY-HMAC-SHA256) with Python's standard library alone.

Written from the specification, Sources/RunwaySigning/RunwaySigning.docc/SignedRequestFormat.md,
not from the Swift code, so that a server team can see the scheme implemented in a language of
their own; Runway's tests run it against the test vectors and against requests that Runway
really sent (Tests/RunwaySigningTests/PythonVerifierTests.swift).

As a module:

    from verify_runway_signature import canonical_request, verify, NonceCache
    nonces = NonceCache()
    verify(method, path, query, headers, body, secrets={"": b"secret"}, nonces=nonces)

As a program:

    verify_runway_signature.py --vectors signing-vectors.json
        checks every test vector; exits 1 on any mismatch.
    verify_runway_signature.py --secret SECRET [--key KEY_ID SECRET ...] [--request FILE]
        verifies one request, given as JSON in FILE or on standard input:
        {"method": "POST", "path": "/v1/orders", "query": "source=app" or null,
         "headers": {"X-Runway-Signature": "...", ...}, "bodyBase64": "..."}
        prints "ok" and exits 0, or prints the rejection code and reason and exits 1.

The third-party variant signs the same canonical form (with an empty key ID line) using the
caller's key; opening its AES-GCM envelope needs a library beyond the standard one, so pass the
opened caller key as the secret for key ID "".
"""

import argparse
import base64
import hashlib
import hmac
import json
import re
import sys
import threading
import time

ALGORITHM = "RUNWAY-HMAC-SHA256"
FORM_MEDIA_TYPE = "application/x-www-form-urlencoded"

SIGNATURE_HEADER = "X-Runway-Signature"
TIMESTAMP_HEADER = "X-Runway-Timestamp"
NONCE_HEADER = "X-Runway-Nonce"
KEY_ID_HEADER = "X-Runway-Key-ID"

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX_DIGITS = b"0123456789abcdefABCDEF"


class VerificationError(Exception):
    """A rejected request; `code` names the reason as Runway's SignatureVerificationError does."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def percent_decode(text, plus_is_space):
    """Decodes %XX escapes (and `+` as a space when plus_is_space).

    Returns (decoded text, exact): exact is False when a `%` does not start a valid escape (it
    is then kept as written) or the decoded bytes are not UTF-8.
    """
    raw = text.encode("utf-8")
    out = bytearray()
    exact = True
    i = 0
    while i < len(raw):
        byte = raw[i]
        if plus_is_space and byte == ord("+"):
            out.append(ord(" "))
        elif byte == ord("%") and i + 2 < len(raw) and raw[i + 1] in _HEX_DIGITS and raw[i + 2] in _HEX_DIGITS:
            out.append(int(raw[i + 1:i + 3], 16))
            i += 2
        else:
            if byte == ord("%"):
                exact = False
            out.append(byte)
        i += 1
    try:
        return out.decode("utf-8"), exact
    except UnicodeDecodeError:
        return out.decode("utf-8", errors="replace"), False


def encode(text):
    """Percent-encodes every UTF-8 byte but the RFC 3986 unreserved characters, upper-case hex."""
    return "".join(chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in text.encode("utf-8"))


def normalise_path(path):
    """The path line: dot segments removed, each segment decoded and re-encoded, "" as "/"."""
    if path == "":
        return "/"
    segments = path.split("/")
    kept = []
    for index, segment in enumerate(segments):
        is_last = index == len(segments) - 1
        if segment in (".", ".."):
            if segment == ".." and len(kept) > 1:
                kept.pop()
            if is_last:
                kept.append("")
            continue
        kept.append(segment)
    normalised = []
    for segment in kept:
        decoded, exact = percent_decode(segment, plus_is_space=False)
        normalised.append(encode(decoded) if exact else segment)
    return "/".join(normalised)


def is_form(content_type):
    """Whether the media type (before any `;`, spaces and tabs trimmed) is a URL-encoded form."""
    if content_type is None:
        return False
    return content_type.split(";", 1)[0].strip(" \t").lower() == FORM_MEDIA_TYPE


def decode_parameters(text):
    """Splits `a=1&b=x%20y` into (name, value) pairs: empty pieces skipped, a piece without `=`
    has an empty value. Returns (pairs, exact)."""
    pairs = []
    exact = True
    for piece in text.split("&"):
        if piece == "":
            continue
        name, _, value = piece.partition("=")
        name, name_exact = percent_decode(name, plus_is_space=True)
        value, value_exact = percent_decode(value, plus_is_space=True)
        exact = exact and name_exact and value_exact
        pairs.append((name, value))
    return pairs, exact


def parameters_line(query, content_type, body):
    """The parameters line: the re-encoded query and form parameters sorted by name, or the `?` form
    when they do not decode exactly."""
    pairs, exact = decode_parameters(query or "")
    if body and is_form(content_type):
        try:
            form, form_exact = decode_parameters(body.decode("utf-8"))
        except UnicodeDecodeError:
            form, form_exact = [], False
        pairs += form
        exact = exact and form_exact
    if exact:
        # By name only: sorted() is stable, so the values of one name keep the order they were sent in.
        encoded = sorted(((encode(name).encode("ascii"), encode(value).encode("ascii")) for name, value in pairs),
                         key=lambda pair: pair[0])
        return "&".join(f"{name.decode()}={value.decode()}" for name, value in encoded)
    fallback = "?" + (query or "")
    if content_type is not None and content_type.lower().startswith(FORM_MEDIA_TYPE):
        fallback += "\n" + base64.b64encode(body or b"").decode("ascii")
    return fallback


def canonical_request(method, path, query, content_type, body, timestamp, nonce, key_id=""):
    """The text a Runway signature covers, from the request as received.

    path and query are as on the wire (query without `?`, or None); body is the bytes received
    (before any Content-Encoding is undone), or None.
    """
    return "\n".join([
        ALGORITHM,
        method.upper(),
        normalise_path(path),
        parameters_line(query, content_type, body),
        hashlib.sha256(body or b"").hexdigest(),
        timestamp,
        nonce,
        key_id,
    ])


def sign(text, secret):
    """HMAC-SHA256 of the canonical text under the secret (bytes, or str as UTF-8), lower-case hex."""
    key = secret.encode("utf-8") if isinstance(secret, str) else secret
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


class NonceCache:
    """The nonces accepted within the replay window, each until it expires."""

    def __init__(self, capacity=1_000_000):
        self.capacity = capacity
        self._expiries = {}
        self._lock = threading.Lock()

    def insert(self, nonce, expiry, now):
        """Records the nonce; False when it is already recorded and live."""
        with self._lock:
            self._expiries = {n: e for n, e in self._expiries.items() if e > now}
            if nonce in self._expiries:
                return False
            if len(self._expiries) >= self.capacity:
                raise VerificationError("tooManyNonces", f"{self.capacity} nonces are live; refusing new ones")
            self._expiries[nonce] = expiry
            return True


def verify(method, path, query, headers, body, secrets, max_clock_skew=300, now=None, nonces=None):
    """Verifies one request as received; returns its canonical text or raises VerificationError.

    headers maps names to values (names compared case-insensitively); secrets maps key IDs to
    secrets ("" for requests without a key ID); now is Unix seconds (default: the clock);
    nonces is a NonceCache shared by all requests (None skips the replay check).
    """
    lookup = {name.lower(): value for name, value in headers.items()}

    def required(name):
        value = lookup.get(name.lower())
        if not value:
            raise VerificationError("missingHeader", f"{name} is missing")
        return value

    signature_hex = required(SIGNATURE_HEADER)
    if not re.fullmatch(r"(?:[0-9a-fA-F]{2})+", signature_hex):
        raise VerificationError("malformedHeader", "the signature is not hex")
    timestamp = required(TIMESTAMP_HEADER)
    if not re.fullmatch(r"[0-9]+", timestamp) or int(timestamp) >= 2**63:
        raise VerificationError("malformedHeader", "the timestamp is not Unix seconds")
    current = int(time.time()) if now is None else int(now)
    if abs(current - int(timestamp)) > max_clock_skew:
        raise VerificationError(
            "staleTimestamp", f"the timestamp is {current - int(timestamp)} s from the server's clock")
    nonce = required(NONCE_HEADER)
    if not 16 <= len(nonce.encode("utf-8")) <= 128 or not all(0x20 < b < 0x7F for b in nonce.encode("utf-8")):
        raise VerificationError("malformedHeader", "the nonce must be 16 to 128 printable characters")
    key_id = lookup.get(KEY_ID_HEADER.lower()) or ""
    if key_id not in secrets:
        raise VerificationError("unknownKey", f'no secret for key ID "{key_id}"')
    text = canonical_request(method, path, query, lookup.get("content-type"), body, timestamp, nonce, key_id)
    if not hmac.compare_digest(bytes.fromhex(sign(text, secrets[key_id])), bytes.fromhex(signature_hex)):
        raise VerificationError("signatureMismatch", "the signature does not match the request")
    if nonces is not None:
        expiry = max(int(timestamp), current) + max_clock_skew + 1
        if not nonces.insert(nonce, expiry, current):
            raise VerificationError("replayedNonce", "the nonce was already used")
    return text


def check_vectors(path):
    """Checks every vector in the file; returns the descriptions of the mismatches."""
    with open(path, encoding="utf-8") as file:
        vectors = json.load(file)["vectors"]
    if not vectors:
        return [f"{path} holds no vectors"]
    failures = []
    for vector in vectors:
        given, expected = vector["input"], vector["expected"]
        body = base64.b64decode(given["bodyBase64"])
        text = canonical_request(
            given["method"], given["path"], given["query"], given["contentType"], body, given["timestamp"],
            given["nonce"], given["keyID"])
        if text != expected["canonicalRequest"]:
            failures.append(
                f"{vector['name']}: canonical request\n  got      {text!r}\n  expected {expected['canonicalRequest']!r}")
            continue
        signature = sign(text, given["secret"])
        if signature != expected["signature"]:
            failures.append(f"{vector['name']}: signature {signature}, expected {expected['signature']}")
            continue
        headers = {
            SIGNATURE_HEADER: expected["signature"], TIMESTAMP_HEADER: given["timestamp"], NONCE_HEADER: given["nonce"]}
        if given["contentType"] is not None:
            headers["Content-Type"] = given["contentType"]
        if given["keyID"]:
            headers[KEY_ID_HEADER] = given["keyID"]
        try:
            verify(given["method"], given["path"], given["query"], headers, body, {given["keyID"]: given["secret"]},
                   now=int(given["timestamp"]), nonces=NonceCache())
        except VerificationError as error:
            failures.append(f"{vector['name']}: verify rejected it: {error}")
    return failures


def main(argv=None):
    parser = argparse.ArgumentParser(description="Verify Runway request signatures (RUNWAY-HMAC-SHA256).")
    parser.add_argument("--vectors", metavar="FILE", help="check every test vector in FILE")
    parser.add_argument("--secret", help="the secret of requests without a key ID")
    parser.add_argument("--key", nargs=2, action="append", default=[], metavar=("KEY_ID", "SECRET"),
                        help="the secret of requests with this key ID (repeatable)")
    parser.add_argument("--max-clock-skew", type=int, default=300, metavar="SECONDS")
    parser.add_argument("--now", type=int, help="the server's clock, Unix seconds (default: now)")
    parser.add_argument("--request", metavar="FILE", default="-", help="the request as JSON (default: standard input)")
    arguments = parser.parse_args(argv)

    if arguments.vectors:
        failures = check_vectors(arguments.vectors)
        for failure in failures:
            print(failure)
        if failures:
            return 1
        print("ok: every vector matches")
        return 0

    secrets = dict(arguments.key)
    if arguments.secret is not None:
        secrets[""] = arguments.secret
    if not secrets:
        parser.error("give --vectors, or --secret and/or --key with a request")
    if arguments.request == "-":
        request = json.load(sys.stdin)
    else:
        with open(arguments.request, encoding="utf-8") as file:
            request = json.load(file)
    try:
        verify(request["method"], request["path"], request.get("query"), request["headers"],
               base64.b64decode(request.get("bodyBase64") or ""), secrets,
               max_clock_skew=arguments.max_clock_skew, now=arguments.now)
    except VerificationError as error:
        print(error)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
