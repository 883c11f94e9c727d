package store

import (
	"context"
	"fmt"
	"reflect"
	"testing"
)

// A knowledge submission is recorded once, its results merged by service
// on later answers: a newer answer replaces an older one, an acceptance is
// never replaced by an error; the list is newest first and the
// fingerprint's Knowledge part moves with each change (and no other part).
func TestKnowledgeSubmissions(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 0)
	ctx := context.Background()
	fp := func() Fingerprint {
		t.Helper()
		f, err := s.Read().ViewFingerprint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return *f
	}
	record := func(sub KnowledgeSubmission) {
		t.Helper()
		mustWrite(t, s, func(tx *Tx) error { return tx.RecordKnowledgeSubmission(ctx, &sub) })
	}
	accepted := func(svc string, seq int64) KnowledgeResult {
		return KnowledgeResult{Service: svc, Seq: seq, AcceptedAt: 1000 + seq}
	}
	refused := func(svc, code string) KnowledgeResult {
		return KnowledgeResult{Service: svc, Code: code, Message: code + " at " + svc}
	}
	f0 := fp()
	record(KnowledgeSubmission{ID: "ev-1", Type: "knowledge.publish", Kind: "finding", Title: "Title", CreatedAt: 10, UpdatedAt: 100,
		Results: []KnowledgeResult{accepted("https://a", 4), refused("https://b", "submission_pending"), refused("https://c", "invalid_event")}})
	f1 := fp()
	if f1.Knowledge == f0.Knowledge || f1.Rooms != f0.Rooms || f1.Outbox != f0.Outbox || f1.Mail != f0.Mail || f1.Delegation != f0.Delegation {
		t.Fatalf("fingerprint after a record:\n%+v\n%+v", f0, f1)
	}
	record(KnowledgeSubmission{ID: "ev-2", Type: "knowledge.retract", Title: "wrong", Target: "ev-0", CreatedAt: 20, UpdatedAt: 200,
		Results: []KnowledgeResult{accepted("https://a", 9)}})
	// The background resubmission answers later: b accepted it now, a
	// refused it (its grant was withdrawn), d is new.
	record(KnowledgeSubmission{ID: "ev-1", Type: "knowledge.publish", Kind: "finding", Title: "Title", CreatedAt: 10, UpdatedAt: 300,
		Results: []KnowledgeResult{refused("https://a", "permission_denied"), accepted("https://b", 7), refused("https://d", "unavailable")}})
	if f2 := fp(); f2.Knowledge == f1.Knowledge {
		t.Fatal("the fingerprint did not move with a merge")
	}
	got, err := s.Read().KnowledgeSubmissions(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []KnowledgeSubmission{
		{ID: "ev-2", Type: "knowledge.retract", Title: "wrong", Target: "ev-0", CreatedAt: 20, SubmittedAt: 200, UpdatedAt: 200,
			Results: []KnowledgeResult{accepted("https://a", 9)}},
		{ID: "ev-1", Type: "knowledge.publish", Kind: "finding", Title: "Title", CreatedAt: 10, SubmittedAt: 100, UpdatedAt: 300,
			Results: []KnowledgeResult{accepted("https://a", 4), accepted("https://b", 7), refused("https://c", "invalid_event"),
				refused("https://d", "unavailable")}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("submissions\n got %+v\nwant %+v", got, want)
	}
	if one, err := s.Read().KnowledgeSubmissions(ctx, 1); err != nil || len(one) != 1 || one[0].ID != "ev-2" {
		t.Fatalf("limit 1: %+v %v", one, err)
	}
}

// A delegation credential is recorded by (service, id): a later sighting
// replaces its members, keeps signed once set, keeps the last check's
// verdict while the latest event is the same and drops it when the
// credential moved on; a new check replaces it.
func TestDelegationCredentials(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 0)
	ctx := context.Background()
	record := func(c DelegationCredential) {
		t.Helper()
		mustWrite(t, s, func(tx *Tx) error { return tx.RecordDelegationCredential(ctx, &c) })
	}
	read := func() map[string]DelegationCredential {
		t.Helper()
		list, err := s.Read().DelegationCredentials(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]DelegationCredential{}
		for _, c := range list {
			out[c.Service+" "+c.ID] = c
		}
		return out
	}
	before, _ := s.Read().ViewFingerprint(ctx)
	grant := DelegationCredential{Service: "https://h", ID: "cred-1", Principal: "https://h/p/acme", Subject: "did:bob", Controller: "did:self",
		EventID: "ev-g", Status: "active", Scopes: []string{"review"}, Audiences: []string{"https://h"}, ExpiresAt: 5000, AcceptedAt: 100,
		Signed: true, Source: DelegationFromGrant, SeenAt: 100}
	record(grant)
	verdict := &DelegationVerdict{Audience: "https://h", Verified: true, Usable: false, Reasons: []string{"not_yet_valid"}, At: 200}
	held := DelegationCredential{Service: "https://h", ID: "cred-2", Principal: "https://h/p/acme", Subject: "did:self", Controller: "did:alice",
		EventID: "ev-h", Status: "active", Scopes: []string{"a", "b"}, Audiences: []string{"https://h"}, AcceptedAt: 150,
		Source: DelegationFromCheck, SeenAt: 200, Check: verdict}
	record(held)
	after, _ := s.Read().ViewFingerprint(ctx)
	if after.Delegation == before.Delegation || after.Knowledge != before.Knowledge || after.Wake != before.Wake {
		t.Fatalf("fingerprint:\n%+v\n%+v", before, after)
	}
	got := read()
	if c := got["https://h cred-1"]; !reflect.DeepEqual(c, grant) {
		t.Fatalf("granted credential\n got %+v\nwant %+v", c, grant)
	}
	if c := got["https://h cred-2"]; !reflect.DeepEqual(c, held) {
		t.Fatalf("held credential\n got %+v\nwant %+v", c, held)
	}
	steps := []struct {
		name   string
		c      DelegationCredential
		signed bool
		check  *DelegationVerdict
	}{
		// A listing of the same event keeps the verdict and signed.
		{"listed, same event", DelegationCredential{Service: "https://h", ID: "cred-2", Principal: held.Principal, Subject: "did:self",
			Controller: "did:alice", EventID: "ev-h", Status: "active", Source: DelegationFromList, SeenAt: 300}, false, verdict},
		// The credential was revoked since: the verdict is dropped.
		{"listed, revoked", DelegationCredential{Service: "https://h", ID: "cred-2", Principal: held.Principal, Subject: "did:self",
			Controller: "did:alice", EventID: "ev-r", Status: "revoked", Source: DelegationFromList, SeenAt: 400}, false, nil},
		// A new check records its verdict.
		{"checked", DelegationCredential{Service: "https://h", ID: "cred-2", Principal: held.Principal, Subject: "did:self",
			Controller: "did:alice", EventID: "ev-r", Status: "revoked", Source: DelegationFromCheck, SeenAt: 500,
			Check: &DelegationVerdict{Audience: "https://x", Reasons: []string{"revoked"}, At: 500}}, false,
			&DelegationVerdict{Audience: "https://x", Reasons: []string{"revoked"}, At: 500}},
		// The granted one read back by a listing stays signed.
		{"granted, listed", DelegationCredential{Service: "https://h", ID: "cred-1", Principal: grant.Principal, Subject: "did:bob",
			Controller: "did:self", EventID: "ev-g", Status: "expired", Source: DelegationFromList, SeenAt: 600}, true, nil},
	}
	for _, st := range steps {
		record(st.c)
		c := read()[st.c.Service+" "+st.c.ID]
		if c.Signed != st.signed || !reflect.DeepEqual(c.Check, st.check) || c.Status != st.c.Status || c.Source != st.c.Source ||
			c.SeenAt != st.c.SeenAt || c.EventID != st.c.EventID || len(c.Scopes) != 0 {
			t.Fatalf("%s: %+v (check %+v)", st.name, c, c.Check)
		}
	}
	list, _ := s.Read().DelegationCredentials(ctx, 0)
	if len(list) != 2 || list[0].ID != "cred-1" || list[1].ID != "cred-2" {
		t.Fatalf("newest seen first: %+v", list)
	}
	for i := range 3 {
		record(DelegationCredential{Service: "https://o", ID: fmt.Sprint("x", i), Source: DelegationFromList, SeenAt: int64(700 + i)})
	}
	if two, err := s.Read().DelegationCredentials(ctx, 2); err != nil || len(two) != 2 || two[0].ID != "x2" {
		t.Fatalf("limit 2: %+v %v", two, err)
	}
}

