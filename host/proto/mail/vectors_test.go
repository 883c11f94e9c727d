package mail

import (
	"bytes"
	"crypto/hpke"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"apconnect/host/identity"
)

// rfc9180Vector mirrors testdata/rfc9180-a.2.1.json.
type rfc9180Vector struct {
	Mode, KEMID, KDFID, AEADID     int
	Info, IkmE, IkmR, SkEm, PkEm   string
	SkRm, PkRm, PT, AAD, CT        string
	Key, BaseNonce, ExporterSecret string
}

func loadKAT(t *testing.T) rfc9180Vector {
	t.Helper()
	b, err := os.ReadFile("testdata/rfc9180-a.2.1.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		KAT struct {
			Mode   int    `json:"mode"`
			KEMID  int    `json:"kem_id"`
			KDFID  int    `json:"kdf_id"`
			AEADID int    `json:"aead_id"`
			Info   string `json:"info"`
			IkmE   string `json:"ikmE"`
			IkmR   string `json:"ikmR"`
			SkEm   string `json:"skEm"`
			PkEm   string `json:"pkEm"`
			SkRm   string `json:"skRm"`
			PkRm   string `json:"pkRm"`
			PT     string `json:"pt"`
			AAD    string `json:"aad"`
			CT     string `json:"ct"`
		} `json:"rfc9180_known_answer"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	k := doc.KAT
	return rfc9180Vector{Mode: k.Mode, KEMID: k.KEMID, KDFID: k.KDFID, AEADID: k.AEADID, Info: k.Info, IkmE: k.IkmE,
		IkmR: k.IkmR, SkEm: k.SkEm, PkEm: k.PkEm, SkRm: k.SkRm, PkRm: k.PkRm, PT: k.PT, AAD: k.AAD, CT: k.CT}
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The package's suite reproduces RFC 9180 A.2.1: the suite IDs, both key
// pairs derived from their IKM, the raw secrets' public keys, and the
// opening of the known ciphertext (sequence 0, single shot). The standard
// library seals only with fresh ephemeral keys, so the sealing direction is
// the interop suite's: the SDK's pyhpke seals the vector with skEm and
// reproduces ct, and Go and the SDK open each other's packets.
func TestRFC9180KnownAnswer(t *testing.T) {
	v := loadKAT(t)
	if v.Mode != 0 || uint16(v.KEMID) != suiteKEM.ID() || uint16(v.KDFID) != suiteKDF.ID() || uint16(v.AEADID) != suiteAEAD.ID() {
		t.Fatalf("suite %04x/%04x/%04x is not the vector's %04x/%04x/%04x", suiteKEM.ID(), suiteKDF.ID(), suiteAEAD.ID(), v.KEMID, v.KDFID, v.AEADID)
	}
	for _, kp := range []struct{ ikm, pk string }{{v.IkmR, v.PkRm}, {v.IkmE, v.PkEm}} {
		priv, err := suiteKEM.DeriveKeyPair(unhex(t, kp.ikm))
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(priv.PublicKey().Bytes()); got != kp.pk {
			t.Fatalf("DeriveKeyPair: public key %s, want %s", got, kp.pk)
		}
	}
	for _, kp := range []struct{ sk, pk string }{{v.SkRm, v.PkRm}, {v.SkEm, v.PkEm}} {
		k := mustKey(t, unhex(t, kp.sk))
		if got := hex.EncodeToString(mustB64(t, k.PublicKey())); got != kp.pk {
			t.Fatalf("KeyFromSecret(%s): public key %s, want %s", kp.sk, got, kp.pk)
		}
	}
	k := mustKey(t, unhex(t, v.SkRm))
	r, err := hpke.NewRecipient(unhex(t, v.PkEm), k.priv, suiteKDF, suiteAEAD, unhex(t, v.Info))
	if err != nil {
		t.Fatal(err)
	}
	pt, err := r.Open(unhex(t, v.AAD), unhex(t, v.CT))
	if err != nil || hex.EncodeToString(pt) != v.PT {
		t.Fatalf("open: %x, %v; want %s", pt, err, v.PT)
	}
	// A changed byte anywhere fails.
	for _, mut := range []struct{ name, aad, ct string }{
		{"aad", v.AAD[:len(v.AAD)-2] + "31", v.CT},
		{"ct", v.AAD, "00" + v.CT[2:]},
		{"tag", v.AAD, v.CT[:len(v.CT)-2] + "00"},
	} {
		r, _ := hpke.NewRecipient(unhex(t, v.PkEm), k.priv, suiteKDF, suiteAEAD, unhex(t, v.Info))
		if _, err := r.Open(unhex(t, mut.aad), unhex(t, mut.ct)); err == nil {
			t.Errorf("%s changed: opened", mut.name)
		}
	}
}

// Secrets stay raw: skRm ends in 0xfb, which clamping would change, and
// Secret returns it as given while the KEM's own serialization clamps.
func TestKeySecretIsRaw(t *testing.T) {
	v := loadKAT(t)
	raw := unhex(t, v.SkRm)
	k := mustKey(t, raw)
	if !bytes.Equal(k.Secret(), raw) {
		t.Fatalf("Secret() = %x, want the raw %x", k.Secret(), raw)
	}
	clamped, err := k.priv.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(clamped, raw) {
		t.Fatal("the KEM key serializes unclamped; the raw-secret rule would be moot")
	}
	again := mustKey(t, k.Secret())
	if again.PublicKey() != k.PublicKey() {
		t.Fatal("a key restored from Secret() differs")
	}
	if _, err := KeyFromSecret(raw[:31]); ErrorCode(err) != CodeInvalidRequest {
		t.Fatalf("31-byte secret: %v", err)
	}
	if k.String() == "" || bytes.Contains([]byte(k.String()), []byte(hex.EncodeToString(raw))) {
		t.Fatal("String prints the secret")
	}
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := identity.DecodeBase64URL(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Stored card vectors (ldclabs/agent-protocols 1.0.vectors.json at
// 2a5c12f, section "envelopes"): the card format is the SDK's, so each
// verifies, and SignCard with seed 0x08 reproduces its hash and signature
// byte for byte (Ed25519 is deterministic).
func TestStoredCardVectors(t *testing.T) {
	b, err := os.ReadFile("testdata/cards-2a5c12f.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cards map[string]json.RawMessage `json:"cards"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cards) < 4 {
		t.Fatalf("%d cards", len(doc.Cards))
	}
	for name, raw := range doc.Cards {
		t.Run(name, func(t *testing.T) {
			c, err := ParseCard(raw)
			if err != nil {
				t.Fatal(err)
			}
			again, err := SignCard(bob, c.Payload(), c.CreatedAt(), c.Nonce())
			if err != nil {
				t.Fatal(err)
			}
			if again.Hash() != c.Hash() || again.Envelope().Signature != c.Envelope().Signature {
				t.Fatalf("SignCard gives %s/%s, want %s/%s", again.Hash(), again.Envelope().Signature, c.Hash(), c.Envelope().Signature)
			}
			if c.Owner() != bob.AgentID() {
				t.Fatalf("owner %s", c.Owner())
			}
		})
	}
	// The vectors' recipient secrets are 0x09… and 0x0a…
	for secret, pub := range map[byte]string{9: "V9tLNZ8jrl4Ubk4lEgVnBHIlBjSMFQwUdT0Mkz0E1CE", 10: "93_0sQeIv9ymLKC7Fg1CfPV2LYXytcrWgH7Jw_673gk"} {
		if got := mustKey(t, fill(secret)).PublicKey(); got != pub {
			t.Errorf("secret %02x: public key %s, want %s", secret, got, pub)
		}
	}
}

