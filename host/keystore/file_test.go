package keystore_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"apconnect/host/identity"
	"apconnect/host/internal/fileowner"
	"apconnect/host/keystore"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	k, path := newKeyFile(t)

	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %04o, want 0600", st.Mode().Perm())
	}

	src := &countingSource{pass: testPass}
	got, err := keystore.Load(path, src)
	if err != nil {
		t.Fatal(err)
	}
	if got.AgentID() != k.AgentID() {
		t.Fatalf("agent id %s, want %s", got.AgentID(), k.AgentID())
	}
	if !bytes.Equal(got.PublicKey(), k.PublicKey()) {
		t.Fatal("public key differs after round trip")
	}
	if !bytes.Equal(got.PrivateKeyForSigning(), k.PrivateKeyForSigning()) {
		t.Fatal("private key differs after round trip")
	}
	if got.Unencrypted() {
		t.Fatal("encrypted key reported as unencrypted")
	}
	msg := []byte("hello room")
	if !ed25519.Verify(k.PublicKey(), msg, got.Sign(msg)) {
		t.Fatal("signature of the loaded key does not verify under the saved public key")
	}
	if src.calls != 1 || src.reqs[0].New || src.reqs[0].AgentID != k.AgentID() || src.reqs[0].Path != path {
		t.Fatalf("passphrase requests %+v, want one unlock request for %s at %s", src.reqs, k.AgentID(), path)
	}

	// The document has the documented shape.
	m := readJSON(t, path)
	if m["version"] != float64(1) || m["kind"] != keystore.KindEncrypted || m["agent_id"] != k.AgentID() {
		t.Fatalf("header %v", m)
	}
	kdf := m["kdf"].(map[string]any)
	if kdf["name"] != "argon2id" || kdf["time"] != float64(1) || kdf["memory_kib"] != float64(8) || kdf["threads"] != float64(1) {
		t.Fatalf("kdf %v", kdf)
	}
	c := m["cipher"].(map[string]any)
	if c["name"] != "xchacha20poly1305" {
		t.Fatalf("cipher %v", c)
	}
	if ct, _ := identity.DecodeBase64URL(c["ciphertext"].(string)); len(ct) != 48 {
		t.Fatalf("ciphertext is %d bytes, want 48", len(ct))
	}

	info, err := keystore.ReadInfo(path)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Encrypted || info.AgentID != k.AgentID() || info.KDF != cheap || info.Path != path {
		t.Fatalf("info %+v", info)
	}
}

func TestSaveAsksForNewPassphraseOnce(t *testing.T) {
	k, _ := keystore.Generate()
	path := filepath.Join(t.TempDir(), "k")
	src := &countingSource{pass: testPass}
	if err := keystore.Save(path, k, src, keystore.WithKDFParams(cheap)); err != nil {
		t.Fatal(err)
	}
	if src.calls != 1 || !src.reqs[0].New || src.reqs[0].AgentID != k.AgentID() {
		t.Fatalf("requests %+v, want one New request", src.reqs)
	}

	// An empty passphrase is refused and nothing is written.
	empty := filepath.Join(t.TempDir(), "k")
	wantCode(t, keystore.Save(empty, k, keystore.StaticPassphrase(nil), keystore.WithKDFParams(cheap)), keystore.CodePassphraseEmpty)
	wantCode(t, keystore.Save(empty, k, nil, keystore.WithKDFParams(cheap)), keystore.CodePassphraseUnavailable)
	if _, err := os.Stat(empty); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a key file was written without a passphrase")
	}
}

