"""Agent Delegation differential cases: the same inputs through the reference
SDK (agent-protocols 0.12.6, Python) and through apconnect's
host/proto/delegation (the goverdict program, test/interop/goverdict/
delegation.go).

Cases are generated: a small principal with every kind of controller
(restricted, unrestricted, a restricted successor, signing-only, retired,
compromised), signed grants and revocations, histories materialized by the
SDK; then mutations of the valid cases that must change the verdict (a
retired controller, a scope or audience outside the ceiling, an expired
grant, another subject on replacement, a stale status, a hidden later
event, dot-segment ids, a copy read away from its id, ...). The SDK decides
every expected verdict; nothing here is hand-labelled except KNOWN, the
differences apconnect keeps on purpose.

Codes. The SDK raises the eight Agent Delegation codes and a few shared
ones (invalid_event_hash, invalid_signature, invalid_request) where a
service must, and local codes elsewhere (invalid_delegation, invalid_url,
invalid_agent_id, invalid_principal, invalid_event_protocol, ...).
apconnect returns the wire code a service sends instead: principal_unresolvable
for a principal document that cannot be used (malformed, or read away from
its id), invalid_event for an event, invalid_request for a query, and
invalid_delegation for a service view that does not verify. So a case
expects the SDK's code exactly when it is one of EXACT, and otherwise the
wire codes of the check that failed (`expect`).
"""

from __future__ import annotations

import copy
import json
import subprocess
from dataclasses import dataclass, field
from typing import Any, Callable

from agent_protocols import (
    AgentProtocolError,
    AgentSigner,
    is_controller_challenge,
    verify_controller_challenge,
)
from agent_protocols.delegation import (
    audit_delegation_history,
    controller_covers_credential,
    delegation_grant_event,
    delegation_revoke_event,
    is_principal_alias,
    materialize_delegation_credential,
    validate_audience,
    validate_controller_enumeration,
    validate_delegation_acceptance,
    validate_delegation_envelope,
    validate_delegation_event_authority,
    validate_delegation_id,
    validate_delegation_query_request,
    validate_delegation_use,
    validate_historical_delegation,
    validate_principal_document,
    validate_principal_resolution,
    verify_delegation_credential,
)

from harness import REPO, binary

VECTORS = json.loads((REPO / "host/proto/delegation/testdata/1.0.vectors.json").read_text())

# The codes both sides must agree on exactly.
EXACT = frozenset({
    "principal_not_canonical", "controller_not_current", "delegation_not_permitted",
    "delegation_ceiling_exceeded", "credential_not_found", "credential_identity_mismatch",
    "grant_expired", "invalid_event_hash", "invalid_signature",
})

# The wire codes apconnect gives a refusal the SDK reports with a local code,
# by the check that refused.
DOCUMENT = frozenset({"principal_unresolvable"})
EVENT = frozenset({"invalid_event", "invalid_actor"})
REQUEST = frozenset({"invalid_request"})
VIEW = frozenset({"invalid_delegation"})


@dataclass
class Case:
    id: str
    kind: str
    input: dict[str, Any]
    sdk: Any  # the SDK's own verdict, for messages
    expect: Any  # a frozenset of allowed Go codes, or the exact Go verdict
    note: str = ""

    def wire(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "input": self.input}

    def sdk_accepts(self) -> bool:
        """Whether the SDK accepted the input (for the generator's balance)."""
        if isinstance(self.sdk, bool):
            return self.sdk
        if isinstance(self.sdk, str):
            return self.sdk == "ok"
        for k, ok in (("usable", True), ("resolution", "ok"), ("valid", True)):
            if k in self.sdk:
                return self.sdk[k] == ok
        return True  # a materialized credential

    def accepts(self, go: Any) -> bool:
        if isinstance(self.expect, frozenset):
            return isinstance(go, str) and go in self.expect
        if self.kind == "delegation_verify" and isinstance(go, dict) and isinstance(self.expect, dict):
            return verdicts_agree(self.expect, go)
        return go == self.expect


def verdicts_agree(sdk: dict[str, Any], go: dict[str, Any]) -> bool:
    """Verification verdicts agree on verified and usable and on every
    reason; when the latest grant did not verify, the first reason is the
    failed check's own message, which each side words itself."""
    if (sdk["verified"], sdk["usable"], len(sdk["reasons"])) != (go["verified"], go["usable"], len(go["reasons"])):
        return False
    skip = 0 if sdk["verified"] else 1
    return sdk["reasons"][skip:] == go["reasons"][skip:]


@dataclass
class Cases:
    cases: list[Case] = field(default_factory=list)

    def add(self, kind: str, name: str, input: dict[str, Any], sdk: Any, expect: Any, note: str = "") -> None:
        cid = f"{kind}: {name}"
        if any(c.id == cid for c in self.cases):
            raise ValueError(f"duplicate case id {cid}")
        self.cases.append(Case(cid, kind, input, sdk, expect, note))


