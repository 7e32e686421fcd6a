"""Loopback networking of the broker helpers: free ports, KRaft cluster ids, and a Kafka
readiness probe (an ``ApiVersions`` request written by hand, so readiness costs no JVM)."""

from __future__ import annotations

import base64
import socket
import struct
import uuid

__all__ = ["api_versions_answer", "free_port", "random_cluster_id"]


def free_port() -> int:
    """A TCP port on ``127.0.0.1`` that nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def random_cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes, URL-safe base64 without padding (Kafka's ``Uuid``)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def api_versions_answer(host: str, port: int, timeout: float) -> bool:
    """Whether a Kafka broker answers an ``ApiVersions`` v0 request (api key 18) without error.

    The request is written by hand (header v1: api key, version, correlation id, client id) so
    that readiness costs no JVM start.
    """
    client_id = b"streams-assign-probe"
    body = struct.pack(">hhih", 18, 0, 7, len(client_id)) + client_id
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(struct.pack(">i", len(body)) + body)
            head = _recv_exact(sock, 4)
            size = struct.unpack(">i", head)[0]
            payload = _recv_exact(sock, size)
    except OSError:
        return False
    if len(payload) < 6:
        return False
    correlation, error_code = struct.unpack(">ih", payload[:6])
    return correlation == 7 and error_code == 0


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            raise ConnectionError("connection closed by the broker")
        chunks += chunk
    return bytes(chunks)
