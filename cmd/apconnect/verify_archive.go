package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"apconnect/host/adp"
	"apconnect/host/hub/discourse"
	"apconnect/host/identity"
)

// defaultArchiveMaxBytes bounds a fetched or read archive.
const defaultArchiveMaxBytes = 256 << 20

func init() {
	register(&command{
		name:    "verify-archive",
		summary: "verify an Agent Discourse room archive (ADP 18) from a file or URL",
		usage:   "verify-archive [--ca FILE] [--json] [--max-bytes N] FILE_OR_URL",
		detail: `Verifies a room archive by the five steps of ADP section 18: records
ordered by seq from 1 to last_seq without gaps; every record hash recomputed,
every pre_hash linked and the last hash equal to the manifest's last_hash;
every envelope's event hash and strict Ed25519 signature; the room replayed —
lifecycle from accepted_at and the effective times, membership, roles, bans,
invitations and the type registry — with every custom payload validated
against the definition in force at its seq under the type schema profile;
and redacted records reported.

FILE_OR_URL is a local archive.jsonl (a manifest line, external pack document
lines and one record per line, as the local hub serves it), or an https URL:
an archive manifest (…/archive, or a room URL, to which /archive is added),
whose jsonl format is then fetched from the same origin, or an archive.jsonl
URL. URLs are read anonymously, so they work for public rooms; for other rooms
download the archive with an authorized client and verify the file. --ca
trusts a host's own CA (such as the local hub's ca.pem) instead of the system
roots. No other network access happens: external pack documents come from
the archive itself.

Exit status 0 means the archive verifies (a summary is printed, redactions
included); 1 means it does not, and every problem found is listed; 2 is a
usage error.`,
		example: `apconnect verify-archive --ca ~/.local/share/apconnect/hub/ca.pem \
    https://127.0.0.1:8443/v1/rooms/d8ftedhpqhsusbg001tg/archive
apconnect verify-archive room-archive.jsonl`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env, []string) error {
			ca := fs.String("ca", "", "PEM file of the CA to trust for https URLs (replaces the system roots)")
			asJSON := fs.Bool("json", false, "print the verification report as JSON")
			maxBytes := fs.Int64("max-bytes", defaultArchiveMaxBytes, "largest manifest or archive to read, in bytes")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) != 1 {
					return usageError{"verify-archive takes exactly one FILE_OR_URL"}
				}
				if *maxBytes <= 0 {
					return usageError{"--max-bytes must be positive"}
				}
				res, err := loadArchive(ctx, args[0], *ca, *maxBytes)
				if err != nil {
					return err
				}
				report := res.verify()
				if *asJSON {
					enc := json.NewEncoder(e.stdout)
					enc.SetIndent("", "  ")
					if err := enc.Encode(report); err != nil {
						return err
					}
				} else {
					printArchiveReport(e.stdout, report)
				}
				if !report.OK {
					return exitError{1}
				}
				return nil
			}
		},
	})
}

// loadedArchive is an archive read from a file or URL, before verification.
type loadedArchive struct {
	source   string
	manifest *adp.ArchiveManifest
	records  []*adp.Record
	packs    map[string][]byte
	problems []adp.Problem // problems found while reading
}

// archiveReport is what verify-archive prints.
type archiveReport struct {
	OK       bool          `json:"ok"`
	Source   string        `json:"source"`
	RoomID   string        `json:"room_id"`
	URL      string        `json:"url,omitempty"`
	Records  int           `json:"records"`
	LastSeq  int64         `json:"last_seq"`
	LastHash string        `json:"last_hash"`
	Status   string        `json:"status,omitempty"`
	Packs    int           `json:"external_packs"`
	Redacted []int64       `json:"redacted"`
	Problems []adp.Problem `json:"problems"`
}

