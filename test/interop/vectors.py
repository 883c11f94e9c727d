"""Differential vectors: one list of cases, each with the reference SDK's
verdict, that `goverdict` (test/interop/goverdict, apconnect's Go packages)
answers too.

Sources: the vector files in the repository (host/identity/testdata,
host/proto/adp/testdata, host/hub/testdata) and the ▶-run test cases of
shared/design/PROTOCOL-0.12.md (D-01 … D-34). Each case names the D-item it
belongs to ("" for rules both drafts share), so a disagreement points at
the difference it comes from.

A verdict is plain JSON, the same shape on both sides: true/false, "ok" or an
error code, or a small object (a hash, a class, a next nonce).
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from agent_protocols import (
    AgentProtocolError,
    AgentSigner,
    ClientNonceManager,
    event_hash,
    parse_envelope_json,
    parse_strict_json,
    validate_agent_id,
    validate_event_fields,
    validate_origin,
    verify_ed25519_strict,
    verify_envelope,
    verify_request_jwt,
)
from agent_protocols.discourse import (
    build_server_record,
    effective_open_roles,
    event_advances_room_head,
    event_requires_room_head,
    is_redacted_record,
    record_class,
    redact_server_record,
    server_record_hash,
    validate_custom_event_type_name,
    validate_discourse_event_fields,
    validate_message_create_payload,
    validate_room_base,
    validate_room_create_payload,
    validate_room_policy,
    validate_room_update_payload,
    validate_room_visibility_policy,
    validate_type_declaration,
    verify_pack_digest,
    verify_server_record,
    verify_server_record_chain,
)
from agent_protocols.profile import validate_profile_payload

from harness import REPO
from sdkref import registry, verdict

IDENTITY = json.loads((REPO / "host/identity/testdata/agent-identity-1.0.vectors.json").read_text())
DISCOURSE = json.loads((REPO / "host/proto/adp/testdata/1.0.vectors.json").read_text())
PROFILE = json.loads((REPO / "host/proto/profile/testdata/agent-profile-1.0.vectors.json").read_text())

CREATOR = AgentSigner.from_seed(bytes.fromhex(DISCOURSE["seeds"]["creator"]))
MEMBER = AgentSigner.from_seed(bytes.fromhex(DISCOURSE["seeds"]["member"]))
HOST = "https://api.example.com"
T0 = 1779753600000


@dataclass
class Case:
    id: str
    kind: str
    input: dict[str, Any]
    sdk: Any
    ditem: str = ""
    note: str = ""

    def wire(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "input": self.input}


@dataclass
class Builder:
    cases: list[Case] = field(default_factory=list)

    def add(self, kind: str, name: str, input: dict[str, Any], sdk: Any, ditem: str = "", note: str = "") -> None:
        cid = f"{kind}: {name}" + (f" [{ditem}]" if ditem else "")
        if any(c.id == cid for c in self.cases):
            raise ValueError(f"duplicate case id {cid}")
        self.cases.append(Case(cid, kind, input, sdk, ditem, note))


def ok(fn, *args, **kwargs) -> bool:
    try:
        fn(*args, **kwargs)
        return True
    except AgentProtocolError:
        return False


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# --- signed material ------------------------------------------------------


def discourse_ev(signer: AgentSigner, typ: str, created: int, payload: Any, room_id: str | None = None,
                 base: tuple[int, str] | None = None, mentions: list[str] | None = None) -> dict[str, Any]:
    ev = {"protocol": "agent-discourse/1.0", "type": typ, "actor": signer.agent_id(),
          "created_at": created, "nonce": created, "payload": payload}
    if room_id is not None:
        ev["room_id"] = room_id
    if base is not None:
        ev["base_seq"], ev["base_hash"] = base
    if mentions:
        ev["mentions"] = mentions
    return ev


class Chain:
    """A room's records built with the SDK (build_server_record), signed by
    the vector seeds: the input of reader cases."""

    def __init__(self, room_id: str, payload: dict[str, Any]):
        self.room_id = room_id
        self.records: list[dict[str, Any]] = []
        self.t = T0
        self._append(CREATOR.sign_event(discourse_ev(CREATOR, "room.create", self.t, payload)))

    def _append(self, env):
        prev = self.records[-1] if self.records else None
        rec = build_server_record(self.room_id, len(self.records) + 1, prev["hash"] if prev else None,
                                  self.t + 5, env)
        self.records.append(rec)
        return rec

    def link(self, seq: int) -> tuple[int, str]:
        return seq, self.records[seq - 1]["hash"]

    def add(self, signer, typ, payload, base_seq, mentions=None, base_hash=None):
        self.t += 1000
        base = (base_seq, base_hash or self.records[base_seq - 1]["hash"])
        return self._append(signer.sign_event(discourse_ev(signer, typ, self.t, payload, self.room_id, base, mentions)))


def genesis(payload_extra: dict[str, Any] | None = None, room_id: str = "interopvectorroom01") -> Chain:
    payload = {"host": HOST, "topic": "Vector room", "visibility": "public",
               "start_time": T0, "end_time": T0 + 3_600_000}
    payload.update(payload_extra or {})
    return Chain(room_id, payload)


def jwt(header: dict[str, Any] | str, claims: dict[str, Any] | str, key: Ed25519PrivateKey) -> str:
    h = header if isinstance(header, str) else json.dumps(header, separators=(",", ":"))
    c = claims if isinstance(claims, str) else json.dumps(claims, separators=(",", ":"))
    signing = f"{b64(h.encode())}.{b64(c.encode())}"
    return f"{signing}.{b64(key.sign(signing.encode()))}"


# --- the cases ------------------------------------------------------------


def identity_cases(b: Builder) -> None:
    for ev in IDENTITY["events"]:
        b.add("event_hash", ev["name"], {"event": ev["event"]}, {"hash": event_hash(ev["event"])})
        assert event_hash(ev["event"]) == ev["hash"]
    tricky = {
        "non-ASCII member names sort by UTF-16": {"é": 1, "z": 2, "\U0001F600": 3, "\uff61": 4, "a": [True, None]},
        "numbers in JCS form": {"f": 0.1, "g": 1.5e-9, "h": 1e-7, "i": -0.0, "j": 123456789012, "k": 5e-324, "l": 4.35, "m": 1e15 + 0.5},
        "escapes and control characters": {"s": "\u0000\u001f\"\\/\u2028\u007f", "t": "\U0001F600"},
        "deep nesting": {"a": {"b": {"c": {"d": [[[{"e": "f"}]]]}}}},
    }
    for name, payload in tricky.items():
        ev = {"protocol": "agent-profile/1.0", "type": "profile.update", "actor": CREATOR.agent_id(),
              "created_at": T0, "nonce": T0, "payload": payload}
        b.add("event_hash", name, {"event": ev}, {"hash": event_hash(ev)})

    for sig in IDENTITY["signatures"]:
        pub, msg, s = (base64.urlsafe_b64decode(sig[k] + "=" * (-len(sig[k]) % 4)) for k in ("public_key", "message", "signature"))
        sdk = verify_ed25519_strict(msg, s, pub)
        assert sdk == sig["valid"], sig["name"]
        b.add("signature", sig["name"], {k: sig[k] for k in ("public_key", "message", "signature")}, sdk)

    for v in IDENTITY["agent_ids"]["valid"]:
        b.add("agent_id", v, {"value": v}, ok(validate_agent_id, v))
    for v in IDENTITY["agent_ids"]["invalid"]:
        b.add("agent_id", v["name"], {"value": v["value"]}, ok(validate_agent_id, v["value"]))

    for v in IDENTITY["json"]["valid"] + IDENTITY["json"]["invalid"]:
        b.add("strict_json", v["name"], {"text": v["text"]}, ok(parse_strict_json, v["text"]))
    for name, text in {"trailing comma": '{"a":1,}', "NaN": '{"a":NaN}', "float above 2^53": '{"a":9007199254740993.0}',
                       "float fraction": '{"a":1.5}', "lone top-level string": '"x"', "BOM": '\ufeff{}'}.items():
        b.add("strict_json", name, {"text": text}, ok(parse_strict_json, text))

    # Envelopes: the identity vector events, tampered, and closed shapes.
    for ev in IDENTITY["events"]:
        env = {"hash": ev["hash"], "event": ev["event"], "signature": ev["signature"]}
        b.add("envelope", ev["name"], {"text": json.dumps(env)}, envelope_verdict(json.dumps(env)))
        bad_hash = dict(env, hash=b64(hashlib.sha3_256(b"x").digest()))
        b.add("envelope", ev["name"] + ", wrong hash", {"text": json.dumps(bad_hash)}, envelope_verdict(json.dumps(bad_hash)))
        sig = bytearray(base64.urlsafe_b64decode(env["signature"] + "=="))
        sig[0] ^= 1
        bad_sig = dict(env, signature=b64(bytes(sig)))
        b.add("envelope", ev["name"] + ", flipped signature bit", {"text": json.dumps(bad_sig)}, envelope_verdict(json.dumps(bad_sig)))
        extra = dict(env, extra=1)
        b.add("envelope", ev["name"] + ", unknown envelope member", {"text": json.dumps(extra)}, envelope_verdict(json.dumps(extra)))
    vector_key = AgentSigner.from_seed(bytes.fromhex(IDENTITY["keys"][0]["seed"]))
    for ev in IDENTITY["events_closed_shape"]["invalid"]:
        assert ev["event"]["actor"] == vector_key.agent_id()
        env = vector_key.sign_event(ev["event"])
        b.add("envelope", ev["name"], {"text": json.dumps(env)}, envelope_verdict(json.dumps(env)))

    for v in IDENTITY["max_seen_nonce"]:
        b.add("max_seen_nonce", v["name"], {"next": v["next_nonce"], "now": v["now_ms"], "header": v["header"]},
              nonce_verdict(v["next_nonce"], v["now_ms"], v["header"]),
              "D-16" if v["header"] == "4294968296" else "")
    for header, nxt, now in (("4294968295", 10, 1000), ("4294968297", 10, 1000), ("9007199254740990", 10, 1000),
                             ("9007199254740991", 9007199254740000, 9007199254740000), ("0", 10, 1000),
                             ("1500x", 10, 1000), ("-5", 10, 1000)):
        b.add("max_seen_nonce", f"{header} with next {nxt}, now {now}", {"next": nxt, "now": now, "header": header},
              nonce_verdict(nxt, now, header), "D-16")

    for value in ("https://api.example.com", "https://api.example.com:8443", "https://dmsg.net:0", "https://127.0.0.1",
                  "https://[::1]", "https://xn--nxasmq6b.example", "https://localhost:8443", "https://API.example.com",
                  "https://api.example.com:443", "https://api.example.com/", "https://127.1", "https://api.example.com:08443",
                  "https://Café.example", "https://api.example.com/v1", "https://api.example.com?x", "https://api.example.com#x",
                  "https://user@api.example.com", "http://api.example.com", "api.example.com", "https://",
                  "https://[0:0::1]", "https://0x7f.0.0.1", "https://api.example.com.", "https://a b.example"):
        b.add("origin", value, {"value": value}, ok(validate_origin, value), "D-20")


def envelope_verdict(text: str) -> str:
    """The SDK's verdict on a submitted envelope: strict parse, hash,
    signature, closed event shape of its protocol."""
    def check():
        env = parse_envelope_json(text)
        verify_envelope(env)
        if env["event"].get("protocol") == "agent-discourse/1.0":
            validate_discourse_event_fields(env["event"])
        else:
            validate_event_fields(env["event"])
    return verdict(check)


def nonce_verdict(nxt: int, now: int, header: str) -> Any:
    m = ClientNonceManager(nxt)
    try:
        m.observe_max_nonce(header, now)
    except AgentProtocolError:
        return "refused"
    return {"next": m.peek()}


def jwt_cases(b: Builder) -> None:
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(DISCOURSE["seeds"]["member"]))
    aid = MEMBER.agent_id()
    aud, now = "https://api.example.com", 1779753700
    hdr = {"alg": "EdDSA", "typ": "JWT", "kid": aid}

    def claims(**over):
        c = {"iss": aid, "sub": aid, "aud": aud, "iat": now, "exp": now + 300}
        c.update(over)
        return {k: v for k, v in c.items() if v is not None}

    cases = {
        "iat now, exp now+300": (hdr, claims(), ""),
        "iat now+1 (no skew)": (hdr, claims(iat=now + 1, exp=now + 61), "D-18"),
        "iat now-300, exp now": (hdr, claims(iat=now - 300, exp=now), "D-18"),
        "exp now-1 (no skew)": (hdr, claims(iat=now - 60, exp=now - 1), "D-18"),
        "lifetime 301": (hdr, claims(exp=now + 301), ""),
        "header without typ": ({"alg": "EdDSA", "kid": aid}, claims(), "D-18"),
        "typ jwt in lowercase": (dict(hdr, typ="jwt"), claims(), "D-18"),
        "header with crit": (dict(hdr, crit=["x"]), claims(), "D-18"),
        "extra claim jti": (hdr, claims(jti="abc"), ""),
        "aud with a trailing slash": (hdr, claims(aud=aud + "/"), ""),
        "iat as a float": (hdr, '{"iss":"%s","sub":"%s","aud":"%s","iat":%d.0,"exp":%d}' % (aid, aid, aud, now, now + 300), ""),
        "alg Ed25519": (dict(hdr, alg="Ed25519"), claims(), ""),
        "kid differs from iss": (dict(hdr, kid=CREATOR.agent_id()), claims(), ""),
        "exp equal to iat": (hdr, claims(exp=now), ""),
        "duplicate claim": (hdr, '{"iss":"%s","sub":"%s","aud":"%s","iat":%d,"iat":%d,"exp":%d}' % (aid, aid, aud, now, now, now + 300), ""),
    }
    for name, (h, c, ditem) in cases.items():
        token = jwt(h, c, key)
        b.add("jwt", name, {"token": token, "audience": aud, "now": now}, jwt_verdict(token, aud, now), ditem)
    token = jwt(hdr, claims(), Ed25519PrivateKey.from_private_bytes(bytes(32)))
    b.add("jwt", "signed by another key", {"token": token, "audience": aud, "now": now}, jwt_verdict(token, aud, now))
    b.add("jwt", "not three parts", {"token": "a.b", "audience": aud, "now": now}, jwt_verdict("a.b", aud, now))


def jwt_verdict(token: str, aud: str, now: int) -> str:
    """verify_request_jwt with zero skew; a host answers every refusal,
    signature failures included, with invalid_token (Agent Identity 8.1)."""
    v = verdict(verify_request_jwt, token, audience=aud, now_secs=now, max_ttl_secs=300)
    return "ok" if v == "ok" else "invalid_token"


def record_cases(b: Builder) -> None:
    for group in ("records", "redacted_records"):
        for rec in DISCOURSE[group]:
            h = server_record_hash(rec["room_id"], rec["seq"], rec["pre_hash"], rec["envelope"]["hash"], rec["accepted_at"])
            b.add("record_hash", f"{group} seq {rec['seq']}",
                  {k: rec[k] for k in ("room_id", "seq", "pre_hash", "accepted_at")} | {"envelope_hash": rec["envelope"]["hash"]},
                  {"hash": h})
            b.add("record", f"{group} seq {rec['seq']}", {"record": rec}, verdict(verify_server_record, rec, local="invalid_record"))
        b.add("chain", group, {"records": DISCOURSE[group]}, chain_verdict(DISCOURSE[group]))
    recs = DISCOURSE["records"]
    tampered = json.loads(json.dumps(recs))
    tampered[2]["accepted_at"] += 1
    b.add("record", "accepted_at changed", {"record": tampered[2]}, verdict(verify_server_record, tampered[2], local="invalid_record"))
    b.add("chain", "a record's accepted_at changed", {"records": tampered}, chain_verdict(tampered))
    b.add("chain", "a gap", {"records": [recs[0], recs[2]]}, chain_verdict([recs[0], recs[2]]))
    b.add("chain", "starts at seq 2", {"records": recs[1:]}, chain_verdict(recs[1:]))
    illegal = redact_server_record(dict(recs[0], envelope={**recs[0]["envelope"], "event": dict(recs[0]["envelope"]["event"], type="message.create")}))
    illegal = dict(illegal, envelope={"hash": recs[1]["envelope"]["hash"], "redacted": True, "type": "room.join"})
    illegal["hash"] = server_record_hash(illegal["room_id"], illegal["seq"], illegal["pre_hash"], illegal["envelope"]["hash"], illegal["accepted_at"])
    b.add("record", "redacted room.join", {"record": illegal}, verdict(verify_server_record, illegal, local="invalid_record"))


def chain_verdict(records) -> Any:
    try:
        verify_server_record_chain(records)
    except AgentProtocolError:
        return "broken"
    return {"redacted": [r["seq"] for r in records if is_redacted_record(r)]}


REG = [{"use": "adp:reactions/1.0"}, {"use": "adp:moderation/1.0"}]


def freshness_cases(b: Builder) -> None:
    chain = genesis({"types": REG})
    reg = registry(REG)
    types = list(DISCOURSE["freshness"]["classes"]) + ["room.join.request", "poll.vote"]
    for typ in types:
        cls = record_class(typ, reg)
        sdk = "none" if cls is None else {"class": cls, "head_checked": event_requires_room_head(typ, reg),
                                          "advances": event_advances_room_head(typ, reg)}
        old = DISCOURSE["freshness"]["classes"].get(typ)
        assert old is None or old == cls, (typ, old, cls)
        b.add("class", typ, {"genesis": chain.records[0], "type": typ}, sdk,
              "D-01" if cls in ("message", "control") else "")
    # H-1: head 5, record 6 exists; hash "base-hash" when anchored.
    h1 = [("message.create", 5, True), ("message.create", 6, True), ("message.create", 4, True),
          ("message.create", 4, False), ("message.create", 6, False), ("turn.update", 4, True),
          ("claim.update", 5, True), ("room.update", 1, True), ("room.update", 1, False),
          ("reaction.create", 1, True), ("steer.create", 1, True), ("room.join", 1, True),
          ("message.create", 7, False), ("claim.update", 6, True), ("room.leave", 6, False)]
    for typ, base_seq, anchored in h1:
        anchor = "base-hash" if anchored else ("other-hash" if base_seq <= 6 else None)
        sdk = verdict(validate_room_base, typ, reg, base_seq, "base-hash", anchor, 5)
        b.add("base_check", f"{typ} base {base_seq} {'anchored' if anchored else 'not anchored'}, head 5",
              {"genesis": chain.records[0], "type": typ, "base_seq": base_seq, "anchored": anchored,
               "head_seq": 5, "last_seq": 6}, sdk, "D-02")


def head_cases(b: Builder) -> None:
    # H-4: the 0f87fee vector records under 0.12.6: [1,1,1,1,5].
    for group in ("records", "redacted_records"):
        recs = DISCOURSE[group]
        b.add("reader", f"0f87fee vector {group}", {"records": recs}, reader_verdict(recs), "D-01")
    # H-3: concurrent messages, then a contract write, then a stale message.
    c = genesis({"policy": {"open_roles": ["speaker"]}}, "interoph3room")
    c.add(CREATOR, "message.create", {"content_type": "text/plain", "content": "one"}, 1)
    c.add(CREATOR, "message.create", {"content_type": "text/plain", "content": "two"}, 1)
    c.add(CREATOR, "room.update", {"guidance": "short"}, 2)
    c.add(CREATOR, "message.create", {"content_type": "text/plain", "content": "stale"}, 3)
    b.add("reader", "H-3 concurrent messages, then a stale one", {"records": c.records}, reader_verdict(c.records), "D-03")
    # Messages based on signal records, and a control write on a message.
    c = genesis({"policy": {"open_roles": ["speaker"]}, "types": REG}, "interopsignals")
    c.add(MEMBER, "room.join", {"role": "speaker"}, 1)
    c.add(MEMBER, "message.create", {"content_type": "text/plain", "content": "on a join"}, 2)
    c.add(CREATOR, "reaction.create", {"event_id": c.records[2]["envelope"]["hash"], "reaction": "agree"}, 3)
    c.add(MEMBER, "message.create", {"content_type": "text/plain", "content": "on a reaction"}, 4)
    c.add(CREATOR, "turn.update", {"turn_id": 1, "speaker": MEMBER.agent_id()}, 5)
    c.add(MEMBER, "message.create", {"content_type": "text/plain", "content": "on the turn"}, 6)
    c.add(CREATOR, "claim.update", {"claim_id": "c", "owner": CREATOR.agent_id(), "state": "claimed"}, 5)
    b.add("reader", "messages based on signal records; control on an old base", {"records": c.records},
          reader_verdict(c.records), "D-03")
    # A redacted message does not move the head (D-22).
    r = genesis({}, "interopredacted")
    r.add(CREATOR, "message.create", {"content_type": "text/plain", "content": "secret"}, 1)
    r.add(CREATOR, "message.create", {"content_type": "text/plain", "content": "after"}, 1)
    recs = [r.records[0], redact_server_record(r.records[1]), r.records[2]]
    b.add("reader", "a redacted message keeps the head", {"records": recs}, reader_verdict(recs), "D-22")
    # D-24: object content with a non-JSON media type.
    o = genesis({}, "interopobject")
    o.add(CREATOR, "message.create", {"content_type": "text/plain", "content": {"a": 1}}, 1)
    b.add("reader", "object content with text/plain", {"records": o.records}, reader_verdict(o.records), "D-24")
    # D-10: a speaker joins a restricted room through open_roles.
    j = genesis({"visibility": "restricted", "policy": {"open_roles": ["speaker"]}}, "interoprestricted")
    j.add(MEMBER, "room.join", {"role": "speaker"}, 1)
    j.add(MEMBER, "message.create", {"content_type": "text/plain", "content": "hi"}, 2)
    b.add("reader", "a speaker joins a restricted room through open_roles", {"records": j.records}, reader_verdict(j.records), "D-10")
    # D-23: a room whose type schema uses patterns 0.12.6 accepts.
    for pattern in ("a{1001}", "[a-b-c]"):
        p = genesis({"types": [{"type": "note.add", "kind": "message", "title": "Note",
                                "schema": {"type": "object", "properties": {"k": {"type": "string", "pattern": pattern}}}}]},
                    "interoppattern" + str(len(pattern)))
        p.add(CREATOR, "note.add", {"k": "a" * 1001}, 1)
        b.add("reader", f"a room with a type pattern {pattern}", {"records": p.records}, reader_verdict(p.records), "D-23")


def reader_verdict(records) -> list[Any]:
    """Per record: {"head": seq} when a 0.12.6 reader accepts it, else
    "rejected" (and every later record is "skipped"). The rules are the
    SDK's: `verify_server_record_chain`, envelope verification,
    `validate_room_create_payload` for genesis, the kernel payload checks,
    `validate_room_base` semantics as the SDK's local projection applies them
    (base below seq; head-checked types at or after the head, with the head
    hash when equal; other anchors matched when known), the registry's
    payload validation, and `event_advances_room_head` for the head."""
    from agent_protocols.discourse import TypeRegistry, pack_map, validate_discourse_envelope
    from sdkref import packs_document

    out: list[Any] = []
    reg = TypeRegistry()
    head = (0, "")
    hashes: dict[int, str] = {}
    failed = False
    for i, rec in enumerate(records):
        if failed:
            out.append("skipped")
            continue
        try:
            verify_server_record_chain(records[: i + 1])
            env = rec["envelope"]
            redacted = is_redacted_record(rec)
            typ = env["type"] if redacted else env["event"]["type"]
            if not redacted:
                validate_discourse_envelope(env)
                ev, payload = env["event"], env["event"]["payload"]
                if typ == "room.create":
                    validate_room_create_payload(payload)
                    reg = TypeRegistry.from_declarations(payload.get("types", []), pack_map(packs_document()))
                else:
                    bs, bh = ev["base_seq"], ev["base_hash"]
                    if bs >= rec["seq"]:
                        raise AgentProtocolError("invalid_event", "base at or after the record")
                    if event_requires_room_head(typ, reg) and bs < head[0]:
                        raise AgentProtocolError("room_head_mismatch", "before the head")
                    if bs == head[0] and bh != head[1]:
                        raise AgentProtocolError("base_record_mismatch", "head hash")
                    if bs in hashes and hashes[bs] != bh:
                        raise AgentProtocolError("base_record_mismatch", "anchor")
                    if typ == "message.create":
                        validate_message_create_payload(payload)
                    elif typ == "room.update":
                        validate_room_update_payload(payload)
                    elif typ == "type.define":
                        reg.apply(payload, pack_map(packs_document()))
                    elif "." in typ and not typ.startswith("room."):
                        reg.validate_payload(typ, payload)
            if event_advances_room_head(typ, reg):
                head = (rec["seq"], rec["hash"])
            hashes[rec["seq"]] = rec["hash"]
            out.append({"head": head[0]})
        except AgentProtocolError:
            failed = True
            out.append("rejected")
    return out


def vocabulary_cases(b: Builder) -> None:
    for name in ("a.b", "1a.b", "a_.b", "x.y.z", "a-b.c_d", "x.message", "review.finding", "ab", "A.b", "a.B",
                 "_a.b", "a..b", "a.b.", "a.-b", "room.x", "type.x", "message.custom", "message.create", "reaction.create.x"):
        b.add("type_name", name, {"name": name}, ok(validate_custom_event_type_name, name),
              "D-14" if name.startswith("message.") else "")

    effective = [
        ("public", None), ("restricted", None), ("private", None), ("public", {"open_roles": ["speaker"]}),
        ("restricted", {"open_roles": ["speaker", "observer"]}), ("public", {"open_roles": []}),
        ("public", {"invites": {MEMBER.agent_id(): "speaker"}}), ("private", {"open_roles": []}),
    ]
    invalid = [
        ("public", {"open_roles": ["moderator"]}), ("public", {"open_roles": ["speaker", "speaker"]}),
        ("public", {"max_speakers": 0}), ("public", {"observer_allowed": True}),
        ("private", {"open_roles": ["observer"]}), ("public", {"invites": {"did:agent:x": "speaker"}}),
        ("public", {"invites": {MEMBER.agent_id(): "owner"}}), ("public", {"extra": {"k": 1}, "max_speakers": 3}),
    ]
    for vis, policy in effective + invalid:
        valid = ok(validate_room_policy, policy) and ok(validate_room_visibility_policy, vis, policy)
        sdk = {"valid": valid, "effective": effective_open_roles(vis, policy) if valid else None}
        b.add("open_roles", f"{vis} {json.dumps(policy)}", {"visibility": vis, "policy": policy}, sdk, "D-10")

    valid_patterns = DISCOURSE["patterns"]["valid"] + ["[-a]", "[a-]", "", "^$", "()", "(a|)", "[.]", "[a\\-z]", "a{2,}", "é"]
    invalid_patterns = DISCOURSE["patterns"]["invalid"] + ["[z-a]", "a{5,3}", "a\\$", "[^]", "[]a]", "\\d", "[\\d]", "\\p{L}",
                                                           "(?:a)", "a{,2}", ".", "\\u0041", "a{1}{2}", "x*?", "\\/", "[[]"]
    for p in dict.fromkeys(valid_patterns + invalid_patterns + ["a{1001}", "[a-b-c]"]):
        sdk = ok(registry([]).define, {"type": "x.y", "kind": "message", "title": "t", "schema": {"type": "string", "pattern": p}})
        b.add("pattern", repr(p), {"pattern": p}, sdk, "D-23" if p in ("a{1001}", "[a-b-c]") else "")

    for value in ("", " ", "\u00a0", "\u3000", "\u0085", "\ufeff", "\u200b", "\u180e", "x", "\t\n\u2028\u2029", "\u1680\u205f", " x "):
        verdicts = {
            "message.create content_type": ok(validate_message_create_payload, {"content_type": value, "content": "x"}),
            "room.update topic": ok(validate_room_update_payload, {"topic": value}),
            "room.create topic": ok(validate_room_create_payload, {"host": HOST, "topic": value, "start_time": 1, "end_time": 2}),
            "type title": ok(registry([]).define, {"type": "x.y", "kind": "message", "title": value, "schema": {}}),
        }
        assert len(set(verdicts.values())) == 1, (value, verdicts)
        b.add("blank", repr(value), {"value": value}, not verdicts["room.create topic"], "D-15")

    for v in PROFILE["payloads"]["valid"] + PROFILE["payloads"]["invalid"]:
        b.add("profile_payload", v["name"], {"actor": v["actor"], "payload": v["payload"]},
              verdict(validate_profile_payload, v["payload"], v["actor"]))
    actor = MEMBER.agent_id()
    base = {"id": actor, "name": "P"}
    extra = {
        "avatar_url https:// without a host": (dict(base, avatar_url="https://"), "D-25"),
        "delegation id .": (dict(base, delegations=[{"id": ".", "principal": {"id": "https://p.example/x"}}]), "D-25"),
        "delegation id ..": (dict(base, delegations=[{"id": "..", "principal": {"id": "https://p.example/x"}}]), "D-25"),
        "link url ftp": (dict(base, links=[{"name": "n", "url": "ftp://x.example", "rel": "r"}]), ""),
        "principal with an extra member": (dict(base, delegations=[{"principal": {"id": "https://p.example/x", "logo": "l"}}]), ""),
        "top-level username": (dict(base, username="u"), ""),
        "endpoint url without a host": (dict(base, service_endpoints=[{"type": "t", "url": "https://"}]), "D-25"),
        "endpoint url https:///x": (dict(base, service_endpoints=[{"type": "t", "url": "https:///x"}]), "D-25"),
        "principal id not a URL": (dict(base, delegations=[{"principal": {"id": "nope"}}]), "D-25"),
        "whitespace name": (dict(base, name=" "), ""),
    }
    for name, (payload, ditem) in extra.items():
        b.add("profile_payload", name, {"actor": actor, "payload": payload}, verdict(validate_profile_payload, payload, actor), ditem)

    data = b"pack document bytes"
    digest = b64(hashlib.sha3_256(data).digest())
    for name, (d, dg) in {
        "matching bare digest": (data, digest),
        "other bytes": (b"other", digest),
        "sha3-256: prefix": (data, "sha3-256:" + digest),
        "sha256: prefix": (data, "sha256:" + b64(hashlib.sha256(data).digest())),
        "42 characters": (data, digest[:42]),
    }.items():
        b.add("pack_digest", name, {"data": b64(d), "digest": dg}, verdict(verify_pack_digest, d, dg), "D-13")
    for d in (data, b"", json.dumps({"packs": []}).encode()):
        b.add("pack_digest_of", repr(d[:20]), {"data": b64(d)}, {"digest": b64(hashlib.sha3_256(d).digest())}, "D-13")

    decls = {
        "registered pack": {"use": "adp:reactions/1.0"},
        "registered pack id malformed": {"use": "reactions"},
        "external pack": {"pack": "https://example.com/p.json", "digest": digest},
        "external pack over http": {"pack": "http://example.com/p.json", "digest": digest},
        "external pack, sha256: digest": {"pack": "https://example.com/p.json", "digest": "sha256:abc"},
        "use and pack together": {"use": "adp:reactions/1.0", "pack": "https://example.com/p.json", "digest": digest},
        "empty types subset": {"use": "adp:reactions/1.0", "types": []},
        "inline definition": {"type": "note.add", "kind": "message", "title": "Note", "schema": {"type": "object"}},
        "inline definition with version": {"type": "note.add", "kind": "message", "title": "Note", "version": "1.0", "schema": {"type": "object"}},
        "inline definition with a blank title": {"type": "note.add", "kind": "message", "title": "\ufeff", "schema": {"type": "object"}},
        "inline definition under message.": {"type": "message.note", "kind": "message", "title": "Note", "schema": {"type": "object"}},
        "inline definition with empty roles": {"type": "note.add", "kind": "message", "title": "Note", "roles": [], "schema": {"type": "object"}},
        "inline definition with rate_hint 0": {"type": "note.add", "kind": "message", "title": "Note", "rate_hint": 0, "schema": {"type": "object"}},
        "inline definition with $dynamicRef": {"type": "note.add", "kind": "message", "title": "Note", "schema": {"$dynamicRef": "#x"}},
    }
    for name, decl in decls.items():
        ditem = "D-09" if "version" in decl else "D-13" if "digest" in decl else "D-15" if "blank" in name else "D-14" if "message." in name else ""
        b.add("declaration", name, {"declaration": decl}, verdict(validate_type_declaration, decl), ditem)


def payload_cases(b: Builder) -> None:
    """A message-kind type with a schema, one payload: validate_payload."""
    cases = [
        ({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": 1.0}),
        ({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": 1.5}),
        ({"type": "object", "properties": {"s": {"type": "string", "pattern": "^a$"}}}, {"s": "a\n"}),
        ({"type": "object", "properties": {"s": {"type": "string", "format": "uri"}}}, {"s": "not a uri"}),
        ({"type": "object", "properties": {"s": {"type": "string", "maxLength": 2}}}, {"s": "\U0001F600\U0001F600"}),
        ({"type": "object", "additionalProperties": False}, {"x": 1}),
        ({"type": "object", "patternProperties": {"^x": {"type": "string"}}}, {"x1": 2}),
        ({"type": "object", "$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}, {"a": "x"}),
        ({"type": "object", "properties": {"e": {"enum": [1, "1"]}}}, {"e": 1.0}),
        ({"type": "object", "properties": {"u": {"type": "array", "uniqueItems": True}}}, {"u": [1, 1.0]}),
    ]
    for i, (schema, value) in enumerate(cases):
        reg = registry([])
        reg.define({"type": "x.y", "kind": "message", "title": "t", "schema": schema})
        sdk = ok(reg.validate_payload, "x.y", value)
        c = genesis({"types": [{"type": "x.y", "kind": "message", "title": "t", "schema": schema}]}, f"interoppayload{i}")
        c.add(CREATOR, "x.y", value, 1)
        b.add("payload", f"{json.dumps(schema)} ← {json.dumps(value)}", {"records": c.records, "payload": True},
              ["ok", "ok"] if sdk else ["ok", "payload_schema_violation"])


def all_cases() -> list[Case]:
    b = Builder()
    identity_cases(b)
    jwt_cases(b)
    record_cases(b)
    freshness_cases(b)
    head_cases(b)
    vocabulary_cases(b)
    payload_cases(b)
    return b.cases


if __name__ == "__main__":
    import sys

    json.dump([c.wire() for c in all_cases()], sys.stdout, indent=1)
