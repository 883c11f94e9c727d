"""Issue 22, proof 2: the reference SDK's KnowledgeClient (agent-protocols
0.12.6) against the knowledge service of `apconnect hub`, every endpoint,
valid and invalid, compared with the SDK's own KnowledgeStore fed the same
submissions (knowledge_twin.py): the same acceptances and codes, the same
sequence numbers, pages, checkpoints and cursors (each side's cursor works
on the other), the same batch partitions; and lexical search over a fixed
corpus with the expected top results written down, every hit checked with
the SDK's match rule and the page checked by the SDK store's own search
(candidates it finds eligible, exhaustive only when it holds every match).

The tests of this module share one hub and one store, in file order.
"""

from __future__ import annotations

import copy
import json
import random

import pytest

from agent_protocols import unix_ms
from agent_protocols import knowledge as K

from knowledge_cases import digest, noncanonical
from knowledge_twin import (
    Agent, Twin, assessment, cursor_parts, hub_code, ids, publication, retraction, sdk_code, seqs,
)

SEED = 20261202


@pytest.fixture(scope="module")
def twin(hub):
    return Twin(hub)


@pytest.fixture(scope="module")
def agents():
    return Agent(bytes(range(10, 42))), Agent(bytes(range(20, 52)))


@pytest.fixture(scope="module")
def graph(twin, agents):
    """A graph of every event type, submitted to both sides; names → ids."""
    alice, bob = agents
    out = {}

    def put(name, agent, typ, payload, **kw):
        env = agent.sign(typ, payload, **kw)
        (hcode, hrec), (scode, srec) = twin.submit(env)
        assert (hcode, scode) == ("ok", "ok"), (name, hcode, scode, hrec)
        out[name] = env["hash"]
        return env

    put("question", alice, K.KNOWLEDGE_PUBLISH, publication("question", "Cache keys", "Which cache key keeps languages apart?", tags=["caching"]))
    put("hypothesis", alice, K.KNOWLEDGE_PUBLISH, publication(
        "hypothesis", "Language key", "The language belongs in the cache key.", tags=["caching", "i18n"], language="EN",
        relations=[{"relation": "addresses", "target": out["question"]}],
        profiles=[{"profile": {"url": "https://profiles.example/p", "digest": digest("p")}, "data": {"k": [1, 1]}}]))
    put("observation", bob, K.KNOWLEDGE_PUBLISH, publication(
        "observation", "Measured", "Both keys hit.", language="en-US",
        relations=[{"relation": "tests", "target": out["hypothesis"]}, {"relation": "derived_from", "target": out["question"]}]))
    put("assessment", bob, K.KNOWLEDGE_ASSESS, assessment(out["hypothesis"], "reproduced", "The cache bug reproduces.",
        reproduction={"environment": "linux", "steps": ["run", "run"], "expected": "miss", "observed": "miss"},
        profiles=[{"profile": {"url": "https://profiles.example/p", "digest": digest("p")}, "data": {}}]))
    put("successor", alice, K.KNOWLEDGE_PUBLISH, publication(
        "hypothesis", "Language and region key", "Region too.", relations=[{"relation": "supersedes", "target": out["hypothesis"]}]))
    put("retraction", alice, K.KNOWLEDGE_RETRACT, retraction(out["question"], "Answered elsewhere."))
    for i in range(7):
        put(f"note{i}", bob if i % 2 else alice, K.KNOWLEDGE_PUBLISH,
            publication("observation", f"Note {i}", "Filler " + "x" * i, tags=["filler"], relations=[{"relation": "extends", "target": out["question"]}]))
    return out


def test_discovery(twin, hub):
    doc = twin.client.protocol()
    K.validate_knowledge_discovery(doc, hub.origin)
    assert doc["features"] == ["ranked-search"] and doc["search_modes"] == ["lexical"], doc
    assert doc["endpoints"] == {k: hub.origin + "/v1/knowledge/" + k for k in ("events", "query", "batch", "search")}, doc


