"""Agent Mail HPKE both ways, with real keys: apconnect (host/proto/mail,
through goverdict) seals letters that the reference SDK's decrypt_mail
opens, and the SDK's encrypt_mail seals letters that apconnect opens. The
refusals of sealing are compared too (Seal against encrypt_mail), and
apconnect's packets, mutated and re-signed, are judged by both sides.
"""

from __future__ import annotations

import json
import random

import pytest

from agent_protocols import AgentSigner
from agent_protocols.mail import MailEncryptionKey, decrypt_mail, encrypt_mail

from mail_cases import (
    ALICE, BOB_KEY, BOB_SECRET, CAROL, DAY, MB2, SEEDS, SKEW, T0, b64, jcs, make_card,
    message, resign, sdk, unb64,
)
from test_mail_vectors import open_input, open_verdict, run_goverdict
from vectors import Builder, Case


def seal_input(m, card, seed=SEEDS["alice"], nonce=300, now=T0):
    return {"message": m, "card": card, "seed": seed, "nonce": nonce, "now": now}


def seal_verdict(inp):
    signer = AgentSigner.from_seed(bytes.fromhex(inp["seed"]))
    return sdk(encrypt_mail, inp["message"], inp["card"], signer, inp["nonce"], now_ms=inp["now"])


def exact_size_cards():
    """Cards whose max_packet_bytes is exactly the size of the packet a
    three-block letter makes, and one byte less."""
    m = message(subject="s" * 1000, parts=[{"media_type": "text/plain", "data": b64(b"x" * 1100)}])
    probe = encrypt_mail(m, make_card(max_packet_bytes=65536), ALICE, 300, now_ms=T0)
    size = len(jcs(probe))
    assert size > 4096, size
    return m, make_card(max_packet_bytes=size), make_card(max_packet_bytes=size - 1)


def seal_cases() -> list[Case]:
    b = Builder()
    card = make_card()
    m = message()
    exact_m, exact, short = exact_size_cards()
    reply_card = make_card(owner=ALICE, mailbox_id=MB2, public_key=BOB_KEY.public_key())
    variants = {
        "letter": seal_input(m, card),
        "without subject": seal_input(message(subject=None), card),
        "with a reply card": seal_input(message(reply_card=reply_card), card),
        "32 parts": seal_input(message(parts=[{"media_type": "text/plain", "data": b64(b"%d" % i)} for i in range(32)]), card),
        "packet exactly the card's limit": seal_input(exact_m, exact),
        "packet one byte over the card's limit": seal_input(exact_m, short),
        "sender is not the signer": seal_input(m, card, seed=SEEDS["carol"]),
        "card of another owner": seal_input(message(to=CAROL), card),
        "closed card": seal_input(m, make_card(routes=[])),
        "expired card": seal_input(message(created=T0 + DAY, expires=T0 + 2 * DAY), card, now=T0 + DAY),
        "future card": seal_input(m, make_card(created=T0 + SKEW + 1), now=T0),
        "card at the skew edge": seal_input(message(created=T0 + SKEW), make_card(created=T0 + SKEW), now=T0),
        "expired message": seal_input(message(expires=T0 + 1000), card, now=T0 + 1000),
        "future message": seal_input(message(created=T0 + SKEW + 1, expires=T0 + DAY), card, now=T0),
        "message past receive_until": seal_input(message(expires=T0 + 2 * DAY + 1), card),
        "message at receive_until": seal_input(message(expires=T0 + 2 * DAY), card),
        "nonce 0": seal_input(m, card, nonce=0),
        "nonce 2^53": seal_input(m, card, nonce=2**53),
        "negative clock": seal_input(m, card, now=-1),
        "invalid message": seal_input(message(parts=[]), card),
        "tampered card": seal_input(m, {**card, "signature": make_card(nonce=7)["signature"]}),
        "low-order card key": seal_input(m, make_card(public_key=b64(bytes(32)))),
    }
    for name, inp in variants.items():
        b.add("mail_seal", name, inp, seal_verdict(inp))
    rng = random.Random(20261202)
    for i in range(24):
        secret = rng.randbytes(32)
        key = MailEncryptionKey.from_private_bytes(secret)
        size = rng.choice([0, 1, 500, 1000, 1017, 2000, 3000, 9000])
        mt = rng.choice(["text/plain", "application/octet-stream", "image/png"])
        data = rng.randbytes(size) if mt != "text/plain" else bytes(rng.choice(b"abc \n") for _ in range(size))
        msg = message(subject=("é" * rng.randrange(0, 50)) if rng.random() < 0.7 else None,
                      parts=[{"media_type": mt, "data": b64(data)}],
                      expires=T0 + rng.randrange(1, 2 * DAY), message_id=b64(rng.randbytes(16)))
        c = make_card(public_key=key.public_key(), nonce=100 + i, max_packet_bytes=1048576)
        inp = seal_input(msg, c, nonce=1000 + i)
        inp["secret"] = b64(secret)
        b.add("mail_seal", f"random letter {i}", inp, "ok")
    return b.cases


