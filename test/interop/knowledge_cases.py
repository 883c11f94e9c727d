"""Differential cases for Agent Knowledge: the same inputs go through the
reference SDK (agent-protocols 0.12.6, Python) here and through
host/proto/knowledge (goverdict's knowledge_* kinds), and the verdicts must
be equal.

Cases are generated from seeded random choices (RANDOM_SEED) as well as
picked by hand: valid events of every type and kind, and mutations of them
that must fail (wrong kinds, bad ids, http URLs, duplicate digests, oversize
envelopes, bad signatures, retractions shaped like the old spec, …);
dependency sets; query parameters; store traversals with cursors; search
requests; term splitting and lexical matching on Unicode and ASCII edge
cases; client-side response checks and page tracking; discovery documents.

A verdict is plain JSON: "ok" or an error code (the SDK's own code; an SDK
exception other than AgentProtocolError is "exception:<type>", which never
equals a Go verdict), true/false, a term list, or a small object.

KNOWN_DIFFERENCES lists the cases where apconnect keeps another verdict on
purpose, with the reason. Each is a URL the Python SDK accepts and the Rust
SDK refuses ("format": "uri" is asserted by the Rust SDK's schema validator,
which checks RFC 3986; and its WHATWG URL parser refuses the host): apconnect
applies the stricter reading so a service never holds an event one SDK's
reader refuses (host/proto/knowledge/url.go).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import random
from dataclasses import dataclass, field
from typing import Any, Callable

from agent_protocols import AgentProtocolError, AgentSigner
from agent_protocols import knowledge as K

RANDOM_SEED = 20261101
SERVICE = "https://knowledge.example"
T0 = 1_800_000_000_000
NOW = T0 + 3_600_000
ALICE = AgentSigner.from_seed(bytes(range(32)))
BOB = AgentSigner.from_seed(bytes(range(1, 33)))
LICENSE = "https://creativecommons.org/licenses/by/4.0/"


@dataclass
class Case:
    id: str
    kind: str
    input: Any
    sdk: Any

    def wire(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "input": self.input}


@dataclass
class Builder:
    cases: list[Case] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)

    def add(self, kind: str, name: str, input: Any, sdk: Any) -> None:
        cid = f"{kind}: {name}"
        if cid in self.ids:
            raise ValueError(f"duplicate case id {cid}")
        self.ids.add(cid)
        self.cases.append(Case(cid, kind, input, sdk))


def code(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    """"ok", or the SDK's error code."""
    try:
        fn(*args, **kwargs)
        return "ok"
    except AgentProtocolError as err:
        return err.code
    except Exception as err:  # noqa: BLE001 - a crash is a verdict no Go answer equals
        return "exception:" + type(err).__name__


# Codes the Python SDK raises from its identity helpers for a malformed
# Agent ID or base64url value; they never go on the wire. A service reports
# the field they come from: the actor (invalid_actor) or the signature
# (invalid_signature), as host/identity does.
LOCAL_IDENTITY_CODES = ("invalid_agent_id", "invalid_public_key", "invalid_encoding")


def wire_code(local: str, env: Any) -> str:
    if local not in LOCAL_IDENTITY_CODES:
        return local
    ev = env.get("event") if isinstance(env, dict) else None
    actor = ev.get("actor", "") if isinstance(ev, dict) else ""
    key = actor[len("did:agent:"):] if isinstance(actor, str) else ""
    try:
        K.validate_knowledge_id(key)
        return "invalid_signature"
    except AgentProtocolError:
        return "invalid_actor"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def digest(text: str) -> str:
    return b64(hashlib.sha3_256(text.encode()).digest())


