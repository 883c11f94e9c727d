"""Issue 23, proof 3 (the Python side): a credential granted with apconnect
(the real binary, `apconnect call agent_protocols_delegation_grant`)
verifies usable in the SDK; one granted with the SDK checks usable in
apconnect; a revocation made on either side is seen by the other."""

from __future__ import annotations

from agent_protocols import unix_ms
from agent_protocols.delegation import verify_delegation_credential
from agent_protocols.http_client import DelegationClient

from delegation_world import Controller, put_controllers


def sdk_verdict(hub, principal: str, subject: str, delegation_id: str) -> dict:
    """The SDK's own check, as a relying party (the hub as audience)."""
    client = DelegationClient.discover(hub.origin, hub.session())
    doc = client.principal(principal)
    found = client.query_delegations({"subject": subject, "principal_id": doc["id"], "id": delegation_id})["result"]
    assert len(found) == 1, found
    records = client.all_delegation_events(delegation_id)
    return verify_delegation_credential(found[0], records, doc, doc["id"], hub.origin, unix_ms())


def test_apconnect_and_the_sdk_verify_each_others_credentials(hub, sdk, apc):
    alice = apc("alice")            # apconnect, a controller of acme
    carol = apc("carol")            # apconnect, a subject
    bob = Controller(sdk("bob"))    # the SDK, a controller of acme
    dave = sdk("dave")              # the SDK, a subject
    acme = put_controllers(hub, "cross", alice.id, bob.id)

    # Granted with apconnect, verified usable by the SDK.
    g = alice.ok("agent_protocols_delegation_grant", {"id": "by-apconnect", "principal_id": acme, "subject": dave.id,
                                                      "scopes": ["review"], "audiences": [hub.origin]})
    assert g["credential"]["event_id"] == g["envelope"]["hash"]
    v = sdk_verdict(hub, acme, dave.id, "by-apconnect")
    assert v["usable"] and v["verified"] and v["reasons"] == [], v

    # Granted with the SDK, checked usable by apconnect (as the subject,
    # and by another apconnect identity as a relying party).
    bob.grant({"id": "by-sdk", "principal_id": acme, "subject": carol.id, "scopes": ["review"], "audiences": [hub.origin]})
    mine = carol.ok("agent_protocols_delegation_check", {"principal_id": acme, "audience": hub.origin})
    assert [d["credential"]["id"] for d in mine["delegations"]] == ["by-sdk"] and mine["complete"]
    assert mine["delegations"][0]["usable"] and mine["delegations"][0]["reasons"] == [], mine
    theirs = alice.ok("agent_protocols_delegation_check", {"principal_id": acme, "audience": hub.origin, "subject": carol.id})
    assert theirs["delegations"][0]["usable"], theirs

    # Revoked by apconnect: the SDK sees it.
    alice.ok("agent_protocols_delegation_revoke", {"id": "by-apconnect", "principal_id": acme, "reason": "done"})
    v = sdk_verdict(hub, acme, dave.id, "by-apconnect")
    assert not v["usable"] and v["verified"] and v["reasons"] == ["status is revoked"], v

    # Revoked by the SDK: apconnect sees it, and still lists it.
    bob.revoke({"id": "by-sdk", "principal_id": acme})
    after = carol.ok("agent_protocols_delegation_check", {"principal_id": acme, "audience": hub.origin})
    assert after["delegations"][0]["usable"] is False and after["delegations"][0]["reasons"] == ["status is revoked"], after
    listed = carol.ok("agent_protocols_delegations_list", {"delegation_service": hub.origin})
    assert [(c["id"], c["status"]) for c in listed["delegations"]] == [("by-sdk", "revoked")], listed
    hist = carol.ok("agent_protocols_delegation_history", {"principal_id": acme, "id": "by-sdk"})
    assert [r["envelope"]["event"]["type"] for r in hist["records"]] == ["delegation.grant", "delegation.revoke"]
    assert hist["signatures_verified"] is True
