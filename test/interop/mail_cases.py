"""Agent Mail differential cases: inputs built and judged with the reference
SDK's own functions (agent_protocols.mail, agent_protocols.mail_state), for
goverdict (test/interop/goverdict/mail.go, host/proto/mail) to judge too.

Each case carries the SDK's verdict in the shape goverdict answers: an
error code, or a small object. A code the SDK raises that no service sends
(invalid_nonce, invalid_encoding, invalid_agent_id, …) is mapped to the
code the Go package uses for the same refusal (`local`).
"""

from __future__ import annotations

import base64
import copy
import hashlib
from typing import Any, Callable

import rfc8785
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PublicKey
from pyhpke import AEADId, CipherSuite, KDFId, KEMId, KEMKey

from agent_protocols import SHARED_ERROR_CODES, AgentProtocolError, AgentSigner
from agent_protocols.identity import create_event, create_request_jwt_claims, RequestBinding
from agent_protocols.mail import (
    MAIL_PROTOCOL, MAIL_SUBMIT, MailEncryptionKey, mail_packet_aad,
)


MAIL_CODES = {"mailbox_unavailable", "stale_card", "mailbox_conflict", "packet_expired",
              "invalid_private_key", "invalid_url"}
WIRE = set(SHARED_ERROR_CODES) | MAIL_CODES

T0 = 1790726400000
DAY = 86_400_000
TTL = 30 * DAY
SKEW = 300_000
RELAY = "https://relay.example"
MIRROR = "https://mirror.example"
MB = "AAECAwQFBgcICQoLDA0ODw"  # bytes 0..15
MB2 = "EBESExQVFhcYGRobHB0eHw"  # bytes 16..31
THREAD = "MDEyMzQ1Njc4OTo7PD0-Pw"

SEEDS = {"alice": "07" * 32, "bob": "08" * 32, "carol": "0c" * 32}
ALICE = AgentSigner.from_seed(bytes.fromhex(SEEDS["alice"]))
BOB = AgentSigner.from_seed(bytes.fromhex(SEEDS["bob"]))
CAROL = AgentSigner.from_seed(bytes.fromhex(SEEDS["carol"]))
BOB_SECRET = bytes([9]) * 32
ROT_SECRET = bytes([10]) * 32
ALICE_SECRET = bytes([11]) * 32
BOB_KEY = MailEncryptionKey.from_private_bytes(BOB_SECRET)
ROT_KEY = MailEncryptionKey.from_private_bytes(ROT_SECRET)
ALICE_KEY = MailEncryptionKey.from_private_bytes(ALICE_SECRET)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jcs(value: Any) -> bytes:
    return rfc8785.dumps(value)


def sdk(fn: Callable[..., Any], *args: Any, local: str = "invalid_event", ok: Callable[[Any], Any] | None = None,
        **kwargs: Any) -> Any:
    """The SDK's verdict: ok(result) (default "ok"), the wire code of its
    refusal, or `local` for an SDK-local code."""
    try:
        result = fn(*args, **kwargs)
    except AgentProtocolError as err:
        return err.code if err.code in WIRE else local
    except Exception as err:  # a crash is a finding, never a verdict
        return f"sdk crash: {type(err).__name__}: {err}"
    return "ok" if ok is None else ok(result)


# --- signed material --------------------------------------------------------


def card_payload(**over: Any) -> dict[str, Any]:
    p = {"mailbox_id": MB, "expires_at": T0 + DAY, "receive_until": T0 + 2 * DAY,
         "public_key": BOB_KEY.public_key(), "routes": [RELAY, MIRROR], "max_packet_bytes": 65536}
    p.update(over)
    return p


def sign(signer: AgentSigner, event: dict[str, Any]) -> dict[str, Any]:
    """Signs any event, even one the SDK's signer refuses (nonce 0): the
    hash is SHA3-256 of its JCS, the signature Ed25519 over the hash, so
    invalid objects reach the rule they break."""
    event = copy.deepcopy(event)
    digest = hashlib.sha3_256(jcs(event)).digest()
    return {"hash": b64(digest), "event": event, "signature": b64(signer._private_key.sign(digest))}


def make_card(owner: AgentSigner = BOB, created: int = T0, nonce: int = 100, **over: Any) -> dict[str, Any]:
    event = {"protocol": MAIL_PROTOCOL, "type": "mailbox.publish", "actor": owner.agent_id(),
             "created_at": created, "nonce": nonce, "payload": card_payload(**over)}
    return sign(owner, event)