def noncanonical(id32: str) -> str:
    """The same 32 bytes with nonzero padding bits in the last character:
    43 base64url characters that match the schema but are not canonical."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet.index(id32[-1])
    return id32[:-1] + alphabet[last | 1 if last % 4 == 0 else (last & ~3)]


# --- events -----------------------------------------------------------------


class Clock:
    """Nonces and timestamps per signer, increasing."""

    def __init__(self) -> None:
        self.n = 0

    def next(self) -> int:
        self.n += 1
        return self.n


CLOCK = Clock()


def sign(signer: AgentSigner, typ: str, payload: Any, nonce: int | None = None,
         created_at: int | None = None) -> dict[str, Any]:
    n = CLOCK.next() if nonce is None else nonce
    ev = {"protocol": K.KNOWLEDGE_PROTOCOL, "type": typ, "actor": signer.agent_id(),
          "created_at": T0 + n if created_at is None else created_at, "nonce": n, "payload": payload}
    return signer.sign_event(ev)


def context(scope: str = "software", conditions: list[str] | None = None, limitations: list[str] | None = None) -> dict[str, Any]:
    return {"scope": scope, "conditions": conditions if conditions is not None else ["linux"],
            "limitations": limitations if limitations is not None else []}


def publication(kind: str = "observation", **extra: Any) -> dict[str, Any]:
    p = {"license": LICENSE, "kind": kind, "title": f"A {kind}", "statement": f"The {kind} statement.",
         "language": "en", "context": context(), "basis": "Measured twice."}
    if kind == "resource" and "evidence" not in extra:
        p["evidence"] = [{"url": "https://data.example/set.csv", "description": "the data", "role": "output",
                          "digest": digest("data")}]
    if kind == "collection" and "relations" not in extra:
        raise ValueError("a collection needs relations")
    p.update(extra)
    return p


def assessment(target: str, verdict: str = "supports", **extra: Any) -> dict[str, Any]:
    p = {"license": LICENSE, "target": target, "verdict": verdict, "summary": "Checked it.",
         "context": context(), "basis": "Ran the procedure."}
    if verdict in ("reproduced", "not_reproduced", "applied") and "reproduction" not in extra:
        p["reproduction"] = {"environment": "x86", "steps": ["run"], "expected": "42", "observed": "42"}
    p.update(extra)
    return p


def retraction(target: str, **extra: Any) -> dict[str, Any]:
    p = {"target": target, "reason": "Superseded by better data."}
    p.update(extra)
    return p


def full_publication(targets: dict[str, str]) -> dict[str, Any]:
    """A publication using every optional member."""
    return publication(
        "inference",
        evidence=[{"url": "https://data.example/a", "description": "input", "role": "input", "media_type": "text/csv"},
                  {"url": "https://data.example/b?x=1#frag", "description": "output", "role": "output", "digest": digest("b")}],
        reproduction={"environment": "x86_64 linux", "steps": ["make", "run"], "expected": "ok"},
        relations=[{"relation": "derived_from", "target": targets["observation"]},
                   {"relation": "addresses", "target": targets["question"]},
                   {"relation": "tests", "target": targets["hypothesis"]}],
        tags=["physics", "a.b_c-9"],
        profiles=[{"profile": {"url": "https://profiles.example/p1", "digest": digest("p1")}, "data": {"x": [1, 1]}},
                  {"profile": {"url": "https://profiles.example/p2", "digest": digest("p2")}, "data": {}}],
        extra={"anything": {"goes": [1, "two", None]}},
    )


# --- URLs ---------------------------------------------------------------------

# URLs both SDKs and apconnect read alike (the SDK's verdict is the expected one).
URLS_AGREED = [
    "https://example.com", "https://example.com/", "https://example.com/a/b?c=d&e#f",
    "https://EXAMPLE.com/Path", "https://example.com:8443/x", "https://example.com:443/",
    "https://example.com:/x", "https://example.com:0443/x", "https://127.0.0.1/x", "https://[::1]/x",
    "https://[2001:db8::1]:8443/", "https://a-b_c.example.com/~user/%20x", "https://example.com/a;b=c,d!$&'()*+",
    "https://example.com/@x:y", "https://example.com?q=/?", "https://example.com#/?",
    "https://xn--nxasmq6b.example/", "https://%41.example/", "https://a..b/", "https://example.com.",
    "http://example.com", "https:example.com", "https:/example.com", "https://",
    "https:///x", "https://user@example.com", "https://user:pw@example.com/", "https://@example.com",
    "ftp://example.com", "https://exa mple.com", "https://example.com/a b", "https://example.com/\tx",
    "https://example.com\\x", "https://example.com:99999/", "https://example.com:-1/",
    "https://example.com:8a/", "https://[::1/", "https://[1.2.3.4]/", "https://:443/", "example.com",
    "https://example.com/\u0000", " https://example.com", "https://example.com ", "https://example.com/\n",
]

# URLs the Python SDK accepts and the Rust SDK refuses: apconnect refuses them.
URLS_STRICTER = [
    ("uppercase scheme", "HTTPS://example.com/"),
    ("non-ASCII path", "https://example.com/caf\u00e9"),
    ("non-ASCII host", "https://caf\u00e9.example/"),
    ("U+2028 in the path", "https://example.com/a\u2028b"),
    ("DEL in the path", "https://example.com/a\u007fb"),
    ("angle brackets in the path", "https://example.com/<x>"),
    ("caret in the host", "https://ex^ample.com/"),
    ("braces in the query", "https://example.com/?{x}"),
    ("broken percent-encoding", "https://example.com/%zz"),
    ("second # in the fragment", "https://example.com/#a#b"),
    ("zone in an IPv6 literal", "https://[fe80::1%25eth0]/"),
    ("IPvFuture literal", "https://[v1.x]/"),
    ("numeric host that is no IPv4 address", "https://1.2.3.999/"),
    ("five-part numeric host", "https://1.2.3.4.5/"),
    ("percent-encoded slash in the host", "https://a%2Fb.example/"),
    ("square brackets in the path", "https://example.com/[x]"),
    ("pipe in the path", "https://example.com/a|b"),
    ("backquote in the path", "https://example.com/`x`"),
    ("double quote in the path", "https://example.com/\"x\""),
]


def url_cases(b: Builder, rng: random.Random) -> None:
    for u in URLS_AGREED:
        b.add("knowledge_url", repr(u), {"url": u}, code(K._https_url, u))
    for name, u in URLS_STRICTER:
        b.add("knowledge_url", name, {"url": u}, code(K._https_url, u))
    # Generated: hosts, ports and paths from parts every reader accepts, and
    # parts the Python SDK already refuses.
    hosts = ["example.com", "a.b.c", "x1-y_2.example", "10.0.0.1", "[::ffff:1.2.3.4]", "[2001:db8:0:0:0:0:0:1]",
             "0x7f.1", "localhost", "EXAMPLE.ORG", "%61%62.example"]
    ports = ["", ":1", ":80", ":65535", ":", ":00080", ":65536", ":x"]
    tails = ["", "/", "/a/b", "/a?b=c", "/#f", "?q", "/a%2Fb", "/%E2%82%AC", "/a/../b", "/./c", "/a b", "//double"]
    for i in range(60):
        u = "https://" + rng.choice(hosts) + rng.choice(ports) + rng.choice(tails)
        b.add("knowledge_url", f"generated {i} {u!r}", {"url": u}, code(K._https_url, u))


# --- envelopes ------------------------------------------------------------------


def envelope_verdict(env: Any) -> str:
    return wire_code(code(K.validate_knowledge_envelope, copy.deepcopy(env)), env)


def resign(env: dict[str, Any], signer: AgentSigner | None = None) -> dict[str, Any]:
    ev = copy.deepcopy(env["event"])
    return (signer or ALICE).sign_event(ev)


def mutate_payload(env: dict[str, Any], fn: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    ev = copy.deepcopy(env["event"])
    fn(ev["payload"])
    signer = ALICE if ev["actor"] == ALICE.agent_id() else BOB
    return signer.sign_event(ev)


def setp(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def f(p: dict[str, Any]) -> None:
        p[key] = value
    return f


def delp(key: str) -> Callable[[dict[str, Any]], None]:
    def f(p: dict[str, Any]) -> None:
        p.pop(key, None)
    return f


class World:
    """Signed events every case family reuses: a question, a hypothesis, an
    observation, a resource, assessments and retractions."""

    def __init__(self) -> None:
        self.question = sign(ALICE, K.KNOWLEDGE_PUBLISH, publication("question"))
        self.hypothesis = sign(ALICE, K.KNOWLEDGE_PUBLISH, publication("hypothesis"))
        self.observation = sign(ALICE, K.KNOWLEDGE_PUBLISH, publication("observation"))
        self.resource = sign(ALICE, K.KNOWLEDGE_PUBLISH, publication("resource"))
        self.bob_obs = sign(BOB, K.KNOWLEDGE_PUBLISH, publication("observation", language="EN-gb", tags=["bob"]))
        ids = {"question": self.question["hash"], "hypothesis": self.hypothesis["hash"], "observation": self.observation["hash"]}
        self.full = sign(ALICE, K.KNOWLEDGE_PUBLISH, full_publication(ids))
        self.collection = sign(ALICE, K.KNOWLEDGE_PUBLISH, publication(
            "collection", relations=[{"relation": "contains", "target": self.observation["hash"]},
                                     {"relation": "contains", "target": self.bob_obs["hash"]}]))
        self.assess = sign(BOB, K.KNOWLEDGE_ASSESS, assessment(self.observation["hash"], "challenges"))
        self.assess_repro = sign(BOB, K.KNOWLEDGE_ASSESS, assessment(self.observation["hash"], "reproduced"))
        self.successor = sign(ALICE, K.KNOWLEDGE_PUBLISH, publication(
            "observation", relations=[{"relation": "supersedes", "target": self.observation["hash"]}]))
        self.retract = sign(ALICE, K.KNOWLEDGE_RETRACT, retraction(self.observation["hash"]))
        self.retract_assess = sign(BOB, K.KNOWLEDGE_RETRACT, retraction(self.assess["hash"]))
        self.all = [self.question, self.hypothesis, self.observation, self.resource, self.bob_obs, self.full,
                    self.collection, self.assess, self.assess_repro, self.successor, self.retract, self.retract_assess]


# Payload mutations: name -> (event type it applies to, function).
def payload_mutations(w: World) -> list[tuple[str, str, Callable[[dict[str, Any]], None]]]:
    pub, ass, ret = K.KNOWLEDGE_PUBLISH, K.KNOWLEDGE_ASSESS, K.KNOWLEDGE_RETRACT
    m: list[tuple[str, str, Callable[[dict[str, Any]], None]]] = []
    for key in ("license", "kind", "title", "statement", "language", "context", "basis"):
        m.append((f"publish without {key}", pub, delp(key)))
    for key in ("license", "target", "verdict", "summary", "context", "basis"):
        m.append((f"assess without {key}", ass, delp(key)))
    for key in ("target", "reason"):
        m.append((f"retract without {key}", ret, delp(key)))
    for t in (pub, ass, ret):
        m.append((f"{t} with an unknown member", t, setp("visibility", "public")))
        m.append((f"{t} with extra", t, setp("extra", {"k": "v"})))
        m.append((f"{t} with extra not an object", t, setp("extra", [1])))
    m += [
        ("retract with a license (the old spec's shape)", ret, setp("license", LICENSE)),
        ("retract with context", ret, setp("context", context())),
        ("retract with empty reason", ret, setp("reason", "")),
        ("retract target non-canonical", ret, lambda p: p.update(target=noncanonical(p["target"]))),
        ("retract target too short", ret, lambda p: p.update(target=p["target"][:42])),
        ("publish kind unknown", pub, setp("kind", "claim")),
        ("publish kind in capitals", pub, setp("kind", "Observation")),
        ("publish title empty", pub, setp("title", "")),
        ("publish title not a string", pub, setp("title", 7)),
        ("publish language with region", pub, setp("language", "zh-Hant-TW")),
        ("publish language too long", pub, setp("language", "abcdefghi")),
        ("publish language with underscore", pub, setp("language", "en_US")),
        ("publish language trailing newline", pub, setp("language", "en\n")),
        ("publish license http", pub, setp("license", "http://creativecommons.org/")),
        ("publish license with userinfo", pub, setp("license", "https://u@creativecommons.org/")),
        ("publish license no host", pub, setp("license", "https:///x")),
        ("publish license relative", pub, setp("license", "/licenses/by")),
        ("publish license bad port", pub, setp("license", "https://example.com:70000/")),
        ("publish license with space", pub, setp("license", "https://example.com/a b")),
        ("publish context scope empty", pub, lambda p: p["context"].update(scope="")),
        ("publish context duplicate conditions", pub, lambda p: p["context"].update(conditions=["a", "a"])),
        ("publish context empty condition", pub, lambda p: p["context"].update(conditions=[""])),
        ("publish context unknown member", pub, lambda p: p["context"].update(region="eu")),
        ("publish context without limitations", pub, lambda p: p["context"].pop("limitations")),
        ("publish tags invalid", pub, setp("tags", ["Physics"])),
        ("publish tags duplicate", pub, setp("tags", ["a", "a"])),
        ("publish tag too long", pub, setp("tags", ["a" * 65])),
        ("publish tag 64 characters", pub, setp("tags", ["a" * 64])),
        ("publish evidence http", pub, setp("evidence", [{"url": "http://x.example/", "description": "d"}])),
        ("publish evidence output without digest", pub, setp("evidence", [{"url": "https://x.example/", "description": "d", "role": "output"}])),
        ("publish evidence digest non-canonical", pub, setp("evidence", [{"url": "https://x.example/", "description": "d", "digest": noncanonical(digest("x"))}])),
        ("publish evidence digest too long", pub, setp("evidence", [{"url": "https://x.example/", "description": "d", "digest": digest("x") + "A"}])),
        ("publish evidence unknown role", pub, setp("evidence", [{"url": "https://x.example/", "description": "d", "role": "proof"}])),
        ("publish evidence duplicate", pub, setp("evidence", [{"url": "https://x.example/", "description": "d"}] * 2)),
        ("publish evidence empty list", pub, setp("evidence", [])),
        ("publish reproduction without steps", pub, setp("reproduction", {"environment": "e", "steps": [], "expected": "x"})),
        ("publish reproduction repeated steps", pub, setp("reproduction", {"environment": "e", "steps": ["a", "a"], "expected": "x"})),
        ("publish relations duplicate", pub, setp("relations", [{"relation": "extends", "target": w.question["hash"]}] * 2)),
        ("publish relation unknown", pub, setp("relations", [{"relation": "cites", "target": w.question["hash"]}])),
        ("publish relation target non-canonical", pub, setp("relations", [{"relation": "extends", "target": noncanonical(w.question["hash"])}])),
        ("publish contains on a non-collection", pub, setp("relations", [{"relation": "contains", "target": w.question["hash"]}])),
        ("publish collection without contains", pub, lambda p: p.update(kind="collection", relations=[{"relation": "extends", "target": w.question["hash"]}])),
        ("publish collection without relations", pub, setp("kind", "collection")),
        ("publish resource without evidence", pub, setp("kind", "resource")),
        ("publish resource without output evidence", pub, lambda p: p.update(kind="resource", evidence=[{"url": "https://x.example/", "description": "d", "role": "input"}])),
        ("publish profiles duplicate digest", pub, setp("profiles", [{"profile": {"url": "https://p.example/1", "digest": digest("p")}, "data": {}},
                                                                     {"profile": {"url": "https://p.example/2", "digest": digest("p")}, "data": {"a": 1}}])),
        ("publish profiles identical bindings", pub, setp("profiles", [{"profile": {"url": "https://p.example/1", "digest": digest("p")}, "data": {}}] * 2)),
        ("publish profile url http", pub, setp("profiles", [{"profile": {"url": "http://p.example/1", "digest": digest("p")}, "data": {}}])),
        ("publish profile digest non-canonical", pub, setp("profiles", [{"profile": {"url": "https://p.example/1", "digest": noncanonical(digest("p"))}, "data": {}}])),
        ("publish profile data not an object", pub, setp("profiles", [{"profile": {"url": "https://p.example/1", "digest": digest("p")}, "data": []}])),
        ("publish profile without data", pub, setp("profiles", [{"profile": {"url": "https://p.example/1", "digest": digest("p")}}])),
        ("publish payload number 1.0 in extra", pub, setp("extra", {"n": 1.0})),
        ("assess verdict unknown", ass, setp("verdict", "agrees")),
        ("assess reproduced without reproduction", ass, lambda p: (p.update(verdict="reproduced"), p.pop("reproduction", None))),
        ("assess applied without observed", ass, setp("verdict", "applied") if False else (lambda p: p.update(verdict="applied", reproduction={"environment": "e", "steps": ["s"], "expected": "x"}))),
        ("assess target non-canonical", ass, lambda p: p.update(target=noncanonical(p["target"]))),
        ("assess with relations", ass, setp("relations", [])),
        ("assess with tags", ass, setp("tags", ["x"])),
        ("assess license http", ass, setp("license", "http://example.com/")),
    ]
    return m


def envelope_cases(b: Builder, w: World, rng: random.Random) -> None:
    for env in w.all:
        name = f"valid {env['event']['type']} {env['event']['payload'].get('kind', env['event']['payload'].get('verdict', ''))} #{env['event']['nonce']}"
        b.add("knowledge_envelope", name, {"envelope": env}, envelope_verdict(env))
    bases = {K.KNOWLEDGE_PUBLISH: w.observation, K.KNOWLEDGE_ASSESS: w.assess, K.KNOWLEDGE_RETRACT: w.retract}
    for name, typ, fn in payload_mutations(w):
        env = mutate_payload(bases[typ], fn)
        b.add("knowledge_envelope", name, {"envelope": env}, envelope_verdict(env))
        b.add("knowledge_payload", name, {"type": typ, "payload": env["event"]["payload"]}, payload_verdict(typ, env["event"]["payload"]))
    for name, u in [(repr(u), u) for u in URLS_AGREED] + URLS_STRICTER:
        for where in ("license", "evidence", "profile"):
            def put(p: dict[str, Any], u: str = u, where: str = where) -> None:
                if where == "license":
                    p["license"] = u
                elif where == "evidence":
                    p["evidence"] = [{"url": u, "description": "d"}]
                else:
                    p["profiles"] = [{"profile": {"url": u, "digest": digest("p")}, "data": {}}]
            env = mutate_payload(w.observation, put)
            b.add("knowledge_envelope", f"{where} url {name}", {"envelope": env}, envelope_verdict(env))
    structural_cases(b, w)
    random_envelope_cases(b, w, rng)


def structural_cases(b: Builder, w: World) -> None:
    env = w.observation
    def add(name: str, e: Any) -> None:
        b.add("knowledge_envelope", name, {"envelope": e}, envelope_verdict(e))

    h = bytearray(base64.urlsafe_b64decode(env["hash"] + "="))
    h[0] ^= 1
    add("hash of other bytes", dict(env, hash=b64(bytes(h))))
    add("hash non-canonical", dict(env, hash=noncanonical(env["hash"])))
    add("hash too short", dict(env, hash=env["hash"][:42]))
    s = bytearray(base64.urlsafe_b64decode(env["signature"] + "=="))
    s[5] ^= 4
    add("signature flipped bit", dict(env, signature=b64(bytes(s))))
    add("signature non-canonical", dict(env, signature=env["signature"][:-1] + ("B" if env["signature"][-1] == "A" else "A")))
    add("signature by another key", dict(env, signature=BOB.sign_event(env["event"])["signature"]))
    other = copy.deepcopy(env["event"])
    other["actor"] = BOB.agent_id()
    add("actor changed, signed by the old key", ALICE.sign_event(other) | {"event": other})
    add("envelope unknown member", dict(env, seq=1))
    add("envelope without signature", {k: v for k, v in env.items() if k != "signature"})
    for key, value in (("protocol", "agent-knowledge/2.0"), ("type", "knowledge.update"), ("room_id", "r1"),
                       ("nonce", 0), ("created_at", -1), ("payload", []), ("actor", "did:agent:" + "A" * 43),
                       ("actor", "did:agent:" + noncanonical(ALICE.agent_id()[10:])), ("nonce", 9007199254740991)):
        ev = copy.deepcopy(env["event"])
        ev[key] = value
        try:
            signed = ALICE.sign_event(ev)
        except (AgentProtocolError, ValueError, TypeError):
            signed = {"hash": env["hash"], "event": ev, "signature": env["signature"]}
        add(f"event {key} = {json.dumps(value)[:40]}", signed)
    ev = copy.deepcopy(env["event"])
    del ev["created_at"]
    add("event without created_at", {"hash": env["hash"], "event": ev, "signature": env["signature"]})
    # Integral numbers written as floats: both SDKs read 1.0 as 1 (JCS writes it "1").
    ev = copy.deepcopy(env["event"])
    fe = dict(ALICE.sign_event(ev))
    fe["event"] = dict(ev, nonce=float(ev["nonce"]), created_at=float(ev["created_at"]))
    add("nonce and created_at as integral floats", fe)
    fe2 = dict(fe)
    fe2["event"] = dict(ev, nonce=ev["nonce"] + 0.5)
    add("nonce with a fraction", fe2)
    add("not an object", [env])
    # Strict JSON: duplicate members and lone surrogates arrive as text.
    text = json.dumps(env)
    dup = text[:-1] + ', "hash": ' + json.dumps(env["hash"]) + "}"
    b.add("knowledge_envelope_text", "duplicate member", {"text": dup}, code(K.parse_knowledge_envelope, dup))
    b.add("knowledge_envelope_text", "valid text", {"text": text}, code(K.parse_knowledge_envelope, text))
    sur = text.replace('"Measured twice."', '"Measured \\ud800 twice."')
    b.add("knowledge_envelope_text", "lone surrogate", {"text": sur}, code(K.parse_knowledge_envelope, sur))
    big = text.replace('"nonce": ', '"nonce": 9007199254740993, "x": ', 1)
    b.add("knowledge_envelope_text", "integer beyond 2^53", {"text": big}, code(K.parse_knowledge_envelope, big))


def random_payload(rng: random.Random, w: World) -> tuple[str, dict[str, Any]]:
    texts = ["plain", "Ünïcödé ✓", "tab\tand\nnewline", "emoji 😀 here", "ΣΊΣΥΦΟΣ", "x" * 300, "dotted.i İ ı", "ﬀ ligature"]
    typ = rng.choice([K.KNOWLEDGE_PUBLISH] * 3 + [K.KNOWLEDGE_ASSESS, K.KNOWLEDGE_RETRACT])
    if typ == K.KNOWLEDGE_RETRACT:
        return typ, retraction(w.observation["hash"], reason=rng.choice(texts))
    ctx = context(rng.choice(texts), rng.sample(texts, rng.randint(0, 3)), rng.sample(texts, rng.randint(0, 2)))
    if typ == K.KNOWLEDGE_ASSESS:
        verdict = rng.choice(list(K.KNOWLEDGE_VERDICTS))
        return typ, assessment(w.observation["hash"], verdict, summary=rng.choice(texts), context=ctx)
    kind = rng.choice([k for k in K.KNOWLEDGE_KINDS if k != "collection"])
    p = publication(kind, title=rng.choice(texts), statement=rng.choice(texts), context=ctx,
                    language=rng.choice(["en", "EN", "de-CH", "zh-Hant-TW", "tlh"]))
    if rng.random() < 0.5:
        p["tags"] = rng.sample(["a", "b1", "c.d", "e-f", "g_h"], rng.randint(0, 3))
    if rng.random() < 0.4:
        p["relations"] = [{"relation": rng.choice(["derived_from", "extends", "supports", "contradicts"]),
                           "target": t["hash"]} for t in rng.sample([w.question, w.hypothesis, w.bob_obs], rng.randint(1, 3))]
    return typ, p


RANDOM_MUTATIONS: list[tuple[str, Callable[[random.Random, dict[str, Any]], None]]] = [
    ("drop a member", lambda r, p: p.pop(r.choice(sorted(p)))),
    ("empty a string", lambda r, p: p.update({k: "" for k in [r.choice(sorted(k for k, v in p.items() if isinstance(v, str)))]})),
    ("add a member", lambda r, p: p.update({r.choice(["q", "visibility", "license", "tags", "kind"]): "x"})),
    ("http license", lambda r, p: p.update(license="http://" + p.get("license", "https://x")[8:])),
    ("non-canonical target", lambda r, p: p.update(target=noncanonical(p["target"])) if "target" in p else p.update(relations=[{"relation": "extends", "target": noncanonical(digest("t"))}])),
    ("duplicate profile digest", lambda r, p: p.update(profiles=[{"profile": {"url": "https://p.example/" + s, "digest": digest("d")}, "data": {}} for s in "ab"])),
    ("type swap", lambda r, p: None),
]


def random_envelope_cases(b: Builder, w: World, rng: random.Random) -> None:
    for i in range(120):
        typ, p = random_payload(rng, w)
        name = "valid"
        if rng.random() < 0.6:
            mname, fn = rng.choice(RANDOM_MUTATIONS)
            name = mname
            try:
                fn(rng, p)
            except (ValueError, IndexError, KeyError):
                name = "valid"
            if mname == "type swap":
                typ = rng.choice([t for t in K.KNOWLEDGE_EVENT_TYPES if t != typ])
        env = sign(rng.choice([ALICE, BOB]), typ, p)
        b.add("knowledge_envelope", f"random {i} {typ} {name}", {"envelope": env}, envelope_verdict(env))
        b.add("knowledge_payload", f"random {i} {typ} {name}", {"type": typ, "payload": p}, payload_verdict(typ, p))
    for typ in ("knowledge.update", ""):
        b.add("knowledge_payload", f"unknown type {typ!r}", {"type": typ, "payload": {}}, "invalid_request")


# The connector's knowledge_submit validates the payload against its own
# definition before signing and lists the failing members' paths; a payload
# that passes is signed and refused, pathless, by the envelope check. The
# SDK's lists come from the same bundled schema (this is the Python
# jsonschema reading of it: format is an annotation, as in the SDK's
# validators).
def payload_verdict(typ: str, payload: Any) -> Any:
    definition = {K.KNOWLEDGE_PUBLISH: "publishPayload", K.KNOWLEDGE_ASSESS: "assessPayload",
                  K.KNOWLEDGE_RETRACT: "retractPayload"}.get(typ)
    if definition is None:
        return "invalid_request"
    errors = list(K._VALIDATORS[definition].iter_errors(payload))
    if errors:
        paths = sorted({"".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in e.absolute_path) for e in errors})
        return {"code": "invalid_event", "paths": paths}
    env = sign(ALICE, typ, copy.deepcopy(payload))
    return {"code": envelope_verdict(env), "paths": []}


# --- dependencies and submission ------------------------------------------------


def submit_verdict(retained: list[dict[str, Any]], env: Any, now: int = NOW, max_bytes: int | None = None) -> str:
    store = K.KnowledgeStore(SERVICE, clock=lambda: now, max_envelope_bytes=max_bytes or K.DEFAULT_MAX_ENVELOPE_BYTES)
    for r in retained:
        store.submit(r)
    return wire_code(code(store.submit, copy.deepcopy(env)), env)


def submit_cases(b: Builder, w: World, rng: random.Random) -> None:
    def add(name: str, retained: list[dict[str, Any]], env: Any, now: int = NOW, max_bytes: int | None = None) -> None:
        b.add("knowledge_submit", name, {"retained": retained, "envelope": env, "now": now, "max_bytes": max_bytes},
              submit_verdict(retained, env, now, max_bytes))

    base = [w.question, w.hypothesis, w.observation, w.bob_obs]
    add("publication without relations", [], w.observation)
    add("full publication, dependencies held", base, w.full)
    add("full publication, nothing held", [], w.full)
    add("full publication, one missing", [w.question, w.hypothesis], w.full)
    add("exact resubmission", base, w.observation)
    add("collection", base, w.collection)
    add("assessment", base, w.assess)
    add("assessment, target missing", [], w.assess)
    add("assessment of an assessment", base + [w.assess], sign(ALICE, K.KNOWLEDGE_ASSESS, assessment(w.assess["hash"])))
    add("assessment of a retraction", base + [w.retract], sign(BOB, K.KNOWLEDGE_ASSESS, assessment(w.retract["hash"])))
    add("retraction by the author", base, w.retract)
    add("retraction of an assessment by its author", base + [w.assess], w.retract_assess)
    add("retraction by another author", base, sign(BOB, K.KNOWLEDGE_RETRACT, retraction(w.observation["hash"])))
    add("retraction with a lower nonce", base, sign(ALICE, K.KNOWLEDGE_RETRACT, retraction(w.observation["hash"]), nonce=1))
    add("retraction with an equal nonce", base, sign(ALICE, K.KNOWLEDGE_RETRACT, retraction(w.observation["hash"]), nonce=w.observation["event"]["nonce"]))
    add("retraction of a retraction", base + [w.retract], sign(ALICE, K.KNOWLEDGE_RETRACT, retraction(w.retract["hash"])))
    add("successor by the author", base, w.successor)
    add("successor by another author", base, sign(BOB, K.KNOWLEDGE_PUBLISH, publication("observation", relations=[{"relation": "supersedes", "target": w.observation["hash"]}])))
    add("successor with a lower nonce", base, sign(ALICE, K.KNOWLEDGE_PUBLISH, publication("observation", relations=[{"relation": "supersedes", "target": w.observation["hash"]}]), nonce=2))
    for rel, target, name in (("addresses", w.observation, "addresses a non-question"), ("addresses", w.question, "addresses a question"),
                              ("tests", w.question, "tests a non-hypothesis"), ("tests", w.hypothesis, "tests a hypothesis"),
                              ("extends", w.assess, "extends an assessment"), ("supports", w.assess, "supports an assessment"),
                              ("derived_from", w.assess, "derived_from an assessment"), ("contradicts", w.assess, "contradicts an assessment"),
                              ("supersedes", w.assess, "supersedes an assessment"), ("derived_from", w.retract, "derived_from a retraction"),
                              ("supports", w.bob_obs, "supports another author's publication")):
        env = sign(ALICE, K.KNOWLEDGE_PUBLISH, publication("inference", relations=[{"relation": rel, "target": target["hash"]}]))
        add(name, base + [w.assess, w.retract], env)
    # Missing ids are reported sorted and distinct.
    ids = sorted(digest(f"m{i}") for i in range(4))
    env = sign(ALICE, K.KNOWLEDGE_PUBLISH, publication("inference", relations=[{"relation": "extends", "target": i} for i in reversed(ids)]
                                                        + [{"relation": "supports", "target": ids[0]}]))
    b.add("knowledge_missing", "four missing, reversed, one repeated", {"retained": [], "envelope": env}, missing_verdict([], env))
    b.add("knowledge_missing", "two of five held", {"retained": [w.question, w.hypothesis], "envelope": w.full},
          missing_verdict([w.question, w.hypothesis], w.full))
    # Time and size.
    future = sign(ALICE, K.KNOWLEDGE_PUBLISH, publication("observation"), created_at=NOW + 300_000)
    add("created_at at the skew bound", [], future)
    add("created_at one ms past the skew bound", [], sign(ALICE, K.KNOWLEDGE_PUBLISH, publication("observation"), created_at=NOW + 300_001))
    add("created_at long ago", [], sign(ALICE, K.KNOWLEDGE_PUBLISH, publication("observation"), created_at=0))
    add("future and missing dependency", [], sign(ALICE, K.KNOWLEDGE_ASSESS, assessment(digest("none")), created_at=NOW + 400_000))
    size = len(json.dumps(w.observation, ensure_ascii=False, separators=(",", ":")).encode())
    add("size at the bound", [], w.observation, max_bytes=size)
    add("size one byte over", [], w.observation, max_bytes=size - 1)
    big = sign(ALICE, K.KNOWLEDGE_PUBLISH, publication("observation", statement="é" * 131_100))
    add("multibyte statement over 256 KiB", [], big)
    big2 = sign(ALICE, K.KNOWLEDGE_PUBLISH, publication("observation", statement="x" * 261_500))
    add("statement just under 256 KiB", [], big2)
    add("oversize with a missing dependency", [], sign(ALICE, K.KNOWLEDGE_ASSESS, assessment(digest("none"), summary="x" * 270_000)))
    add("invalid envelope", [], dict(w.observation, signature=w.assess["signature"]))
    add("retraction shaped like the old spec (license)", base, mutate_payload(w.retract, setp("license", LICENSE)))
    # Generated: random dependency graphs over a pool of held events.
    pool = [w.question, w.hypothesis, w.observation, w.bob_obs, w.resource, w.assess, w.retract, w.assess_repro]
    for i in range(80):
        held = rng.sample(pool, rng.randint(0, len(pool)))
        held_sorted = [e for e in pool if e in held and (e is not w.assess or w.observation in held)
                       and (e is not w.retract or w.observation in held) and (e is not w.assess_repro or w.observation in held)]
        signer = rng.choice([ALICE, BOB])
        typ = rng.choice([K.KNOWLEDGE_PUBLISH, K.KNOWLEDGE_PUBLISH, K.KNOWLEDGE_ASSESS, K.KNOWLEDGE_RETRACT])
        target = rng.choice(pool)
        nonce = rng.choice([None, 1, target["event"]["nonce"], target["event"]["nonce"] + 1])
        if typ == K.KNOWLEDGE_PUBLISH:
            rels = [{"relation": rng.choice(list(K.KNOWLEDGE_RELATIONS)), "target": t["hash"]}
                    for t in rng.sample(pool, rng.randint(1, 3))]
            kind = "collection" if any(r["relation"] == "contains" for r in rels) else rng.choice(["inference", "synthesis"])
            env = sign(signer, typ, publication(kind, relations=rels), nonce=nonce)
        elif typ == K.KNOWLEDGE_ASSESS:
            env = sign(signer, typ, assessment(target["hash"]), nonce=nonce)
        else:
            env = sign(signer, typ, retraction(target["hash"]), nonce=nonce)
        add(f"random graph {i}", held_sorted, env)


def missing_verdict(retained: list[dict[str, Any]], env: dict[str, Any]) -> Any:
    try:
        K.validate_knowledge_dependencies(env, {r["hash"]: r for r in retained})
        return "ok"
    except AgentProtocolError as err:
        return {"code": err.code, "data": err.data}


# --- queries, cursors and the store -------------------------------------------------


def query_verdict(params: list[tuple[str, str]]) -> Any:
    try:
        return {"code": "ok", "request": K.parse_knowledge_query(params)}
    except AgentProtocolError as err:
        return {"code": err.code}


def query_cases(b: Builder, w: World, rng: random.Random) -> None:
    a, t = ALICE.agent_id(), w.observation["hash"]
    hand: dict[str, list[tuple[str, str]]] = {
        "empty": [],
        "every filter": [("actor", a), ("type", "knowledge.publish"), ("kind", "observation"), ("target", t),
                         ("relation", "supersedes"), ("tag", "x"), ("profile", digest("p")), ("language", "en"),
                         ("verdict", "supports"), ("created_from", "1"), ("created_before", "2"), ("after_seq", "0"),
                         ("limit", "1000"), ("cursor", "anything")],
        "repeated tag": [("tag", "a"), ("tag", "b")],
        "repeated limit": [("limit", "1"), ("limit", "1")],
        "unknown q": [("q", "text")],
        "unknown empty name": [("", "x")],
        "limit leading zeros": [("limit", "0007")],
        "limit zero": [("limit", "0")],
        "limit 1001": [("limit", "1001")],
        "limit plus sign": [("limit", "+5")],
        "limit negative": [("limit", "-5")],
        "limit empty": [("limit", "")],
        "limit with space": [("limit", " 5")],
        "limit fullwidth digit": [("limit", "\uff15")],
        "limit arabic-indic digit": [("limit", "\u0665")],
        "after_seq 16 digits": [("after_seq", "9007199254740991")],
        "after_seq beyond 2^53": [("after_seq", "9007199254740992")],
        "after_seq 17 digits": [("after_seq", "10000000000000000")],
        "after_seq 17 digits with leading zero": [("after_seq", "09007199254740991")],
        "after_seq many zeros": [("after_seq", "0" * 40)],
        "created_from equals created_before": [("created_from", "5"), ("created_before", "5")],
        "created_from after created_before": [("created_from", "6"), ("created_before", "5")],
        "created_before only": [("created_before", "5")],
        "actor without prefix": [("actor", a[10:])],
        "actor non-canonical": [("actor", "did:agent:" + noncanonical(a[10:]))],
        "target non-canonical": [("target", noncanonical(t))],
        "profile non-canonical": [("profile", noncanonical(digest("p")))],
        "type unknown": [("type", "knowledge.update")],
        "kind unknown": [("kind", "claim")],
        "language bad": [("language", "e")],
        "language mixed case": [("language", "EN-us")],
        "tag bad": [("tag", "Tag")],
        "cursor empty": [("cursor", "")],
        "verdict on a query": [("verdict", "reproduced")],
        "relation bad": [("relation", "cites")],
    }
    for name, params in hand.items():
        b.add("knowledge_query", name, {"params": params}, query_verdict(params))
    names = ["actor", "type", "kind", "target", "relation", "tag", "profile", "language", "verdict", "created_from",
             "created_before", "after_seq", "limit", "cursor", "q", "offset"]
    values = {"actor": [a, BOB.agent_id(), "did:agent:x"], "type": list(K.KNOWLEDGE_EVENT_TYPES) + ["x"],
              "kind": ["question", "negative_result", "x"], "target": [t, digest("z"), "short"], "relation": ["tests", "x"],
              "tag": ["a", "a.b", "-a"], "profile": [digest("p"), "x"], "language": ["en", "en-GB", "1"],
              "verdict": ["applied", "x"], "created_from": ["0", "10", "x", "1.5"], "created_before": ["11", "100000"],
              "after_seq": ["0", "3", "-1"], "limit": ["1", "50", "1000", "1001"], "cursor": ["1.2.3.x", "c"], "q": ["x"], "offset": ["1"]}
    for i in range(80):
        params = []
        for _ in range(rng.randint(1, 4)):
            n = rng.choice(names)
            params.append((n, rng.choice(values[n])))
        b.add("knowledge_query", f"generated {i} {params}", {"params": params}, query_verdict(params))


def matches_cases(b: Builder, w: World, rng: random.Random) -> None:
    filters_pool = [
        {}, {"actor": ALICE.agent_id()}, {"actor": BOB.agent_id()}, {"type": "knowledge.assess"},
        {"kind": "observation"}, {"kind": "question"}, {"target": w.observation["hash"]},
        {"relation": "supersedes"}, {"relation": "supersedes", "target": w.observation["hash"]},
        {"relation": "contains", "target": w.bob_obs["hash"]}, {"relation": "derived_from", "target": w.question["hash"]},
        {"tag": "bob"}, {"tag": "physics"}, {"profile": digest("p1")}, {"language": "EN"}, {"language": "en-GB"},
        {"verdict": "challenges"}, {"verdict": "reproduced"}, {"created_from": T0 + 3}, {"created_before": T0 + 3},
        {"created_from": T0, "created_before": T0 + 100}, {"target": w.assess["hash"]},
    ]
    for i, f in enumerate(filters_pool):
        for env in w.all:
            b.add("knowledge_match", f"filters {i} {json.dumps(f)[:60]} on {env['hash'][:8]}",
                  {"envelope": env, "filters": f}, K.knowledge_query_matches(env, K.validate_knowledge_query(f)))
    for i in range(40):
        f: dict[str, Any] = {}
        for _ in range(rng.randint(1, 3)):
            f.update(rng.choice(filters_pool[1:]))
        if "created_from" in f and "created_before" in f and f["created_from"] >= f["created_before"]:
            del f["created_before"]
        env = rng.choice(w.all)
        b.add("knowledge_match", f"generated {i}", {"envelope": env, "filters": f},
              K.knowledge_query_matches(env, K.validate_knowledge_query(f)))


def store_ops_verdict(ops: list[dict[str, Any]]) -> list[Any]:
    """Runs submissions and queries against the SDK store; one outcome per op:
    a code, or for a query {seqs, checkpoint, as_of, next_cursor}."""
    now = {"t": NOW}
    store = K.KnowledgeStore(SERVICE, clock=lambda: now["t"])
    out: list[Any] = []
    for op in ops:
        if "now" in op:
            now["t"] = op["now"]
        if "submit" in op:
            out.append(wire_code(code(store.submit, copy.deepcopy(op["submit"])), op["submit"]))
            continue
        try:
            r = store.query(copy.deepcopy(op["query"]))
            out.append({"seqs": [x["seq"] for x in r["result"]], "checkpoint": r["checkpoint"], "as_of": r["as_of"],
                        "next_cursor": r.get("next_cursor")})
        except AgentProtocolError as err:
            out.append(err.code)
    return out


def store_cases(b: Builder, w: World, rng: random.Random) -> None:
    events = [w.question, w.hypothesis, w.observation, w.bob_obs, w.resource, w.full, w.collection, w.assess,
              w.assess_repro, w.successor, w.retract, w.retract_assess]

    def traversal(name: str, request: dict[str, Any], extra_after: int = 0, tamper: Callable[[str], str] | None = None,
                  change: dict[str, Any] | None = None) -> None:
        """Submit everything, then page through request, following the SDK's
        cursors; optionally submit more mid-way and tamper with a cursor."""
        ops: list[dict[str, Any]] = [{"submit": e} for e in events[: len(events) - extra_after]]
        store = K.KnowledgeStore(SERVICE, clock=lambda: NOW)
        for op in ops:
            store.submit(copy.deepcopy(op["submit"]))
        req = dict(request)
        for page in range(20):
            ops.append({"query": dict(req), "now": NOW + page})
            store.clock = (lambda p=page: NOW + p)
            try:
                resp = store.query(copy.deepcopy(req))
            except AgentProtocolError:
                break
            if page == 0 and extra_after:
                for e in events[len(events) - extra_after:]:
                    ops.append({"submit": e})
                    store.submit(copy.deepcopy(e))
            cur = resp.get("next_cursor")
            if cur is None:
                break
            req = dict(request, cursor=tamper(cur) if tamper and page == 0 else cur)
            if change and page == 0:
                req.update(change)
        b.add("knowledge_store", name, {"service": SERVICE, "now": NOW, "ops": ops}, store_ops_verdict(ops))

    traversal("all, one page", {})
    traversal("all, pages of 2", {"limit": 2})
    traversal("all, pages of 1", {"limit": 1})
    traversal("pages of 3 after 4", {"limit": 3, "after_seq": 4})
    traversal("after_seq at the checkpoint", {"after_seq": len(events)})
    traversal("after_seq beyond the checkpoint", {"after_seq": len(events) + 1})
    traversal("publications, pages of 2", {"type": "knowledge.publish", "limit": 2})
    traversal("target observation, pages of 1", {"target": w.observation["hash"], "limit": 1})
    traversal("submissions after the first page stay out", {"limit": 2}, extra_after=3)
    traversal("cursor with another digest", {"limit": 2}, tamper=lambda c: c.rsplit(".", 1)[0] + "." + digest("other"))
    traversal("cursor checkpoint beyond the store", {"limit": 2}, tamper=lambda c: "99." + c.split(".", 1)[1])
    traversal("cursor last_seq beyond its checkpoint", {"limit": 2}, tamper=lambda c: ".".join([c.split(".")[0], c.split(".")[1], "50", c.split(".")[3]]))
    traversal("cursor with leading zeros", {"limit": 2}, tamper=lambda c: "0" + c)
    traversal("cursor with 17-digit as_of", {"limit": 2}, tamper=lambda c: ".".join([c.split(".")[0], "1" + "0" * 16, c.split(".")[2], c.split(".")[3]]))
    traversal("cursor with five parts", {"limit": 2}, tamper=lambda c: c + ".1")
    traversal("cursor with a sign", {"limit": 2}, tamper=lambda c: "+" + c)
    traversal("cursor with an empty part", {"limit": 2}, tamper=lambda c: "." + c.split(".", 1)[1])
    traversal("cursor reused with another limit", {"limit": 2}, change={"limit": 3})
    traversal("cursor reused with another filter", {"limit": 2}, change={"type": "knowledge.assess"})
    traversal("cursor reused with after_seq above last", {"limit": 2}, change={"after_seq": 3})
    traversal("cursor reused with explicit defaults", {"limit": 100}, change={"after_seq": 0})
    traversal("limit given explicitly as the default", {"limit": 100, "after_seq": 0})
    for i in range(25):
        req: dict[str, Any] = {"limit": rng.randint(1, 5)}
        for _ in range(rng.randint(0, 2)):
            req.update(rng.choice([{"type": rng.choice(list(K.KNOWLEDGE_EVENT_TYPES))}, {"actor": rng.choice([ALICE, BOB]).agent_id()},
                                   {"target": rng.choice(events)["hash"]}, {"after_seq": rng.randint(0, 6)},
                                   {"created_from": T0 + rng.randint(0, 10)}, {"language": rng.choice(["en", "EN-GB"])}]))
        traversal(f"generated {i} {json.dumps(req)[:80]}", req, extra_after=rng.choice([0, 0, 2]))


# --- search -----------------------------------------------------------------------------


def terms_verdict(text: Any, lexical: bool) -> Any:
    try:
        return K.knowledge_text_terms(text, lexical)
    except AgentProtocolError as err:
        return err.code


TEXTS = [
    "x", "", " ", "\t\n\v\f\r ", "Hello World", "  leading and trailing  ", "a\u00a0b", "a\u2003b", "a\u3000b",
    "a\u2028b", "a\u0085b", "a\u001cb", "a\u000bb", "ÀÉÎ ÕÜ", "STRASSE straße", "İstanbul", "ΣΊΣΥΦΟΣ", "ǅ ǆ ǄA",
    "K\u212a", "ﬀ", "e\u0301", "😀 🙂", "a" * 1024, "a" * 1025, "é" * 1024, "é" * 1025, "😀" * 1024, "😀" * 1025,
    " ".join("t" for _ in range(16)), " ".join("t" for _ in range(17)), " ".join(str(i) for i in range(17)),
    "MiXeD CaSe 123", "a\x00b", "tab\tsplit", "\u200b", "A-B_C.D",
]


def search_cases(b: Builder, w: World, rng: random.Random) -> None:
    for i, text in enumerate(TEXTS):
        for lexical in (True, False):
            b.add("knowledge_terms", f"{i} {text[:30]!r} lexical={lexical}", {"text": text, "lexical": lexical}, terms_verdict(text, lexical))
    alphabet = ["a", "B", "é", "É", "ß", "İ", "ı", " ", "\t", "\n", "\u00a0", "\u2028", "😀", "Z", "z", "0", "\u0301", "K", "\u212a"]
    for i in range(80):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        b.add("knowledge_terms", f"generated {i} {text!r}", {"text": text, "lexical": True}, terms_verdict(text, True))
    # Lexical matching over events with Unicode and ASCII case.
    texty = sign(ALICE, K.KNOWLEDGE_PUBLISH, publication(
        "observation", title="Ünïcödé TITLE with İstanbul", statement="The STRASSE straße K\u212a",
        basis="Basis", context=context("Scope ΣΊΣΥΦΟΣ", ["cond😀ition"], ["LIMIT"])))
    subjects = [texty, w.observation, w.assess, w.retract, w.full]
    probes = ["title", "TITLE", "ünïcödé", "ÜNÏCÖDÉ", "istanbul", "İstanbul", "strasse", "STRASSE STRASSE", "straße", "STRAßE",
              "k\u212a", "kk", "σίσυφος", "ΣΊΣΥΦΟΣ", "cond😀", "limit", "LIMIT basis", "scope", "missing", "basis missing",
              "measured", "checked", "superseded", "observation statement", "the", "t h e", "a" * 1025, "", "   "]
    for env in subjects:
        for p in probes:
            b.add("knowledge_text_match", f"{env['hash'][:8]} {p[:30]!r}", {"envelope": env, "text": p},
                  match_verdict(env, p))
    for i in range(40):
        env = rng.choice(subjects)
        words = " ".join(K._eligible_text(env)).split()
        if rng.random() < 0.7:
            picked = rng.sample(words, min(3, len(words)))
            # Cut words to substrings and change their case at random.
            picked = [w[rng.randrange(len(w)):][: rng.randint(1, 8)] for w in picked]
            probe = " ".join(w.upper() if rng.random() < 0.3 else w for w in picked)
        else:
            probe = rng.choice(probes)
        b.add("knowledge_text_match", f"generated {i} {probe[:40]!r}", {"envelope": env, "text": probe}, match_verdict(env, probe))
    # Search requests.
    requests = [
        ({"text": "x", "mode": "lexical"}, ["lexical"]), ({"text": "x", "mode": "semantic"}, ["lexical"]),
        ({"text": "x", "mode": "semantic"}, ["lexical", "semantic"]), ({"text": "x", "mode": "fuzzy"}, ["lexical", "fuzzy"]),
        ({"text": "x", "mode": 5}, ["lexical"]), ({"text": "x"}, ["lexical"]), ({"mode": "lexical"}, ["lexical"]),
        ({"text": "", "mode": "lexical"}, ["lexical"]), ({"text": " ", "mode": "lexical"}, ["lexical"]),
        ({"text": " ".join("t" * 17), "mode": "lexical"}, ["lexical"]),
        ({"text": " ".join(["t"] * 17), "mode": "hybrid"}, ["lexical", "hybrid"]),
        ({"text": "x", "mode": "lexical", "limit": 100}, ["lexical"]), ({"text": "x", "mode": "lexical", "limit": 101}, ["lexical"]),
        ({"text": "x", "mode": "lexical", "limit": 0}, ["lexical"]), ({"text": "x", "mode": "lexical", "limit": 1.0}, ["lexical"]),
        ({"text": "x", "mode": "lexical", "filters": {}}, ["lexical"]),
        ({"text": "x", "mode": "lexical", "filters": {"kind": "question", "verdict": "applied"}}, ["lexical"]),
        ({"text": "x", "mode": "lexical", "filters": {"after_seq": 1}}, ["lexical"]),
        ({"text": "x", "mode": "lexical", "filters": {"cursor": "c"}}, ["lexical"]),
        ({"text": "x", "mode": "lexical", "filters": {"created_from": 5, "created_before": 5}}, ["lexical"]),
        ({"text": "x", "mode": "lexical", "filters": {"actor": "did:agent:" + noncanonical(ALICE.agent_id()[10:])}}, ["lexical"]),
        ({"text": "x", "mode": "lexical", "filters": {"target": noncanonical(w.observation["hash"])}}, ["lexical"]),
        ({"text": "x", "mode": "lexical", "q": "x"}, ["lexical"]), ({"text": "x", "mode": "lexical", "cursor": "c"}, ["lexical"]),
        ("not an object", ["lexical"]), ({"text": "x", "mode": "lexical"}, []),
        ({"text": "é" * 1024, "mode": "lexical"}, ["lexical"]), ({"text": "é" * 1025, "mode": "semantic"}, ["semantic"]),
    ]
    for i, (req, modes) in enumerate(requests):
        b.add("knowledge_search_request", f"{i} {json.dumps(req, ensure_ascii=False)[:70]} modes={modes}",
              {"request": req, "modes": modes}, code(K.validate_knowledge_search_request, req, modes))
    selection_cases(b, w, rng)


def match_verdict(env: dict[str, Any], text: str) -> Any:
    try:
        return K.knowledge_text_matches(env, text)
    except AgentProtocolError as err:
        return err.code


def selection_cases(b: Builder, w: World, rng: random.Random) -> None:
    events = [w.question, w.hypothesis, w.observation, w.bob_obs, w.full, w.assess, w.retract]
    ids = [e["hash"] for e in events]
    lex = {"mode": "lexical", "id": "bm25"}
    approx = {"exhaustive": False, "reasons": ["approximate"]}
    cases = [
        ("lexical exhaustive, every match", {"text": "statement", "mode": "lexical"}, None, lex, {"exhaustive": True, "reasons": []}),
        ("lexical exhaustive, one missing", {"text": "statement", "mode": "lexical"}, "drop", lex, {"exhaustive": True, "reasons": []}),
        ("lexical not exhaustive, subset", {"text": "statement", "mode": "lexical"}, "drop", lex, {"exhaustive": False, "reasons": ["candidate_limit"]}),
        ("lexical, a non-match", {"text": "statement", "mode": "lexical"}, "add", lex, {"exhaustive": False, "reasons": ["timeout"]}),
        ("lexical, repeated id", {"text": "statement", "mode": "lexical"}, "repeat", lex, {"exhaustive": False, "reasons": ["timeout"]}),
        ("lexical exhaustive over the limit", {"text": "statement", "mode": "lexical", "limit": 1}, None, lex, {"exhaustive": True, "reasons": []}),
        ("lexical, ranking mode semantic", {"text": "statement", "mode": "lexical"}, None, {"mode": "semantic", "id": "v"}, approx),
        ("semantic, approximate", {"text": "anything", "mode": "semantic"}, "all", {"mode": "semantic", "id": "v"}, approx),
        ("semantic claiming exhaustive", {"text": "anything", "mode": "semantic"}, "all", {"mode": "semantic", "id": "v"}, {"exhaustive": True, "reasons": []}),
        ("semantic without approximate", {"text": "anything", "mode": "semantic"}, "all", {"mode": "semantic", "id": "v"}, {"exhaustive": False, "reasons": ["timeout"]}),
        ("semantic with a filter breach", {"text": "anything", "mode": "semantic", "filters": {"type": "knowledge.assess"}}, "all", {"mode": "semantic", "id": "v"}, approx),
        ("coverage exhaustive with reasons", {"text": "statement", "mode": "lexical"}, None, lex, {"exhaustive": True, "reasons": ["timeout"]}),
        ("coverage not exhaustive without reasons", {"text": "statement", "mode": "lexical"}, None, lex, {"exhaustive": False, "reasons": []}),
        ("ranking without id", {"text": "statement", "mode": "lexical"}, None, {"mode": "lexical"}, {"exhaustive": True, "reasons": []}),
    ]
    for name, req, how, ranking, coverage in cases:
        eligible = [i for i, e in zip(ids, events) if K.knowledge_query_matches(e, req.get("filters", {}))
                    and (req["mode"] != "lexical" or K.knowledge_text_matches(e, req["text"]))]
        cand = list(eligible)
        if how == "drop" and cand:
            cand = cand[1:]
        elif how == "add":
            cand = cand + [i for i in ids if i not in eligible][:1]
        elif how == "repeat" and cand:
            cand = cand + cand[:1]
        elif how == "all":
            cand = list(ids)
        rng.shuffle(cand)
        b.add("knowledge_selection", name, {"service": SERVICE, "events": events, "request": req, "candidates": cand,
                                            "ranking": ranking, "coverage": coverage},
              selection_verdict(events, req, cand, ranking, coverage))


def selection_verdict(events, req, cand, ranking, coverage) -> str:
    store = K.KnowledgeStore(SERVICE, clock=lambda: NOW)
    for e in events:
        store.submit(copy.deepcopy(e))
    return code(store.search, req, candidates=cand, ranking=ranking, coverage=coverage)


# --- client-side response checks -------------------------------------------------------


def record(env: dict[str, Any], seq: int, accepted_at: int = NOW) -> dict[str, Any]:
    return {"envelope": env, "accepted_at": accepted_at, "seq": seq}


def response_cases(b: Builder, w: World, rng: random.Random) -> None:
    recs = [record(e, i + 1) for i, e in enumerate([w.question, w.hypothesis, w.observation, w.bob_obs, w.assess, w.retract])]
    scope = {"service": SERVICE, "checkpoint": 6, "as_of": NOW}
    rc = [
        ("valid", recs[0], None), ("expected id", recs[0], w.question["hash"]), ("other id", recs[0], w.hypothesis["hash"]),
        ("extra member", dict(recs[0], note="x"), None), ("seq 0", dict(recs[0], seq=0), None),
        ("accepted_at negative", dict(recs[0], accepted_at=-1), None), ("seq 1.0", dict(recs[0], seq=1.0), None),
        ("no seq", {"envelope": w.question, "accepted_at": NOW}, None),
        ("bad envelope", record(dict(w.question, signature=w.hypothesis["signature"]), 1), None),
        ("old-spec retraction", record(mutate_payload(w.retract, setp("license", LICENSE)), 1), None),
    ]
    for name, r, exp in rc:
        b.add("knowledge_record", name, {"record": r, "expected": exp}, code(K.validate_knowledge_record, r, exp))

    def q(name: str, request: dict[str, Any], response: dict[str, Any], origin: str = SERVICE) -> None:
        b.add("knowledge_query_response", name, {"request": request, "response": response, "origin": origin},
              code(K.validate_knowledge_query_response, response, K.validate_knowledge_query(request), origin))

    q("valid", {}, dict(scope, result=recs))
    q("valid with cursor", {"limit": 2}, dict(scope, result=recs[:2], next_cursor="6.1.2.x"))
    q("over the limit", {"limit": 2}, dict(scope, result=recs[:3]))
    q("seq not above after_seq", {"after_seq": 1}, dict(scope, result=recs))
    q("out of order", {}, dict(scope, result=[recs[1], recs[0]]))
    q("duplicate event", {}, dict(scope, result=[recs[0], dict(recs[0], seq=2)]))
    q("seq beyond checkpoint", {}, dict(scope, checkpoint=3, result=recs))
    q("filter breach", {"type": "knowledge.assess"}, dict(scope, result=recs))
    q("filter kept", {"type": "knowledge.assess"}, dict(scope, result=[recs[4]]))
    q("other service", {}, dict(scope, service="https://other.example", result=recs), )
    q("service with default port", {}, dict(scope, service=SERVICE + ":443", result=[]))
    q("service with a path", {}, dict(scope, service=SERVICE + "/", result=[]))
    q("origin with uppercase", {}, dict(scope, service="https://Knowledge.example", result=[]), "https://Knowledge.example")
    q("missing as_of", {}, {"service": SERVICE, "checkpoint": 6, "result": []})
    q("empty cursor", {}, dict(scope, result=[], next_cursor=""))
    q("extra member", {}, dict(scope, result=[], note="x"))
    q("bad record", {}, dict(scope, result=[dict(recs[0], seq="1")]))

    def bt(name: str, requested: list[str], response: dict[str, Any]) -> None:
        b.add("knowledge_batch_response", name, {"requested": requested, "response": response, "origin": SERVICE},
              code(K.validate_knowledge_batch_response, response, requested, SERVICE))

    ids = [r["envelope"]["hash"] for r in recs]
    gone = digest("gone")
    bt("all found", ids[:3], dict(scope, result=recs[:3], missing=[]))
    bt("one missing", [ids[0], gone, ids[1]], dict(scope, result=recs[:2], missing=[gone]))
    bt("out of order", ids[:2], dict(scope, result=[recs[1], recs[0]], missing=[]))
    bt("incomplete", ids[:3], dict(scope, result=recs[:2], missing=[]))
    bt("both lists", ids[:2], dict(scope, result=recs[:2], missing=[ids[0]]))
    bt("unrequested record", ids[:1], dict(scope, result=recs[:2], missing=[]))
    bt("next_cursor present", ids[:1], dict(scope, result=recs[:1], missing=[], next_cursor="x"))
    bt("missing order", [gone, digest("gone2")], dict(scope, result=[], missing=[digest("gone2"), gone]))

    def sr(name: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        b.add("knowledge_search_response", name, {"request": request, "response": response, "origin": SERVICE},
              code(K.validate_knowledge_search_response, response, request, SERVICE))

    hits = [{"record": r} for r in recs]
    lex = {"mode": "lexical", "id": "bm25"}
    ex = {"exhaustive": True, "reasons": []}
    sr("valid", {"text": "checked", "mode": "lexical"}, dict(scope, result=[hits[4]], ranking=lex, coverage=ex))
    sr("non-matching hit", {"text": "checked", "mode": "lexical"}, dict(scope, result=[hits[0]], ranking=lex, coverage=ex))
    sr("mode substituted", {"text": "checked", "mode": "lexical"}, dict(scope, result=[hits[4]], ranking={"mode": "hybrid", "id": "h"},
                                                                         coverage={"exhaustive": False, "reasons": ["approximate"]}))
    sr("over the limit", {"text": "statement", "mode": "lexical", "limit": 1}, dict(scope, result=hits[:2], ranking=lex, coverage=ex))
    sr("with explanation", {"text": "checked", "mode": "lexical"}, dict(scope, result=[dict(hits[4], explanation="why")], ranking=lex, coverage=ex))
    sr("empty explanation", {"text": "checked", "mode": "lexical"}, dict(scope, result=[dict(hits[4], explanation="")], ranking=lex, coverage=ex))
    sr("semantic exhaustive", {"text": "x", "mode": "semantic"}, dict(scope, result=[], ranking={"mode": "semantic", "id": "v"}, coverage=ex))
    sr("semantic approximate", {"text": "x", "mode": "semantic"}, dict(scope, result=hits[:3], ranking={"mode": "semantic", "id": "v"},
                                                                        coverage={"exhaustive": False, "reasons": ["approximate", "timeout"]}))
    sr("filter breach", {"text": "x", "mode": "semantic", "filters": {"type": "knowledge.retract"}},
       dict(scope, result=hits[:1], ranking={"mode": "semantic", "id": "v"}, coverage={"exhaustive": False, "reasons": ["approximate"]}))
    sr("next_cursor present", {"text": "checked", "mode": "lexical"}, dict(scope, result=[], ranking=lex, coverage=ex, next_cursor="c"))
    discovery_cases(b)
    tracker_cases(b, w, rng)


def discovery_cases(b: Builder) -> None:
    base = {"protocol": "agent-knowledge/1.0", "service": SERVICE}
    eps = {k: f"{SERVICE}/v1/knowledge/{k}" for k in ("events", "query", "batch")}
    search = dict(eps, search=f"{SERVICE}/v1/knowledge/search")
    docs = {
        "minimal": base,
        "endpoints": dict(base, endpoints=eps),
        "ranked search": dict(base, endpoints=search, features=["ranked-search"], search_modes=["lexical", "semantic"]),
        "ranked search without lexical": dict(base, endpoints=search, features=["ranked-search"], search_modes=["semantic"]),
        "ranked search without endpoint": dict(base, endpoints=eps, features=["ranked-search"], search_modes=["lexical"]),
        "ranked search without modes": dict(base, endpoints=search, features=["ranked-search"]),
        "search endpoint without the feature": dict(base, endpoints=search),
        "modes without the feature": dict(base, search_modes=["lexical"]),
        "other features": dict(base, features=["x", "y"]),
        "duplicate features": dict(base, features=["x", "x"]),
        "wrong protocol": dict(base, protocol="agent-knowledge/1.1"),
        "other service": dict(base, service="https://other.example"),
        "service with a slash": dict(base, service=SERVICE + "/"),
        "cross-origin endpoint": dict(base, endpoints={"events": "https://other.example/e"}),
        "endpoint with a query": dict(base, endpoints={"events": SERVICE + "/e?x=1"}),
        "endpoint with a fragment": dict(base, endpoints={"events": SERVICE + "/e#x"}),
        "endpoint on port 443": dict(base, endpoints={"events": SERVICE + ":443/e"}),
        "endpoint with uppercase host": dict(base, endpoints={"events": "https://KNOWLEDGE.example/e"}),
        "endpoint http": dict(base, endpoints={"events": "http://knowledge.example/e"}),
        "endpoint without path": dict(base, endpoints={"events": SERVICE}),
        "unknown endpoint key": dict(base, endpoints={"mirror": SERVICE + "/m"}),
        "endpoint with percent host": dict(base, endpoints={"events": "https://%6Bnowledge.example/e"}),
        "endpoint non-ASCII path": dict(base, endpoints={"events": SERVICE + "/caf\u00e9"}),
        "peers": dict(base, peers=["https://peer.example", "https://peer2.example:8443"]),
        "self peer": dict(base, peers=[SERVICE]),
        "peer with path": dict(base, peers=["https://peer.example/"]),
        "peer on 443": dict(base, peers=["https://peer.example:443"]),
        "33 peers": dict(base, peers=[f"https://p{i}.example" for i in range(33)]),
        "limits": dict(base, limits={"max_envelope_bytes": 262144}),
        "limit zero": dict(base, limits={"x": 0}),
        "extra member": dict(base, terms="https://x.example/terms"),
    }
    for name, doc in docs.items():
        b.add("knowledge_discovery", name, {"document": doc, "origin": SERVICE}, code(K.validate_knowledge_discovery, doc, SERVICE))
    ip = "https://[2001:db8::1]:8443"
    for name, endpoint in (("compressed", ip + "/e"), ("expanded", "https://[2001:db8:0:0:0:0:0:1]:8443/e"),
                           ("port with leading zero", "https://[2001:db8::1]:08443/e")):
        doc = {"protocol": "agent-knowledge/1.0", "service": ip, "endpoints": {"events": endpoint}}
        b.add("knowledge_discovery", f"IPv6 endpoint {name}", {"document": doc, "origin": ip}, code(K.validate_knowledge_discovery, doc, ip))


def tracker_cases(b: Builder, w: World, rng: random.Random) -> None:
    events = [w.question, w.hypothesis, w.observation, w.bob_obs, w.assess, w.retract, w.successor]
    store = K.KnowledgeStore(SERVICE, clock=lambda: NOW)
    for e in events:
        store.submit(copy.deepcopy(e))

    def pages(request: dict[str, Any]) -> list[dict[str, Any]]:
        out, req = [], dict(request)
        for _ in range(20):
            resp = store.query(copy.deepcopy(req))
            out.append({"request": dict(req), "response": resp})
            if "next_cursor" not in resp:
                return out
            req = dict(request, cursor=resp["next_cursor"])
        return out

    def add(name: str, seq: list[dict[str, Any]]) -> None:
        b.add("knowledge_pages", name, {"origin": SERVICE, "pages": seq}, tracker_verdict(seq))

    full = pages({"limit": 2})
    add("complete traversal", full)
    add("one page", pages({}))
    add("stops early", full[:2])
    add("starts with a cursor", full[1:])
    add("page repeated", full[:2] + full[1:])
    add("page skipped", full[:1] + full[2:])
    swapped = copy.deepcopy(full)
    swapped[1]["response"]["as_of"] = NOW + 1
    add("scope changed", swapped)
    changed = copy.deepcopy(full)
    changed[1]["request"]["limit"] = 3
    add("request changed", changed)
    backwards = copy.deepcopy(full)
    backwards[1]["response"]["result"] = full[0]["response"]["result"]
    add("moved backwards", backwards)
    after = pages({"limit": 3, "after_seq": 2})
    add("after_seq traversal", after)
    wrong_first = copy.deepcopy(after)
    wrong_first[0]["response"]["result"] = [record(w.question, 1)] + wrong_first[0]["response"]["result"][1:]
    add("first page at or below after_seq", wrong_first)
    for i in range(10):
        req = {"limit": rng.randint(1, 4)}
        if rng.random() < 0.5:
            req["type"] = rng.choice(list(K.KNOWLEDGE_EVENT_TYPES))
        seq = pages(req)
        if len(seq) > 1 and rng.random() < 0.5:
            j = rng.randrange(1, len(seq))
            seq = seq[:j] + seq[j + 1:]
        add(f"generated {i} {json.dumps(req)}", seq)


def tracker_verdict(seq: list[dict[str, Any]]) -> Any:
    t = K.KnowledgePageTracker(SERVICE)
    steps = []
    for p in seq:
        steps.append(code(t.accept, p["request"], p["response"]))
        if steps[-1] != "ok":
            break
    return {"steps": steps, "complete": t.complete, "checkpoint": t.checkpoint}


# --- lifecycle ---------------------------------------------------------------------------


def status_cases(b: Builder, w: World, rng: random.Random) -> None:
    """The lifecycle of an item in a dependency-closed known set: the SDK's
    materialize_knowledge, against the connector's status rule over the same
    events (the service has enforced the target rules, so they agree)."""
    pool = [w.question, w.hypothesis, w.observation, w.bob_obs, w.assess, w.assess_repro, w.successor, w.retract,
            w.retract_assess, w.full]
    needs = {id(w.assess): [w.observation], id(w.assess_repro): [w.observation], id(w.successor): [w.observation],
             id(w.retract): [w.observation], id(w.retract_assess): [w.assess, w.observation],
             id(w.full): [w.question, w.hypothesis, w.observation]}
    for i in range(30):
        chosen = rng.sample(pool, rng.randint(1, len(pool)))
        closed: list[dict[str, Any]] = []
        todo = list(chosen)
        while todo:
            e = todo.pop()
            if all(e is not c for c in closed):
                closed.append(e)
                todo.extend(needs.get(id(e), []))
        known = {e["hash"]: e for e in closed}
        view = K.materialize_knowledge(known)
        for target in closed:
            if target["event"]["type"] == K.KNOWLEDGE_RETRACT:
                continue
            v = view[target["hash"]]
            sdk = {"status": v["status"], "successors": v.get("successors", []), "assessments": v.get("assessments", [])}
            b.add("knowledge_status", f"set {i} target {target['hash'][:10]}",
                  {"known": list(known.values()), "target": target["hash"]}, sdk)


# --- everything --------------------------------------------------------------------------


def all_cases() -> list[Case]:
    rng = random.Random(RANDOM_SEED)
    b = Builder()
    w = World()
    url_cases(b, rng)
    envelope_cases(b, w, rng)
    submit_cases(b, w, rng)
    query_cases(b, w, rng)
    matches_cases(b, w, rng)
    store_cases(b, w, rng)
    search_cases(b, w, rng)
    response_cases(b, w, rng)
    status_cases(b, w, rng)
    for name, value in (("canonical", digest("x")), ("non-canonical", noncanonical(digest("x"))), ("padded", digest("x") + "="),
                        ("42 characters", digest("x")[:42]), ("44 characters", digest("x") + "A"), ("standard alphabet", digest("x").replace("-", "+").replace("_", "/")),
                        ("empty", ""), ("31 bytes", b64(bytes(31))), ("33 bytes", b64(bytes(33)))):
        b.add("knowledge_id", name, {"id": value}, code(K.validate_knowledge_id, value))
    for name, dg, data in (("no digest", None, b"x"), ("matched", digest("bytes"), b"bytes"), ("mismatched", digest("bytes"), b"other"),
                           ("empty bytes", digest(""), b""), ("unavailable", digest("bytes"), None),
                           ("non-canonical digest", noncanonical(digest("bytes")), b"bytes")):
        def ev(dg=dg, data=data):
            try:
                return K.verify_knowledge_evidence(dg, data)
            except AgentProtocolError as err:
                return err.code
        b.add("knowledge_evidence", name, {"digest": dg, "data": None if data is None else b64(data)}, ev())
    return b.cases


# --- decided differences -----------------------------------------------------------------

STRICTER_URL_REASON = ("the Python SDK accepts this URL and the Rust SDK refuses it (RFC 3986 \"format\": \"uri\" or WHATWG "
                       "host parsing); apconnect refuses it so a service never holds an event one SDK's reader refuses")


def known_differences(cases: list[Case]) -> dict[str, dict[str, Any]]:
    """case id -> {"go": apconnect's verdict, "why": the reason}. Every case
    built from a URLS_STRICTER URL that the Python SDK accepts: the URL
    itself, and the envelopes and payloads carrying it."""
    stricter = {u for _, u in URLS_STRICTER}
    out: dict[str, dict[str, Any]] = {}
    for c in cases:
        urls = set()
        if c.kind == "knowledge_url":
            urls.add(c.input["url"])
        elif c.kind == "knowledge_envelope":
            p = c.input["envelope"].get("event", {}).get("payload", {}) if isinstance(c.input["envelope"], dict) else {}
            if isinstance(p, dict):
                urls.add(p.get("license"))
                urls.update(e.get("url") for e in p.get("evidence", []) if isinstance(e, dict))
                urls.update(b["profile"].get("url") for b in p.get("profiles", []) if isinstance(b, dict) and isinstance(b.get("profile"), dict))
        elif c.kind == "knowledge_discovery":
            urls.update(c.input["document"].get("endpoints", {}).values())
        hit = urls & stricter
        if hit and c.sdk == "ok":
            go = "invalid_discovery" if c.kind == "knowledge_discovery" else "invalid_event"
            out[c.id] = {"go": go, "why": STRICTER_URL_REASON}
    return out
