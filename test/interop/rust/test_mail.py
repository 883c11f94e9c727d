"""Issue 21, proof 4: the reference Rust SDK's LocalConnector (0.12.6) Mail
tools against a real `apconnect hub`'s relay, exchanging letters with an
apconnect agent (the real binary) in both directions: mailboxes published by
each, cards resolved by each, letters and threaded replies both ways, and the
Rust connector's own cards recovered from the hub.
"""

from __future__ import annotations

import pytest

from test_connector import RustConnector


@pytest.fixture
def rust(hub):
    r = RustConnector(hub)
    yield r
    r.stop()


def test_mail_both_ways(hub, apc, rust):
    h = hub.origin
    ap = apc("mail-rust")
    rbox = rust.ok("r", "mail_mailbox_publish", routes=[h])
    assert rbox["published"] == [h] and rbox["mailbox"]["status"] == "open", rbox
    abox = ap.ok("mail_mailbox_publish", {"routes": [h]})["mailbox"]
    rid = rust.agent_id("r")

    # Each resolves the other's card from the hub.
    res = rust.ok("r", "mail_resolve", agent_id=ap.id, address=abox["address"])
    assert res["mailboxes"][0]["usable"] is True and res["mailboxes"][0]["card"]["hash"] == abox["card_hash"], res
    res = ap.ok("mail_resolve", {"agent_id": rid, "address": rbox["mailbox"]["address"]})
    assert res["mailboxes"][0]["usable"] is True and res["mailboxes"][0]["card"]["hash"] == rbox["mailbox"]["card_hash"], res

    # apconnect -> Rust, with a reply card; the Rust connector opens it.
    sent = ap.ok("mail_send", {"to": rbox["mailbox"]["address"], "subject": "From apconnect", "text": "Hello, Rust SDK",
                               "reply_mailbox_id": abox["mailbox_id"]})
    assert sent["status"] == "delivered", sent
    got = rust.ok("r", "mail_sync")
    assert [m["message_id"] for m in got["received"]] == [sent["message"]["message_id"]], got
    assert got["received"][0]["parts"][0]["text"] == "Hello, Rust SDK" and got["errors"] == [], got
    assert got["received"][0]["reply_address"] == abox["address"], got["received"][0]
    listed = rust.ok("r", "mail_list", direction="received", unread_only=True, mark_read=True)
    assert len(listed["messages"]) == 1 and listed["unread_count"] == 0, listed

    # The Rust connector replies through the reply card; apconnect threads it.
    reply = rust.ok("r", "mail_send", in_reply_to=sent["message"]["message_id"], text="Hello back, apconnect")
    assert reply["status"] == "delivered", reply
    back = ap.ok("mail_sync")["received"]
    assert len(back) == 1 and back[0]["in_reply_to"] == sent["message"]["message_id"], back
    assert back[0]["thread_id"] == sent["message"]["thread_id"] and back[0]["parts"][0]["text"] == "Hello back, apconnect"

    # Rust -> apconnect on a new thread, then apconnect replies by address.
    first = rust.ok("r", "mail_send", to=abox["address"], subject="New thread", text="From Rust",
                    reply_mailbox_id=rbox["mailbox"]["mailbox_id"])
    got = ap.ok("mail_sync")["received"]
    assert len(got) == 1 and got[0]["message_id"] == first["message"]["message_id"], got
    ans = ap.ok("mail_send", {"in_reply_to": first["message"]["message_id"], "text": "Answered"})
    assert ans["message"]["mailbox_id"] == rbox["mailbox"]["mailbox_id"], ans
    got = rust.ok("r", "mail_sync")["received"]
    assert len(got) == 1 and got[0]["in_reply_to"] == first["message"]["message_id"], got

    # The Rust connector recovers its cards from the hub's /v1/me/mailboxes.
    mine = rust.ok("r", "mail_mailboxes_list", host=h, limit=10)
    assert [m["mailbox_id"] for m in mine["mailboxes"]] == [rbox["mailbox"]["mailbox_id"]], mine


def test_queued_letter_and_rotation(hub, apc, rust):
    """A rotated key: the Rust connector's stale pin is refreshed after the
    hub's stale_card and the letter sealed again; apconnect opens it."""
    h = hub.origin
    ap = apc("mail-rot")
    abox = ap.ok("mail_mailbox_publish", {"routes": [h]})["mailbox"]
    rust.ok("r2", "mail_resolve", agent_id=ap.id, address=abox["address"])
    ap.ok("mail_mailbox_publish", {"mailbox_id": abox["mailbox_id"], "routes": [h], "rotate_key": True})
    stable = abox["address"].split("?")[0]
    sent = rust.ok("r2", "mail_send", to=stable, text="after your rotation")
    assert sent["status"] == "delivered", sent
    got = ap.ok("mail_sync")
    assert [m["message_id"] for m in got["received"]] == [sent["message"]["message_id"]] and got["errors"] == [], got
