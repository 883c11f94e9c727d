package knowledge_test

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"

	"apconnect/host/identity"
	"apconnect/host/proto/knowledge"
)

const (
	origin = "https://knowledge.example"
	now    = int64(1_800_000_000_000)
)

var signer = identity.NewKeySigner(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))

// sign builds, checks and signs a Knowledge event as a connector does.
func sign(typ string, nonce int64, payload string) []byte {
	v, err := identity.ParseStrict([]byte(payload))
	if err != nil {
		panic(err)
	}
	if err := knowledge.ValidatePayload(typ, v); err != nil {
		panic(err)
	}
	env, err := identity.SignEvent(signer, knowledge.NewEvent(typ, signer.AgentID(), now, nonce, v))
	if err != nil {
		panic(err)
	}
	b, err := env.MarshalJSON()
	if err != nil {
		panic(err)
	}
	return b
}

// A service accepts a publication, then an assessment of it; an assessment
// of an event it does not hold waits for its dependency.
func ExampleCheckSubmission() {
	held := map[string]knowledge.Target{}
	lookup := func(id string) (knowledge.Target, bool) { t, ok := held[id]; return t, ok }
	seq := int64(0)
	submit := func(body []byte) string {
		env, err := knowledge.ParseEnvelope(body)
		if err != nil {
			return identity.ErrorCode(err)
		}
		if _, ok := held[env.Hash]; ok {
			return "resubmission"
		}
		if err := knowledge.CheckSubmission(env, now, lookup, knowledge.DefaultLimits); err != nil {
			e := err.(*identity.Error)
			return fmt.Sprintf("%s: %d missing", e.Code, len(e.Data["missing"].([]any)))
		}
		seq++
		held[env.Hash] = knowledge.TargetOf(&env.Event)
		rec, _ := json.Marshal(knowledge.NewRecord(env, now, seq))
		return fmt.Sprintf("accepted, seq %d, %d-byte record", seq, len(rec))
	}
	pub := sign(knowledge.TypePublish, 1, `{"license":"https://creativecommons.org/licenses/by/4.0/","kind":"observation",
		"title":"Boiling point","statement":"Water boils at 100 C at sea level.","language":"en",
		"context":{"scope":"physics","conditions":["1 atm"],"limitations":[]},"basis":"Measured."}`)
	env, _ := knowledge.ParseEnvelope(pub)
	assess := sign(knowledge.TypeAssess, 2, `{"license":"https://creativecommons.org/licenses/by/4.0/","target":"`+env.Hash+`",
		"verdict":"supports","summary":"Same result.","context":{"scope":"physics","conditions":[],"limitations":[]},"basis":"Repeated."}`)

	fmt.Println(submit(assess))
	fmt.Println(submit(pub))
	fmt.Println(submit(assess))
	fmt.Println(submit(pub))
	// Output:
	// missing_dependency: 1 missing
	// accepted, seq 1, 644-byte record
	// accepted, seq 2, 627-byte record
	// resubmission
}

// A payload is checked before anything is signed; the errors name members
// relative to the payload.
func ExampleValidatePayload() {
	v, _ := identity.ParseStrict([]byte(`{"target":"x","reason":"old","license":"https://example.com/l"}`))
	err := knowledge.ValidatePayload(knowledge.TypeRetract, v)
	fmt.Println(identity.ErrorCode(err))
	for _, fe := range knowledge.PayloadErrors(err) {
		fmt.Printf("%q: %s\n", fe.Path, fe.Message)
	}
	// Output:
	// invalid_event
	// "": additional properties 'license' not allowed
	// "/target": 'x' does not match pattern '^[A-Za-z0-9_-]{43}$(?![\\s\\S])'
}

// A service pages a query with Window; the client checks every page with a
// PageTracker and persists the checkpoint for its next poll.
func ExampleQuery_Window() {
	var recs []*knowledge.Record
	for i := int64(1); i <= 5; i++ {
		env, _ := knowledge.ParseEnvelope(sign(knowledge.TypePublish, i, fmt.Sprintf(`{"license":"https://creativecommons.org/licenses/by/4.0/",
			"kind":"question","title":"Q%d","statement":"Why %d?","language":"en",
			"context":{"scope":"s","conditions":[],"limitations":[]},"basis":"Curiosity."}`, i, i)))
		recs = append(recs, knowledge.NewRecord(env, now, i))
	}
	q, _ := knowledge.ParseQuery([][2]string{{"kind", "question"}, {"limit", "2"}})
	tracker, _ := knowledge.NewPageTracker(origin)
	for {
		// Service side.
		win, err := q.Window(int64(len(recs)), now)
		if err != nil {
			panic(err)
		}
		result, next := win.Page(recs, &q.Filters)
		page := knowledge.QueryPage{Scope: win.Scope(origin), Result: result, NextCursor: next}
		body, _ := identity.Canonicalize(page.Value())

		// Client side.
		v, _ := identity.ParseStrict(body)
		got, err := tracker.Accept(q, v)
		if err != nil {
			panic(err)
		}
		for _, r := range got.Result {
			fmt.Print(r.Seq, " ")
		}
		fmt.Println("| next cursor:", got.NextCursor != "")
		if tracker.Complete() {
			break
		}
		q = q.WithCursor(got.NextCursor)
	}
	cp, _ := tracker.Checkpoint()
	fmt.Println("next poll after_seq", cp)
	// Output:
	// 1 2 | next cursor: true
	// 3 4 | next cursor: true
	// 5 | next cursor: false
	// next poll after_seq 5
}

// Lexical search splits on ASCII white space and folds ASCII case only.
func ExampleTextTerms() {
	terms, _ := knowledge.TextTerms("Boiling  POINT\tÉté", true)
	fmt.Printf("%q\n", terms)
	// Output:
	// ["boiling" "point" "Été"]
}
