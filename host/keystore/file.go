package keystore

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strconv"

	"golang.org/x/crypto/chacha20poly1305"

	"apconnect/host/identity"
	"apconnect/host/internal/fileowner"
	"apconnect/host/text"
)

// Format constants of the key file document.
const (
	// FormatVersion is the only document version this package reads and
	// writes.
	FormatVersion = 1
	// KindEncrypted marks a passphrase-protected key file.
	KindEncrypted = "apconnect-ed25519-key"
	// KindUnencrypted marks a plaintext development key file.
	KindUnencrypted = "apconnect-ed25519-key-unencrypted"
	// UnencryptedWarning is the exact "warning" member of an unencrypted
	// key file.
	UnencryptedWarning = "UNENCRYPTED development key: anyone who can read this file can sign as this agent"
	// KDFArgon2id is the only KDF name.
	KDFArgon2id = "argon2id"
	// CipherXChaCha20Poly1305 is the only cipher name.
	CipherXChaCha20Poly1305 = "xchacha20poly1305"
	// MaxFileSize bounds what Load reads; a real key file is under 1 KiB.
	MaxFileSize = 64 << 10
)

const (
	saltSize    = 16
	minSaltSize = 16
	maxSaltSize = 64
)

// Info describes a key file without decrypting it.
type Info struct {
	// Path is the file that was read.
	Path string
	// AgentID is the agent_id member (for an unencrypted file, checked
	// against the seed).
	AgentID string
	// Encrypted is false for an unencrypted development key.
	Encrypted bool
	// KDF holds the argon2id parameters of an encrypted file; zero otherwise.
	KDF KDFParams
}

// PassphraseRequest tells a PassphraseSource what the passphrase is for.
type PassphraseRequest struct {
	// Path is the key file being created or unlocked.
	Path string
	// AgentID is the Agent ID of that key.
	AgentID string
	// New is true when a new key file is being created: an interactive
	// source asks twice and compares.
	New bool
}

// doc is a parsed and checked key file.
type doc struct {
	kind    string
	agentID string
	kdf     KDFParams
	salt    []byte
	nonce   []byte
	ct      []byte
	seed    []byte // unencrypted kind only
}

// Wire shapes, in the member order written to disk.
type kdfJSON struct {
	Name      string `json:"name"`
	Time      uint32 `json:"time"`
	MemoryKiB uint32 `json:"memory_kib"`
	Threads   uint8  `json:"threads"`
	Salt      string `json:"salt"`
}

type cipherJSON struct {
	Name       string `json:"name"`
	Nonce      string `json:"nonce"`
	Ciphertext string `json:"ciphertext"`
}

type encryptedJSON struct {
	Version int        `json:"version"`
	Kind    string     `json:"kind"`
	AgentID string     `json:"agent_id"`
	KDF     kdfJSON    `json:"kdf"`
	Cipher  cipherJSON `json:"cipher"`
}

type unencryptedJSON struct {
	Version int    `json:"version"`
	Kind    string `json:"kind"`
	Warning string `json:"warning"`
	AgentID string `json:"agent_id"`
	Seed    string `json:"seed"`
}

// associatedData is the AEAD associated data of an encrypted key file. It
// binds every header member, so changing the kind, version, agent_id, a KDF
// parameter, the salt or the cipher name makes decryption fail. Each value
// is validated (canonical Agent ID, canonical base64url, decimal integers)
// and none can contain the NUL separator, so the encoding is unambiguous.
func associatedData(agentID string, p KDFParams, salt []byte) []byte {
	var b bytes.Buffer
	b.WriteString(KindEncrypted)
	b.WriteString("\x00version=" + strconv.Itoa(FormatVersion))
	b.WriteString("\x00agent_id=" + agentID)
	fmt.Fprintf(&b, "\x00kdf=%s,time=%d,memory_kib=%d,threads=%d,salt=%s", KDFArgon2id, p.Time, p.MemoryKiB, p.Threads, identity.EncodeBase64URL(salt))
	b.WriteString("\x00cipher=" + CipherXChaCha20Poly1305)
	return b.Bytes()
}

