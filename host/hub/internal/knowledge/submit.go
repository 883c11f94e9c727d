package knowledge

import (
	"context"
	"database/sql"
	"errors"
	"net/http"

	"apconnect/host/hub/internal/hubhttp"
	rules "apconnect/host/proto/knowledge"
)

// submit serves POST /v1/knowledge/events (Agent Knowledge 8.1): one signed
// envelope in, its acceptance record out (HTTP 200, also for an exact
// resubmission). It is not a live write: no lower time bound, no nonce
// cache and no Max-Seen-Nonce.
func (s *Service) submit(w http.ResponseWriter, r *http.Request) {
	if err := hubhttp.CheckQuery(r.URL.Query()); err != nil {
		s.fail(w, r, err)
		return
	}
	body, err := hubhttp.ReadBody(w, r, s.limits.SubmitBodyBytes)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// Steps 1-3 of 8.1 outside the write lock: strict parsing, the
	// envelope, hash and signature, and the payload rules.
	env, err := rules.ParseEnvelope(body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var rec []byte
	err = s.db.WriteGroup(func(tx *sql.Tx) error {
		ctx := context.WithoutCancel(r.Context())
		var err error
		if rec, err = recordByHash(ctx, tx, env.Hash); err != nil || rec != nil {
			return err // an exact resubmission: the original record, no change
		}
		now := s.nowMS()
		var failed error
		err = rules.CheckSubmission(env, now, lookup(ctx, tx, &failed), s.limits.rulesLimits())
		if failed != nil {
			return failed
		}
		if err != nil {
			return err
		}
		var text string
		if rec, text, err = insertEvent(ctx, tx, env, now); err != nil {
			return err
		}
		s.db.OnCommit(tx, func() { s.sample.add(text) })
		return nil
	})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			err = hubhttp.Errorf(hubhttp.CodeInternal, "the submission was interrupted")
		}
		s.fail(w, r, err)
		return
	}
	hubhttp.WriteJSON(w, http.StatusOK, rec)
}
