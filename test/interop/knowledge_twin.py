"""The reference for the knowledge service interop tests: the SDK's own
KnowledgeStore (agent-protocols 0.12.6, in process), fed exactly what the
hub is fed, so every answer of `apconnect hub` can be compared with the
answer the SDK's store gives to the same request.

`Twin` submits, reads, queries, batches and searches both sides and returns
the two answers; the tests decide what must be equal. Hub answers go
through the SDK's KnowledgeClient where it would send the request (so its
response checks run), and as raw HTTP where the client refuses a request
before sending it (the hub's own refusal is what is compared then).
"""

from __future__ import annotations

import copy
import json
from typing import Any, Callable
from urllib.parse import parse_qsl

from agent_protocols import AgentProtocolError, AgentSigner, unix_ms
from agent_protocols import knowledge as K
from agent_protocols.http_client import HttpResponseError, KnowledgeClient

from knowledge_cases import wire_code

LICENSE = "https://creativecommons.org/licenses/by/4.0/"


def sdk_code(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """("ok", result), or (the SDK's error code, None)."""
    try:
        return "ok", fn(*args, **kwargs)
    except AgentProtocolError as err:
        return err.code, None


def hub_code(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """("ok", result), or the code of the hub's error body and its error
    object (an HTTP error without one, or a client-side refusal, fails the
    test)."""
    try:
        return "ok", fn(*args, **kwargs)
    except HttpResponseError as err:
        assert err.code, f"HTTP {err.status} without an Agent Identity error body: {err.body[:300]}"
        return err.code, json.loads(err.body)["error"]
    except AgentProtocolError as err:
        raise AssertionError(f"the SDK's client refused the hub's answer: {err.code}: {err}") from err


class Agent:
    """An SDK signer with a nonce sequence."""

    def __init__(self, seed: bytes):
        self.signer = AgentSigner.from_seed(seed)
        self.id = self.signer.agent_id()
        self.nonce = 0

    def sign(self, typ: str, payload: dict[str, Any], created_at: int | None = None, nonce: int | None = None) -> dict[str, Any]:
        now = unix_ms() if created_at is None else created_at
        if nonce is None:
            self.nonce = max(self.nonce + 1, now)
            nonce = self.nonce
        return self.signer.sign_event(K.create_event(K.KNOWLEDGE_PROTOCOL, typ, self.id, now, nonce, copy.deepcopy(payload)))


def context() -> dict[str, Any]:
    return {"scope": "interop tests", "conditions": ["the hub runs"], "limitations": []}


def publication(kind: str, title: str, statement: str, **extra: Any) -> dict[str, Any]:
    p = {"license": LICENSE, "kind": kind, "title": title, "statement": statement, "language": "en",
         "context": context(), "basis": "Written by the interop suite."}
    p.update(extra)
    return p


def assessment(target: str, verdict: str = "supports", summary: str = "Checked it.", **extra: Any) -> dict[str, Any]:
    p = {"license": LICENSE, "target": target, "verdict": verdict, "summary": summary, "context": context(), "basis": "Ran it."}
    p.update(extra)
    return p


def retraction(target: str, reason: str = "Withdrawn.") -> dict[str, Any]:
    return {"target": target, "reason": reason}


class Twin:
    """The hub and the SDK's store, fed alike."""

    def __init__(self, hub):
        self.hub = hub
        self.session = hub.session()
        self.client = KnowledgeClient.discover(hub.origin, self.session)
        self.store = K.KnowledgeStore(hub.origin)

    # --- submissions ----------------------------------------------------------

    def post(self, envelope: Any) -> tuple[str, Any]:
        """A raw POST of an envelope: the hub's code and body."""
        body = envelope if isinstance(envelope, (bytes, str)) else json.dumps(envelope, ensure_ascii=False)
        r = self.session.post(self.hub.origin + "/v1/knowledge/events", data=body, headers={"Content-Type": "application/json"},
                              allow_redirects=False, timeout=30)
        if r.status_code == 200:
            return "ok", r.json()
        err = r.json()["error"]
        return err["code"], err

    def submit(self, envelope: dict[str, Any]) -> tuple[tuple[str, Any], tuple[str, Any]]:
        """Submits to both: through the SDK client when it would send the
        envelope, raw otherwise. Returns (hub, store) as (code, record)."""
        local = wire_code(sdk_code(K.validate_knowledge_envelope, copy.deepcopy(envelope))[0], envelope)
        hub = hub_code(self.client.submit, envelope) if local == "ok" else self.post(envelope)
        code, rec = sdk_code(self.store.submit, copy.deepcopy(envelope))
        return hub, (wire_code(code, envelope), rec)

    # --- reads ------------------------------------------------------------------

    def raw_get(self, path_and_query: str) -> tuple[str, Any]:
        r = self.session.get(self.hub.origin + path_and_query, allow_redirects=False, timeout=30)
        if r.status_code == 200:
            return "ok", r.json()
        return r.json()["error"]["code"], r.json()

    def raw_post(self, path: str, body: str) -> tuple[str, Any]:
        r = self.session.post(self.hub.origin + path, data=body, headers={"Content-Type": "application/json"},
                              allow_redirects=False, timeout=30)
        if r.status_code == 200:
            return "ok", r.json()
        return r.json()["error"]["code"], r.json()

    def store_query_string(self, qs: str) -> tuple[str, Any]:
        """The store's answer to a query string, parsed as the SDK parses
        query parameters."""
        try:
            params = parse_qsl(qs, keep_blank_values=True, strict_parsing=bool(qs))
        except ValueError:
            return "invalid_request", None
        code, request = sdk_code(K.parse_knowledge_query, params)
        if code != "ok":
            return code, None
        return sdk_code(self.store.query, request)


def ids(page: dict[str, Any]) -> list[str]:
    """The event ids of a query or batch page, in order."""
    return [r["envelope"]["hash"] for r in page["result"]]


def seqs(page: dict[str, Any]) -> list[int]:
    return [r["seq"] for r in page["result"]]


def cursor_parts(cursor: str | None) -> tuple[str, str, str] | None:
    """A cursor without its as_of (each service's own clock)."""
    if cursor is None:
        return None
    checkpoint, _as_of, last, digest = cursor.split(".")
    return checkpoint, last, digest
