package keystore_test

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"

	"apconnect/host/keystore"
)

// Create a key, seal it in a key file under a passphrase, and unlock it
// again. The file holds the Agent ID in clear and the seed encrypted
// (argon2id, then XChaCha20-Poly1305); a wrong passphrase has its own code.
func Example() {
	dir, err := os.MkdirTemp("", "keystore-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "keys", "agent.key")

	// A fixed seed keeps the output stable; keystore.Generate() draws one
	// from crypto/rand.
	key, err := keystore.FromSeed(bytes.Repeat([]byte{7}, keystore.SeedSize))
	if err != nil {
		panic(err)
	}
	pass := keystore.StaticPassphrase([]byte("correct horse battery staple"))
	// Cheap argon2id costs keep the example fast; real key files use
	// keystore.DefaultKDFParams(), the default of Save.
	cheap := keystore.WithKDFParams(keystore.KDFParams{Time: 1, MemoryKiB: 64, Threads: 1})
	if err := keystore.Save(path, key, pass, cheap); err != nil {
		panic(err)
	}

	info, err := keystore.ReadInfo(path) // no passphrase needed
	if err != nil {
		panic(err)
	}
	fmt.Println("file:", info.AgentID, "encrypted:", info.Encrypted)

	unlocked, err := keystore.Load(path, pass)
	if err != nil {
		panic(err)
	}
	defer unlocked.Wipe()
	fmt.Println("unlocked:", unlocked.AgentID() == key.AgentID())
	fmt.Printf("printed: %v\n", unlocked) // never the private key

	msg := []byte("hello")
	fmt.Println("signs:", ed25519.Verify(unlocked.PublicKey(), msg, unlocked.Sign(msg)))

	_, err = keystore.Load(path, keystore.StaticPassphrase([]byte("wrong")))
	fmt.Println("wrong passphrase:", keystore.CodeOf(err))
	// Output:
	// file: did:agent:6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw encrypted: true
	// unlocked: true
	// printed: did:agent:6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw
	// signs: true
	// wrong passphrase: key_wrong_passphrase
}