def sdk_code(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    """"ok" or the SDK's code; any other exception (the SDK tripping over a
    malformed value) is a refusal without a code."""
    try:
        fn(*args, **kwargs)
        return "ok"
    except AgentProtocolError as err:
        return err.code
    except (KeyError, TypeError, ValueError, AttributeError):
        return "uncoded"


def expect(sdk: str, generic: frozenset[str]) -> frozenset[str]:
    if sdk == "ok":
        return frozenset({"ok"})
    if sdk in EXACT:
        return frozenset({sdk})
    return generic


# Differences apconnect keeps on purpose, by case id: the Go verdict and why.
# Each follows the Rust crate of the same SDK release where the Python
# package is more lenient. The generators add to it beside the case.
KNOWN: dict[str, dict[str, Any]] = {}


# --- the world -------------------------------------------------------------

P = "https://example.com/p"
ALIAS = "https://example.com/alias"
SERVICE = "https://example.com"
DM = "https://dmsg.net"
TLO = "https://tokenlist.ing"


def key(n: int) -> AgentSigner:
    return AgentSigner.from_seed(bytes([n]) * 32)


R, U, SUC, TL, RET, CMP, SUBJ, OTHER, AGA_KEY = (key(n) for n in range(71, 80))
AGA = AGA_KEY.agent_id()
SIGNERS = {s.agent_id(): s for s in (R, U, SUC, TL, RET, CMP, SUBJ, OTHER)}


def controller(s: AgentSigner, source: str, valid_from: int, delegation: Any = None, **extra: Any) -> dict[str, Any]:
    c = {"id": s.agent_id(), "source": source, "valid_from": valid_from}
    if delegation is not None:
        c["delegation"] = delegation
    c.update(extra)
    return c


def document() -> dict[str, Any]:
    """The principal: R restricted to draft/inbox for dmsg and a relying
    agent; U unrestricted; SUC restricted from 600; TL signing-only; RET
    retired at 600; CMP compromised from 300, retired at 700."""
    return {
        "protocol": "agent-delegation/1.0", "id": P, "updated_at": 2000, "delegation_service": SERVICE,
        "aliases": [ALIAS],
        "controllers": [
            controller(R, DM, 100, {"scopes": ["draft", "inbox"], "audiences": [DM, AGA]}, name="dmsg signer"),
            controller(U, "local", 100, "*"),
            controller(SUC, DM, 600, {"scopes": ["draft", "inbox", "meeting"], "audiences": [DM]}),
            controller(TL, TLO, 100),
        ],
        "retired_controllers": [
            controller(RET, DM, 100, {"scopes": ["draft"], "audiences": [DM]}, retired_at=600),
            controller(CMP, DM, 100, {"scopes": ["draft"], "audiences": [DM]}, retired_at=700, invalid_from=300),
        ],
    }


def payload(**edit: Any) -> dict[str, Any]:
    p = {"id": "del_a", "principal_id": P, "subject": SUBJ.agent_id(), "scopes": ["draft"], "audiences": [DM],
         "expires_at": 1900}
    for k, v in edit.items():
        if v is DROP:
            p.pop(k, None)
        else:
            p[k] = v
    return p


DROP = object()


def grant(actor: AgentSigner, created: int = 200, nonce: int = 1, **edit: Any) -> dict[str, Any]:
    return actor.sign_event(delegation_grant_event(actor.agent_id(), created, nonce, payload(**edit)))


def revoke(actor: AgentSigner, created: int = 400, nonce: int = 2, did: str = "del_a", **extra: Any) -> dict[str, Any]:
    p = {"id": did, "principal_id": P}
    p.update(extra)
    return actor.sign_event(delegation_revoke_event(actor.agent_id(), created, nonce, p))


def resign(env: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """The envelope's event, edited, signed again by its actor."""
    event = copy.deepcopy(env["event"])
    edit(event)
    return SIGNERS[env["event"]["actor"]].sign_event(event)


def materialize(env: dict[str, Any], at: int, previous: dict[str, Any] | None = None) -> dict[str, Any]:
    return materialize_delegation_credential(env, accepted_at=at, previous=previous)


def rec(env: dict[str, Any], at: int) -> dict[str, Any]:
    return {"envelope": env, "accepted_at": at}


# --- principal documents ---------------------------------------------------


def set_in(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        target = doc
        for p in path[:-1]:
            target = target[p]
        if value is DROP:
            del target[path[-1]]
        else:
            target[path[-1]] = value
    return edit


C0 = ["controllers", 0]
RT0 = ["retired_controllers", 0]

DOCUMENT_MUTATIONS: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
    ("no delegation_service", set_in(["delegation_service"], DROP)),
    ("delegation_service with a path", set_in(["delegation_service"], SERVICE + "/v1/delegations/query")),
    ("delegation_service with a slash", set_in(["delegation_service"], SERVICE + "/")),
    ("delegation_service over http", set_in(["delegation_service"], "http://example.com")),
    ("delegation_service uppercase", set_in(["delegation_service"], "https://EXAMPLE.com")),
    ("delegation_service default port", set_in(["delegation_service"], SERVICE + ":443")),
    ("delegation_service other port", set_in(["delegation_service"], SERVICE + ":8443")),
    ("delegation_service empty", set_in(["delegation_service"], "")),
    ("delegation_service null", set_in(["delegation_service"], None)),
    ("id over http", set_in(["id"], "http://example.com/p")),
    ("id without host", set_in(["id"], "https://")),
    ("id with a bad port", set_in(["id"], "https://example.com:70000/p")),
    ("id with a query", set_in(["id"], "https://example.com/p?x=1")),
    ("id missing", set_in(["id"], DROP)),
    ("protocol of a draft", set_in(["protocol"], "agent-delegation/0.9")),
    ("protocol missing", set_in(["protocol"], DROP)),
    ("updated_at negative", set_in(["updated_at"], -1)),
    ("updated_at a string", set_in(["updated_at"], "2000")),
    ("updated_at a bool", set_in(["updated_at"], True)),
    ("updated_at before a binding", set_in(["updated_at"], 500)),
    ("updated_at at the largest safe integer", set_in(["updated_at"], 2**53 - 1)),
    ("controllers not a list", set_in(["controllers"], {})),
    ("controllers missing", set_in(["controllers"], DROP)),
    ("a bare Agent ID in controllers", set_in(C0, R.agent_id())),
    ("controller id not an Agent ID", set_in(C0 + ["id"], "did:agent:short")),
    ("controller id without prefix", set_in(C0 + ["id"], R.agent_id()[len("did:agent:"):])),
    ("source uppercase", set_in(C0 + ["source"], "https://DMSG.NET")),
    ("source with a path", set_in(C0 + ["source"], DM + "/")),
    ("source over http", set_in(C0 + ["source"], "http://dmsg.net")),
    ("source with user info", set_in(C0 + ["source"], "https://x@dmsg.net")),
    ("source IPv6", set_in(C0 + ["source"], "https://[::1]")),
    ("source empty", set_in(C0 + ["source"], "")),
    ("source LOCAL", set_in(C0 + ["source"], "LOCAL")),
    ("valid_from missing", set_in(C0 + ["valid_from"], DROP)),
    ("valid_from a bool", set_in(C0 + ["valid_from"], False)),
    ("valid_from after updated_at", set_in(C0 + ["valid_from"], 2001)),
    ("controller name empty", set_in(C0 + ["name"], "")),
    ("controller name blank", set_in(C0 + ["name"], "   ")),
    ("controller name null", set_in(C0 + ["name"], None)),
    ("delegation null", set_in(C0 + ["delegation"], None)),
    ("delegation empty object", set_in(C0 + ["delegation"], {})),
    ("delegation another string", set_in(C0 + ["delegation"], "all")),
    ("delegation a list", set_in(C0 + ["delegation"], ["*"])),
    ("delegation with an unknown restriction", set_in(C0 + ["delegation", "subjects"], ["*"])),
    ("delegation without audiences", set_in(C0 + ["delegation", "audiences"], DROP)),
    ("ceiling scopes empty", set_in(C0 + ["delegation", "scopes"], [])),
    ("ceiling scopes wildcard", set_in(C0 + ["delegation", "scopes"], ["*"])),
    ("ceiling scopes duplicated", set_in(C0 + ["delegation", "scopes"], ["draft", "draft"])),
    ("ceiling scope empty string", set_in(C0 + ["delegation", "scopes"], [""])),
    ("ceiling scope not a string", set_in(C0 + ["delegation", "scopes"], [5])),
    ("ceiling audience wildcard", set_in(C0 + ["delegation", "audiences"], ["*"])),
    ("ceiling audience with a path", set_in(C0 + ["delegation", "audiences"], [DM + "/x"])),
    ("ceiling audience a short Agent ID", set_in(C0 + ["delegation", "audiences"], ["did:agent:short"])),
    ("ceiling audience an Agent ID", set_in(C0 + ["delegation", "audiences"], [AGA])),
    ("current controller with retired_at", set_in(C0 + ["retired_at"], 500)),
    ("current controller with invalid_from", set_in(C0 + ["invalid_from"], 500)),
    ("current controller with a null retired_at", set_in(C0 + ["retired_at"], None)),
    ("retired without retired_at", set_in(RT0 + ["retired_at"], DROP)),
    ("retired_at before valid_from", set_in(RT0 + ["retired_at"], 99)),
    ("retired_at after updated_at", set_in(RT0 + ["retired_at"], 2001)),
    ("retired_at equal to valid_from", set_in(RT0 + ["retired_at"], 100)),
    ("invalid_from after retired_at", set_in(RT0 + ["invalid_from"], 601)),
    ("invalid_from before valid_from", set_in(RT0 + ["invalid_from"], 99)),
    ("invalid_from equal to retired_at", set_in(RT0 + ["invalid_from"], 600)),
    ("invalid_from a string", set_in(RT0 + ["invalid_from"], "300")),
    ("retired_controllers null", set_in(["retired_controllers"], None)),
    ("retired_controllers empty", set_in(["retired_controllers"], [])),
    ("aliases empty", set_in(["aliases"], [])),
    ("alias over http", set_in(["aliases"], ["http://example.com/a"])),
    ("alias wildcard", set_in(["aliases"], ["*"])),
    ("alias duplicated", set_in(["aliases"], [ALIAS, ALIAS])),
    ("alias empty string", set_in(["aliases"], [""])),
    ("aliases not a list", set_in(["aliases"], ALIAS)),
    ("avatar over http", set_in(["avatar_url"], "http://example.com/a.png")),
    ("avatar over https", set_in(["avatar_url"], "https://example.com/a.png")),
    ("display members", lambda d: d.update(type="organization", name="Acme", description="A principal")),
    ("unknown member", set_in(["delegation_query_url"], SERVICE + "/v1/delegations/query")),
    ("supersedes is ignored", set_in(C0 + ["supersedes"], [RET.agent_id()])),
]


def duplicate_key(doc: dict[str, Any]) -> None:
    if not doc["controllers"]:
        raise LookupError
    dup = copy.deepcopy(doc["controllers"][0])
    dup["retired_at"] = dup["valid_from"]
    doc.setdefault("retired_controllers", []).append(dup)


def duplicate_current(doc: dict[str, Any]) -> None:
    if not doc["controllers"]:
        raise LookupError
    doc["controllers"].append(copy.deepcopy(doc["controllers"][0]))


DOCUMENT_MUTATIONS += [
    ("a key current and retired", duplicate_key),
    ("a key twice among current controllers", duplicate_current),
]


def document_bases() -> list[tuple[str, dict[str, Any]]]:
    signing_only = {"protocol": "agent-delegation/1.0", "id": P, "updated_at": 2000,
                    "controllers": [controller(TL, "local", 100)],
                    "retired_controllers": [controller(RET, DM, 100, retired_at=600)]}
    return [("principal", document()), ("signing-only principal", signing_only)]


def principal_cases(out: Cases) -> None:
    for base_name, base in document_bases():
        for name, edit in DOCUMENT_MUTATIONS:
            doc = copy.deepcopy(base)
            try:
                edit(doc)
            except (LookupError, TypeError):
                continue  # the mutation does not apply to this base
            sdk = sdk_code(validate_principal_document, doc)
            out.add("delegation_principal", f"{base_name}: {name}", {"document": doc}, sdk, expect(sdk, DOCUMENT))
    # Kept differences: the Python SDK does not look at the display members;
    # the Rust crate's typed document (and apconnect) require their types.
    for name, edit in [("display name a number", set_in(["name"], 5)),
                       ("link without rel", set_in(["links"], [{"name": "home", "url": "https://example.com"}])),
                       ("extra a string", set_in(["extra"], "x"))]:
        doc = document()
        edit(doc)
        sdk = sdk_code(validate_principal_document, doc)
        out.add("delegation_principal", f"principal: {name}", {"document": doc}, sdk, expect(sdk, DOCUMENT))
        KNOWN[f"delegation_principal: principal: {name}"] = {
            "go": "principal_unresolvable", "why": "typed display members (Rust crate)"}
    for url in (P, ALIAS, "https://impostor.example/p", P + "/", "https://EXAMPLE.com/p"):
        doc = document()
        sdk_res = sdk_code(validate_principal_resolution, doc, url)
        verdict = {"resolution": "ok" if sdk_res == "ok" else "principal_unresolvable",
                   "alias": is_principal_alias(doc, url)}
        out.add("delegation_resolution", f"read at {url}", {"document": doc, "resolved_url": url},
                {"resolution": sdk_res, "alias": verdict["alias"]}, verdict)


def id_and_audience_cases(out: Cases) -> None:
    ids = [
        "...", ".a", "a.", "~", "-", "_", "a..b", "./a", "a b", "a\tb", "%2e%2e", "del_" + "x" * 124, "x" * 128,
        "ａ", "a\u0000b", "A-Z.a~z_0-9"]
    for value in dict.fromkeys(ids):
        sdk = sdk_code(validate_delegation_id, value)
        out.add("delegation_id", repr(value), {"value": value}, sdk, expect(sdk, REQUEST))
    audiences = [
        "https://dmsg.net:443", "https://dmsg.net:0", "https://127.0.0.1", "https://[::1]:8443", "https://xn--bcher-kva.example",
        "https://dmsg.net.", "did:agent:" + "A" * 43, AGA + "x", "did:web:example.com", "DID:agent:" + AGA[10:]]
    for value in dict.fromkeys(audiences):
        sdk = sdk_code(validate_audience, value)
        out.add("delegation_audience", repr(value), {"value": value}, sdk, expect(sdk, REQUEST))



# --- envelopes ---------------------------------------------------------------

# Payload edits of a grant, signed again: each must be refused, or not, as
# the SDK says.
GRANT_EDITS: list[tuple[str, dict[str, Any]]] = [
    ("id dot segment", {"id": ".."}),
    ("id single dot", {"id": "."}),
    ("id with a slash", {"id": "a/b"}),
    ("id empty", {"id": ""}),
    ("id of 129 characters", {"id": "x" * 129}),
    ("id of 128 characters", {"id": "x" * 128}),
    ("id percent-encoded", {"id": "a%20b"}),
    ("id not a string", {"id": 7}),
    ("id missing", {"id": DROP}),
    ("principal over http", {"principal_id": "http://example.com/p"}),
    ("principal without host", {"principal_id": "https://"}),
    ("principal with a bad port", {"principal_id": "https://example.com:99999/p"}),
    ("principal missing", {"principal_id": DROP}),
    ("subject not an Agent ID", {"subject": "did:agent:short"}),
    ("subject missing", {"subject": DROP}),
    ("scopes empty", {"scopes": []}),
    ("scopes wildcard", {"scopes": ["*"]}),
    ("scopes duplicated", {"scopes": ["draft", "draft"]}),
    ("scope blank", {"scopes": [" "]}),
    ("scopes not a list", {"scopes": "draft"}),
    ("scopes missing", {"scopes": DROP}),
    ("audiences empty", {"audiences": []}),
    ("audience with a path", {"audiences": [DM + "/"]}),
    ("audience over http", {"audiences": ["http://dmsg.net"]}),
    ("audience an Agent ID", {"audiences": [AGA]}),
    ("audience a short Agent ID", {"audiences": ["did:agent:short"]}),
    ("audiences duplicated", {"audiences": [DM, DM]}),
    ("audiences missing", {"audiences": DROP}),
    ("constraints a list", {"constraints": ["x"]}),
    ("constraints an object", {"constraints": {"max": 3, "nested": {"ok": True}}}),
    ("relationship", {"relationship": "assistant"}),
    ("relationship empty", {"relationship": ""}),
    ("not_before negative", {"not_before": -1}),
    ("not_before a float", {"not_before": 1.5}),
    ("not_before before expires_at", {"not_before": 300}),
    ("not_before at expires_at", {"not_before": 1900}),
    ("expires_at at created_at", {"expires_at": 200}),
    ("expires_at before created_at", {"expires_at": 199}),
    ("no expires_at", {"expires_at": DROP}),
    ("expires_at a bool", {"expires_at": True}),
]


def edited_grant(edit: dict[str, Any]) -> dict[str, Any]:
    return grant(R, **edit)


def envelope_cases(out: Cases) -> None:
    base = grant(R)
    for name, edit in [("grant", {})] + GRANT_EDITS:
        env = edited_grant(edit)
        sdk = sdk_code(validate_delegation_envelope, env)
        out.add("delegation_envelope", f"grant: {name}", {"envelope": env}, sdk, expect(sdk, EVENT))
    revokes = [
        ("revoke", revoke(U)),
        ("revoke with a reason", revoke(U, reason="rotated")),
        ("revoke of a dot segment", revoke(U, did="..")),
        ("revoke over http", resign(revoke(U), lambda e: e["payload"].update(principal_id="http://example.com/p"))),
        ("revoke without id", resign(revoke(U), lambda e: e["payload"].pop("id"))),
    ]
    for name, env in revokes:
        sdk = sdk_code(validate_delegation_envelope, env)
        out.add("delegation_envelope", name, {"envelope": env}, sdk, expect(sdk, EVENT))

    def flip(s: str) -> str:
        return s[:5] + ("B" if s[5] == "A" else "A") + s[6:]

    tampered = [
        ("hash changed", dict(base, hash=flip(base["hash"]))),
        ("signature changed", dict(base, signature=flip(base["signature"]))),
        ("signature of another event", dict(base, signature=grant(R, nonce=2)["signature"])),
        ("payload changed after signing", {**base, "event": {**base["event"], "payload": payload(scopes=["inbox"])}}),
        ("actor changed after signing", {**base, "event": {**base["event"], "actor": U.agent_id()}}),
        ("other protocol", resign(base, lambda e: e.update(protocol="agent-delegation/2.0"))),
        ("unknown type", resign(base, lambda e: e.update(type="delegation.suspend"))),
        ("grant typed as revoke", resign(revoke(U), lambda e: e.update(type="delegation.grant"))),
        ("Discourse field room_id", resign(base, lambda e: e.update(room_id="room1"))),
        ("unknown event field", resign(base, lambda e: e.update(extra=1))),
    ]
    for name, env in tampered:
        sdk = sdk_code(validate_delegation_envelope, env)
        out.add("delegation_envelope", name, {"envelope": env}, sdk, expect(sdk, EVENT))
    # Kept differences: the Python SDK reads payloads open; the Rust crate
    # (and apconnect) close them, since the typed payload re-serializes
    # without the extra member and no longer matches the signed hash.
    for name, env in [
        ("grant with an unknown payload member", edited_grant({"note": "x"})),
        ("grant with a numeric relationship", edited_grant({"relationship": 5})),
        ("revoke with a grant member", revoke(U, subject=SUBJ.agent_id())),
    ]:
        sdk = sdk_code(validate_delegation_envelope, env)
        out.add("delegation_envelope", name, {"envelope": env}, sdk, expect(sdk, EVENT))
        KNOWN[f"delegation_envelope: {name}"] = {"go": "invalid_event", "why": "closed payloads (Rust crate, spec schema)"}


# --- authority and acceptance ---------------------------------------------

G_A = grant(R)  # del_a by R at 200
CRED_A = materialize(G_A, 250)
CRED_WIDE = materialize(grant(U, nonce=9, scopes=["draft", "admin"], id="del_w"), 250)


def scenarios() -> list[tuple[str, dict[str, Any], int, dict[str, Any] | None]]:
    """(name, envelope, accepted_at, previous) of valid and invalid events
    against document()."""
    return [
        ("R grants inside its ceiling", G_A, 250, None),
        ("R grants to a relying agent", grant(R, nonce=2, id="del_g", audiences=[AGA]), 250, None),
        ("R grants an unlisted scope", grant(R, nonce=3, scopes=["admin"]), 250, None),
        ("R grants another application", grant(R, nonce=4, audiences=[TLO]), 250, None),
        ("R grants another agent audience", grant(R, nonce=5, audiences=[OTHER.agent_id()]), 250, None),
        ("TL grants without authority", grant(TL), 250, None),
        ("OTHER is no controller", grant(OTHER), 250, None),
        ("U grants anything", grant(U, scopes=["admin", "draft"], audiences=[TLO]), 250, None),
        ("U replaces R's credential", grant(U, created=300, nonce=2), 300, CRED_A),
        ("R replaces U's credential inside its ceiling", grant(R, created=300, nonce=6),
         300, materialize(grant(U, nonce=8), 250)),
        ("R replaces a credential outside its ceiling", grant(R, created=300, nonce=7, id="del_w"), 300, CRED_WIDE),
        ("U revokes R's credential", revoke(U), 450, CRED_A),
        ("R revokes its own credential", revoke(R, created=300, nonce=8), 300, CRED_A),
        ("R revokes a credential outside its ceiling", revoke(R, created=300, nonce=9, did="del_w"), 300, CRED_WIDE),
        ("revocation without a credential", revoke(U), 450, None),
        ("replacement to another subject", grant(U, created=300, nonce=3, subject=OTHER.agent_id()), 300, CRED_A),
        ("grant names an alias", grant(U, nonce=4, principal_id=ALIAS), 250, None),
        ("grant already expired", grant(U, nonce=5, expires_at=300), 400, None),
        ("SUC grants before its binding", grant(SUC, created=500), 700, None),
        ("SUC revokes RET's credential", revoke(SUC, created=700, nonce=1),
         700, materialize(grant(RET), 250)),
        ("RET grants while bound", grant(RET), 250, None),
        ("RET grants backdated", grant(RET, created=500, nonce=2), 800, None),
        ("CMP grants before invalid_from", grant(CMP), 250, None),
        ("CMP grant accepted after invalid_from", grant(CMP, nonce=2), 350, None),
        ("acceptance before the previous one", grant(U, created=200, nonce=6), 240, CRED_A),
    ]


def with_actor_retired(doc: dict[str, Any], actor: str, at: int) -> None:
    for i, c in enumerate(doc["controllers"]):
        if c["id"] == actor:
            moved = doc["controllers"].pop(i)
            moved["retired_at"] = at
            doc["retired_controllers"].append(moved)
            return
    raise LookupError


def without_authority(doc: dict[str, Any], actor: str) -> None:
    for c in doc["controllers"] + doc["retired_controllers"]:
        if c["id"] == actor and "delegation" in c:
            del c["delegation"]
            return
    raise LookupError


def narrowed(doc: dict[str, Any], actor: str) -> None:
    for c in doc["controllers"] + doc["retired_controllers"]:
        if c["id"] == actor and isinstance(c.get("delegation"), dict):
            c["delegation"] = {"scopes": ["inbox"], "audiences": [DM]}
            return
    raise LookupError


DOC_VARIANTS: list[tuple[str, Callable[[dict[str, Any], str], None]]] = [
    ("actor retired at 400", lambda d, a: with_actor_retired(d, a, 400)),
    ("actor retired at 240", lambda d, a: with_actor_retired(d, a, 240)),
    ("actor without authority", without_authority),
    ("actor's ceiling narrowed", narrowed),
    ("document without delegation_service", lambda d, a: d.pop("delegation_service")),
    ("document of another id", lambda d, a: d.update(id=ALIAS, aliases=[P])),
]

PREVIOUS_VARIANTS: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
    ("previous of another subject", lambda p: p.update(subject=OTHER.agent_id())),
    ("previous of another principal", lambda p: p.update(principal_id=ALIAS)),
    ("previous of another id", lambda p: p.update(id="del_z")),
    ("previous of another protocol", lambda p: p.update(protocol="agent-delegation/0.9")),
    ("previous accepted later", lambda p: p.update(accepted_at=2000)),
    ("previous outside every restricted ceiling", lambda p: p.update(scopes=["draft", "admin"])),
    ("previous for another audience", lambda p: p.update(audiences=[TLO])),
    ("previous revoked", lambda p: p.update(status="revoked")),
    ("previous with empty scopes", lambda p: p.update(scopes=[])),
]


def authority_expect(doc: dict[str, Any], sdk: str, generic: frozenset[str]) -> frozenset[str]:
    """A local refusal of a check whose document is itself invalid is the
    document's: principal_unresolvable."""
    if sdk not in EXACT and sdk != "ok" and sdk_code(validate_principal_document, doc) != "ok":
        return DOCUMENT
    return expect(sdk, generic)


def add_acceptance(out: Cases, name: str, env: dict[str, Any], doc: dict[str, Any], at: int,
                   previous: dict[str, Any] | None, modes: tuple[str, ...] = ("live", "historical"),
                   resolved: str | None = None) -> None:
    for mode in modes:
        url = resolved or doc["id"]
        if mode == "live":
            sdk = sdk_code(validate_delegation_acceptance, env, doc, url, at, previous)
        else:
            sdk = sdk_code(validate_historical_delegation, rec(env, at), doc, url, previous)
        generic = EVENT | DOCUMENT | VIEW
        if sdk_code(validate_delegation_envelope, env) not in ("ok",) and sdk not in EXACT:
            generic = EVENT
        elif url != doc["id"] and sdk not in EXACT:
            generic = DOCUMENT
        out.add("delegation_acceptance", f"{mode}: {name}",
                {"mode": mode, "envelope": env, "document": doc, "resolved_url": url, "accepted_at": at,
                 "previous": previous}, sdk, authority_expect(doc, sdk, generic))


def acceptance_cases(out: Cases) -> None:
    for name, env, at, previous in scenarios():
        actor = env["event"]["actor"]
        add_acceptance(out, name, env, document(), at, previous)
        for t in (99, 100, 299, 300, 599, 600, 699, 700, 1899, 1900):
            add_acceptance(out, f"{name}, accepted at {t}", env, document(), t, previous)
        for dname, dedit in DOC_VARIANTS:
            doc = document()
            try:
                dedit(doc, actor)
            except LookupError:
                continue
            add_acceptance(out, f"{name}, {dname}", env, doc, at, previous)
        if previous is not None:
            for pname, pedit in PREVIOUS_VARIANTS:
                p = copy.deepcopy(previous)
                pedit(p)
                add_acceptance(out, f"{name}, {pname}", env, document(), at, p, modes=("live",))
        add_acceptance(out, f"{name}, copy read at the alias", env, document(), at, previous, modes=("live",),
                       resolved=ALIAS)
        # The pre-signing check: the unsigned event at the signing time.
        for t in (at, 650):
            sdk = sdk_code(validate_delegation_event_authority, env["event"], document(), t, previous)
            out.add("delegation_authority", f"{name}, signed at {t}",
                    {"event": env["event"], "document": document(), "accepted_at": t, "previous": previous},
                    sdk, authority_expect(document(), sdk, EVENT | DOCUMENT | VIEW))


def materialize_cases(out: Cases) -> None:
    for name, env, at, previous in scenarios():
        variants = [(name, at, previous)] + [(f"{name}, accepted at {t}", t, previous) for t in (199, 1899, 1900)]
        if previous is not None:
            for pname, pedit in PREVIOUS_VARIANTS:
                p = copy.deepcopy(previous)
                pedit(p)
                variants.append((f"{name}, {pname}", at, p))
        for vname, t, p in variants:
            try:
                sdk: Any = materialize(env, t, p)
                expected: Any = sdk
            except AgentProtocolError as err:
                sdk = err.code
                expected = expect(sdk, EVENT | VIEW)
            out.add("delegation_materialize", vname, {"envelope": env, "accepted_at": t, "previous": p}, sdk, expected)



# --- verification and audit -------------------------------------------------


def histories() -> list[tuple[str, list[dict[str, Any]], dict[str, Any]]]:
    """(name, records, the credential after them), built with the SDK."""
    g1 = G_A
    c1 = materialize(g1, 250)
    r1 = revoke(U)
    c2 = materialize(r1, 450, c1)
    g3 = grant(U, created=480, nonce=3, scopes=["draft", "inbox"], relationship="assistant",
               constraints={"limit": 3}, not_before=500)
    c3 = materialize(g3, 500, c1)
    g4 = grant(U, created=600, nonce=4)
    c4 = materialize(g4, 600, c2)
    g5 = grant(RET, id="del_o")
    g6 = grant(CMP, id="del_c", nonce=2)
    g7 = grant(R, nonce=11, id="del_n", not_before=800)
    return [
        ("a grant", [rec(g1, 250)], c1),
        ("a revoked grant", [rec(g1, 250), rec(r1, 450)], c2),
        ("a replaced grant", [rec(g1, 250), rec(g3, 500)], c3),
        ("a reactivated grant", [rec(g1, 250), rec(r1, 450), rec(g4, 600)], c4),
        ("a retired key's grant", [rec(g5, 250)], materialize(g5, 250)),
        ("a compromised key's grant after invalid_from", [rec(g6, 350)], materialize(g6, 350)),
        ("a grant not yet valid", [rec(g7, 250)], materialize(g7, 250)),
    ]


CREDENTIAL_FORGERIES: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
    ("scopes widened", lambda c: c.update(scopes=c["scopes"] + ["admin"])),
    ("audiences changed", lambda c: c.update(audiences=[TLO])),
    ("subject changed", lambda c: c.update(subject=OTHER.agent_id())),
    ("relationship added", lambda c: c.update(relationship="owner")),
    ("constraints added", lambda c: c.update(constraints={"limit": 1})),
    ("constraints as a float", lambda c: c.update(constraints={k: float(v) if isinstance(v, int) else v
                                                               for k, v in c.get("constraints", {"x": 1}).items()})),
    ("not_before added", lambda c: c.update(not_before=0)),
    ("expires_at moved", lambda c: c.update(expires_at=5000)),
    ("expires_at dropped", lambda c: c.pop("expires_at")),
    ("protocol changed", lambda c: c.update(protocol="agent-delegation/0.9")),
    ("status suspended", lambda c: c.update(status="suspended")),
    ("status expired", lambda c: c.update(status="expired")),
    ("status active", lambda c: c.update(status="active")),
    ("status revoked", lambda c: c.update(status="revoked")),
    ("controller changed", lambda c: c.update(controller=OTHER.agent_id())),
    ("accepted_at changed", lambda c: c.update(accepted_at=c["accepted_at"] + 1)),
    ("event_id of the grant", lambda c: c.update(event_id=c["grant_event_id"])),
    ("event_id unknown", lambda c: c.update(event_id="A" * 43)),
    ("grant_event_id unknown", lambda c: c.update(grant_event_id="A" * 43)),
]


