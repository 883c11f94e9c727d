"""Issue 22, proof 3: items an apconnect agent publishes (the real binary,
`apconnect call agent_protocols_knowledge_submit`) verify in the reference
Python SDK (agent-protocols 0.12.6) — the envelope with
validate_knowledge_envelope, the stored record through its KnowledgeClient
— and items an SDK agent publishes through its KnowledgeClient are read,
queried, searched and statused by apconnect with the same results the SDK
client reads. (The Rust SDK's verification is in rust/test_knowledge.py.)
"""

from __future__ import annotations

import copy

from agent_protocols import knowledge as K
from agent_protocols.http_client import KnowledgeClient

from knowledge_twin import Agent, assessment, publication, retraction


def item_of(record):
    """The flattened KnowledgeItem of a record, as the SDK's connector
    builds it."""
    ev = record["envelope"]["event"]
    return {"id": record["envelope"]["hash"], "type": ev["type"], "actor": ev["actor"], "created_at": ev["created_at"],
            "seq": record["seq"], "accepted_at": record["accepted_at"], "payload": ev["payload"]}


def test_apconnect_items_verify_in_the_sdk(hub, apc):
    alice = apc("alice")
    client = KnowledgeClient.discover(hub.origin, hub.session())
    q = alice.ok("agent_protocols_knowledge_submit", {"services": [hub.origin], "type": "knowledge.publish",
                                                      "payload": publication("question", "apconnect asks", "Does the SDK verify this?", tags=["interop"])})
    h = alice.ok("agent_protocols_knowledge_submit", {"services": [hub.origin], "type": "knowledge.publish", "payload": publication(
        "hypothesis", "apconnect guesses", "It does.", relations=[{"relation": "addresses", "target": q["id"]}],
        evidence=[{"url": "https://example.com/log", "description": "the log", "role": "output", "digest": q["id"]}])})
    r = alice.ok("agent_protocols_knowledge_submit", {"services": [hub.origin], "type": "knowledge.retract",
                                                      "payload": retraction(q["id"], "Answered.")})
    for res in (q, h, r):
        K.validate_knowledge_envelope(copy.deepcopy(res["envelope"]))
        assert res["envelope"]["event"]["actor"] == alice.id and res["id"] == res["envelope"]["hash"]
        record = client.event(res["id"])  # validate_knowledge_record, the hash asked for
        assert record["envelope"] == res["envelope"]
        assert item_of(record) == res["results"][0]["item"], (item_of(record), res["results"][0]["item"])
    # The SDK's own store accepts them too, in order, with their dependencies.
    store = K.KnowledgeStore(hub.origin)
    for res in (q, h, r):
        store.submit(copy.deepcopy(res["envelope"]))
    assert K.materialize_knowledge(store.known_envelopes())  # the SDK materializes the graph
    # Nonces: one sequence, strictly increasing across the three.
    nonces = [res["envelope"]["event"]["nonce"] for res in (q, h, r)]
    assert nonces == sorted(set(nonces)), nonces


def test_sdk_items_read_by_apconnect(hub, apc):
    sdk_agent, other = Agent(bytes(range(30, 62))), Agent(bytes(range(40, 72)))
    client = KnowledgeClient.discover(hub.origin, hub.session())
    q = client.submit(sdk_agent.sign(K.KNOWLEDGE_PUBLISH, publication("question", "SDK asks vbnq", "Can apconnect read vbnq?")))
    h = client.submit(sdk_agent.sign(K.KNOWLEDGE_PUBLISH, publication(
        "hypothesis", "SDK guesses vbnq", "apconnect reads it.", relations=[{"relation": "addresses", "target": q["envelope"]["hash"]}])))
    a = client.submit(other.sign(K.KNOWLEDGE_ASSESS, assessment(h["envelope"]["hash"], "supports", "vbnq holds.")))
    notes = [client.submit(sdk_agent.sign(K.KNOWLEDGE_PUBLISH, publication(
        "observation", f"vbnq note {i}", "More.", relations=[{"relation": "extends", "target": q["envelope"]["hash"]}]))) for i in range(5)]
    ret = client.submit(sdk_agent.sign(K.KNOWLEDGE_RETRACT, retraction(q["envelope"]["hash"], "vbnq answered.")))
    bob = apc("bob")
    H = hub.origin

    got = bob.ok("agent_protocols_knowledge_get", {"service": H, "ids": [h["envelope"]["hash"], "A" * 43, q["envelope"]["hash"]]})
    assert got["items"] == [item_of(h), item_of(q)] and got["missing"] == ["A" * 43], got

    # A traversal with apconnect's cursors equals the SDK client's pages.
    request = {"target": q["envelope"]["hash"], "limit": 2}
    sdk_pages = list(client.query_pages(dict(request)))
    pages, cursor = [], None
    while True:
        args = {"service": H, **request, **({"cursor": cursor} if cursor else {})}
        page = bob.ok("agent_protocols_knowledge_query", args)
        pages.append(page)
        cursor = page.get("next_cursor")
        if not cursor:
            break
    assert [[i["id"] for i in p["items"]] for p in pages] == [[r["envelope"]["hash"] for r in p["result"]] for p in sdk_pages]
    assert {p["checkpoint"] for p in pages} == {pages[0]["checkpoint"]} and pages[0]["service"] == H

    found = bob.ok("agent_protocols_knowledge_search", {"service": H, "text": "VBNQ apconnect", "mode": "lexical"})
    sdk_found = client.search({"text": "VBNQ apconnect", "mode": "lexical"})
    assert [x["item"]["id"] for x in found["hits"]] == [x["record"]["envelope"]["hash"] for x in sdk_found["result"]]
    assert {x["item"]["id"] for x in found["hits"]} == {q["envelope"]["hash"], h["envelope"]["hash"]}, found

    st = bob.ok("agent_protocols_knowledge_status", {"service": H, "id": q["envelope"]["hash"]})
    assert st["complete"] is True and st["status"] == "retracted" and st["retractions"] == [ret["envelope"]["hash"]], st
    assert st["item"] == item_of(q)
    st = bob.ok("agent_protocols_knowledge_status", {"service": H, "id": h["envelope"]["hash"]})
    assert st["status"] == "active" and st["assessments"] == [a["envelope"]["hash"]] and st["successors"] == [], st
    assert len(notes) == 5


def test_apconnect_payload_refusal_is_the_sdks(hub, apc):
    """An invalid payload is refused before signing with the SDK
    connector's code and {path, message} list, paths relative to the
    payload; nothing reaches the hub."""
    alice = apc("carol")
    out = alice.call("agent_protocols_knowledge_submit", {"services": [hub.origin], "type": "knowledge.publish",
                                                         "payload": {"license": "http://example.com", "kind": "essay"}})
    err = out["error"]
    assert err["code"] == "invalid_event", err
    paths = [e["path"] for e in err["data"]["errors"]]
    assert "/license" in paths and "/kind" in paths and len(paths) <= 16, paths
    out = alice.call("agent_protocols_knowledge_submit", {"services": [hub.origin], "type": "knowledge.retract", "payload": "no"})
    assert out["error"]["code"] == "invalid_event" and out["error"]["data"]["errors"][0]["path"] == "", out