def _same_submission(twin, name, env):
    (hcode, hrec), (scode, srec) = twin.submit(env)
    assert hcode == scode, f"{name}: the hub says {hcode}, the SDK's store {scode}: {json.dumps(hrec)[:400]}"
    if hcode == "ok":
        assert hrec["envelope"] == srec["envelope"] and hrec["seq"] == srec["seq"], (name, hrec, srec)
    elif hcode == "missing_dependency":
        assert hrec["data"]["missing"] == sorted(set(hrec["data"]["missing"])), hrec
    return hcode, hrec


def test_submissions(twin, agents, graph):
    """Valid and invalid submissions, generated from a seed: the same
    verdicts, the same records and seq; exact resubmissions return the
    original record on both sides; a refusal changes neither."""
    alice, bob = agents
    rng = random.Random(SEED)
    now = unix_ms()
    cases = []
    for i in range(40):
        kind = rng.choice(K.KNOWLEDGE_KINDS[:5])
        target = rng.choice([graph["question"], graph["hypothesis"], graph["assessment"], digest(f"absent{i}")])
        relation = rng.choice(K.KNOWLEDGE_RELATIONS[:7])
        signer = rng.choice([alice, bob])
        typ = rng.choice([K.KNOWLEDGE_PUBLISH, K.KNOWLEDGE_PUBLISH, K.KNOWLEDGE_ASSESS, K.KNOWLEDGE_RETRACT])
        if typ == K.KNOWLEDGE_PUBLISH:
            payload = publication(kind, f"Generated {i}", f"Statement {i}", relations=[{"relation": relation, "target": target}])
        elif typ == K.KNOWLEDGE_ASSESS:
            payload = assessment(target, rng.choice(["supports", "challenges", "inconclusive"]))
        else:
            payload = retraction(target)
        skew = rng.choice([0, 0, -86_400_000 * 400, 290_000, 310_000])
        env = signer.sign(typ, payload, created_at=now + skew)
        cases.append((f"generated {i} {typ} {relation if typ == K.KNOWLEDGE_PUBLISH else ''} skew {skew}", env))
    good = alice.sign(K.KNOWLEDGE_PUBLISH, publication("definition", "Twin", "Submitted twice."))
    tampered = copy.deepcopy(good)
    tampered["event"]["payload"]["title"] = "Changed"
    bad_sig = copy.deepcopy(good)
    bad_sig["signature"] = bad_sig["signature"][:-2] + ("AA" if not bad_sig["signature"].endswith("AA") else "BA")
    cases += [
        ("a publication", good),
        ("its exact resubmission", good),
        ("a tampered payload", tampered),
        ("a bad signature", bad_sig),
        ("an http license", alice.sign(K.KNOWLEDGE_PUBLISH, publication("question", "Q", "S", license="http://example.com/l"))),
        ("a retraction with a license", alice.sign(K.KNOWLEDGE_RETRACT, {**retraction(graph["hypothesis"]), "license": publication("x", "t", "s")["license"]})),
        ("a non-canonical target", alice.sign(K.KNOWLEDGE_RETRACT, retraction(noncanonical(graph["hypothesis"])))),
        ("two missing dependencies", bob.sign(K.KNOWLEDGE_PUBLISH, publication("synthesis", "S", "S", relations=[
            {"relation": "extends", "target": digest("m2")}, {"relation": "extends", "target": digest("m1")}]))),
        ("supersedes across authors", bob.sign(K.KNOWLEDGE_PUBLISH, publication("hypothesis", "H", "H", relations=[
            {"relation": "supersedes", "target": graph["hypothesis"]}]))),
        ("retraction with a lower nonce", alice.sign(K.KNOWLEDGE_RETRACT, retraction(graph["successor"]), nonce=1)),
        ("the same nonce twice", alice.sign(K.KNOWLEDGE_PUBLISH, publication("question", "Same nonce", "A."), nonce=alice.nonce)),
        ("an old event", alice.sign(K.KNOWLEDGE_PUBLISH, publication("question", "Old", "From 2020."), created_at=1_600_000_000_000, nonce=7)),
        ("over the envelope limit", alice.sign(K.KNOWLEDGE_PUBLISH, publication("observation", "Big", "x" * 262_144))),
        ("collection without contains", alice.sign(K.KNOWLEDGE_PUBLISH, publication("collection", "C", "C"))),
    ]
    codes = set()
    for name, env in cases:
        before = twin.store.checkpoint
        code, rec = _same_submission(twin, name, env)
        codes.add(code)
        if code != "ok":
            assert twin.store.checkpoint == before, name
    for want in ("ok", "missing_dependency", "invalid_target", "timestamp_out_of_window", "invalid_event", "invalid_event_hash",
                 "invalid_signature", "payload_too_large"):
        assert want in codes, f"no case gave {want}: {sorted(codes)}"
    # An exact resubmission returns the first record, accepted_at included.
    first = twin.client.submit(good)
    assert first == twin.client.submit(good) and first["seq"] == twin.store.event(good["hash"])["seq"]


