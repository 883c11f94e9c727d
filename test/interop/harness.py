"""Processes and agents for the interop suite.

Everything here is real: `Hub` is an `apconnect hub` process over HTTPS,
`SdkAgent` signs with the reference Python SDK (agent-protocols 0.12.6) and
talks to the hub through the SDK's own HTTP client, `Apconnect` runs the
`apconnect` binary (`init`, `call`, `id`) in its own home, and `McpProcess`
is an `apconnect mcp` process driven over stdio with JSON-RPC.

Nothing in this module decides a verdict: the tests compare what the SDK's
own checks say with what apconnect does.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import requests

from agent_protocols import (
    AgentSigner,
    ClientNonceManager,
    RequestBinding,
    create_request_jwt_claims,
    service_origin,
    unix_ms,
    unix_secs,
    with_mentions,
)
from agent_protocols.discourse import (
    discourse_event,
    room_create_event,
    room_join_request_event,
)
from agent_protocols.http_client import DiscourseClient, HttpResponseError, ProfileClient
from agent_protocols.profile import profile_update_event

REPO = Path(__file__).resolve().parents[2]


def binary(env: str, default: str) -> Path:
    """A binary the Makefile built; a missing one fails the run loudly."""
    path = Path(os.environ.get(env) or REPO / default)
    if not path.is_file() or not os.access(path, os.X_OK):
        raise RuntimeError(
            f"{path} is missing: build it first (`make interop-py` builds it; or set {env})"
        )
    return path


def apconnect_bin() -> Path:
    return binary("APCONNECT_BIN", "bin/apconnect")


class Hub:
    """A real `apconnect hub` on a free loopback port with its own data dir."""

    def __init__(self, data: Path):
        self.data = data
        self.proc = subprocess.Popen(
            [str(apconnect_bin()), "hub", "--listen", "127.0.0.1:0", "--data", str(data), "--log-level", "warn"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stderr: list[str] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        line = self.proc.stdout.readline()
        match = re.match(r"apconnect hub serving (\S+)", line)
        if not match:
            self.stop()
            raise RuntimeError(f"apconnect hub did not start: {line!r} {''.join(self.stderr)}")
        self.origin = match.group(1)
        self.ca = str(data / "ca.pem")
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()
        self._wait_ready()

    def _drain_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 20
        while True:
            try:
                self.session().get(self.origin + "/.well-known/agent-discourse", timeout=5)
                return
            except requests.RequestException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def session(self) -> requests.Session:
        s = requests.Session()
        # No proxies, and no REQUESTS_CA_BUNDLE overriding the hub's CA.
        s.trust_env = False
        s.verify = self.ca
        return s

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log(self) -> str:
        return "".join(self.stderr)


class SdkAgent:
    """An agent made of the reference SDK only: its key, its nonce sequence,
    its discovered DiscourseClient and ProfileClient."""

    def __init__(self, hub: Hub, name: str, seed: bytes | None = None):
        self.hub = hub
        self.name = name
        self.seed = seed or os.urandom(32)
        self.signer = AgentSigner.from_seed(self.seed)
        self.id = self.signer.agent_id()
        self.nonces = ClientNonceManager()
        self.session = hub.session()
        self.discourse = DiscourseClient.discover(hub.origin, self.session)
        self.profiles = ProfileClient.discover(hub.origin, self.session)

    # --- signing -----------------------------------------------------------

    def jwt(self, audience: str | None = None, iat: int | None = None, ttl: int = 300) -> str:
        aud = audience or service_origin(self.hub.origin)
        now = unix_secs() if iat is None else iat
        return self.signer.sign_request_jwt(
            create_request_jwt_claims(self.id, RequestBinding.create(aud), now, ttl)
        )

    def _stamp(self) -> tuple[int, int]:
        created = unix_ms()
        return created, self.nonces.next_nonce(created)

    def sign(self, event: dict[str, Any]) -> dict[str, Any]:
        return self.signer.sign_event(event)

    def event(self, typ: str, room_id: str, base: tuple[int, str], payload: Any,
              mentions: list[str] | None = None) -> dict[str, Any]:
        created, nonce = self._stamp()
        ev = discourse_event(typ, self.id, created, nonce, room_id, base[0], base[1], payload)
        if mentions:
            ev = with_mentions(ev, mentions)
        return ev

    def create_event(self, payload: dict[str, Any]) -> dict[str, Any]:
        created, nonce = self._stamp()
        return room_create_event(self.id, created, nonce, payload)

    def join_request_event(self, room_id: str, payload: dict[str, Any]) -> dict[str, Any]:
        created, nonce = self._stamp()
        return room_join_request_event(self.id, created, nonce, room_id, payload)

    def profile_event(self, payload: dict[str, Any]) -> dict[str, Any]:
        created, nonce = self._stamp()
        return profile_update_event(self.id, created, nonce, payload)

    # --- writes ------------------------------------------------------------

    def _submit(self, send, build):
        """Signs and submits, re-signing once after a bounded Max-Seen-Nonce
        resync, as the SDK's connector does."""
        env = self.sign(build())
        try:
            return send(env), env
        except HttpResponseError as err:
            if err.code == "nonce_not_greater" and err.max_seen_nonce:
                self.nonces.observe_max_nonce(err.max_seen_nonce)
                env = self.sign(build())
                return send(env), env
            raise

    def create_room(self, **payload: Any) -> dict[str, Any]:
        payload.setdefault("host", self.hub.origin)
        payload.setdefault("topic", f"{self.name}'s room")
        payload.setdefault("visibility", "public")
        now = unix_ms()
        payload.setdefault("start_time", now - 60_000)
        payload.setdefault("end_time", now + 3_600_000)
        room, _ = self._submit(self.discourse.create_room, lambda: self.create_event(payload))
        return room

    def write(self, typ: str, room_id: str, base: tuple[int, str], payload: Any,
              mentions: list[str] | None = None) -> dict[str, Any]:
        record, _ = self._submit(
            lambda env: self.discourse.submit_event(room_id, env),
            lambda: self.event(typ, room_id, base, payload, mentions),
        )
        return record

    def request_join(self, room_id: str, payload: dict[str, Any]) -> dict[str, Any]:
        resource, _ = self._submit(
            lambda env: self.discourse.request_join(room_id, env),
            lambda: self.join_request_event(room_id, payload),
        )
        return resource

    def update_profile(self, payload: dict[str, Any]) -> dict[str, Any]:
        doc, _ = self._submit(self.profiles.submit_profile_update, lambda: self.profile_event(payload))
        return doc

    # --- reads -------------------------------------------------------------

    def room(self, room_id: str) -> dict[str, Any]:
        return self.discourse.room(room_id, jwt=self.jwt())

    def head(self, room_id: str) -> tuple[int, str]:
        """The room head from the room resource (0.12.6 falls back to seq/hash
        when a host omits `head`)."""
        room = self.room(room_id)
        head = room.get("head") or {"seq": room["seq"], "hash": room["hash"]}
        return head["seq"], head["hash"]

    def records(self, room_id: str, after_seq: int = 0) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = self.discourse.events(room_id, after_seq=after_seq or None, cursor=cursor, jwt=self.jwt())
            out.extend(page["result"])
            cursor = page.get("next_cursor")
            if not cursor:
                return out


