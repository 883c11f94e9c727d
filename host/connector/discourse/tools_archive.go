package discourse

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"apconnect/host/capability"
	"apconnect/host/engine"
	"apconnect/host/internal/atomicfile"
	"apconnect/host/proto/adp"
	"apconnect/host/store"
)

// RoomArchiveInput is the input of agent_protocols_room_archive.
type RoomArchiveInput struct {
	RoomID         string `json:"room_id"`
	Host           string `json:"host,omitempty"`
	IncludeRecords *bool  `json:"include_records,omitempty"`
}

// RoomArchiveResult is the result of agent_protocols_room_archive: the
// manifest, the verified records, the redacted seqs, whether the state
// replay went through every record, the external pack documents, and where
// the verified archive is kept.
type RoomArchiveResult struct {
	Manifest      json.RawMessage   `json:"manifest"`
	Records       []json.RawMessage `json:"records"`
	Verified      bool              `json:"verified"`
	Redacted      []int64           `json:"redacted"`
	StateVerified bool              `json:"state_verified"`
	Packs         []json.RawMessage `json:"packs"`
	Archive       KeptArchive       `json:"archive"`
}

// KeptArchive says where a verified archive is kept locally.
type KeptArchive struct {
	URI          string `json:"uri"`
	RecordsCount int    `json:"records_count"`
	Bytes        int64  `json:"bytes"`
	KeptAt       int64  `json:"kept_at"`
}

// ArchiveSummary is the kept report of a verified archive, stored next to
// its records (archive.json) and served by the archive resource.
type ArchiveSummary struct {
	Host          string            `json:"host"`
	RoomID        string            `json:"room_id"`
	Manifest      json.RawMessage   `json:"manifest"`
	Verified      bool              `json:"verified"`
	Redacted      []int64           `json:"redacted"`
	StateVerified bool              `json:"state_verified"`
	Packs         []json.RawMessage `json:"packs"`
	RecordsCount  int               `json:"records_count"`
	Bytes         int64             `json:"bytes"`
	KeptAt        int64             `json:"kept_at"`
}

// ArchiveURI is the resource URI of a room's kept archive.
func ArchiveURI(roomID string) string { return "agent-protocols://rooms/" + roomID + "/archive" }

// RoomArchive is agent_protocols_room_archive: download the room's archive
// from its host and verify it by the five steps of ADP 18 as 0.12.6 reads
// them: the manifest names the room; formats.jsonl and every
// manifest.packs[].url are on the host's origin; the records chain from
// seq 1 to the manifest's last_seq and last_hash, every non-redacted
// envelope's signature verifies; every external pack matches the digest of
// its signed import; and the room's state replays at each record. The
// client streams the record log in, bounded (client.Options.MaxArchiveBytes
// in all, MaxArchiveLineBytes per record), each read with a request JWT;
// an older hub's self-contained file is read too. A failing archive is
// verification_failed with the problems found (the first 16); nothing is
// kept. A verified one is kept in the agent's state directory, replacing
// the room's previous one, and is readable as the archive resource. Reads
// the host; signs nothing and changes no room state or read cursor.
func (c *Module) RoomArchive(ctx context.Context, sess SessionID, in RoomArchiveInput) (*RoomArchiveResult, error) {
	rr, err := c.resolve(ctx, in.Host, in.RoomID, false)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, rr.h.origin, capability.DiscourseRead); err != nil {
		return nil, err
	}
	a, err := rr.h.client.DownloadArchive(ctx, rr.roomID)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	rep, err := a.Verify(&adp.ArchiveOptions{HostOrigin: rr.h.origin})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if !rep.OK() {
		problems := rep.Problems
		if len(problems) > 16 {
			problems = problems[:16]
		}
		return nil, &engine.Error{Code: CodeVerificationFailed, Message: fmt.Sprintf("the archive of room %s failed verification: %s", rr.roomID, problems[0].Message),
			Data: map[string]any{"problems": problems, "problems_count": len(rep.Problems)}}
	}
	manifest, err := json.Marshal(a.Manifest)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := &RoomArchiveResult{Manifest: manifest, Records: []json.RawMessage{}, Verified: true, Redacted: []int64{},
		Packs: []json.RawMessage{}}
	out.Redacted = append(out.Redacted, rep.Redacted...)
	out.StateVerified = rep.Room != nil && len(rep.Redacted) == 0
	urls := make([]string, 0, len(a.Packs))
	for u := range a.Packs {
		urls = append(urls, u)
	}
	sort.Strings(urls)
	for _, u := range urls {
		if !json.Valid(a.Packs[u]) {
			return nil, &engine.Error{Code: CodeVerificationFailed, Message: "the archive's pack " + u + " is not JSON"}
		}
		out.Packs = append(out.Packs, json.RawMessage(a.Packs[u]))
	}
	withRecords := in.IncludeRecords == nil || *in.IncludeRecords
	sum := ArchiveSummary{Host: rr.h.origin, RoomID: rr.roomID, Manifest: manifest, Verified: true, Redacted: out.Redacted,
		StateVerified: out.StateVerified, Packs: out.Packs, RecordsCount: len(a.Records), KeptAt: c.NowMS()}
	err = c.keepArchive(rr.h.origin, rr.roomID, &sum, func(w io.Writer) (int64, error) {
		var n int64
		for _, rec := range a.Records {
			line, err := json.Marshal(rec)
			if err != nil {
				return n, err
			}
			if withRecords {
				out.Records = append(out.Records, line)
			}
			k, err := w.Write(append(line, '\n'))
			n += int64(k)
			if err != nil {
				return n, err
			}
		}
		return n, nil
	})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out.Archive = KeptArchive{URI: ArchiveURI(rr.roomID), RecordsCount: sum.RecordsCount, Bytes: sum.Bytes, KeptAt: sum.KeptAt}
	return out, nil
}