// Save seals k under a passphrase from src and writes a new encrypted key
// file at path (mode 0600, atomically; missing parent directories are
// created with mode 0700). It refuses to overwrite an existing file
// (CodeExists) and checks that before asking for the passphrase. src is
// called with New set, so a terminal prompt asks for confirmation.
func Save(path string, k *Key, src PassphraseSource, opts ...Option) error {
	o := buildOptions(opts)
	sec, err := checkSavable(path, k)
	if err != nil {
		return err
	}
	if err := o.kdf.Check(); err != nil {
		return newErr(CodeKDFParams, path, "refusing to write KDF parameters Load would refuse", err)
	}
	pass, err := getPassphrase(src, PassphraseRequest{Path: path, AgentID: k.agentID, New: true})
	if err != nil {
		return err
	}
	defer wipe(pass)

	salt := make([]byte, saltSize)
	nonce := make([]byte, chacha20poly1305.NonceSizeX)
	if _, err := io.ReadFull(o.rand, salt); err != nil {
		return newErr(CodeIO, path, "cannot read random bytes for the salt", err)
	}
	if _, err := io.ReadFull(o.rand, nonce); err != nil {
		return newErr(CodeIO, path, "cannot read random bytes for the nonce", err)
	}
	fileKey := deriveKey(pass, salt, o.kdf)
	defer wipe(fileKey)
	aead, err := chacha20poly1305.NewX(fileKey)
	if err != nil {
		return newErr(CodeIO, path, "cannot initialise XChaCha20-Poly1305", err)
	}
	seed := sec.priv.Seed()
	defer wipe(seed)
	ct := aead.Seal(nil, nonce, seed, associatedData(k.agentID, o.kdf, salt))

	data, err := json.MarshalIndent(encryptedJSON{
		Version: FormatVersion,
		Kind:    KindEncrypted,
		AgentID: k.agentID,
		KDF: kdfJSON{
			Name:      KDFArgon2id,
			Time:      o.kdf.Time,
			MemoryKiB: o.kdf.MemoryKiB,
			Threads:   o.kdf.Threads,
			Salt:      identity.EncodeBase64URL(salt),
		},
		Cipher: cipherJSON{
			Name:       CipherXChaCha20Poly1305,
			Nonce:      identity.EncodeBase64URL(nonce),
			Ciphertext: identity.EncodeBase64URL(ct),
		},
	}, "", "  ")
	if err != nil {
		return newErr(CodeIO, path, "cannot encode the key file", err)
	}
	return writeNewFile(path, append(data, '\n'))
}

// SaveUnencrypted writes k as an unencrypted development key file at path,
// with the same atomic, no-overwrite, mode 0600 rules as Save. Only use it
// behind an explicit flag (--unencrypted-key): anyone who can read the file
// can sign as the agent.
func SaveUnencrypted(path string, k *Key) error {
	sec, err := checkSavable(path, k)
	if err != nil {
		return err
	}
	seed := sec.priv.Seed()
	defer wipe(seed)
	enc := identity.EncodeBase64URL(seed)
	data, err := json.MarshalIndent(unencryptedJSON{
		Version: FormatVersion,
		Kind:    KindUnencrypted,
		Warning: UnencryptedWarning,
		AgentID: k.agentID,
		Seed:    enc,
	}, "", "  ")
	if err != nil {
		return newErr(CodeIO, path, "cannot encode the key file", err)
	}
	data = append(data, '\n')
	defer wipe(data)
	return writeNewFile(path, data)
}

