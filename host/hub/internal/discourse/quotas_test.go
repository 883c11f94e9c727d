package discourse_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// wantRateLimited asserts a 429 rate_limited answer with a Retry-After of
// at least one second.
func wantRateLimited(t *testing.T, r *hubtest.Response) {
	t.Helper()
	data := wantError(t, r, http.StatusTooManyRequests, identity.CodeRateLimited)
	n, err := strconv.ParseInt(r.Header.Get("Retry-After"), 10, 64)
	if got, _ := identity.IntValue(data["retry_after"]); err != nil || n < 1 || got != n {
		t.Fatalf("Retry-After %q, data %v", r.Header.Get("Retry-After"), data)
	}
}

// TestQuotas: the section 20 quotas, configured through hub Limits: per
// agent per room rates by kind (a type's rate_hint replacing its class
// default), room creation per agent, observers, speakers and types per room.
func TestQuotas(t *testing.T) {
	t.Parallel()
	f := newFx(t, withLimits(func(l *hub.Limits) {
		r := &l.Discourse.Rules
		r.SignalRate, r.ControlRate, r.MaxObservers, r.MaxSpeakers, r.MaxTypes, r.MaxRateHint = 3, 4, 2, 3, 3, 4
	}))
	as := agents(240, 8)
	creator := as[0]
	id := f.create(creator, obj{"types": arr{
		obj{"type": "x.ping", "kind": "signal", "title": "P", "schema": obj{}, "rate_hint": 2},
		obj{"type": "x.flood", "kind": "signal", "title": "F", "schema": obj{}, "rate_hint": 1000},
	}})

	t.Run("signal events", func(t *testing.T) {
		// creator's signal quota: three membership-class writes a minute.
		for i := 1; i <= 3; i++ {
			wantStatus(t, f.send(creator, id, adp.TypeRoleUpdate, obj{"member": creator.ID, "role": "moderator"}), 200)
		}
		wantRateLimited(t, f.send(creator, id, adp.TypeRoleUpdate, obj{"member": creator.ID, "role": "moderator"}))
	})
	t.Run("a rate_hint replaces the class default", func(t *testing.T) {
		for i := 0; i < 2; i++ {
			wantStatus(t, f.send(creator, id, "x.ping", obj{}), 200)
		}
		wantRateLimited(t, f.send(creator, id, "x.ping", obj{}))
	})
	t.Run("a rate_hint cannot pass the host ceiling", func(t *testing.T) {
		for i := 0; i < 4; i++ {
			wantStatus(t, f.send(creator, id, "x.flood", obj{}), 200)
		}
		wantRateLimited(t, f.send(creator, id, "x.flood", obj{}))
	})
	t.Run("contract writes and room creation count as control", func(t *testing.T) {
		for i := 0; i < 4; i++ {
			wantStatus(t, f.send(creator, id, adp.TypeRoomUpdate, obj{"agenda": "v" + strconv.Itoa(i)}), 200)
		}
		wantRateLimited(t, f.send(creator, id, adp.TypeRoomUpdate, obj{"agenda": "one more"}))
		other := as[7]
		for i := 0; i < 4; i++ {
			wantStatus(t, f.createRaw(other, f.roomPayload(nil)), 201)
		}
		wantRateLimited(t, f.createRaw(other, f.roomPayload(nil)))
	})
	f.clock.Advance(time.Minute)
	t.Run("observers per room", func(t *testing.T) {
		f.join(as[1], id, adp.RoleObserver)
		f.join(as[2], id, adp.RoleObserver)
		wantRateLimited(t, f.send(as[3], id, adp.TypeRoomJoin, obj{"role": "observer"}))
	})
	t.Run("speakers per room (host limit)", func(t *testing.T) {
		f.join(as[4], id, adp.RoleSpeaker)
		f.join(as[5], id, adp.RoleSpeaker)
		wantError(t, f.send(as[6], id, adp.TypeRoomJoin, obj{"role": "speaker"}), 409, adp.CodeMaxSpeakersExceeded)
	})
	t.Run("types per room", func(t *testing.T) {
		f.must(creator, id, adp.TypeTypeDefine, obj{"type": "x.three", "kind": "signal", "title": "T", "schema": obj{}})
		wantRateLimited(t, f.send(creator, id, adp.TypeTypeDefine, obj{"type": "x.four", "kind": "signal", "title": "T", "schema": obj{}}))
	})
}
