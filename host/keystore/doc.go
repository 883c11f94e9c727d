// Package keystore keeps an agent's Ed25519 signing key in a file on disk:
// it generates or imports the 32-byte seed, seals it under a passphrase
// (argon2id + XChaCha20-Poly1305) in a small versioned JSON document, writes
// that document atomically with mode 0600 and never over an existing file,
// and loads it back with strict checks.
//
// # File format
//
// An encrypted key file (the default) is:
//
//	{
//	  "version": 1,
//	  "kind": "apconnect-ed25519-key",
//	  "agent_id": "did:agent:…",
//	  "kdf": {"name": "argon2id", "time": 3, "memory_kib": 65536, "threads": 4, "salt": "<base64url>"},
//	  "cipher": {"name": "xchacha20poly1305", "nonce": "<base64url, 24 bytes>", "ciphertext": "<base64url, 48 bytes>"}
//	}
//
// The ciphertext seals the 32-byte seed. The AEAD associated data binds the
// kind, the version, the agent_id, every KDF parameter and the cipher name
// (see associatedData), so editing any of them makes decryption fail. After
// decryption the public key derived from the seed must equal agent_id.
//
// An unencrypted development key (only with an explicit flag) is:
//
//	{
//	  "version": 1,
//	  "kind": "apconnect-ed25519-key-unencrypted",
//	  "warning": "UNENCRYPTED development key: anyone who can read this file can sign as this agent",
//	  "agent_id": "did:agent:…",
//	  "seed": "<base64url, 32 bytes>"
//	}
//
// Every binary value is canonical unpadded base64url. Documents are parsed
// with the strict I-JSON parser of host/identity (duplicate members are
// refused) and must have exactly the members listed above.
//
// # Secrets
//
// The private key lives only inside a Key, whose String, GoString, Format,
// MarshalJSON and LogValue print the Agent ID and nothing else. No error of
// this package contains key material or a passphrase.
//
// # Errors
//
// Every error this package returns is an *Error with a stable Code (see the
// Code constants); compare with errors.Is against the Err* sentinels or with
// CodeOf, never with the message text.
package keystore
