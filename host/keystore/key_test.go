package keystore_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"apconnect/host/identity"
	"apconnect/host/keystore"
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func TestImportRFC8032Vector(t *testing.T) {
	seed := mustHex(rfcSeedHex)
	wantID := identity.AgentIDFromPublicKey(mustHex(rfcPubHex))
	for name, text := range map[string]string{
		"hex lower":        rfcSeedHex,
		"hex upper":        strings.ToUpper(rfcSeedHex),
		"base64url":        identity.EncodeBase64URL(seed),
		"with white space": "  " + rfcSeedHex + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			k, err := keystore.Import(text)
			if err != nil {
				t.Fatal(err)
			}
			if k.AgentID() != wantID {
				t.Fatalf("agent id %s, want %s", k.AgentID(), wantID)
			}
			// RFC 8032 7.1 test 1: the signature of the empty message.
			wantSig := "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
			if got := hex.EncodeToString(k.Sign(nil)); got != wantSig {
				t.Fatalf("signature %s, want %s", got, wantSig)
			}
			if got := hex.EncodeToString(k.SignDigest(nil)); got != wantSig {
				t.Fatal("SignDigest differs from Sign")
			}
		})
	}
}

func TestParseSeedRejects(t *testing.T) {
	seed := mustHex(rfcSeedHex)
	b64 := identity.EncodeBase64URL(seed)
	std := base64.StdEncoding.EncodeToString(seed)
	tests := map[string]string{
		"empty":                      "",
		"63 hex digits":              rfcSeedHex[:63],
		"65 hex digits":              rfcSeedHex + "0",
		"64 chars not hex":           strings.Repeat("z", 64),
		"padded base64url":           b64 + "=",
		"standard base64 (padded)":   std,
		"base64url 43 non-canonical": b64[:42] + "B", // last char carries non-zero trailing bits
		"base64url of 31 bytes":      identity.EncodeBase64URL(seed[:31]),
		"64-byte private key hex":    hex.EncodeToString(ed25519.NewKeyFromSeed(seed)),
	}
	for name, text := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := keystore.ParseSeed(text)
			wantCode(t, err, keystore.CodeInvalidSeed)
			if len(text) >= 8 && strings.Contains(err.Error(), text[:8]) {
				t.Fatalf("error repeats the input: %v", err)
			}
			if _, err := keystore.Import(text); keystore.CodeOf(err) != keystore.CodeInvalidSeed {
				t.Fatalf("Import: %v", err)
			}
		})
	}
	if _, err := keystore.FromSeed(seed[:31]); keystore.CodeOf(err) != keystore.CodeInvalidSeed {
		t.Fatalf("FromSeed(31 bytes): %v", err)
	}
}

func TestGenerate(t *testing.T) {
	a, err := keystore.Generate()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := keystore.Generate()
	if a.AgentID() == b.AgentID() {
		t.Fatal("two generated keys are equal")
	}
	if _, err := identity.ParseAgentID(a.AgentID()); err != nil {
		t.Fatalf("generated agent id is not canonical: %v", err)
	}
	// Randomness comes in through an option.
	fixed := bytes.Repeat([]byte{7}, 32)
	c, err := keystore.Generate(keystore.WithRand(bytes.NewReader(fixed)))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := keystore.FromSeed(fixed)
	if c.AgentID() != want.AgentID() {
		t.Fatal("Generate ignored WithRand")
	}
	_, err = keystore.Generate(keystore.WithRand(iotest.ErrReader(fmt.Errorf("no entropy"))))
	wantCode(t, err, keystore.CodeIO)
}

func TestKeyNeverPrintsKeyMaterial(t *testing.T) {
	seed := mustHex(rfcSeedHex)
	k, err := keystore.FromSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	priv := k.PrivateKeyForSigning()
	forbidden := []string{
		rfcSeedHex,
		rfcSeedHex[:16],
		strings.ToUpper(rfcSeedHex[:16]),
		identity.EncodeBase64URL(seed),
		identity.EncodeBase64URL(seed)[:12],
		base64.StdEncoding.EncodeToString(seed)[:12],
		hex.EncodeToString(priv),
		strings.Trim(fmt.Sprint(seed[:6]), "[]"), // decimal byte list "157 97 177 …"
		fmt.Sprintf("%x", seed[:8]),
	}
	type exported struct{ K *keystore.Key }
	type unexported struct {
		k  keystore.Key
		pk *keystore.Key
	}
	values := map[string]any{
		"*Key":                k,
		"Key":                 *k,
		"struct exported ptr": exported{k},
		"struct unexported":   unexported{*k, k},
		"ptr struct":          &unexported{*k, k},
		"slice of keys":       []*keystore.Key{k},
		"map of keys":         map[string]keystore.Key{"a": *k},
	}
	var outputs []string
	for name, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T", "%10.3v"} {
			outputs = append(outputs, name+" "+verb+": "+fmt.Sprintf(verb, v))
		}
		outputs = append(outputs, name+" Sprint: "+fmt.Sprint(v), name+" Sprintln: "+fmt.Sprintln(v))
		if j, err := json.Marshal(v); err == nil {
			outputs = append(outputs, name+" json: "+string(j))
		}
	}
	outputs = append(outputs, fmt.Sprintf("%v %+v %#v %s", k, k, k, k), k.String(), k.GoString())
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("loaded", "key", k, "keyval", *k)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("loaded", "key", k, "keyval", *k)
	outputs = append(outputs, logs.String())

	for _, out := range outputs {
		for _, f := range forbidden {
			if strings.Contains(strings.ToLower(out), strings.ToLower(f)) {
				t.Fatalf("output leaks key material %q:\n%s", f, out)
			}
		}
	}

	// What is printed is the agent id.
	if got := fmt.Sprintf("%v|%s|%+v", k, k, *k); got != k.AgentID()+"|"+k.AgentID()+"|"+k.AgentID() {
		t.Fatalf("got %q", got)
	}
	if got := fmt.Sprintf("%#v", k); got != `keystore.Key{AgentID: "`+k.AgentID()+`"}` {
		t.Fatalf("%%#v: %q", got)
	}
	j, _ := json.Marshal(k)
	if string(j) != `{"agent_id":"`+k.AgentID()+`"}` {
		t.Fatalf("json: %s", j)
	}
	if !strings.Contains(logs.String(), k.AgentID()) {
		t.Fatalf("log does not show the agent id: %s", logs.String())
	}
	var zero keystore.Key
	if zero.String() != "keystore.Key(empty)" {
		t.Fatalf("zero key prints %q", zero.String())
	}
}

func TestWipe(t *testing.T) {
	k, _ := keystore.Generate()
	priv := k.PrivateKeyForSigning()
	cp := *k
	k.Wipe()
	if !bytes.Equal(priv, make([]byte, len(priv))) {
		t.Fatal("private key bytes not zeroed")
	}
	if k.PrivateKeyForSigning() != nil || cp.PrivateKeyForSigning() != nil {
		t.Fatal("wiped key (or a copy) still exposes a private key")
	}
	wantCode(t, keystore.SaveUnencrypted(filepath.Join(t.TempDir(), "k"), k), keystore.CodeInvalidSeed)
	defer func() {
		if recover() == nil {
			t.Fatal("Sign on a wiped copy did not panic")
		}
	}()
	cp.Sign([]byte("x"))
}

func TestPublicKeyIsACopy(t *testing.T) {
	k, _ := keystore.Generate()
	p := k.PublicKey()
	p[0] ^= 0xff
	if bytes.Equal(p, k.PublicKey()) {
		t.Fatal("PublicKey returned the internal slice")
	}
}