// archiveDir is where the agent's verified archives of one host's rooms
// are kept: <state>/archives/<agent>/<host>/.
func (c *Module) archiveDir(host string) (string, error) {
	name, err := store.FileName(c.Self)
	if err != nil {
		return "", err
	}
	return filepath.Join(c.Config.StateDir(), "archives", strings.TrimSuffix(name, ".db"), hostDirName(host)), nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

// hostDirName is a file name for a host origin: readable, and unique by a
// digest of the origin.
func hostDirName(origin string) string {
	sum := sha256.Sum256([]byte(origin))
	return unsafeName.ReplaceAllString(strings.TrimPrefix(origin, "https://"), "_") + "-" + hex.EncodeToString(sum[:4])
}

// keepArchive writes a verified archive atomically: records (one server
// record per line, the 0.12.6 JSON Lines layout, written by write as they
// are encoded) and then its summary, each in full under a temporary name,
// synced, then renamed over the previous one.
func (c *Module) keepArchive(host, roomID string, sum *ArchiveSummary, write func(io.Writer) (int64, error)) error {
	dir, err := c.archiveDir(host)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, roomID+".jsonl"), func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		n, err := write(bw)
		sum.Bytes = n
		if err != nil {
			return err
		}
		return bw.Flush()
	}); err != nil {
		return err
	}
	meta, err := json.Marshal(sum)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, roomID+".json"), meta)
}

// writeFileAtomic is atomicfile.Write for content streamed by write (an
// archive's record log can be large): a temporary file in the same
// directory, mode 0600, fsync, rename, fsync of the directory.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(path))
}

// KeptArchive returns the summary and, withRecords, the records (JSON
// Lines) of a room's kept archive: on the given host, or on the only
// configured host that has one. store.ErrNotFound when there is none;
// ambiguous_room when several hosts have one and host is "". Local state
// only.
func (c *Module) KeptArchive(host, roomID string, withRecords bool) (*ArchiveSummary, []byte, error) {
	hosts := c.hostOrder
	if host != "" {
		hosts = []string{host}
	}
	var found []string
	for _, h := range hosts {
		dir, err := c.archiveDir(h)
		if err != nil {
			return nil, nil, err
		}
		if _, err := os.Stat(filepath.Join(dir, roomID+".json")); err == nil {
			found = append(found, h)
		}
	}
	switch {
	case len(found) == 0:
		return nil, nil, store.ErrNotFound
	case len(found) > 1:
		return nil, nil, &engine.Error{Code: CodeAmbiguousRoom, Message: "archives of room " + roomID + " are kept for more than one host", Data: map[string]any{"hosts": found}}
	}
	dir, _ := c.archiveDir(found[0])
	meta, err := os.ReadFile(filepath.Join(dir, roomID+".json"))
	if err != nil {
		return nil, nil, err
	}
	var sum ArchiveSummary
	if err := json.Unmarshal(meta, &sum); err != nil {
		return nil, nil, err
	}
	if !withRecords {
		return &sum, nil, nil
	}
	jsonl, err := os.ReadFile(filepath.Join(dir, roomID+".jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, store.ErrNotFound
	}
	return &sum, jsonl, err
}