func TestSaveCreatesParentDirectory(t *testing.T) {
	k, _ := keystore.Generate()
	dir := filepath.Join(t.TempDir(), "home", "keys")
	path := filepath.Join(dir, "default.key")
	if err := keystore.Save(path, k, keystore.StaticPassphrase(testPass), keystore.WithKDFParams(cheap)); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		t.Fatalf("created key directory has mode %04o, want no group/other bits", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "default.key" {
		t.Fatalf("directory holds %v, want only default.key (no temporary files)", entries)
	}
}

func TestLoadFailures(t *testing.T) {
	other, _ := keystore.Generate()
	tests := []struct {
		name   string
		mutate func(t *testing.T, path string) // nil: leave the file as saved
		pass   []byte
		code   keystore.Code
		inMsg  []string
	}{
		{name: "wrong passphrase", pass: []byte("wrong"), code: keystore.CodeWrongPassphrase, inMsg: []string{"wrong passphrase or corrupted key file"}},
		{name: "agent_id swapped for another valid id", mutate: setMember("agent_id", other.AgentID()), code: keystore.CodeWrongPassphrase},
		{name: "agent_id not canonical", mutate: setMember("agent_id", "did:agent:xyz"), code: keystore.CodeCorrupt, inMsg: []string{"/agent_id"}},
		{name: "kdf time changed within bounds", mutate: setKDF("time", 2), code: keystore.CodeWrongPassphrase},
		{name: "truncated", mutate: truncateFile(0.5), code: keystore.CodeCorrupt, inMsg: []string{"truncated or not JSON"}},
		{name: "truncated by one byte", mutate: truncateBytes(2), code: keystore.CodeCorrupt},
		{name: "empty file", mutate: rawContent(""), code: keystore.CodeCorrupt},
		{name: "not JSON", mutate: rawContent("-----BEGIN PRIVATE KEY-----\n"), code: keystore.CodeCorrupt},
		{name: "JSON array", mutate: rawContent("[1,2]"), code: keystore.CodeCorrupt},
		{name: "duplicate member", mutate: duplicateAgentID(other.AgentID()), code: keystore.CodeCorrupt, inMsg: []string{"duplicate"}},
		{name: "version 2", mutate: setMember("version", 2), code: keystore.CodeUnsupported, inMsg: []string{"version 2"}},
		{name: "version as string", mutate: setMember("version", "1"), code: keystore.CodeCorrupt},
		{name: "version missing", mutate: deleteMember("version"), code: keystore.CodeCorrupt},
		{name: "unknown kind", mutate: setMember("kind", "openssh-key"), code: keystore.CodeUnsupported, inMsg: []string{"openssh-key"}},
		{name: "unknown kdf", mutate: setKDF("name", "scrypt"), code: keystore.CodeUnsupported},
		{name: "unknown cipher", mutate: setCipher("name", "aes-gcm"), code: keystore.CodeUnsupported},
		{name: "extra member", mutate: setMember("comment", "hi"), code: keystore.CodeCorrupt, inMsg: []string{"comment"}},
		{name: "missing cipher", mutate: deleteMember("cipher"), code: keystore.CodeCorrupt, inMsg: []string{"cipher"}},
		{name: "extra kdf member", mutate: setKDF("pepper", "x"), code: keystore.CodeCorrupt},
		{name: "kdf time not an integer", mutate: setKDF("time", 1.5), code: keystore.CodeCorrupt},
		{name: "nonce too short", mutate: setCipher("nonce", identity.EncodeBase64URL(make([]byte, 12))), code: keystore.CodeCorrupt, inMsg: []string{"/cipher/nonce"}},
		{name: "ciphertext too long", mutate: setCipher("ciphertext", identity.EncodeBase64URL(make([]byte, 49))), code: keystore.CodeCorrupt},
		{name: "salt padded base64", mutate: setKDF("salt", "AAAAAAAAAAAAAAAAAAAAAA=="), code: keystore.CodeCorrupt},
		{name: "salt too short", mutate: setKDF("salt", identity.EncodeBase64URL(make([]byte, 8))), code: keystore.CodeCorrupt},
		{name: "empty passphrase", pass: []byte{}, code: keystore.CodePassphraseEmpty},
		{name: "missing file", mutate: removeFile, code: keystore.CodeNotFound, inMsg: []string{"not found"}},
		{name: "directory instead of file", mutate: replaceWithDir, code: keystore.CodePermissions, inMsg: []string{"not a regular file"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, path := newKeyFile(t)
			if tc.mutate != nil {
				tc.mutate(t, path)
			}
			pass := testPass
			if tc.pass != nil {
				pass = tc.pass
			}
			k, err := keystore.Load(path, keystore.StaticPassphrase(pass))
			if k != nil {
				t.Fatalf("Load returned a key (%s) for a bad file", k)
			}
			wantCode(t, err, tc.code)
			if !errors.Is(err, &keystore.Error{Code: tc.code}) {
				t.Fatalf("errors.Is does not match the code sentinel: %v", err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			for _, s := range tc.inMsg {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestLoadSentinels(t *testing.T) {
	_, path := newKeyFile(t)
	_, err := keystore.Load(path, keystore.StaticPassphrase([]byte("nope")))
	if !errors.Is(err, keystore.ErrWrongPassphrase) || errors.Is(err, keystore.ErrCorrupt) {
		t.Fatalf("sentinel matching wrong for %v", err)
	}
	_, err = keystore.Load(path, nil)
	if !errors.Is(err, keystore.ErrPassphraseUnavailable) {
		t.Fatalf("nil source on an encrypted key: %v", err)
	}
}

func TestLoadRefusesOpenPermissions(t *testing.T) {
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660, 0o666, 0o610, 0o601} {
		t.Run(mode.String(), func(t *testing.T) {
			_, path := newKeyFile(t)
			if err := os.Chmod(path, mode); err != nil {
				t.Fatal(err)
			}
			src := &countingSource{pass: testPass}
			_, err := keystore.Load(path, src)
			wantCode(t, err, keystore.CodePermissions)
			msg := err.Error()
			for _, want := range []string{path, fmtMode(mode), "chmod 600 " + path} {
				if !strings.Contains(msg, want) {
					t.Fatalf("error %q does not contain %q", msg, want)
				}
			}
			if src.calls != 0 {
				t.Fatal("passphrase asked for a file that is refused anyway")
			}
			if _, err := keystore.ReadInfo(path); keystore.CodeOf(err) != keystore.CodePermissions {
				t.Fatalf("ReadInfo: %v", err)
			}
		})
	}
	// Owner-only modes load.
	for _, mode := range []os.FileMode{0o600, 0o400, 0o700} {
		_, path := newKeyFile(t)
		os.Chmod(path, mode)
		if _, err := keystore.Load(path, keystore.StaticPassphrase(testPass)); err != nil {
			t.Fatalf("mode %04o: %v", mode, err)
		}
	}
}

func fmtMode(m os.FileMode) string {
	return "0" + string([]byte{'0' + byte(m>>6&7), '0' + byte(m>>3&7), '0' + byte(m&7)})
}

func TestHostileKDFParamsRefusedBeforeDeriving(t *testing.T) {
	tests := []struct {
		name  string
		key   string
		value any
	}{
		{"memory 1 TiB", "memory_kib", 1 << 30},
		{"memory just above the cap", "memory_kib", keystore.MaxKDFMemoryKiB + 1},
		{"time 1000", "time", 1000},
		{"time 0", "time", 0},
		{"negative time", "time", -1},
		{"threads 255", "threads", 255},
		{"threads 0", "threads", 0},
		{"time beyond uint32", "time", 1 << 40},
		{"memory below 8 KiB per lane", "threads", 4}, // memory_kib stays 8
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, path := newKeyFile(t)
			setKDF(tc.key, tc.value)(t, path)
			src := &countingSource{pass: testPass}
			_, err := keystore.Load(path, src)
			wantCode(t, err, keystore.CodeKDFParams)
			if src.calls != 0 {
				t.Fatal("passphrase asked before the KDF parameters were checked")
			}
			if _, err := keystore.ReadInfo(path); keystore.CodeOf(err) != keystore.CodeKDFParams {
				t.Fatalf("ReadInfo: %v", err)
			}
		})
	}
}

func TestSaveRefusesOutOfBoundsKDFParams(t *testing.T) {
	k, _ := keystore.Generate()
	for _, p := range []keystore.KDFParams{
		{Time: 0, MemoryKiB: 8, Threads: 1},
		{Time: 1, MemoryKiB: 4, Threads: 1},
		{Time: 1, MemoryKiB: keystore.MaxKDFMemoryKiB + 1, Threads: 1},
		{Time: 1, MemoryKiB: 64, Threads: 0},
		{Time: keystore.MaxKDFTime + 1, MemoryKiB: 64, Threads: 1},
	} {
		path := filepath.Join(t.TempDir(), "k")
		err := keystore.Save(path, k, keystore.StaticPassphrase(testPass), keystore.WithKDFParams(p))
		wantCode(t, err, keystore.CodeKDFParams)
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%+v: a file was written", p)
		}
	}
	if err := keystore.DefaultKDFParams().Check(); err != nil {
		t.Fatalf("default parameters out of bounds: %v", err)
	}
}

func TestEveryCiphertextNonceAndSaltByteFlipFails(t *testing.T) {
	_, path := newKeyFile(t)
	orig, _ := os.ReadFile(path)
	for _, field := range []struct{ obj, member string }{
		{"cipher", "ciphertext"}, {"cipher", "nonce"}, {"kdf", "salt"},
	} {
		writeRaw(t, path, orig)
		m := readJSON(t, path)
		raw, err := identity.DecodeBase64URL(m[field.obj].(map[string]any)[field.member].(string))
		if err != nil {
			t.Fatal(err)
		}
		for i := range raw {
			for _, bit := range []byte{0x01, 0x80} {
				b := bytes.Clone(raw)
				b[i] ^= bit
				m[field.obj].(map[string]any)[field.member] = identity.EncodeBase64URL(b)
				writeJSON(t, path, m)
				_, err := keystore.Load(path, keystore.StaticPassphrase(testPass))
				if keystore.CodeOf(err) != keystore.CodeWrongPassphrase {
					t.Fatalf("%s byte %d bit %#x flipped: got %v, want %s", field.member, i, bit, err, keystore.CodeWrongPassphrase)
				}
			}
		}
	}
}

func TestEveryFileByteFlipFails(t *testing.T) {
	_, path := newKeyFile(t)
	orig, _ := os.ReadFile(path)
	codes := map[keystore.Code]int{}
	for i := range orig {
		b := bytes.Clone(orig)
		b[i] ^= 0x01
		writeRaw(t, path, b)
		k, err := keystore.Load(path, keystore.StaticPassphrase(testPass))
		if err == nil {
			t.Fatalf("byte %d (%q) flipped: file still loads as %s", i, orig[i], k)
		}
		code := keystore.CodeOf(err)
		switch code {
		case keystore.CodeCorrupt, keystore.CodeWrongPassphrase, keystore.CodeUnsupported, keystore.CodeKDFParams:
		default:
			t.Fatalf("byte %d flipped: unexpected code %q: %v", i, code, err)
		}
		codes[code]++
	}
	if codes[keystore.CodeCorrupt] == 0 || codes[keystore.CodeWrongPassphrase] == 0 || codes[keystore.CodeUnsupported] == 0 {
		t.Fatalf("expected a mix of corrupt, wrong-passphrase and unsupported failures, got %v", codes)
	}
}

func TestSaveRefusesOverwrite(t *testing.T) {
	k, _ := keystore.Generate()
	for _, unencrypted := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "agent.key")
		original := []byte("precious existing content\n")
		if err := os.WriteFile(path, original, 0o600); err != nil {
			t.Fatal(err)
		}
		src := &countingSource{pass: testPass}
		var err error
		if unencrypted {
			err = keystore.SaveUnencrypted(path, k)
		} else {
			err = keystore.Save(path, k, src, keystore.WithKDFParams(cheap))
		}
		wantCode(t, err, keystore.CodeExists)
		if !strings.Contains(err.Error(), path) {
			t.Fatalf("error %q does not name the file", err)
		}
		if src.calls != 0 {
			t.Fatal("passphrase asked before refusing to overwrite")
		}
		after, _ := os.ReadFile(path)
		if !bytes.Equal(after, original) {
			t.Fatalf("existing file changed: %q", after)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Fatalf("directory holds %d entries after a failed save, want 1", len(entries))
		}
	}
}

func TestSaveRefusesOverwriteOfSymlinkAndKeyFile(t *testing.T) {
	k, path := newKeyFile(t)
	before, _ := os.ReadFile(path)
	err := keystore.Save(path, k, keystore.StaticPassphrase([]byte("other")), keystore.WithKDFParams(cheap))
	wantCode(t, err, keystore.CodeExists)
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatal("existing key file changed")
	}
	// A dangling symlink at the target is an existing entry too.
	link := filepath.Join(t.TempDir(), "link.key")
	if err := os.Symlink(filepath.Join(t.TempDir(), "nowhere"), link); err != nil {
		t.Fatal(err)
	}
	wantCode(t, keystore.SaveUnencrypted(link, k), keystore.CodeExists)
}

func TestConcurrentSavesExactlyOneWins(t *testing.T) {
	path := filepath.Join(t.TempDir(), "race.key")
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	keys := make([]*keystore.Key, n)
	for i := range n {
		keys[i], _ = keystore.Generate()
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = keystore.SaveUnencrypted(path, keys[i])
		}()
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("saves %d and %d both succeeded", winner, i)
		case err == nil:
			winner = i
		case keystore.CodeOf(err) != keystore.CodeExists:
			t.Fatalf("save %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no save succeeded")
	}
	got, err := keystore.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.AgentID() != keys[winner].AgentID() {
		t.Fatal("file holds a key other than the winner's")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("%d entries left in the directory, want 1", len(entries))
	}
}