SEALS = seal_cases()


@pytest.fixture(scope="module")
def go_seals():
    return run_goverdict(SEALS)


@pytest.mark.parametrize("case", SEALS, ids=[c.id for c in SEALS])
def test_go_seals_sdk_opens(case, go_seals):
    """Seal's verdict is encrypt_mail's; a packet Go sealed opens in the SDK
    to the very letter that went in."""
    answer = go_seals[case.id]
    assert "error" not in answer, answer["error"]
    got = answer["verdict"]
    assert got["code"] == case.sdk, f"{case.id}: SDK {case.sdk}, Go {got['code']}"
    if got["code"] != "ok":
        return
    packet, inp = got["packet"], case.input
    assert packet["hash"] == got["packet_id"]
    secret = unb64(inp["secret"]) if "secret" in inp else BOB_SECRET
    opened = decrypt_mail(packet, inp["card"], MailEncryptionKey.from_private_bytes(secret), inp["message"]["to"],
                          now_ms=inp["now"])
    assert jcs(opened) == jcs(inp["message"])
    assert len(jcs(packet)) <= inp["card"]["event"]["payload"]["max_packet_bytes"]


@pytest.fixture(scope="module")
def go_packet_cases(go_seals):
    """apconnect's packets, as sealed, and mutated and re-signed by the
    sender: the cases both sides open."""
    b = Builder()
    base = go_seals["mail_seal: letter"]["verdict"]["packet"]
    card = make_card()
    ct = unb64(base["event"]["payload"]["ciphertext"])

    def mutate(fn):
        return resign(ALICE, base, fn)

    flipped = bytearray(ct)
    flipped[len(ct) // 2] ^= 0x80
    variants = {
        "as sealed": base,
        "ciphertext byte flipped": mutate(lambda e: e["payload"].update(ciphertext=b64(bytes(flipped)))),
        "ciphertext grown by a block": mutate(lambda e: e["payload"].update(ciphertext=b64(ct + bytes(1024)))),
        "enc all zero": mutate(lambda e: e["payload"].update(enc=b64(bytes(32)))),
        "enc swapped for the card key": mutate(lambda e: e["payload"].update(enc=card["event"]["payload"]["public_key"])),
        "header card hash of another card": mutate(lambda e: e["payload"]["header"].update(card_hash=make_card(nonce=9)["hash"])),
        "created_at moved": mutate(lambda e: e.update(created_at=T0 - 1)),
        "signed by another sender": resign(CAROL, base, lambda e: None),
    }
    for name, pkt in variants.items():
        for now in (T0, T0 + 3 * DAY):
            inp = open_input(pkt, card, now=now)
            b.add("mail_open", f"Go packet {name} at +{(now - T0) // DAY} d", inp, open_verdict(inp))
    for i in range(24):
        case = next(c for c in SEALS if c.id == f"mail_seal: random letter {i}")
        inp = case.input
        sdk_packet = encrypt_mail(inp["message"], inp["card"], ALICE, 2000 + i, now_ms=T0)
        o = open_input(sdk_packet, inp["card"], secret=unb64(inp["secret"]))
        b.add("mail_open", f"SDK random letter {i}", o, {"message": jcs(inp["message"]).decode()})
    return b.cases


def test_go_packets_judged_alike(go_packet_cases):
    answers = run_goverdict(go_packet_cases)
    bad = []
    for c in go_packet_cases:
        got = answers[c.id].get("verdict", answers[c.id].get("error"))
        if got != c.sdk:
            bad.append(f"{c.id}: SDK {json.dumps(c.sdk)[:200]}, Go {json.dumps(got)[:200]}")
    assert not bad, "\n".join(bad)
    verdicts = {json.dumps(c.sdk)[:20] for c in go_packet_cases}
    assert any(v.startswith('{"message"') for v in verdicts) and '"invalid_event"' in verdicts