def test_event_reads(twin, graph):
    for name, event_id in graph.items():
        hub = twin.client.event(event_id)
        assert hub["envelope"] == twin.store.event(event_id)["envelope"] and hub["seq"] == twin.store.event(event_id)["seq"], name
    for path, want in ((digest("absent"), "not_found"), ("short", "invalid_request"), (noncanonical(graph["question"]), "invalid_request")):
        hcode, _ = twin.raw_get("/v1/knowledge/events/" + path)
        scode, _ = sdk_code(twin.store.event, path)
        assert hcode == scode == want, (path, hcode, scode)


QUERIES = [
    {}, {"limit": 3}, {"limit": 1}, {"actor": "alice"}, {"type": K.KNOWLEDGE_ASSESS}, {"kind": "hypothesis"},
    {"tag": "caching"}, {"tag": "filler", "limit": 2}, {"language": "en"}, {"language": "EN-us"}, {"verdict": "reproduced"},
    {"target": "question"}, {"target": "question", "limit": 2}, {"target": "question", "relation": "derived_from"},
    {"relation": "extends", "limit": 4}, {"profile": "p"}, {"type": K.KNOWLEDGE_RETRACT, "kind": "question"},
    {"after_seq": 3}, {"after_seq": 3, "limit": 2, "actor": "bob"},
]


def _resolve(q, graph, agents):
    alice, bob = agents
    out = dict(q)
    if out.get("actor") in ("alice", "bob"):
        out["actor"] = alice.id if out["actor"] == "alice" else bob.id
    if "target" in out:
        out["target"] = graph[out["target"]]
    if "profile" in out:
        out["profile"] = digest(out["profile"])
    return out


@pytest.mark.parametrize("query", QUERIES, ids=[json.dumps(q) for q in QUERIES])
def test_queries(twin, graph, agents, query):
    """Every page of a traversal on both sides: the same records, seqs,
    checkpoint and cursors (but as_of, each side's clock); each side's
    cursor is followed on the other and gives the same next page."""
    request = _resolve(query, graph, agents)
    hub_pages = list(twin.client.query_pages(copy.deepcopy(request)))
    req, store_pages = copy.deepcopy(request), []
    while True:
        page = twin.store.query(req)
        store_pages.append(page)
        if "next_cursor" not in page:
            break
        req["cursor"] = page["next_cursor"]
    assert len(hub_pages) == len(store_pages), (len(hub_pages), len(store_pages))
    for h, s in zip(hub_pages, store_pages):
        assert ids(h) == ids(s) and seqs(h) == seqs(s), (ids(h), ids(s))
        assert h["checkpoint"] == s["checkpoint"] and h["service"] == s["service"]
        assert cursor_parts(h.get("next_cursor")) == cursor_parts(s.get("next_cursor")), (h.get("next_cursor"), s.get("next_cursor"))
        if "next_cursor" in h:
            assert h["next_cursor"].split(".")[1] == str(h["as_of"])
    # Cross-feeding: the hub's first cursor works at the store, the store's
    # at the hub, and both give the second page.
    if "next_cursor" in hub_pages[0]:
        from_hub_cursor = twin.store.query({**request, "cursor": hub_pages[0]["next_cursor"]})
        from_store_cursor = twin.client.query({**request, "cursor": store_pages[0]["next_cursor"]})
        assert ids(from_hub_cursor) == ids(from_store_cursor) == ids(hub_pages[1])