func TestUnencryptedRoundTrip(t *testing.T) {
	k, err := keystore.Import(rfcSeedHex)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dev.key")
	if err := keystore.SaveUnencrypted(path, k); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %04o", st.Mode().Perm())
	}
	m := readJSON(t, path)
	if m["kind"] != keystore.KindUnencrypted || m["warning"] != keystore.UnencryptedWarning || m["agent_id"] != k.AgentID() || m["version"] != float64(1) {
		t.Fatalf("document %v", m)
	}
	if len(m) != 5 {
		t.Fatalf("document has %d members, want 5", len(m))
	}
	got, err := keystore.Load(path, nil) // no passphrase needed
	if err != nil {
		t.Fatal(err)
	}
	if !got.Unencrypted() {
		t.Fatal("Unencrypted() is false for an unencrypted key file")
	}
	if got.AgentID() != k.AgentID() || !bytes.Equal(got.PrivateKeyForSigning(), k.PrivateKeyForSigning()) {
		t.Fatal("key differs after round trip")
	}
	info, err := keystore.ReadInfo(path)
	if err != nil || info.Encrypted || info.AgentID != k.AgentID() || info.KDF != (keystore.KDFParams{}) {
		t.Fatalf("info %+v, %v", info, err)
	}

	other, _ := keystore.Generate()
	for name, tc := range map[string]struct {
		mutate func(*testing.T, string)
		code   keystore.Code
	}{
		"agent_id of another key": {setMember("agent_id", other.AgentID()), keystore.CodeCorrupt},
		"warning removed":         {deleteMember("warning"), keystore.CodeCorrupt},
		"warning edited":          {setMember("warning", "fine"), keystore.CodeCorrupt},
		"seed too short":          {setMember("seed", identity.EncodeBase64URL(make([]byte, 31))), keystore.CodeCorrupt},
		"seed as hex":             {setMember("seed", rfcSeedHex), keystore.CodeCorrupt},
		"encrypted members added": {setMember("kdf", map[string]any{}), keystore.CodeCorrupt},
		"open permissions":        {chmod(0o644), keystore.CodePermissions},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "dev.key")
			if err := keystore.SaveUnencrypted(p, k); err != nil {
				t.Fatal(err)
			}
			tc.mutate(t, p)
			_, err := keystore.Load(p, nil)
			wantCode(t, err, tc.code)
			if strings.Contains(err.Error(), rfcSeedHex) || strings.Contains(err.Error(), identity.EncodeBase64URL(mustHex(rfcSeedHex))) {
				t.Fatalf("error leaks the seed: %v", err)
			}
		})
	}
}