// checkSavable refuses an unusable key and an existing target early, before
// any passphrase is asked for. writeNewFile checks existence again
// atomically.
func checkSavable(path string, k *Key) (*secret, error) {
	var sec *secret
	if k != nil {
		sec = k.secret()
	}
	if sec == nil {
		return nil, newErr(CodeInvalidSeed, path, "cannot save an empty or wiped key", nil)
	}
	if _, err := os.Lstat(path); err == nil {
		return nil, existsErr(path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, newErr(CodeIO, path, "cannot check whether the key file exists", err)
	}
	return sec, nil
}

func existsErr(path string) *Error {
	return newErr(CodeExists, path, "a file already exists at this path; refusing to overwrite it (move it away or choose another path)", nil)
}

// Load reads the key file at path and returns the key. For an encrypted file
// it asks src for the passphrase (src may be nil for a file expected to be
// unencrypted; an encrypted file then fails with CodePassphraseUnavailable).
// The KDF parameters stored in the file are used, within the bounds of
// KDFParams.Check.
func Load(path string, src PassphraseSource) (*Key, error) {
	d, err := readDoc(path)
	if err != nil {
		return nil, err
	}
	if d.kind == KindUnencrypted {
		defer wipe(d.seed)
		k, err := keyMatching(path, d.seed, d.agentID, "seed")
		if err != nil {
			return nil, err
		}
		k.unencrypted = true
		return k, nil
	}
	pass, err := getPassphrase(src, PassphraseRequest{Path: path, AgentID: d.agentID})
	if err != nil {
		return nil, err
	}
	defer wipe(pass)
	fileKey := deriveKey(pass, d.salt, d.kdf)
	defer wipe(fileKey)
	aead, err := chacha20poly1305.NewX(fileKey)
	if err != nil {
		return nil, newErr(CodeIO, path, "cannot initialise XChaCha20-Poly1305", err)
	}
	seed, err := aead.Open(nil, d.nonce, d.ct, associatedData(d.agentID, d.kdf, d.salt))
	if err != nil {
		return nil, newErr(CodeWrongPassphrase, path, "wrong passphrase or corrupted key file", nil)
	}
	defer wipe(seed)
	return keyMatching(path, seed, d.agentID, "decrypted seed")
}

// keyMatching builds the key for seed and checks it has agentID.
func keyMatching(path string, seed []byte, agentID, what string) (*Key, error) {
	k, err := FromSeed(seed)
	if err != nil {
		return nil, newErr(CodeCorrupt, path, what+" has the wrong length", nil)
	}
	if subtle.ConstantTimeCompare([]byte(k.agentID), []byte(agentID)) != 1 {
		k.Wipe()
		return nil, newErr(CodeCorrupt, path, "the "+what+" does not belong to agent_id "+agentID, nil)
	}
	return k, nil
}

// ReadInfo reads and checks the key file at path without decrypting it: it
// applies every check Load applies before the passphrase is needed
// (permissions, format, KDF bounds, and for an unencrypted file the seed
// against agent_id).
func ReadInfo(path string) (*Info, error) {
	d, err := readDoc(path)
	if err != nil {
		return nil, err
	}
	info := &Info{Path: path, AgentID: d.agentID, Encrypted: d.kind == KindEncrypted, KDF: d.kdf}
	if !info.Encrypted {
		defer wipe(d.seed)
		k, err := keyMatching(path, d.seed, d.agentID, "seed")
		if err != nil {
			return nil, err
		}
		k.Wipe()
	}
	return info, nil
}

// readDoc opens path, checks its type and permissions on the open file, reads
// at most MaxFileSize bytes and parses them.
func readDoc(path string) (*doc, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, newErr(CodeNotFound, path, "key file not found (create one with `apconnect init`)", nil)
		}
		return nil, newErr(CodeIO, path, "cannot open the key file", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, newErr(CodeIO, path, "cannot stat the key file", err)
	}
	if !st.Mode().IsRegular() {
		return nil, newErr(CodePermissions, path, "not a regular file", nil)
	}
	if err := checkPrivateMode(st.Mode()); err != nil {
		return nil, newErr(CodePermissions, path, fmt.Sprintf("permissions %04o are too open: a key file must be readable by its owner only; fix with: chmod 600 %s", st.Mode().Perm(), path), nil)
	}
	if err := fileowner.Check(st); err != nil {
		// Mode 0600 protects nothing if the file is someone else's: its
		// owner planted it (or can replace it) and can read it.
		return nil, newErr(CodeOwner, path, fmt.Sprintf("the key file is %v; a key file must belong to the user who signs with it (fix: chown, or create a new key with `apconnect init`)", err), nil)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, newErr(CodeIO, path, "cannot read the key file", err)
	}
	if len(data) > MaxFileSize {
		return nil, newErr(CodeCorrupt, path, fmt.Sprintf("larger than %d bytes; not a key file", MaxFileSize), nil)
	}
	return parseDoc(path, data)
}

// checkPrivateMode fails when group or other permission bits are set. On
// Windows, where Go reports synthetic modes, it accepts everything.
func checkPrivateMode(m fs.FileMode) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	if m.Perm()&0o077 != 0 {
		return errors.New("group or other permission bits set")
	}
	return nil
}

// Members of each document kind.
var (
	encryptedMembers   = []string{"agent_id", "cipher", "kdf", "kind", "version"}
	unencryptedMembers = []string{"agent_id", "kind", "seed", "version", "warning"}
	kdfMembers         = []string{"memory_kib", "name", "salt", "threads", "time"}
	cipherMembers      = []string{"ciphertext", "name", "nonce"}
)

