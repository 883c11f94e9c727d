package mail_test

import (
	"bytes"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha3"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/chacha20poly1305"

	"apconnect/host/connector"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/connector/mail"
	"apconnect/host/identity"
	proto "apconnect/host/proto/mail"
	"apconnect/host/store"
)

// unseal opens a stored sealed secret the way docs/SECURITY.md says it is
// sealed, from the agent's signer alone: the sealing key is
// HKDF-SHA256(Ed25519 signature of SHA3-256(domain || 0 || Agent ID),
// salt, info Agent ID).
func unseal(t *testing.T, s identity.Signer, k *store.MailKey) []byte {
	t.Helper()
	digest := sha3.Sum256([]byte("apconnect agent-mail key sealing v1\x00" + s.AgentID()))
	key, err := hkdf.Key(sha256.New, s.SignDigest(digest[:]), []byte("apconnect/mail-keys"), s.AgentID(), 32)
	if err != nil {
		t.Fatal(err)
	}
	aead, _ := chacha20poly1305.NewX(key)
	if k.Sealed[0] != 1 {
		t.Fatalf("sealed version %d", k.Sealed[0])
	}
	n := 1 + chacha20poly1305.NonceSizeX
	secret, err := aead.Open(nil, k.Sealed[1:n], k.Sealed[n:], []byte("apconnect agent-mail key v1\x00"+s.AgentID()+"\x00"+k.MailboxID+"\x00"+k.PublicKey))
	if err != nil {
		t.Fatalf("the sealed secret does not open with the documented derivation: %v", err)
	}
	got, err := proto.KeyFromSecret(secret)
	if err != nil || got.PublicKey() != k.PublicKey {
		t.Fatalf("the sealed secret is not the card key's")
	}
	return secret
}

// encodings are the ways a secret could be written down.
func encodings(secret []byte) map[string][]byte {
	return map[string][]byte{
		"raw":                secret,
		"hex":                []byte(hex.EncodeToString(secret)),
		"HEX":                []byte(strings.ToUpper(hex.EncodeToString(secret))),
		"base64":             []byte(base64.StdEncoding.EncodeToString(secret)),
		"base64 unpadded":    []byte(base64.RawStdEncoding.EncodeToString(secret)),
		"base64url":          []byte(base64.URLEncoding.EncodeToString(secret)),
		"base64url unpadded": []byte(base64.RawURLEncoding.EncodeToString(secret)),
	}
}

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// Mailbox secrets are stored only sealed: no file of the state directory,
// no log line and no result holds one in any encoding; the sealed form
// opens with the agent's key alone, as documented; and the key is in the
// database, with its card, before the card reaches any relay.
func TestSecretsNeverInClear(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	p := connectortest.NewProxy(t, h)
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	env := connectortest.NewAgent(t, h, 0xC1, "")
	bob := open(t, env, via(p), func(o *connector.Options) { o.Logger = logger })
	alice := newAgent(t, h, 0xC2, via(p))
	var committed []string
	p.SetIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/mailboxes" {
			keys, _ := bob.conn.Store().Read().MailKeyPublics(ctx)
			cards, _ := bob.conn.Store().Read().OwnCards(ctx, "")
			for _, c := range cards {
				if keys[c.PublicKey] {
					committed = append(committed, c.Hash)
				}
			}
		}
		return false
	})
	first := must[*mail.MailboxPublishResult](t, "agent_protocols_mail_mailbox_publish")(bob.MailboxPublish(ctx, "s", mail.MailboxPublishInput{Routes: []string{h.Origin()}}))
	rotated := must[*mail.MailboxPublishResult](t, "agent_protocols_mail_mailbox_publish")(bob.MailboxPublish(ctx, "s",
		mail.MailboxPublishInput{MailboxID: first.Mailbox.MailboxID, Routes: []string{h.Origin()}, RotateKey: true}))
	p.SetIntercept(nil)
	if len(committed) < 2 || committed[0] != first.Mailbox.CardHash {
		t.Fatalf("keys committed before sending: %v", committed)
	}
	alice.send(mail.SendInput{To: rotated.Mailbox.Address, Text: ptr("hello")})
	received := bob.sync()
	results, _ := json.Marshal([]any{first, rotated, received, bob.list(mail.ListInput{IncludeData: true})})

	var secrets [][]byte
	for _, pub := range []string{first.Mailbox.CardHash, rotated.Mailbox.CardHash} {
		c, err := bob.conn.Store().Read().OwnCard(ctx, pub)
		if err != nil {
			t.Fatal(err)
		}
		k, err := bob.conn.Store().Read().MailKey(ctx, c.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, unseal(t, env.Sig, k))
	}
	if bytes.Equal(secrets[0], secrets[1]) {
		t.Fatal("rotation kept the secret")
	}
	files := map[string][]byte{"logs": logs.Bytes(), "results": results}
	err := filepath.Walk(env.Cfg.StateDir(), func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		files[path] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	dbs := 0
	for name, data := range files {
		if strings.Contains(name, ".db") {
			dbs++
		}
		for _, secret := range secrets {
			for enc, needle := range encodings(secret) {
				if bytes.Contains(data, needle) {
					t.Errorf("%s holds a mailbox secret (%s)", name, enc)
				}
			}
		}
	}
	if dbs == 0 || len(logs.Bytes()) == 0 {
		t.Fatalf("nothing was searched: %d database files, %d bytes of logs", dbs, len(logs.Bytes()))
	}
}

