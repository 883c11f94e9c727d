"""Agent Knowledge differential cases: every case of knowledge_cases.py goes
through the reference SDK (agent-protocols 0.12.6, Python; its verdict is
computed there) and through host/proto/knowledge (goverdict), and the two
verdicts must be equal, except where KNOWN_DIFFERENCES records apconnect's
decided verdict and its reason.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter

import pytest

from harness import REPO, binary
from knowledge_cases import URLS_STRICTER, all_cases, known_differences

CASES = all_cases()
KNOWN = known_differences(CASES)


@pytest.fixture(scope="module")
def go_verdicts():
    exe = binary("GOVERDICT_BIN", "bin/goverdict")
    proc = subprocess.run([str(exe)], input=json.dumps([c.wire() for c in CASES]),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"goverdict failed ({proc.returncode}):\n{proc.stderr}"
    answers = json.loads(proc.stdout)
    assert [a["id"] for a in answers] == [c.id for c in CASES], "goverdict answered other cases"
    return {a["id"]: a for a in answers}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_knowledge_case(case, go_verdicts):
    answer = go_verdicts[case.id]
    assert "error" not in answer, f"goverdict could not run the case: {answer['error']}\ninput: {json.dumps(case.input)[:2000]}"
    go = answer["verdict"]
    known = KNOWN.get(case.id)
    if known is not None:
        assert go == known["go"], (
            f"decided difference changed: the SDK says {json.dumps(case.sdk)}, apconnect was decided to say "
            f"{json.dumps(known['go'])} ({known['why']}) and now says {json.dumps(go)}")
        return
    assert go == case.sdk, (
        f"{case.id}\n  SDK (agent-protocols 0.12.6): {json.dumps(case.sdk, ensure_ascii=False)[:1000]}\n"
        f"  apconnect (Go):               {json.dumps(go, ensure_ascii=False)[:1000]}\n"
        f"  input: {json.dumps(case.input, ensure_ascii=False)[:2000]}")


def test_cases_cover_both_verdicts():
    """The generated families hold accepted and refused inputs alike, so an
    implementation that always says one thing fails."""
    by_kind: dict[str, Counter] = {}
    for c in CASES:
        by_kind.setdefault(c.kind, Counter())[json.dumps(c.sdk, sort_keys=True) == '"ok"'] += 1
    for kind in ("knowledge_envelope", "knowledge_submit", "knowledge_url", "knowledge_search_request",
                 "knowledge_discovery", "knowledge_record", "knowledge_query_response"):
        assert by_kind[kind][True] >= 3 and by_kind[kind][False] >= 3, (kind, by_kind[kind])
    codes = {c.sdk for c in CASES if c.kind == "knowledge_submit"}
    for want in ("ok", "missing_dependency", "invalid_target", "timestamp_out_of_window", "payload_too_large", "invalid_event"):
        assert want in codes, want


def test_known_differences_are_only_stricter_urls():
    """Every decided difference is a URL of URLS_STRICTER that the Python
    SDK accepts, and apconnect refuses it."""
    stricter = {u for _, u in URLS_STRICTER}
    assert KNOWN, "no decided difference left: drop the mechanism"
    for cid, d in KNOWN.items():
        case = next(c for c in CASES if c.id == cid)
        assert case.sdk == "ok" and d["go"] in ("invalid_event", "invalid_discovery"), cid
        text = json.dumps(case.input, ensure_ascii=False)
        assert any(json.dumps(u, ensure_ascii=False)[1:-1] in text for u in stricter), cid


def test_bundled_schema_is_the_sdk_schema():
    """host/proto/knowledge embeds the SDK's knowledge.schema.json byte for byte."""
    from importlib.resources import files

    bundled = (REPO / "host/proto/knowledge/schema/knowledge.schema.json").read_bytes()
    assert bundled == files("agent_protocols").joinpath("knowledge.schema.json").read_bytes()
