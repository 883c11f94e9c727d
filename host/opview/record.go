package opview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"apconnect/host/internal/atomicfile"
)

// Where a running serve is found. `apconnect serve` records its address
// and pid in the home's state directory, one file per identity
// (serve/<identity>.json), so that two identities' serve processes neither
// overwrite each other's record nor get mixed up, and `apconnect view`
// asks the right one for a login URL.

// Record says where the serve process of an identity listens.
type Record struct {
	PID       int    `json:"pid"`
	Addr      string `json:"addr"`
	Identity  string `json:"identity"`
	AgentID   string `json:"agent_id"`
	StartedAt int64  `json:"started_at"`
}

// RecordPath is the record file of an identity under the state directory.
func RecordPath(stateDir, identity string) string {
	return filepath.Join(stateDir, "serve", identity+".json")
}

// WriteRecord writes an identity's record (mode 0600, atomically).
func WriteRecord(stateDir string, r Record) error {
	if r.Identity == "" || strings.ContainsAny(r.Identity, `/\.`) {
		return fmt.Errorf("opview: identity name %q cannot name a record file", r.Identity)
	}
	path := RecordPath(stateDir, r.Identity)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'))
}

// ReadRecord reads an identity's record; fs.ErrNotExist when no serve
// recorded one.
func ReadRecord(stateDir, identity string) (*Record, error) {
	data, err := os.ReadFile(RecordPath(stateDir, identity))
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("opview: record %s: %w", RecordPath(stateDir, identity), err)
	}
	return &r, nil
}

// RemoveRecord removes an identity's record if it is still the one of pid
// (a newer serve of the identity may have replaced it).
func RemoveRecord(stateDir, identity string, pid int) error {
	r, err := ReadRecord(stateDir, identity)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil || r.PID != pid {
		return err
	}
	return os.Remove(RecordPath(stateDir, identity))
}

// ErrNotRunning: the recorded serve does not answer.
var ErrNotRunning = errors.New("opview: the recorded apconnect serve does not answer")

// RequestLogin asks the serve listening at addr for a fresh login URL,
// presenting the home's bearer token.
func RequestLogin(ctx context.Context, addr, bearer string) (*TokenAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+TokenPath, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{Proxy: nil}}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotRunning, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxTokenAnswer))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("serve at %s answered %s: %s", addr, resp.Status, strings.TrimSpace(string(body)))
	}
	var a TokenAnswer
	if err := json.Unmarshal(body, &a); err != nil || !strings.HasPrefix(a.URL, "http://") {
		return nil, fmt.Errorf("serve at %s: an unexpected answer", addr)
	}
	return &a, nil
}

// Route serves the MCP endpoint (mcpPath, through mcp) and the operator's
// view (everything else) on one listener.
func Route(mcpPath string, mcp, view http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == mcpPath {
			mcp.ServeHTTP(w, r)
			return
		}
		view.ServeHTTP(w, r)
	})
}
