"""Issue 23, proof 3 (the Rust side) and proof 4: the reference Rust SDK's
LocalConnector Delegation tools against a real `apconnect hub`, beside
apconnect's own tools (the real binary): the same principal, the same
verdicts, the same listings and histories; a credential granted with
apconnect checks usable in the Rust SDK, one granted with the Rust SDK
checks usable in apconnect, and a revocation made on either side is seen
by the other. Run by `make interop-rust` (it needs the cargo build)."""

from __future__ import annotations

import pytest

from delegation_world import put_controllers
from test_connector import RustConnector


@pytest.fixture
def rust(hub):
    r = RustConnector(hub)
    yield r
    r.stop()


def same_verdicts(a: list, b: list) -> bool:
    """Verdict lists agree but for the checked_at each read gets."""
    def norm(v):
        c = {k: x for k, x in v["credential"].items() if k != "checked_at"}
        return (c, v["verified"], v["usable"], v["reasons"])
    return [norm(v) for v in a] == [norm(v) for v in b]


def test_rust_connector_and_apconnect_agree(hub, rust, apc):
    h = hub.origin
    alice, carol = apc("alice"), apc("carol")           # apconnect: a controller, a subject
    ctl, sub = rust.agent_id("ctl"), rust.agent_id("sub")  # Rust SDK: a controller, a subject
    acme = put_controllers(hub, "rusty", alice.id, ctl)

    # principal_resolve: the same document, id and alias flag.
    assert rust.ok("ctl", "principal_resolve", url=acme) == alice.ok("agent_protocols_principal_resolve", {"url": acme})

    # Grants from both sides.
    by_rust = rust.ok("ctl", "delegation_grant", id="by-rust", principal_id=acme, subject=carol.id, scopes=["review"], audiences=[h])
    by_apc = alice.ok("agent_protocols_delegation_grant", {"id": "by-apconnect", "principal_id": acme, "subject": sub,
                                                           "scopes": ["review"], "audiences": [h]})
    assert by_rust["credential"]["status"] == by_apc["credential"]["status"] == "active"

    # apconnect's grant checks usable in the Rust SDK, the Rust SDK's in
    # apconnect; and each side's verdict on each credential is the other's.
    r_sub = rust.ok("sub", "delegation_check", principal_id=acme, audience=h)
    assert [d["credential"]["id"] for d in r_sub["delegations"]] == ["by-apconnect"] and r_sub["delegations"][0]["usable"], r_sub
    a_carol = carol.ok("agent_protocols_delegation_check", {"principal_id": acme, "audience": h})
    assert [d["credential"]["id"] for d in a_carol["delegations"]] == ["by-rust"] and a_carol["delegations"][0]["usable"], a_carol
    for subject in (carol.id, sub):
        for audience in (h, "https://elsewhere.example"):
            r = rust.ok("ctl", "delegation_check", principal_id=acme, audience=audience, subject=subject)
            a = alice.ok("agent_protocols_delegation_check", {"principal_id": acme, "audience": audience, "subject": subject})
            assert same_verdicts(r["delegations"], a["delegations"]), (r, a)
            assert (r["canonical_id"], r["query_url"], r["complete"]) == (a["canonical_id"], a["query_url"], a["complete"])

    # Listings and histories agree.
    def ids(result):
        return sorted(c["id"] for c in result["delegations"])
    assert ids(rust.ok("ctl", "delegations_list", principal_id=acme)) == ids(alice.ok("agent_protocols_delegations_list", {"principal_id": acme})) == ["by-apconnect", "by-rust"]
    assert ids(rust.ok("sub", "delegations_list", delegation_service=h)) == ["by-apconnect"]
    assert ids(carol.ok("agent_protocols_delegations_list", {"delegation_service": h})) == ["by-rust"]
    for did in ("by-rust", "by-apconnect"):
        r = rust.ok("ctl", "delegation_history", principal_id=acme, id=did)
        a = alice.ok("agent_protocols_delegation_history", {"principal_id": acme, "id": did})
        assert r["records"] == a["records"] and r["signatures_verified"] is a["signatures_verified"] is True

    # Revocations cross over.
    rust.ok("ctl", "delegation_revoke", id="by-apconnect", principal_id=acme, reason="rotated")
    alice.ok("agent_protocols_delegation_revoke", {"id": "by-rust", "principal_id": acme})
    r_sub = rust.ok("sub", "delegation_check", principal_id=acme, audience=h)
    a_carol = carol.ok("agent_protocols_delegation_check", {"principal_id": acme, "audience": h})
    for result in (r_sub, a_carol):
        assert result["delegations"][0]["usable"] is False and result["delegations"][0]["reasons"] == ["status is revoked"], result

    # Neither signs for a key that is no controller. The codes differ
    # (docs/INTEROP.md, Agent Delegation): the Rust connector's refusal
    # carries no protocol code (its MCP layer reports invalid_request),
    # apconnect's is the protocol's.
    r = rust.call("sub", "delegation_grant", id="x", principal_id=acme, subject=carol.id, scopes=["review"], audiences=[h])
    a = carol.call("agent_protocols_delegation_grant", {"id": "x", "principal_id": acme, "subject": sub, "scopes": ["review"], "audiences": [h]})
    assert r["error"]["code"] is None and "is not a controller key" in r["error"]["message"], r
    assert a["error"]["code"] == "controller_not_current", a