def resign(signer: AgentSigner, envelope: dict[str, Any], mutate: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """A copy of envelope with its event mutated, signed again by signer
    (whose Agent ID becomes the actor unless mutate sets another)."""
    event = copy.deepcopy(envelope["event"])
    event["actor"] = signer.agent_id()
    mutate(event)
    return sign(signer, event)


def message(sender: AgentSigner = ALICE, to: AgentSigner = BOB, created: int = T0, expires: int = T0 + DAY,
            message_id: str = "ZmVkY2JhOTg3NjU0MzIxMA", **over: Any) -> dict[str, Any]:
    m = {"message_id": message_id, "from": sender.agent_id(), "created_at": created,
         "to": to.agent_id(), "expires_at": expires, "thread_id": THREAD,
         "subject": "A private question / 私信",
         "parts": [{"media_type": "text/plain", "data": b64("Can we compare our evidence?\n我们可以核对证据吗？".encode())},
                   {"media_type": "application/octet-stream", "name": "evidence.bin", "data": "AAH-_w"}]}
    m.update(over)
    return {k: v for k, v in m.items() if v is not None}


def suite() -> CipherSuite:
    return CipherSuite.new(KEMId.DHKEM_X25519_HKDF_SHA256, KDFId.HKDF_SHA256, AEADId.CHACHA20_POLY1305)


def raw_seal(signer: AgentSigner, card: dict[str, Any], plaintext: bytes, *, now: int = T0, nonce: int = 500,
             header: dict[str, Any] | None = None) -> dict[str, Any]:
    """A packet whose plaintext is any bytes: HPKE through pyhpke (the SDK's
    library) to the card's key, with the SDK's mail_packet_aad, signed by
    signer. It reaches the checks after decryption, which encrypt_mail
    never lets a sender fail."""
    h = {"mailbox_id": card["event"]["payload"]["mailbox_id"], "card_hash": card["hash"], "expires_at": T0 + DAY}
    h.update(header or {})
    event = create_event(MAIL_PROTOCOL, MAIL_SUBMIT, signer.agent_id(), now, nonce, {"header": h})
    pk = KEMKey.from_pyca_cryptography_key(X25519PublicKey.from_public_bytes(unb64(card["event"]["payload"]["public_key"])))
    enc, ctx = suite().create_sender_context(pk, info=MAIL_PROTOCOL.encode())
    ct = ctx.seal(plaintext, mail_packet_aad(event))
    event["payload"].update(enc=b64(enc), ciphertext=b64(ct))
    return signer.sign_event(event)


def frame(data: bytes, *, blocks: int | None = None, length: int | None = None) -> bytes:
    """A plaintext frame, optionally malformed (a given block count or a
    false length prefix)."""
    n = len(data) if length is None else length
    size = 1024 * (blocks if blocks is not None else (4 + len(data) + 1023) // 1024)
    return n.to_bytes(4, "big") + data + bytes(max(0, size - 4 - len(data)))


def owner_jwt(signer: AgentSigner, audience: str, now: int, ttl: int = 300, iat_shift: int = 0) -> str:
    claims = create_request_jwt_claims(signer.agent_id(), RequestBinding.create(audience), now // 1000 + iat_shift, ttl)
    return signer.sign_request_jwt(claims)


def low_order_keys() -> dict[str, bytes]:
    """X25519 u-coordinates of low order and their non-canonical aliases
    below 2^255 (p-1, p, p+1), then values at or above 2^255 (p + u, 2p + u):
    X25519 ignores bit 255, so those are ordinary points, which both the SDK
    and Go accept. Little-endian, 32 bytes."""
    p = 2**255 - 19
    order8 = [325606250916557431795983626356110631294008115727848805560023387167927233504,
              39382357235489614581723060781553021112529911719440698176882885853963445705823]
    values = {"zero": 0, "one": 1, "order 8 (a)": order8[0], "order 8 (b)": order8[1],
              "p-1": p - 1, "p": p, "p+1": p + 1, "above 2^255: p+order 8 (a)": p + order8[0],
              "above 2^255: 2p-1": 2 * p - 1, "above 2^255: 2p": 2 * p, "above 2^255: 2p+1": 2 * p + 1}
    return {name: (v % 2**256).to_bytes(32, "little") for name, v in values.items()}