def http_code(fn, *args, **kwargs) -> str:
    """Runs a client call and returns "ok" or the protocol error code the
    host answered (a non-protocol failure is re-raised)."""
    try:
        fn(*args, **kwargs)
        return "ok"
    except HttpResponseError as err:
        if err.code is None:
            raise AssertionError(f"HTTP {err.status} without an Agent Identity error body: {err.body[:300]}")
        from sdkref import kernel_errors

        problems = kernel_errors("errorResponse", json.loads(err.body))
        assert not problems, f"the error body is not the kernel's errorResponse: {problems}: {err.body[:300]}"
        return err.code


class Apconnect:
    """One apconnect home with one identity, driven through the real binary."""

    def __init__(self, home: Path, hub: Hub, name: str = "default", host: str | None = None, ca: str | None = None):
        self.home = home
        self.hub = hub
        self.name = name
        out = self.run("init", "--home", str(home), "--name", name, "--unencrypted-key",
                       "--host", host or hub.origin, "--ca", ca or hub.ca)
        ident = self.run("id", "--home", str(home), "--agent", name)
        self.id = re.search(r"agent id:\s+(\S+)", ident).group(1)
        self.init_output = out

    def run(self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 120) -> str:
        proc = subprocess.run([str(apconnect_bin()), *args], input=stdin, capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"apconnect {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        return proc.stdout

    def call(self, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """`apconnect call TOOL -`: the structured result, or {"error": …}."""
        proc = subprocess.run(
            [str(apconnect_bin()), "call", "--home", str(self.home), "--agent", self.name, tool, "-"],
            input=json.dumps(args or {}), capture_output=True, text=True, timeout=120,
        )
        if proc.returncode not in (0, 1):
            raise AssertionError(f"apconnect call {tool} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        try:
            return json.loads(proc.stdout)
        except ValueError as exc:
            raise AssertionError(f"apconnect call {tool}: not JSON: {proc.stdout!r} {proc.stderr!r}") from exc

    def ok(self, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        result = self.call(tool, args)
        if "error" in result and len(result) == 1:
            raise AssertionError(f"apconnect call {tool} {json.dumps(args)} failed: {json.dumps(result['error'])}")
        return result


class McpProcess:
    """`apconnect mcp` over stdio: newline-delimited JSON-RPC 2.0."""

    def __init__(self, home: Path, name: str = "default"):
        self.proc = subprocess.Popen(
            [str(apconnect_bin()), "mcp", "--home", str(home), "--agent", name, "--log-level", "warn"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
        )
        self.stderr: list[str] = []
        self.messages: queue.Queue = queue.Queue()
        self.notifications: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()
        self._id = 0
        init = self.request("initialize", {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "interop", "version": "0"},
        })
        assert "result" in init, init
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        for line in self.proc.stdout:
            line = line.strip()
            if line:
                self.messages.put(json.loads(line))
        self.messages.put(None)

    def _send(self, msg: dict[str, Any]) -> None:
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        self._id += 1
        rid = self._id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            msg = self.messages.get(timeout=max(0.1, deadline - time.monotonic()))
            if msg is None:
                raise AssertionError(f"apconnect mcp exited: {''.join(self.stderr)}")
            if msg.get("id") == rid and ("result" in msg or "error" in msg):
                return msg
            if "method" in msg and "id" not in msg:
                self.notifications.append(msg)

    def call(self, tool: str, args: dict[str, Any] | None = None, timeout: float = 60) -> dict[str, Any]:
        """A tool's structured result, or {"error": …} for a tool error."""
        if not tool.startswith("agent_protocols_"):
            tool = "agent_protocols_" + tool
        msg = self.request("tools/call", {"name": tool, "arguments": args or {}}, timeout)
        if "error" in msg:
            raise AssertionError(f"tools/call {tool}: JSON-RPC error {msg['error']}")
        result = msg["result"]
        content = result.get("structuredContent")
        if content is None:
            texts = [c.get("text", "") for c in result.get("content", []) if c.get("type") == "text"]
            content = json.loads(texts[0]) if texts else {}
        if result.get("isError"):
            return content if "error" in content else {"error": content}
        return content

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class RecordingHost:
    """A loopback HTTPS server with its own CA that answers every request
    with an Agent Identity `not_found` error and records each request's
    method, path and Authorization header: where apconnect's request JWTs
    are caught to be verified by the SDK (a real host never shows them)."""

    def __init__(self, directory: Path):
        import datetime
        import ssl
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
        import ipaddress

        now = datetime.datetime.now(datetime.timezone.utc)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "interop recording CA")])
        ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
              .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
              .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
              .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
              .sign(ca_key, hashes.SHA256()))
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
                .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
                .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
                .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                .sign(ca_key, hashes.SHA256()))
        directory.mkdir(parents=True, exist_ok=True)
        self.ca = str(directory / "ca.pem")
        Path(self.ca).write_bytes(ca.public_bytes(serialization.Encoding.PEM))
        (directory / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        (directory / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                              serialization.NoEncryption()))
        self.requests: list[dict[str, Any]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                recorder.requests.append({"method": self.command, "path": self.path, "at": unix_secs(),
                                          "authorization": self.headers.get("Authorization")})
                body = json.dumps({"error": {"code": "not_found", "message": "recording host"}}).encode()
                self.send_response(404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = _answer

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(directory / "cert.pem"), str(directory / "key.pem"))
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.origin = f"https://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def tokens(self) -> list[tuple[dict[str, Any], str]]:
        return [(r, r["authorization"][len("Bearer "):]) for r in self.requests
                if (r["authorization"] or "").startswith("Bearer ")]

    def stop(self) -> None:
        self.server.shutdown()