func TestEnvPassphraseEndToEnd(t *testing.T) {
	_, path := newKeyFile(t)
	t.Setenv(keystore.EnvVar, string(testPass))
	if _, err := keystore.Load(path, keystore.DefaultPassphraseSource("")); err != nil {
		t.Fatal(err)
	}
	t.Setenv(keystore.EnvVar, "not it")
	_, err := keystore.Load(path, keystore.DefaultPassphraseSource(""))
	wantCode(t, err, keystore.CodeWrongPassphrase)
}

// --- mutations ---

func setMember(name string, v any) func(*testing.T, string) {
	return func(t *testing.T, path string) {
		m := readJSON(t, path)
		m[name] = v
		writeJSON(t, path, m)
	}
}

func deleteMember(name string) func(*testing.T, string) {
	return func(t *testing.T, path string) {
		m := readJSON(t, path)
		delete(m, name)
		writeJSON(t, path, m)
	}
}

func setKDF(name string, v any) func(*testing.T, string) {
	return func(t *testing.T, path string) {
		m := readJSON(t, path)
		m["kdf"].(map[string]any)[name] = v
		writeJSON(t, path, m)
	}
}

func setCipher(name string, v any) func(*testing.T, string) {
	return func(t *testing.T, path string) {
		m := readJSON(t, path)
		m["cipher"].(map[string]any)[name] = v
		writeJSON(t, path, m)
	}
}