def record_variants(records: list[dict[str, Any]], extra: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    grants = [r for r in records if r["envelope"]["event"]["type"] == "delegation.grant"]
    return [
        ("full history", records),
        ("latest grant only", grants[-1:]),
        ("no records", []),
        ("reversed", list(reversed(records))),
        ("without the last record", records[:-1]),
        ("with a later record", records + [extra]),
    ]


def fresh(cred: dict[str, Any], now: int) -> dict[str, Any]:
    c = copy.deepcopy(cred)
    c["checked_at"] = now
    return c


def verify_add(out: Cases, name: str, cred: dict[str, Any], records: list[dict[str, Any]], doc: dict[str, Any],
               url: str, audience: str, now: int) -> None:
    sdk = verify_delegation_credential(cred, records, doc, url, audience, now)
    verdict = {k: sdk[k] for k in ("verified", "usable", "reasons")}
    out.add("delegation_verify", name, {"credential": cred, "records": records, "document": doc, "resolved_url": url,
                                        "audience": audience, "now": now}, verdict, verdict)


def verify_cases(out: Cases) -> None:
    later = rec(revoke(U, created=900, nonce=20), 950)
    for hname, records, cred in histories():
        now = cred["accepted_at"] + 100
        base = fresh(cred, now)
        for audience in (DM, TLO, AGA):
            verify_add(out, f"{hname}, for {audience}", base, records, document(), P, DM if audience == DM else audience, now)
        for tname, c, t in [
            ("status stale", cred, cred["accepted_at"] + 300_001),
            ("status at the age limit", cred, cred["accepted_at"] + 300_000),
            ("checked_at ahead by the skew", fresh(cred, now + 60_000), now),
            ("checked_at beyond the skew", fresh(cred, now + 60_001), now),
            ("checked_at before accepted_at", fresh(cred, cred["accepted_at"] - 1), now),
            ("at expires_at", fresh(cred, 1900), 1900),
            ("before not_before", fresh(cred, 700), 700),
        ]:
            verify_add(out, f"{hname}, {tname}", c, records, document(), P, DM, t)
        for fname, forge in CREDENTIAL_FORGERIES:
            c = copy.deepcopy(base)
            try:
                forge(c)
            except KeyError:
                continue
            verify_add(out, f"{hname}, {fname}", c, records, document(), P, DM, now)
        for rname, rs in record_variants(records, later):
            verify_add(out, f"{hname}, {rname}", base, rs, document(), P, DM, now)
            add_audit(out, f"{hname}, {rname}", cred, rs, document(), P)
        for dname, dedit in DOC_VARIANTS[:4]:
            doc = document()
            try:
                dedit(doc, records[-1]["envelope"]["event"]["actor"])
            except LookupError:
                continue
            verify_add(out, f"{hname}, {dname}", base, records, doc, P, DM, now)
            add_audit(out, f"{hname}, {dname}", cred, records, doc, P)
        verify_add(out, f"{hname}, copy read at the alias", base, records, document(), ALIAS, DM, now)
        add_audit(out, f"{hname}, copy read at the alias", cred, records, document(), ALIAS)
        for fname, forge in CREDENTIAL_FORGERIES:
            c = copy.deepcopy(cred)
            try:
                forge(c)
            except KeyError:
                continue
            add_audit(out, f"{hname}, {fname}", c, records, document(), P)


def add_audit(out: Cases, name: str, cred: dict[str, Any], records: list[dict[str, Any]], doc: dict[str, Any],
              url: str) -> None:
    sdk = sdk_code(audit_delegation_history, cred, records, doc, url)
    generic = DOCUMENT if url != doc["id"] else EVENT | DOCUMENT | VIEW
    out.add("delegation_audit", name, {"credential": cred, "records": records, "document": doc, "resolved_url": url},
            sdk, authority_expect(doc, sdk, generic))


def use_cases(out: Cases) -> None:
    for hname, _, cred in histories():
        now = cred["accepted_at"] + 100
        variants = [("fresh", fresh(cred, now), DM, now), ("other audience", fresh(cred, now), TLO, now),
                    ("malformed audience", fresh(cred, now), "https://DMSG.NET", now),
                    ("stale", cred, DM, cred["accepted_at"] + 300_001), ("at expires_at", fresh(cred, 1900), DM, 1900),
                    ("before not_before", fresh(cred, 700), DM, 700)]
        for fname, forge in CREDENTIAL_FORGERIES:
            c = fresh(cred, now)
            try:
                forge(c)
            except KeyError:
                continue
            variants.append((fname, c, DM, now))
        inverted = fresh(cred, now)
        inverted["not_before"] = inverted.get("expires_at", 1900)
        variants.append(("not_before at expires_at", inverted, DM, now))
        for vname, c, audience, t in variants:
            sdk = sdk_code(validate_delegation_use, c, audience, t)
            out.add("delegation_use", f"{hname}, {vname}", {"credential": c, "audience": audience, "now": t}, sdk,
                    expect(sdk, VIEW | REQUEST))


def enumeration_cases(out: Cases) -> None:
    creds = [("inside R's ceiling", CRED_A), ("wide", CRED_WIDE),
             ("for a relying agent", materialize(grant(R, nonce=12, id="del_g", audiences=[AGA]), 250)),
             ("SUC's", materialize(grant(SUC, created=650, nonce=3, id="del_s", scopes=["meeting"]), 650))]
    docs = [("principal", document()), ("principal without delegation_service",
                                        {k: v for k, v in document().items() if k != "delegation_service"})]
    for dname, doc in docs:
        for actor in (R, U, SUC, TL, RET, OTHER):
            for now in (99, 300, 700):
                for cname, cred in creds:
                    sdk = sdk_code(validate_controller_enumeration, doc, actor.agent_id(), now, cred)
                    out.add("delegation_enumeration", f"{dname}: {actor.agent_id()[10:16]} at {now}, {cname}",
                            {"document": doc, "actor": actor.agent_id(), "now": now, "credential": cred}, sdk,
                            authority_expect(doc, sdk, VIEW))
                    if dname == "principal" and now == 300:
                        c = next((c for c in doc["controllers"] + doc["retired_controllers"]
                                  if c["id"] == actor.agent_id()), None)
                        if c is not None:
                            covers = controller_covers_credential(c, cred)
                            out.add("delegation_covers", f"{actor.agent_id()[10:16]} covers {cname}",
                                    {"document": doc, "actor": actor.agent_id(), "credential": cred}, covers, covers)


def query_cases(out: Cases) -> None:
    subject, principal = SUBJ.agent_id(), P
    requests: list[tuple[str, dict[str, Any]]] = [
        ("both sides", {"subject": subject, "principal_id": principal}),
        ("subject only", {"subject": subject}),
        ("principal only", {"principal_id": principal}),
        ("neither", {}),
        ("neither, with filters", {"id": "del_a", "status": "active", "limit": 5}),
        ("both null", {"subject": None, "principal_id": None}),
        ("subject null", {"subject": None, "principal_id": principal}),
    ]
    edits: list[tuple[str, dict[str, Any]]] = [
        ("", {}), ("id", {"id": "del_a"}), ("dot-segment id", {"id": ".."}), ("id with a slash", {"id": "a/b"}),
        ("status revoked", {"status": "revoked"}), ("status expired", {"status": "expired"}),
        ("unknown status", {"status": "paused"}), ("limit 1", {"limit": 1}), ("limit 100", {"limit": 100}),
        ("limit 1000", {"limit": 1000}), ("limit 0", {"limit": 0}), ("limit -1", {"limit": -1}),
        ("limit 1.5", {"limit": 1.5}), ("limit a string", {"limit": "5"}), ("limit a bool", {"limit": True}),
        ("largest limit", {"limit": 2**53 - 1}), ("cursor", {"cursor": "abc"}),
        ("short subject", {"subject": "did:agent:short"}), ("principal over http", {"principal_id": "http://example.com/p"}),
        ("principal without host", {"principal_id": "https://"}), ("unknown member", {"owner": "x"}),
    ]
    for rname, request in requests:
        for ename, edit in edits:
            body = {**request, **edit}
            for enumerate_ in (False, True):
                sdk = sdk_code(validate_delegation_query_request, body, allow_enumeration=enumerate_)
                mode = "with a JWT" if enumerate_ else "public"
                out.add("delegation_query", f"{mode}: {rname}" + (f", {ename}" if ename else ""),
                        {"request": body, "allow_enumeration": enumerate_}, sdk, expect(sdk, REQUEST))


def challenge_cases(out: Cases) -> None:
    signer_seed = bytes([90]) * 32
    signer = AgentSigner.from_seed(signer_seed)
    prefix = "agent-delegation/1.0:controller-registration:"
    body = "Ab3_-" + "x" * 38
    challenges = [
        ("fixed shape", prefix + body), ("every alphabet character", prefix + "azAZ09-_" + "Q" * 35),
        ("42 characters", prefix + body[:42]), ("44 characters", prefix + body + "A"),
        ("padding", prefix + body[:42] + "="), ("standard alphabet", prefix + body[:42] + "+"),
        ("other version", "agent-delegation/1.1:controller-registration:" + body),
        ("other purpose", "agent-delegation/1.0:controller-rotation:" + body), ("no prefix", body),
        ("empty", ""), ("trailing newline", prefix + body + "\n"), ("non-ASCII", prefix + body[:42] + "é"),
        ("prefix only", prefix),
    ]
    for name, value in challenges:
        try:
            sig: str = signer.sign_controller_challenge(value)
        except AgentProtocolError as err:
            sig = err.code
        verdict = {"valid": is_controller_challenge(value), "signature": sig}
        out.add("controller_challenge", name, {"value": value, "seed": signer_seed.hex()}, verdict, verdict)
    challenge = prefix + body
    good = signer.sign_controller_challenge(challenge)
    other = key(91)
    proofs = [
        ("own proof", signer.agent_id(), challenge, good),
        ("another key", other.agent_id(), challenge, good),
        ("another challenge", signer.agent_id(), prefix + "y" * 43, good),
        ("signature changed", signer.agent_id(), challenge, good[:5] + ("B" if good[5] == "A" else "A") + good[6:]),
        ("signature of another key", signer.agent_id(), challenge, other.sign_controller_challenge(challenge)),
        ("signature truncated", signer.agent_id(), challenge, good[:84]),
        ("not a challenge", signer.agent_id(), challenge[:-1], good),
    ]
    for name, aid, value, sig in proofs:
        sdk = sdk_code(verify_controller_challenge, aid, value, sig)
        out.add("controller_challenge_ok", name, {"id": aid, "value": value, "signature": sig}, sdk,
                expect(sdk, REQUEST | frozenset({"invalid_signature", "invalid_actor"})))


# --- running goverdict -----------------------------------------------------


def go_verdicts(cases: list[Case]) -> dict[str, dict[str, Any]]:
    """goverdict's answers to cases, by case id."""
    exe = binary("GOVERDICT_BIN", "bin/goverdict")
    proc = subprocess.run([str(exe)], input=json.dumps([c.wire() for c in cases]),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"goverdict failed ({proc.returncode}):\n{proc.stderr}"
    answers = json.loads(proc.stdout)
    assert [a["id"] for a in answers] == [c.id for c in cases], "goverdict answered other cases"
    return {a["id"]: a for a in answers}


def check(case: Case, answer: dict[str, Any]) -> None:
    """Asserts goverdict's answer to case: what KNOWN documents, or what the
    SDK decided."""
    assert "error" not in answer, (
        f"goverdict could not run the case: {answer['error']}\ninput: {json.dumps(case.input)[:2000]}")
    go = answer["verdict"]
    known = KNOWN.get(case.id)
    if known is not None:
        assert case.sdk == "ok", f"a documented difference the SDK no longer accepts: {json.dumps(case.sdk)}"
        assert go == known["go"], (
            f"documented difference changed: the SDK says {json.dumps(case.sdk)}, apconnect was documented as "
            f"{json.dumps(known['go'])} and now says {json.dumps(go)} (update KNOWN in delegation_cases.py)")
        return
    assert case.accepts(go), (
        f"{case.id}\n  SDK (agent-protocols 0.12.6): {json.dumps(case.sdk)}\n"
        f"  expected of apconnect:        {json.dumps(sorted(case.expect) if isinstance(case.expect, frozenset) else case.expect)}\n"
        f"  apconnect (Go):               {json.dumps(go)}\n  input: {json.dumps(case.input)[:3000]}")


def vector_cases() -> list[Case]:
    """The ported vector file (host/proto/delegation/testdata), each case as
    the file states it and as the SDK decides it."""
    out = Cases()
    for case in VECTORS["principal_documents"]:
        sdk = sdk_code(validate_principal_document, case["document"])
        out.add("delegation_principal", case["name"], {"document": case["document"]}, sdk, expect(sdk, DOCUMENT),
                note="valid" if case["valid"] else "invalid")
    for group, kind, fn in (("delegation_ids", "delegation_id", validate_delegation_id),
                            ("audiences", "delegation_audience", validate_audience)):
        for validity in ("valid", "invalid"):
            for value in VECTORS[group][validity]:
                sdk = sdk_code(fn, value)
                out.add(kind, f"{validity} {value!r}", {"value": value}, sdk, expect(sdk, REQUEST), note=validity)
    acc = VECTORS["acceptance"]
    for case in acc["cases"]:
        add_acceptance(out, case["name"], case["envelope"], acc["document"], case["accepted_at"], case["previous"],
                       modes=(case["mode"],))
        out.cases[-1].note = case["expected"]
    return out.cases


def all_cases() -> list[Case]:
    """The generated cases."""
    out = Cases()
    principal_cases(out)
    id_and_audience_cases(out)
    envelope_cases(out)
    acceptance_cases(out)
    materialize_cases(out)
    verify_cases(out)
    use_cases(out)
    enumeration_cases(out)
    query_cases(out)
    challenge_cases(out)
    return out.cases