// The embedded schema is the SDK's file, byte for byte (SOURCE.md).
func TestEmbeddedSchemaIsTheSDKs(t *testing.T) {
	sum := sha256.Sum256(SchemaJSON)
	if got := hex.EncodeToString(sum[:]); got != "1646c88476e04cbb2f6dc081b98ad3b527286e538e8d8b8299f7d7f1eb9fc8dc" {
		t.Fatalf("mail.schema.json sha256 %s", got)
	}
	for _, def := range []string{DefCardEnvelope, DefPacketEnvelope, DefMessage, DefPart, DefDiscovery,
		DefCardRecord, DefDelivery, DefPacketRecord, DefPacketList, DefMailboxList, "envelope"} {
		if _, err := definition(def); err != nil {
			t.Errorf("%s: %v", def, err)
		}
	}
	if err := ValidateSchema(map[string]any{}, "noSuchDefinition", CodeInvalidEvent, ""); ErrorCode(err) != CodeInvalidRequest {
		t.Fatalf("unknown definition: %v", err)
	}
	if err := ValidateSchema(map[string]any{}, "../x", CodeInvalidEvent, ""); ErrorCode(err) != CodeInvalidRequest {
		t.Fatalf("odd definition name: %v", err)
	}
}

// The ECMA end-of-input idiom becomes \z: a trailing newline is refused,
// as ECMA's $(?![\s\S]) refuses it.
func TestSchemaPatternsAnchorAtEndOfInput(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{mb, true},
		{mb + "\n", false},
		{mb + "A", false},
		{"AAECAwQFBgcICQoLDA0ODx", false}, // non-zero trailing bits
	} {
		err := ValidateSchema(tc.id, "id16", CodeInvalidEvent, "")
		if (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.id, err)
		}
	}
}