def test_query_refusals(twin, graph, agents):
    """Malformed queries and cursors get the same code from the hub (raw,
    as the SDK's client validates first) and from the SDK's parser and
    store."""
    alice, _ = agents
    first = twin.client.query({"actor": alice.id, "limit": 1})
    cur = first["next_cursor"]
    checkpoint, as_of, last, dg = cur.split(".")
    strings = [
        f"actor={alice.id}&limit=1&cursor={cur}", f"actor={alice.id}&limit=2&cursor={cur}", f"limit=1&cursor={cur}",
        f"actor={alice.id}&limit=1&cursor={int(checkpoint) + 100}.{as_of}.{last}.{dg}",
        f"actor={alice.id}&limit=1&cursor={checkpoint}.{as_of}.{int(checkpoint) + 1}.{dg}",
        f"actor={alice.id}&limit=1&cursor=1.2.3", f"actor={alice.id}&limit=1&cursor=a.b.c.d", f"actor={alice.id}&limit=1&cursor=",
        f"actor={alice.id}&actor={alice.id}", "q=cache", "limit=0", "limit=1001", "limit=+1", "limit=1e2", "limit=0000005",
        "limit=", "after_seq=100000", "after_seq=-1", "created_from=5&created_before=5", "created_from=6&created_before=5",
        "actor=did:agent:short", "target=" + noncanonical(graph["question"]), "kind=essay", "type=knowledge.vote",
        "tag=UPPER", "language=e", "limit=12345678901234567", "limit=00000000000000000000001",
    ]
    seen = set()
    for qs in strings:
        hcode, hbody = twin.raw_get("/v1/knowledge/query?" + qs)
        scode, _ = twin.store_query_string(qs)
        assert hcode == scode, f"{qs}: hub {hcode} {json.dumps(hbody)[:300]}, SDK {scode}"
        seen.add(hcode)
    assert {"ok", "invalid_request", "invalid_cursor"} <= seen, seen


def test_batch(twin, graph):
    rng = random.Random(SEED)
    known = list(graph.values())
    for i in range(15):
        hashes = rng.sample(known, rng.randint(0, 5)) + [digest(f"none{i}{j}") for j in range(rng.randint(0, 3))]
        rng.shuffle(hashes)
        if not hashes:
            hashes = [digest("empty")]
        hub, store = twin.client.batch(hashes), twin.store.batch({"hashes": hashes})
        assert ids(hub) == ids(store) and hub["missing"] == store["missing"] and hub["checkpoint"] == store["checkpoint"], hashes
    for body in ['{"hashes":[]}', '{"hashes":["' + digest("a") + '","' + digest("a") + '"]}', '{"hashes":["short"]}',
                 '{"hashes":["' + digest("a") + '"],"x":1}', '{"hashes":' + json.dumps([digest(str(i)) for i in range(101)]) + '}',
                 '{"hashes":["' + digest("a") + '"],"hashes":["' + digest("b") + '"]}', '{', '[]']:
        hcode, _ = twin.raw_post("/v1/knowledge/batch", body)
        scode, _ = sdk_code(lambda: twin.store.batch(K.parse_knowledge_read_json(body)))
        assert hcode == scode == "invalid_request", (body, hcode, scode)


# The fixed corpus of the search test: a word no other event holds (zqx),
# and the hits expected, best first, written down. The hub ranks by BM25
# over substring occurrences: more occurrences in a shorter text rank higher
# (the "short" text says zqx twice in 14 characters, "upper" twice in 31, the
# long statement four times in 230, "context" once in its scope, "unicode"
# and "title" once each in longer texts); with two terms, the long text's
# four zqx and two "cache" beat the short one's two and one. The inverse
# document frequencies come from the events of this module's hub, so the
# expectations hold for this module's fixed sequence of submissions.
CORPUS = {
    "short": ("observation", "Zqx cache", "Zqx."),
    "long": ("observation", "About zqx caches", "Zqx caches keyed by user alone return one language; zqx caches keyed by language too do not. "
                                                 "This statement is long on purpose, so its zqx terms weigh less."),
    "title": ("question", "Zqx language keys?", "Which key?"),
    "context": ("inference", "Regions", "Region keys."),
    "unicode": ("observation", "Zqx 缓存键", "缓存键必须包含语言。"),
    "upper": ("observation", "ZQX SHOUTING", "ALL CAPS ZQX CACHE"),
}
SEARCHES = [
    ("one term", {"text": "zqx", "mode": "lexical"}, ["short", "upper", "long", "context", "unicode", "title"], True),
    ("two terms", {"text": "zqx cache", "mode": "lexical"}, ["long", "short", "upper"], True),
    ("ASCII case", {"text": "ZQX Language", "mode": "lexical"}, ["long", "title"], True),
    ("a context string", {"text": "zqx-scope", "mode": "lexical"}, ["context"], True),
    ("non-ASCII", {"text": "zqx 缓存", "mode": "lexical"}, ["unicode"], True),
    ("limit", {"text": "zqx", "mode": "lexical", "limit": 2}, ["short", "upper"], False),
    ("filters", {"text": "zqx", "mode": "lexical", "filters": {"kind": "question"}}, ["title"], True),
    ("no match", {"text": "zqx zebra", "mode": "lexical"}, [], True),
]


