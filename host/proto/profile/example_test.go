package profile_test

import (
	"crypto/ed25519"
	"fmt"
	"strings"

	"apconnect/host/identity"
	"apconnect/host/proto/profile"
)

// A service checks a submitted profile.update (after the live-write checks
// of Agent Identity 6.1) and stores its document.
func ExampleValidator_ValidateEvent() {
	signer := identity.NewKeySigner(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	v, err := profile.NewValidator(profile.DefaultLimits())
	if err != nil {
		panic(err)
	}
	for _, payload := range []string{
		`{"id":"` + signer.AgentID() + `","name":"Ada","links":[]}`,
		`{"id":"` + signer.AgentID() + `","name":"Ada","username":"ada"}`,
		`{"id":"` + signer.AgentID() + `","name":"Ada","avatar_url":"http://example.com/a.png"}`,
	} {
		p, err := identity.ParseStrict([]byte(payload))
		if err != nil {
			panic(err)
		}
		env, err := identity.SignEvent(signer, identity.Event{Protocol: profile.Protocol, Type: profile.TypeUpdate,
			Actor: signer.AgentID(), CreatedAt: 1_800_000_000_000, Nonce: 1, Payload: p})
		if err != nil {
			panic(err)
		}
		if err := v.ValidateEvent(&env.Event); err != nil {
			e := err.(*identity.Error)
			fmt.Println("refused:", e.Code, e.Pointer)
			continue
		}
		doc, err := profile.Document(env)
		if err != nil {
			panic(err)
		}
		fmt.Println("accepted:", len(doc) > 0)
	}
	// Output:
	// accepted: true
	// refused: invalid_event /event/payload/username
	// refused: invalid_event /event/payload/avatar_url
}

// A reader verifies the latest update a service serves, materializes it, and
// refuses a rollback against the profile it pinned before.
func ExampleMaterialize() {
	signer := identity.NewKeySigner(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	update := func(nonce int64, name string) *identity.Envelope {
		env, err := identity.SignEvent(signer, identity.Event{Protocol: profile.Protocol, Type: profile.TypeUpdate,
			Actor: signer.AgentID(), CreatedAt: 1_800_000_000_000 + nonce, Nonce: nonce,
			Payload: map[string]any{"id": signer.AgentID(), "name": name}})
		if err != nil {
			panic(err)
		}
		return env
	}
	newer, err := profile.Materialize(signer.AgentID(), update(9, "v9"))
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.Replace(string(newer.Document), newer.EventID, "<event id>", 1))
	older, err := profile.Materialize(signer.AgentID(), update(7, "v7"))
	if err != nil {
		panic(err)
	}
	err = profile.CheckPin(newer.Pin(), older.Pin())
	fmt.Println(identity.ErrorCode(err))
	// Output:
	// {"event_id":"<event id>","id":"did:agent:O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik","name":"v9","updated_at":1800000000009}
	// stale_profile
}
