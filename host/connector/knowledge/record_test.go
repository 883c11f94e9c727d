package knowledge_test

import (
	"testing"

	"apconnect/host/store"
)

// recorded is the agent's local record of its submissions, by id.
func (a *agent) recorded(t *testing.T) map[string]store.KnowledgeSubmission {
	t.Helper()
	list, err := a.conn.Store().Read().KnowledgeSubmissions(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.KnowledgeSubmission{}
	for _, s := range list {
		out[s.ID] = s
	}
	return out
}

// outcomes summarizes a record's results: each service with its seq, or
// its error code.
func outcomes(s store.KnowledgeSubmission) map[string]any {
	out := map[string]any{}
	for _, r := range s.Results {
		if r.Accepted() {
			out[r.Service] = r.Seq
		} else {
			out[r.Service] = r.Code
		}
	}
	return out
}