@pytest.fixture(scope="module")
def corpus(twin, agents):
    alice, _ = agents
    out = {}
    for name, (kind, title, statement) in CORPUS.items():
        extra = {"context": {"scope": "zqx-scope", "conditions": [], "limitations": []}} if name == "context" else {}
        env = alice.sign(K.KNOWLEDGE_PUBLISH, publication(kind, title, statement, **extra))
        (hcode, _), (scode, _) = twin.submit(env)
        assert hcode == scode == "ok", (name, hcode, scode)
        out[env["hash"]] = name
    return out


@pytest.mark.parametrize("name,request_,want,exhaustive", SEARCHES, ids=[s[0] for s in SEARCHES])
def test_search(twin, corpus, name, request_, want, exhaustive):
    page = twin.client.search(copy.deepcopy(request_))  # the SDK client checks filters and text on every hit
    got = [corpus.get(h["record"]["envelope"]["hash"], "?") for h in page["result"]]
    assert got == want, f"{name}: {got}, want {want}"
    assert page["coverage"]["exhaustive"] is exhaustive and page["ranking"]["mode"] == "lexical"
    for h in page["result"]:
        assert K.knowledge_text_matches(h["record"]["envelope"], request_["text"])
    # The SDK store's own search accepts the hub's selection: every
    # candidate eligible, exhaustive only when it holds every match.
    hits = [h["record"]["envelope"]["hash"] for h in page["result"]]
    checked = twin.store.search(copy.deepcopy(request_), candidates=hits, ranking=page["ranking"], coverage=page["coverage"], modes=["lexical"])
    assert [h["record"]["envelope"]["hash"] for h in checked["result"]] == hits


def test_search_refusals(twin):
    for body, want in [
        ('{"text":"zqx","mode":"semantic"}', "unsupported_search_mode"), ('{"text":"zqx","mode":"hybrid"}', "unsupported_search_mode"),
        ('{"text":"zqx","mode":"fuzzy"}', "unsupported_search_mode"), ('{"text":"zqx"}', "invalid_request"),
        ('{"text":" ","mode":"lexical"}', "invalid_request"), ('{"text":"' + " ".join("abcdefghijklmnopq") + '","mode":"lexical"}', "invalid_request"),
        ('{"text":"zqx","mode":"lexical","limit":101}', "invalid_request"), ('{"text":"zqx","mode":"lexical","limit":0}', "invalid_request"),
        ('{"text":"zqx","mode":"lexical","filters":{"after_seq":1}}', "invalid_request"), ('{"text":"zqx","mode":"lexical","x":1}', "invalid_request"),
        ('{"text":"' + "x" * 1025 + '","mode":"lexical"}', "invalid_request"), ('{"text":"zqx","mode":"lexical","filters":{"actor":"x"}}', "invalid_request"),
    ]:
        hcode, _ = twin.raw_post("/v1/knowledge/search", body)
        scode, _ = sdk_code(lambda: twin.store.search(K.parse_knowledge_read_json(body), candidates=[], ranking={"mode": "lexical", "id": "x"},
                                                      coverage={"exhaustive": False, "reasons": ["candidate_limit"]}, modes=["lexical"]))
        assert hcode == scode == want, (body, hcode, scode)
    code, _ = sdk_code(twin.client.search, {"text": "zqx", "mode": "semantic"})
    assert code == "unsupported_search_mode"