// The view's fingerprint moves its Wake part with a lease and its Mail
// part with a letter and with its read mark; LetterRefs lists every letter's
// id and key in storage order.
func TestWakeAndMailFingerprintAndLetterRefs(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 0)
	ctx := context.Background()
	fp := func() Fingerprint {
		t.Helper()
		f, err := s.Read().ViewFingerprint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return *f
	}
	f0 := fp()
	mustWrite(t, s, func(tx *Tx) error {
		_, _, err := tx.AcquireLease(ctx, "command:x", "A", 100, 200)
		return err
	})
	f1 := fp()
	if f1.Wake == f0.Wake || f1.Mail != f0.Mail || f1.Inbox != f0.Inbox {
		t.Fatalf("after a lease:\n%+v\n%+v", f0, f1)
	}
	var ids []int64
	mustWrite(t, s, func(tx *Tx) error {
		for i, dir := range []string{LetterReceived, LetterSent} {
			id, err := tx.InsertLetter(ctx, &Letter{Direction: dir, Sender: fmt.Sprint("did:s", i), MessageID: fmt.Sprint("m", i),
				Recipient: "did:r", MailboxID: "box", ThreadID: "t", CreatedAt: 1, ExpiresAt: 9, Message: []byte(`{}`), Digest: "d"})
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	f2 := fp()
	if f2.Mail == f1.Mail || f2.Wake != f1.Wake {
		t.Fatalf("after letters:\n%+v\n%+v", f1, f2)
	}
	mustWrite(t, s, func(tx *Tx) error { return tx.MarkLettersRead(ctx, ids[:1]) })
	if f3 := fp(); f3.Mail == f2.Mail {
		t.Fatal("the read mark did not move the fingerprint")
	}
	refs, err := s.Read().LetterRefs(ctx)
	want := []LetterRef{{ID: ids[0], Direction: LetterReceived, Sender: "did:s0", MessageID: "m0"},
		{ID: ids[1], Direction: LetterSent, Sender: "did:s1", MessageID: "m1"}}
	if err != nil || !reflect.DeepEqual(refs, want) {
		t.Fatalf("refs %+v %v", refs, err)
	}
}
