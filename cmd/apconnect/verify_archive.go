package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"apconnect/host/proto/adp"
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
every envelope's event hash and strict Ed25519 signature; every external pack
document matching the digest its signed import carries and holding the pack
whose id is the import URL; the room replayed — lifecycle from accepted_at and
the effective times, membership, roles, bans, invitations and the type
registry — with every custom payload validated against the definition in
force at its seq under the type schema profile; and redacted records
reported.

Two archive layouts are read, and the report says which:

  current         an https URL of an archive manifest (…/archive, or a room
                  URL, to which /archive is added), as hosts following the
                  reference SDK 0.12.6 serve it: the manifest's formats.jsonl
                  holds one server record per line, and each external pack
                  document is fetched from its manifest.packs[].url. Every
                  URL must be on the manifest's origin.
  self-contained  one JSON Lines file, local or at an https URL, as older
                  apconnect hubs served archive.jsonl: the manifest line,
                  then a {"type":"room.archive.pack",…} line per external
                  pack document, then the records.

A JSON Lines file with records only and no manifest is checked as a chain,
but has no last_hash commitment to check it against, so it does not verify.
URLs are read anonymously, so they work for public rooms. --ca trusts a
host's own CA (such as the local hub's ca.pem) instead of the system roots.
No other network access happens.

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
				report, err := verifyArchiveSource(ctx, args[0], *ca, *maxBytes)
				if err != nil {
					return err
				}
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

// maxPackBytes bounds one external pack document fetched from
// manifest.packs (the hub's own fetcher takes at most 256 KiB).
const maxPackBytes = 1 << 20

// loadedArchive is an archive read from a file or URL, before verification.
type loadedArchive struct {
	source   string
	layout   string
	manifest *adp.ArchiveManifest
	records  []*adp.Record
	packs    map[string][]byte
	problems []adp.Problem // problems found while reading
}

// archiveReport is what verify-archive prints.
type archiveReport struct {
	OK       bool          `json:"ok"`
	Source   string        `json:"source"`
	Layout   string        `json:"layout"`
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
	if a.manifest != nil {
		r, err := adp.VerifyArchive(a.manifest, a.records, a.packs, &adp.ArchiveOptions{SelfContained: a.layout == adp.ArchiveLayoutSelfContained})
		var pre []adp.Problem
		if err != nil {
			pre = []adp.Problem{{Code: adp.ErrorCode(err), Message: err.Error()}}
			r = &adp.ArchiveReport{}
		}
		return a.reportOf(r, pre)
	}
	limits := adp.VerifierLimits()
	rep := adp.Replay(&adp.Rules{Limits: limits, Packs: adp.StaticPacks(a.packs)}, a.records)
	return a.reportOf(rep, []adp.Problem{{Code: adp.CodeChainBroken,
		Message: "the archive has no manifest: there is no last_hash commitment to check the chain against" +
			" (a current-layout archive is verified from its manifest URL, …/archive)"}})
}

// reportOf is the report of a verification: the problems found reading the
// archive, then pre, then the verification's.
func (a *loadedArchive) reportOf(rep *adp.ArchiveReport, pre []adp.Problem) *archiveReport {
	problems := append(append([]adp.Problem(nil), a.problems...), pre...)
	problems = append(problems, rep.Problems...)
	out := &archiveReport{
		OK: len(problems) == 0, Source: a.source, Layout: a.layout, RoomID: rep.RoomID, Records: rep.Records,
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
	fmt.Fprintf(w, "  layout:     %s\n", layoutLine(r.Layout))
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

// layoutLine explains a layout name.
func layoutLine(layout string) string {
	switch layout {
	case adp.ArchiveLayoutCurrent:
		return "current (manifest, records-only JSONL, pack documents from manifest.packs)"
	case adp.ArchiveLayoutSelfContained:
		return "self-contained (one JSONL: manifest line, pack document lines, records; older apconnect hubs)"
	case adp.ArchiveLayoutRecordsOnly:
		return "records only (a JSONL without its manifest)"
	}
	return orNone(layout)
}

func orNone(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

func sameCommitment(a, b *adp.ArchiveManifest) bool {
	return a.RoomID == b.RoomID && a.URL == b.URL && a.LastSeq == b.LastSeq && a.LastHash == b.LastHash
}

// archiveClient is an HTTPS client that trusts caFile (or the system roots),
// uses no proxy and follows no redirects. (client.NewHTTPClient is not used:
// it takes proxies from the environment, and has no option to refuse them.)
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
	return fetchBody(resp, u, maxBytes)
}

// fetchBody reads the body of fetch's answer.
func fetchBody(resp *http.Response, u string, maxBytes int64) ([]byte, error) {
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