// verify runs adp.VerifyArchive (or, without a manifest, adp.Replay, and
// reports the missing commitment) and gathers every problem.
func (a *loadedArchive) verify() *archiveReport {
	var rep *adp.ArchiveReport
	problems := append([]adp.Problem(nil), a.problems...)
	if a.manifest != nil {
		r, err := adp.VerifyArchive(a.manifest, a.records, a.packs, nil)
		if err != nil {
			problems = append(problems, adp.Problem{Code: adp.ErrorCode(err), Message: err.Error()})
			r = &adp.ArchiveReport{}
		}
		rep = r
	} else {
		limits := adp.VerifierLimits()
		rep = adp.Replay(&adp.Rules{Limits: limits, Packs: adp.StaticPacks(a.packs)}, a.records)
		problems = append(problems, adp.Problem{Code: adp.CodeChainBroken,
			Message: "the archive has no manifest: there is no last_hash commitment to check the chain against"})
	}
	problems = append(problems, rep.Problems...)
	out := &archiveReport{
		OK: len(problems) == 0, Source: a.source, RoomID: rep.RoomID, Records: rep.Records,
		LastSeq: rep.LastSeq, LastHash: rep.LastHash, Status: string(rep.Status), Packs: len(a.packs),
		Redacted: rep.Redacted, Problems: problems,
	}
	if a.manifest != nil {
		out.URL = a.manifest.URL
	}
	if out.Redacted == nil {
		out.Redacted = []int64{}
	}
	if out.Problems == nil {
		out.Problems = []adp.Problem{}
	}
	return out
}

