package hub_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"apconnect/host/hub/hubtest"
	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/identity"
	"apconnect/host/proto/profile"
)

// submissionVectors is the submissions section of the Agent Identity
// vectors (host/identity/testdata, copied from the reference repository;
// testdata/SOURCE.md there names the commit).
type submissionVectors struct {
	Submissions struct {
		WindowMS  int64                      `json:"window_ms"`
		Envelopes map[string]json.RawMessage `json:"envelopes"`
		Steps     []struct {
			Name     string   `json:"name"`
			Envelope string   `json:"envelope"`
			NowMS    int64    `json:"now_ms"`
			Accepted []string `json:"accepted"`
			Expected string   `json:"expected"`
		} `json:"steps"`
	} `json:"submissions"`
}

// bareHandler accepts every authentic envelope with no protocol rule and no
// durable nonce floor: what is left is the Agent Identity 6.1 pipeline the
// vectors describe (resubmission, window, nonce cache).
type bareHandler struct{}

func (bareHandler) Precheck(*http.Request, *identity.Envelope) error { return nil }
func (bareHandler) NonceFloor(context.Context, *sql.Tx, *identity.Envelope) (int64, error) {
	return 0, nil
}
func (bareHandler) Accept(context.Context, *hubhttp.Write) (*hubhttp.Result, error) {
	return &hubhttp.Result{Body: map[string]any{}}, nil
}
func (bareHandler) Replay(context.Context, *sql.Tx, *hubhttp.Accepted) (*hubhttp.Result, error) {
	return &hubhttp.Result{Body: map[string]any{}}, nil
}

// barePipeline is the hub's live-write pipeline on a fresh database, on
// clock, with the given window and the default nonce cache validity.
func barePipeline(t *testing.T, clock *hubtest.Clock, window time.Duration) (*hubhttp.Pipeline, *hubdb.DB) {
	t.Helper()
	ctx := context.Background()
	db, err := hubdb.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p := &hubhttp.Pipeline{DB: db, Clock: clock.Now, Window: window}
	if err := p.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	return p, db
}

// The replay boundary (the SDK 0.12.6 test
// shared_replay_boundary_covers_the_last_live_millisecond; its vector
// section is in no copy of the vector file we could obtain, so the values
// are derived from the SDK's constants: a 300 s window and a nonce cache
// valid for two windows, DEFAULT_NONCE_TTL_MS). An envelope signed a whole
// window ahead of the hub clock stays live until created_at + window, two
// windows after its acceptance; once accepted history no longer holds it,
// the nonce cache must still refuse it up to and including that last live
// millisecond, and the window refuses it after.
func TestReplayBoundaryCoversTheLastLiveMillisecond(t *testing.T) {
	t.Parallel()
	const window = 300 * time.Second
	accepted := time.UnixMilli(1779753600000)
	created := accepted.Add(window)
	clock := hubtest.NewClock(accepted)
	p, db := barePipeline(t, clock, window)
	a := hubtest.NewAgent(7)
	body := a.SignJSON(t, identity.Event{Protocol: profile.Protocol, Type: "profile.update", CreatedAt: created.UnixMilli(),
		Nonce: created.UnixMilli(), Payload: map[string]any{"id": a.ID, "name": "Boundary"}})
	ctx := context.Background()
	submit := func() string {
		out, err := p.Submit(ctx, httptest.NewRequest(http.MethodPost, "/", nil), body, bareHandler{})
		switch {
		case err != nil:
			return hubhttp.AsError(err).Code
		case out.Replayed:
			return "resubmission"
		}
		return "accepted"
	}
	if got := submit(); got != "accepted" {
		t.Fatalf("first submission: %s", got)
	}
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM accepted_envelopes`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	lastLive := created.Add(window)
	for _, step := range []struct {
		at   time.Time
		want string
	}{
		{accepted.Add(time.Millisecond), identity.CodeNonceNotGreater},
		{created, identity.CodeNonceNotGreater},
		{lastLive.Add(-time.Millisecond), identity.CodeNonceNotGreater},
		{lastLive, identity.CodeNonceNotGreater},
		{lastLive.Add(time.Millisecond), identity.CodeTimestampOutOfWindow},
	} {
		clock.Set(step.at)
		if got := submit(); got != step.want {
			t.Errorf("replayed %s after acceptance: %s, want %s", step.at.Sub(accepted), got, step.want)
		}
	}
}

// The hub's live-write pipeline resolves the submission vectors' steps as
// listed: exact resubmissions answered from accepted history, stale writes
// refused by the window once history no longer holds them, reused or
// replayed nonces refused by the nonce cache (the hub's validity, two
// windows, is SDK 0.12.6's DEFAULT_NONCE_TTL_MS). "accepted" is the
// durable history at each step: rows are pruned from accepted_envelopes,
// and put back, to match it.
func TestSubmissionVectors(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../identity/testdata/agent-identity-1.0.vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v submissionVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	sub := v.Submissions
	if len(sub.Steps) == 0 {
		t.Fatal("the vectors have no submissions section")
	}
	ctx := context.Background()
	clock := hubtest.NewClock(time.UnixMilli(sub.Steps[0].NowMS))
	p, db := barePipeline(t, clock, time.Duration(sub.WindowMS)*time.Millisecond)
	hashes := map[string]string{}
	for name, raw := range sub.Envelopes {
		env, err := identity.ParseEnvelope(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		hashes[name] = env.Hash
	}
	pruned := map[string][]any{} // accepted_envelopes rows taken out, by envelope name
	history := func(keep []string) {
		t.Helper()
		err := db.Write(ctx, func(tx *sql.Tx) error {
			for name, hash := range hashes {
				if slices.Contains(keep, name) {
					if row, ok := pruned[name]; ok {
						if _, err := tx.ExecContext(ctx, `INSERT INTO accepted_envelopes VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, row...); err != nil {
							return err
						}
						delete(pruned, name)
					}
					continue
				}
				row := make([]any, 8)
				ptrs := make([]any, 8)
				for i := range row {
					ptrs[i] = &row[i]
				}
				err := tx.QueryRowContext(ctx, `SELECT * FROM accepted_envelopes WHERE hash = ?`, hash).Scan(ptrs...)
				if errors.Is(err, sql.ErrNoRows) {
					continue
				}
				if err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `DELETE FROM accepted_envelopes WHERE hash = ?`, hash); err != nil {
					return err
				}
				pruned[name] = row
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range sub.Steps {
		history(step.Accepted)
		clock.Set(time.UnixMilli(step.NowMS))
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		out, err := p.Submit(ctx, r, sub.Envelopes[step.Envelope], bareHandler{})
		got := "accepted"
		switch {
		case err != nil:
			got = hubhttp.AsError(err).Code
		case out.Replayed:
			got = "resubmission"
		}
		if got != step.Expected {
			t.Errorf("%s: %s, want %s", step.Name, got, step.Expected)
		}
	}
}