func truncateFile(frac float64) func(*testing.T, string) {
	return func(t *testing.T, path string) {
		b, _ := os.ReadFile(path)
		writeRaw(t, path, b[:int(float64(len(b))*frac)])
	}
}

func truncateBytes(n int) func(*testing.T, string) {
	return func(t *testing.T, path string) {
		b, _ := os.ReadFile(path)
		writeRaw(t, path, b[:len(b)-n])
	}
}

func rawContent(s string) func(*testing.T, string) {
	return func(t *testing.T, path string) { writeRaw(t, path, []byte(s)) }
}

func duplicateAgentID(id string) func(*testing.T, string) {
	return func(t *testing.T, path string) {
		b, _ := os.ReadFile(path)
		dup := bytes.Replace(b, []byte("{"), []byte(`{"agent_id": "`+id+`",`), 1)
		writeRaw(t, path, dup)
	}
}

func removeFile(t *testing.T, path string) {
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

func replaceWithDir(t *testing.T, path string) {
	removeFile(t, path)
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
}

func chmod(mode os.FileMode) func(*testing.T, string) {
	return func(t *testing.T, path string) {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// makeForeign makes path look owned by another user: chown as root,
// otherwise by making the ownership check see this process as another
// user for the rest of the test.
func makeForeign(t *testing.T, path string) {
	t.Helper()
	if os.Getuid() == 0 {
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		return
	}
	old := fileowner.CurrentUID
	fileowner.CurrentUID = func() int { return os.Getuid() + 1 }
	t.Cleanup(func() { fileowner.CurrentUID = old })
}

// A key file of mode 0600 that belongs to someone else is refused: its
// owner put it there (a key it holds the seed of, so it can sign as "this"
// agent) or can read and replace it.
func TestLoadRefusesAnotherUsersKeyFile(t *testing.T) {
	for _, encrypted := range []bool{true, false} {
		t.Run(fmt.Sprintf("encrypted=%v", encrypted), func(t *testing.T) {
			var path string
			if encrypted {
				_, path = newKeyFile(t)
			} else {
				k, err := keystore.Generate()
				if err != nil {
					t.Fatal(err)
				}
				path = filepath.Join(t.TempDir(), "dev.key")
				if err := keystore.SaveUnencrypted(path, k); err != nil {
					t.Fatal(err)
				}
			}
			makeForeign(t, path)
			src := &countingSource{pass: testPass}
			_, err := keystore.Load(path, src)
			wantCode(t, err, keystore.CodeOwner)
			if !errors.Is(err, keystore.ErrOwner) {
				t.Error("the error does not match ErrOwner")
			}
			for _, want := range []string{path, "owned by uid", "not by the user running apconnect"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if src.calls != 0 {
				t.Error("the passphrase was asked for a file that is refused anyway")
			}
			if _, err := keystore.ReadInfo(path); keystore.CodeOf(err) != keystore.CodeOwner {
				t.Errorf("ReadInfo: %v", err)
			}
		})
	}
}

func TestPassphraseFileOfAnotherUserIsRefused(t *testing.T) {
	_, keyPath := newKeyFile(t)
	pf := filepath.Join(t.TempDir(), "pass")
	if err := os.WriteFile(pf, append(testPass, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := keystore.Load(keyPath, keystore.FilePassphrase(pf)); err != nil {
		t.Fatalf("own passphrase file: %v", err)
	}
	makeForeign(t, pf)
	_, err := keystore.FilePassphrase(pf).Passphrase(keystore.PassphraseRequest{Path: keyPath})
	wantCode(t, err, keystore.CodePassphraseOwner)
	if !strings.Contains(err.Error(), "owned by uid") || !strings.Contains(err.Error(), pf) {
		t.Errorf("error %q", err)
	}
}