func printArchiveReport(w io.Writer, r *archiveReport) {
	if r.OK {
		fmt.Fprintf(w, "archive verified: %s\n", r.Source)
	} else {
		fmt.Fprintf(w, "archive verification FAILED: %s\n", r.Source)
	}
	fmt.Fprintf(w, "  room:       %s\n", orNone(r.RoomID))
	if r.URL != "" {
		fmt.Fprintf(w, "  url:        %s\n", r.URL)
	}
	fmt.Fprintf(w, "  records:    %d (last seq %d)\n", r.Records, r.LastSeq)
	fmt.Fprintf(w, "  last_hash:  %s\n", orNone(r.LastHash))
	if r.Status != "" {
		fmt.Fprintf(w, "  status:     %s\n", r.Status)
	}
	fmt.Fprintf(w, "  packs:      %d external pack document(s)\n", r.Packs)
	if len(r.Redacted) == 0 {
		fmt.Fprintf(w, "  redactions: none\n")
	} else {
		seqs := make([]string, len(r.Redacted))
		for i, s := range r.Redacted {
			seqs[i] = fmt.Sprint(s)
		}
		fmt.Fprintf(w, "  redactions: %d record(s) redacted by the host: seq %s\n", len(r.Redacted), strings.Join(seqs, ", "))
		fmt.Fprintf(w, "              (their signatures, payloads and permissions cannot be verified; the chain still commits to their event IDs)\n")
	}
	if !r.OK {
		fmt.Fprintf(w, "%d problem(s):\n", len(r.Problems))
		for _, p := range r.Problems {
			where := "archive"
			if p.Seq > 0 {
				where = fmt.Sprintf("seq %d", p.Seq)
			}
			ptr := ""
			if p.Pointer != "" {
				ptr = " " + p.Pointer
			}
			fmt.Fprintf(w, "  - %s [%s]%s: %s\n", where, p.Code, ptr, oneLine(p.Message))
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// loadArchive reads an archive from a local file or an https URL.
func loadArchive(ctx context.Context, src, caFile string, maxBytes int64) (*loadedArchive, error) {
	if strings.HasPrefix(src, "http://") {
		return nil, usageError{"archives are fetched over https only"}
	}
	if !strings.HasPrefix(src, "https://") {
		if caFile != "" {
			return nil, usageError{"--ca applies to https URLs only"}
		}
		f, err := os.Open(src)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
		if err != nil {
			return nil, err
		}
		if int64(len(data)) > maxBytes {
			return nil, fmt.Errorf("%s is larger than --max-bytes %d", src, maxBytes)
		}
		a := parseArchiveJSONL(src, data)
		return a, nil
	}
	client, err := archiveClient(caFile)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(src)
	if err != nil || u.Host == "" {
		return nil, usageError{fmt.Sprintf("%q is not a URL", src)}
	}
	if strings.HasSuffix(u.Path, "/archive.jsonl") {
		data, err := fetch(ctx, client, u.String(), maxBytes)
		if err != nil {
			return nil, err
		}
		return parseArchiveJSONL(src, data), nil
	}
	if !strings.HasSuffix(u.Path, "/archive") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/archive"
	}
	mdata, err := fetch(ctx, client, u.String(), maxBytes)
	if err != nil {
		return nil, err
	}
	manifest, err := adp.ParseArchiveManifest(mdata)
	if err != nil {
		return nil, fmt.Errorf("%s is not an archive manifest: %w", u, err)
	}
	jsonl, ok := manifest.Formats["jsonl"]
	if !ok {
		return nil, fmt.Errorf("the manifest at %s lists no jsonl format; nothing to verify the records from", u)
	}
	ju, err := url.Parse(jsonl)
	if err != nil || ju.Scheme != "https" || ju.Host != u.Host {
		return nil, fmt.Errorf("the manifest's jsonl format %q is not on the manifest's origin %s; refusing to follow it", jsonl, u.Host)
	}
	data, err := fetch(ctx, client, ju.String(), maxBytes)
	if err != nil {
		return nil, err
	}
	a := parseArchiveJSONL(u.String(), data)
	if a.manifest != nil && !sameCommitment(a.manifest, manifest) {
		a.problems = append(a.problems, adp.Problem{Code: adp.CodeChainBroken,
			Message: fmt.Sprintf("the manifest inside %s (room %s, last_seq %d) differs from the manifest fetched from %s (room %s, last_seq %d)",
				ju, a.manifest.RoomID, a.manifest.LastSeq, u, manifest.RoomID, manifest.LastSeq)})
	}
	a.manifest = manifest
	return a, nil
}

func sameCommitment(a, b *adp.ArchiveManifest) bool {
	return a.RoomID == b.RoomID && a.URL == b.URL && a.LastSeq == b.LastSeq && a.LastHash == b.LastHash
}

// parseArchiveJSONL reads archive lines: the manifest, pack documents and
// records. A line that cannot be read is a problem, and reading goes on.
func parseArchiveJSONL(src string, data []byte) *loadedArchive {
	a := &loadedArchive{source: src, packs: map[string][]byte{}}
	bad := func(line int, code, format string, args ...any) {
		a.problems = append(a.problems, adp.Problem{Code: code, Message: fmt.Sprintf("line %d: ", line) + fmt.Sprintf(format, args...)})
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), len(data)+1)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		v, err := identity.ParseStrict(text)
		if err != nil {
			bad(line, adp.CodeInvalidRecord, "not strict JSON: %v", err)
			continue
		}
		obj, ok := v.(map[string]any)
		if !ok {
			bad(line, adp.CodeInvalidRecord, "not a JSON object")
			continue
		}
		switch obj["type"] {
		case discourse.ArchiveManifestType:
			if a.manifest != nil {
				bad(line, adp.CodeInvalidRequest, "a second manifest")
				continue
			}
			m, err := adp.ParseArchiveManifest(text)
			if err != nil {
				bad(line, adp.ErrorCode(err), "manifest: %v", err)
				continue
			}
			a.manifest = m
		case discourse.ArchivePackType:
			u, _ := obj["pack"].(string)
			doc, ok := obj["document"].(string)
			if u == "" || !ok {
				bad(line, adp.CodePackUnavailable, "a pack document line needs \"pack\" and \"document\"")
				continue
			}
			if prev, dup := a.packs[u]; dup && string(prev) != doc {
				bad(line, adp.CodePackUnavailable, "two different documents for pack %s", u)
				continue
			}
			a.packs[u] = []byte(doc)
		default:
			if _, has := obj["type"]; has {
				bad(line, adp.CodeInvalidRecord, "unknown line type %v", obj["type"])
				continue
			}
			rec, err := adp.RecordFromValue(v, "")
			if err != nil {
				seq, _ := identity.IntValue(obj["seq"])
				e := adp.AsError(err)
				a.problems = append(a.problems, adp.Problem{Seq: max(seq, 0), Code: e.Code, Pointer: e.Pointer,
					Message: fmt.Sprintf("line %d: %s", line, e.Message)})
				continue
			}
			a.records = append(a.records, rec)
		}
	}
	if err := sc.Err(); err != nil {
		bad(line+1, adp.CodeInvalidRecord, "%v", err)
	}
	return a
}

// archiveClient is an HTTPS client that trusts caFile (or the system roots)
// and follows no redirects.
func archiveClient(caFile string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca %s holds no PEM certificate", caFile)
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       2 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}

// fetch GETs a URL and returns its body, refusing non-200 answers and
// bodies beyond maxBytes.
func fetch(ctx context.Context, client *http.Client, u string, maxBytes int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("GET %s: the body is larger than --max-bytes %d", u, maxBytes)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error.Code != "" {
			return nil, fmt.Errorf("GET %s: %d %s: %s", u, resp.StatusCode, e.Error.Code, e.Error.Message)
		}
		return nil, errors.New("GET " + u + ": " + resp.Status)
	}
	return data, nil
}
