"""Issue 9, part 1: differential vectors. The same inputs go through the
reference SDK (vectors.py computes its verdicts) and through apconnect's Go
packages (the goverdict program); every case is one test, named with the
D-item of PROTOCOL-0.12.md it belongs to, and a disagreement prints both
verdicts and the input.

A disagreement the project keeps is listed in known_differences.py, with
the verdict apconnect gives instead and the reason; docs/INTEROP.md says
the same to readers, and test_known_differences_are_documented keeps the
two in step.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from harness import REPO, binary
from known_differences import VECTOR_DIFFERENCES
from sdkref import packs_document
from vectors import all_cases

CASES = all_cases()


@pytest.fixture(scope="module")
def go_verdicts():
    exe = binary("GOVERDICT_BIN", "bin/goverdict")
    proc = subprocess.run([str(exe)], input=json.dumps([c.wire() for c in CASES]),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"goverdict failed ({proc.returncode}):\n{proc.stderr}"
    answers = json.loads(proc.stdout)
    assert [a["id"] for a in answers] == [c.id for c in CASES], "goverdict answered other cases"
    return {a["id"]: a for a in answers}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_vector(case, go_verdicts):
    answer = go_verdicts[case.id]
    assert "error" not in answer, f"goverdict could not run the case: {answer['error']}\ninput: {json.dumps(case.input)[:2000]}"
    go = answer["verdict"]
    known = VECTOR_DIFFERENCES.get(case.id)
    if known is not None:
        assert go == known["go"], (
            f"documented difference changed: the SDK says {json.dumps(case.sdk)}, apconnect was documented as "
            f"{json.dumps(known['go'])} and now says {json.dumps(go)} (update known_differences.py and docs/INTEROP.md)")
        return
    assert go == case.sdk, (
        f"{case.id}\n  SDK (agent-protocols 0.12.6): {json.dumps(case.sdk)}\n  apconnect (Go):               {json.dumps(go)}\n"
        f"  input: {json.dumps(case.input)[:2000]}")


def test_known_differences_are_cases():
    ids = {c.id for c in CASES}
    stale = [k for k in VECTOR_DIFFERENCES if k not in ids]
    assert not stale, f"known_differences.py names cases that no longer exist: {stale}"


def test_known_differences_are_documented():
    doc = (REPO / "docs" / "INTEROP.md").read_text()
    missing = [k for k, v in VECTOR_DIFFERENCES.items() if v["doc"] not in doc]
    assert not missing, f"docs/INTEROP.md does not document: {missing}"


def test_bundled_packs_are_the_sdk_packs():
    """D-08: apconnect's bundled registered packs equal the 0.12.6 ones."""
    bundled = json.loads((REPO / "host/proto/adp/packs/1.0.packs.json").read_text())
    assert bundled == packs_document(), "host/proto/adp/packs/1.0.packs.json differs from the packs agent-protocols 0.12.6 ships"
