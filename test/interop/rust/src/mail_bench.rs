//! `sdk-connector-interop --mail-bench ROUNDS`: the reference Rust SDK
//! 0.12.6's seal and open of a 4 KiB letter, ROUNDS times in this process
//! (after one warm-up round), timed around the loop: `encrypt_message` (HPKE
//! to the card's key, then the packet signed) and `decrypt_packet` (the
//! packet verified, opened and the letter checked), the same work as
//! host/proto/mail's BenchmarkSealOpen4KiB does with Seal and Open. It
//! prints `{"ok": {"rounds", "ns"}}`; `make bench` derives the ratio.

use std::time::Instant;

use agent_protocols::identity::{unix_ms, AgentSigner};
use agent_protocols::mail::{
    create_mail_message, decrypt_packet, encrypt_message, random_id, sign_card, MailEncryptionKey,
    MailPart, MailboxCardPayload,
};
use agent_protocols::SdkError;
use serde_json::{json, Value};

/// The letter's text part: 4096 bytes.
const LETTER_BYTES: usize = 4096;

fn bench(rounds: usize) -> agent_protocols::Result<Value> {
    let sender = AgentSigner::from_seed([0x61; 32]);
    let owner = AgentSigner::from_seed([0x62; 32]);
    let key = MailEncryptionKey::from_secret(&[0x63; 32])?;
    let now = unix_ms();
    let card = sign_card(
        &owner,
        MailboxCardPayload {
            mailbox_id: random_id()?,
            expires_at: now + 86_400_000,
            receive_until: now + 2 * 86_400_000,
            public_key: key.public_key(),
            routes: vec!["https://relay.example".into()],
            max_packet_bytes: 65_536,
        },
        now,
        1,
    )?;
    let text = "x".repeat(LETTER_BYTES);
    let message = create_mail_message(
        &sender.agent_id(),
        now,
        json!({"to": owner.agent_id(), "expires_at": now + 3_600_000, "thread_id": random_id()?,
               "parts": [MailPart::text(&text)]}),
    )?;
    let round = |nonce: u64| -> agent_protocols::Result<()> {
        let packet = encrypt_message(&message, &card, &sender, nonce, now)?;
        let opened = decrypt_packet(&packet, &card, &key, &owner.agent_id(), now)?;
        if opened.message_id != message.message_id {
            return Err(SdkError::InvalidPayload("the opened letter differs".into()));
        }
        Ok(())
    };
    round(1)?;
    let start = Instant::now();
    for i in 0..rounds {
        round(2 + i as u64)?;
    }
    let ns = start.elapsed().as_nanos() as u64;
    Ok(json!({"rounds": rounds, "ns": ns}))
}

/// Runs the mode; the process exit code.
pub fn run(rounds: &str) -> i32 {
    let Ok(rounds) = rounds.parse::<usize>() else {
        eprintln!("sdk-connector-interop: --mail-bench takes a number of rounds");
        return 2;
    };
    match bench(rounds.max(1)) {
        Ok(v) => {
            println!("{}", json!({"ok": v}));
            0
        }
        Err(e) => {
            println!("{}", json!({"error": {"code": e.code(), "message": e.to_string()}}));
            1
        }
    }
}