// parseDoc applies every structural check. Order matters for the error
// codes: a document that is not JSON is corrupt; an unknown version or kind
// is unsupported even when the rest of the document looks different; then
// members, values and bounds are checked.
func parseDoc(path string, data []byte) (*doc, error) {
	corrupt := func(format string, args ...any) error {
		return newErr(CodeCorrupt, path, fmt.Sprintf(format, args...), nil)
	}
	v, err := identity.ParseStrict(data)
	if err != nil {
		return nil, newErr(CodeCorrupt, path, "not a valid key file (truncated or not JSON)", err)
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, corrupt("not a key file: the document is not a JSON object")
	}
	if _, ok := top["version"]; !ok {
		return nil, corrupt("not a key file: member \"version\" is missing")
	}
	version, err := intMember(top, "version", "/version")
	if err != nil {
		return nil, corrupt("%v", err)
	}
	if version != FormatVersion {
		return nil, newErr(CodeUnsupported, path, fmt.Sprintf("unsupported key file version %d (this apconnect reads version %d)", version, FormatVersion), nil)
	}
	kind, err := stringMember(top, "kind", "/kind")
	if err != nil {
		return nil, corrupt("%v", err)
	}
	d := &doc{kind: kind}
	switch kind {
	case KindEncrypted:
		err = exactMembers(top, encryptedMembers, "")
	case KindUnencrypted:
		err = exactMembers(top, unencryptedMembers, "")
	default:
		return nil, newErr(CodeUnsupported, path, fmt.Sprintf("unknown key file kind %s (expected %q or %q)", quoteShort(kind), KindEncrypted, KindUnencrypted), nil)
	}
	if err != nil {
		return nil, corrupt("%v", err)
	}
	if d.agentID, err = stringMember(top, "agent_id", "/agent_id"); err != nil {
		return nil, corrupt("%v", err)
	}
	if _, err := identity.ParseAgentID(d.agentID); err != nil {
		return nil, corrupt("/agent_id: %v", err)
	}

	if kind == KindUnencrypted {
		w, err := stringMember(top, "warning", "/warning")
		if err != nil {
			return nil, corrupt("%v", err)
		}
		if w != UnencryptedWarning {
			return nil, corrupt("/warning: must be exactly %q", UnencryptedWarning)
		}
		if d.seed, err = b64Member(top, "seed", "/seed", SeedSize, SeedSize); err != nil {
			return nil, corrupt("%v", err)
		}
		return d, nil
	}

	if err := d.parseKDF(path, top, corrupt); err != nil {
		return nil, err
	}
	if err := d.parseCipher(path, top, corrupt); err != nil {
		return nil, err
	}
	return d, nil
}

// parseKDF reads the kdf member of an encrypted key file: argon2id with
// parameters inside the accepted bounds, and its salt.
func (d *doc) parseKDF(path string, top map[string]any, corrupt func(string, ...any) error) error {
	kdf, err := objectMember(top, "kdf", "/kdf", kdfMembers)
	if err != nil {
		return corrupt("%v", err)
	}
	name, err := stringMember(kdf, "name", "/kdf/name")
	if err != nil {
		return corrupt("%v", err)
	}
	if name != KDFArgon2id {
		return newErr(CodeUnsupported, path, fmt.Sprintf("/kdf/name: unsupported KDF %s (expected %q)", quoteShort(name), KDFArgon2id), nil)
	}
	var raw [3]int64
	for i, m := range []string{"time", "memory_kib", "threads"} {
		if raw[i], err = intMember(kdf, m, "/kdf/"+m); err != nil {
			return corrupt("%v", err)
		}
	}
	if raw[0] < 1 || raw[0] > MaxKDFTime || raw[1] < 1 || raw[1] > MaxKDFMemoryKiB || raw[2] < 1 || raw[2] > MaxKDFThreads {
		return newErr(CodeKDFParams, path, fmt.Sprintf("argon2id parameters time=%d memory_kib=%d threads=%d are outside the accepted bounds (time 1..%d, memory_kib up to %d, threads 1..%d); refusing to derive", raw[0], raw[1], raw[2], MaxKDFTime, MaxKDFMemoryKiB, MaxKDFThreads), nil)
	}
	d.kdf = KDFParams{Time: uint32(raw[0]), MemoryKiB: uint32(raw[1]), Threads: uint8(raw[2])}
	if err := d.kdf.Check(); err != nil {
		return newErr(CodeKDFParams, path, "refusing to derive", err)
	}
	if d.salt, err = b64Member(kdf, "salt", "/kdf/salt", minSaltSize, maxSaltSize); err != nil {
		return corrupt("%v", err)
	}
	return nil
}

