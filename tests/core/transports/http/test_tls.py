"""The shared TLS context: certificates load at the first handshake, never for plain http,
and what it trusts is what httpx's default trusts (certifi, or SSL_CERT_FILE)."""

from __future__ import annotations

import datetime
import http.server
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from melgui.core.transports.http.bulk import BulkTransport
from melgui.core.transports.http.tls import _TrustOnFirstUse
from tests.fakes import ScriptedOpenAI


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *args: object) -> None:
        pass


def _self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
def https_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(URL, its certificate) of an HTTPS server on loopback with a self-signed certificate."""
    cert, key = _self_signed(tmp_path)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://localhost:{server.server_address[1]}/", cert
    finally:
        server.shutdown()
        server.server_close()


def _loaded(context: ssl.SSLContext) -> int:
    return context.cert_store_stats()["x509_ca"]


async def test_plain_http_loads_no_certificates(scripted_openai: ScriptedOpenAI) -> None:
    context = _TrustOnFirstUse.for_clients(trust_env=True)
    async with httpx.AsyncClient(verify=context) as client:
        response = await client.get(f"{scripted_openai.base_url}/models")
    assert response.status_code in (200, 404)
    assert _loaded(context) == 0


async def test_a_certificate_outside_the_bundle_is_refused(
    https_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    url, _ = https_server
    context = _TrustOnFirstUse.for_clients(trust_env=True)
    assert _loaded(context) == 0
    async with httpx.AsyncClient(verify=context) as client:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await client.get(url)
    assert _loaded(context) > 100  # certifi's bundle, loaded at the handshake


async def test_ssl_cert_file_is_trusted_when_the_client_trusts_the_environment(
    https_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, cert = https_server
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    trusting = _TrustOnFirstUse.for_clients(trust_env=True)
    async with httpx.AsyncClient(verify=trusting) as client:
        response = await client.get(url)
    assert response.text == "hello"
    ignoring = _TrustOnFirstUse.for_clients(trust_env=False)
    async with httpx.AsyncClient(verify=ignoring, trust_env=False) as client:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await client.get(url)


async def test_the_bulk_transport_speaks_tls_with_the_same_trust(
    https_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, cert = https_server
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    trusting = BulkTransport(_TrustOnFirstUse.for_clients(trust_env=True))
    async with httpx.AsyncClient(transport=trusting) as client:
        for _ in range(2):  # the second on the connection kept alive
            assert (await client.get(url)).text == "hello"
    refusing = BulkTransport(_TrustOnFirstUse.for_clients(trust_env=False))
    async with httpx.AsyncClient(transport=refusing) as client:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await client.get(url)