// A rotated mailbox keeps its old key until the old card's receive_until:
// a letter sealed to the old card still opens. Past receive_until, cards
// and keys are deleted.
func TestRotationAndKeyExpiry(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	alice, bob := newAgent(t, h, 0xC3), newAgent(t, h, 0xC4)
	box := bob.mailbox(h.Origin())
	// A letter sealed to the first card waits at the relay while Bob
	// rotates; the next one is sealed to the new card.
	early := alice.send(mail.SendInput{To: box.Address, Text: ptr("sealed to the first key")})
	rot := must[*mail.MailboxPublishResult](t, "agent_protocols_mail_mailbox_publish")(bob.MailboxPublish(ctx, "s",
		mail.MailboxPublishInput{MailboxID: box.MailboxID, Routes: []string{h.Origin()}, RotateKey: true}))
	late := alice.send(mail.SendInput{To: box.Address, Text: ptr("sealed to the second key")})
	got := bob.sync()
	if len(got.Received) != 2 || len(got.Errors) != 0 {
		t.Fatalf("sync after rotation: %+v", got)
	}
	ids := map[string]bool{got.Received[0].MessageID: true, got.Received[1].MessageID: true}
	if !ids[early.Message.MessageID] || !ids[late.Message.MessageID] {
		t.Fatalf("received %v", ids)
	}
	keys, _ := bob.conn.Store().Read().MailKeyPublics(ctx)
	if len(keys) != 2 {
		t.Fatalf("%d keys held, want both until receive_until", len(keys))
	}
	// Past every receive_until: the cards, their keys and the letters go.
	later := time.UnixMilli(rot.Mailbox.ReceiveUntil + 1)
	bob = bob.reopen(func(o *connector.Options) { o.Clock = func() time.Time { return later } })
	if _, err := bob.Sync(ctx, "s", mail.SyncInput{}); err != nil {
		t.Fatal(err)
	}
	keys, _ = bob.conn.Store().Read().MailKeyPublics(ctx)
	cards, _ := bob.conn.Store().Read().OwnCards(ctx, "")
	letters, _, _ := bob.conn.Store().Read().Letters(ctx, store.LetterQuery{})
	if len(keys) != 0 || len(cards) != 0 || len(letters) != 0 {
		t.Fatalf("after receive_until: %d keys, %d cards, %d letters", len(keys), len(cards), len(letters))
	}
}

// A mailbox whose key is not held here (recovered from a relay) can only be
// republished with rotate_key.
func TestRecoveredCardNeedsRotation(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	env := connectortest.NewAgent(t, h, 0xC5, "")
	bob := open(t, env)
	box := bob.mailbox(h.Origin())
	// The same agent on a fresh home: its cards come back, not its key.
	fresh := open(t, connectortest.NewAgent(t, h, 0xC5, ""))
	got := must[*mail.MailboxesListResult](t, "agent_protocols_mail_mailboxes_list")(fresh.MailboxesList(ctx, "s", mail.MailboxesListInput{Host: h.Origin()}))
	if len(got.Mailboxes) != 1 || got.Mailboxes[0].MailboxID != box.MailboxID || got.Mailboxes[0].KeyAvailable {
		t.Fatalf("recovered: %+v", got)
	}
	_, err := fresh.MailboxPublish(ctx, "s", mail.MailboxPublishInput{MailboxID: box.MailboxID, Routes: []string{h.Origin()}})
	if code(err) != "invalid_input" {
		t.Fatalf("republish without the key: %v", err)
	}
	r := must[*mail.MailboxPublishResult](t, "agent_protocols_mail_mailbox_publish")(fresh.MailboxPublish(ctx, "s",
		mail.MailboxPublishInput{MailboxID: box.MailboxID, Routes: []string{h.Origin()}, RotateKey: true}))
	if !r.Mailbox.KeyAvailable || len(r.Published) != 1 {
		t.Fatalf("rotated: %+v", r)
	}
}