// parseCipher reads the cipher member of an encrypted key file:
// XChaCha20-Poly1305, its nonce and the sealed seed.
func (d *doc) parseCipher(path string, top map[string]any, corrupt func(string, ...any) error) error {
	ciph, err := objectMember(top, "cipher", "/cipher", cipherMembers)
	if err != nil {
		return corrupt("%v", err)
	}
	name, err := stringMember(ciph, "name", "/cipher/name")
	if err != nil {
		return corrupt("%v", err)
	}
	if name != CipherXChaCha20Poly1305 {
		return newErr(CodeUnsupported, path, fmt.Sprintf("/cipher/name: unsupported cipher %s (expected %q)", quoteShort(name), CipherXChaCha20Poly1305), nil)
	}
	if d.nonce, err = b64Member(ciph, "nonce", "/cipher/nonce", chacha20poly1305.NonceSizeX, chacha20poly1305.NonceSizeX); err != nil {
		return corrupt("%v", err)
	}
	ctLen := SeedSize + chacha20poly1305.Overhead
	if d.ct, err = b64Member(ciph, "ciphertext", "/cipher/ciphertext", ctLen, ctLen); err != nil {
		return corrupt("%v", err)
	}
	return nil
}

// exactMembers checks that obj has exactly the names in want (sorted).
func exactMembers(obj map[string]any, want []string, pointer string) error {
	for _, m := range want {
		if _, ok := obj[m]; !ok {
			return fmt.Errorf("%s: member %q is missing", orRoot(pointer), m)
		}
	}
	if len(obj) != len(want) {
		extra := make([]string, 0, len(obj))
		for m := range obj {
			if !slices.Contains(want, m) {
				extra = append(extra, m)
			}
		}
		slices.Sort(extra)
		return fmt.Errorf("%s: unexpected member %s", orRoot(pointer), quoteShort(extra[0]))
	}
	return nil
}

func orRoot(pointer string) string {
	if pointer == "" {
		return "/"
	}
	return pointer
}

func objectMember(obj map[string]any, name, pointer string, members []string) (map[string]any, error) {
	o, ok := obj[name].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: must be an object", pointer)
	}
	if err := exactMembers(o, members, pointer); err != nil {
		return nil, err
	}
	return o, nil
}

func stringMember(obj map[string]any, name, pointer string) (string, error) {
	s, ok := obj[name].(string)
	if !ok {
		return "", fmt.Errorf("%s: must be a string", pointer)
	}
	return s, nil
}

func intMember(obj map[string]any, name, pointer string) (int64, error) {
	n, ok := obj[name].(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s: must be an integer", pointer)
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: must be an integer", pointer)
	}
	return i, nil
}

func b64Member(obj map[string]any, name, pointer string, minLen, maxLen int) ([]byte, error) {
	s, err := stringMember(obj, name, pointer)
	if err != nil {
		return nil, err
	}
	b, err := identity.DecodeBase64URL(s)
	if err != nil {
		return nil, fmt.Errorf("%s: not canonical unpadded base64url", pointer)
	}
	if len(b) < minLen || len(b) > maxLen {
		wipe(b)
		if minLen == maxLen {
			return nil, fmt.Errorf("%s: must decode to %d bytes, got %d", pointer, minLen, len(b))
		}
		return nil, fmt.Errorf("%s: must decode to %d..%d bytes, got %d", pointer, minLen, maxLen, len(b))
	}
	return b, nil
}

// quoteShort quotes untrusted text from a file for an error message, cut to
// a readable length.
func quoteShort(s string) string {
	return strconv.Quote(text.Truncate(s, 65))
}

// getPassphrase asks src and enforces the rules every source shares.
func getPassphrase(src PassphraseSource, req PassphraseRequest) ([]byte, error) {
	if src == nil {
		return nil, newErr(CodePassphraseUnavailable, req.Path, "the key file is encrypted and no passphrase source was given", nil)
	}
	pass, err := src.Passphrase(req)
	if err != nil {
		var ke *Error
		if errors.As(err, &ke) {
			return nil, err
		}
		return nil, newErr(CodePassphraseUnavailable, req.Path, "cannot get the passphrase", err)
	}
	if len(pass) == 0 {
		return nil, newErr(CodePassphraseEmpty, req.Path, "empty passphrase refused for an encrypted key", nil)
	}
	return pass, nil
}
