package hubhttp

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"apconnect/host/identity"
)

func TestCursorRoundTrip(t *testing.T) {
	c := EncodeCursor("profile-events|a", int64(42))
	var n int64
	if err := DecodeCursor(c, "profile-events|a", &n); err != nil || n != 42 {
		t.Fatalf("decode: %d %v", n, err)
	}
	for _, bad := range []string{"", "!!", identity.EncodeBase64URL([]byte(`{"s":"x","k":1}`)), c + "A"} {
		if err := DecodeCursor(bad, "profile-events|a", &n); identityCode(err) != identity.CodeInvalidRequest {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
	if err := DecodeCursor(c, "profile-events|b", &n); err == nil {
		t.Error("cursor accepted for another list")
	}
}

func identityCode(err error) string {
	if err == nil {
		return ""
	}
	return AsError(err).Code
}

func TestParseLimitAndQuery(t *testing.T) {
	for q, want := range map[string]int{"": 1, "limit=5": 5, "limit=500": 100} {
		v, _ := url.ParseQuery(q)
		if got, err := ParseLimit(v, 1, 100); err != nil || got != want {
			t.Errorf("%q: %d %v", q, got, err)
		}
	}
	for _, q := range []string{"limit=0", "limit=-3", "limit=x", "limit=", "limit=+4", "limit=1.5"} {
		v, _ := url.ParseQuery(q)
		if _, err := ParseLimit(v, 1, 100); identityCode(err) != identity.CodeInvalidRequest {
			t.Errorf("%q accepted", q)
		}
	}
	v, _ := url.ParseQuery("limit=1&cursor=x")
	if CheckQuery(v, "limit", "cursor") != nil || CheckQuery(v, "limit") == nil {
		t.Error("CheckQuery allowed set")
	}
	v, _ = url.ParseQuery("limit=1&limit=2")
	if CheckQuery(v, "limit") == nil {
		t.Error("repeated parameter accepted")
	}
}

// TestRateLimiter: a quota of 2 a minute is a bucket of two refilling one
// every 30 s; Retry-After is the time until the next unit, rounded up.
func TestRateLimiter(t *testing.T) {
	l := NewRateLimiter()
	now := time.Unix(1000, 0)
	rate := Rate{Limit: 2, Per: time.Minute}
	r1, err := l.Reserve("k", rate, now)
	if err != nil || r1 == nil {
		t.Fatal(err)
	}
	if _, err := l.Reserve("k", rate, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	// At 15 s the bucket holds 0.5 (1/30 refilled by 1 s, 14/30 since):
	// the next unit is due at 30 s.
	_, err = l.Reserve("k", rate, now.Add(15*time.Second))
	e := AsError(err)
	if e.Code != identity.CodeRateLimited || e.Header.Get("Retry-After") != "15" || e.Data["retry_after"] != int64(15) || e.HTTPStatus() != http.StatusTooManyRequests {
		t.Fatalf("exhausted: %+v", e)
	}
	if _, err := l.Reserve("other", rate, now); err != nil {
		t.Fatal("keys are not independent")
	}
	r1.Cancel()
	r1.Cancel() // a second cancel gives nothing more back
	if _, err := l.Reserve("k", rate, now.Add(15*time.Second)); err != nil {
		t.Fatal("cancelled unit not returned")
	}
	if _, err := l.Reserve("k", rate, now.Add(15*time.Second)); err == nil {
		t.Fatal("double cancel returned two units")
	}
	if _, err := l.Reserve("k", rate, now.Add(30*time.Second)); err != nil {
		t.Fatal("no unit refilled after 30 s")
	}
	for range 2 {
		if _, err := l.Reserve("k", rate, now.Add(2*time.Minute)); err != nil {
			t.Fatal("bucket not full again after a minute idle")
		}
	}
	if _, err := l.Reserve("k", rate, now.Add(2*time.Minute)); err == nil {
		t.Fatal("bucket fuller than its quota")
	}
	if res, err := l.Reserve("k", Rate{}, now); res != nil || err != nil {
		t.Fatal("zero rate is not unlimited")
	}
}

func TestAsError(t *testing.T) {
	_, err := identity.ParseEnvelope([]byte(`{"hash":1}`))
	e := AsError(err)
	if e.Code != identity.CodeInvalidEvent || e.HTTPStatus() != 400 {
		t.Fatalf("identity error: %+v", e)
	}
	if e := AsError(NonceNotGreater(3, 7)); e.HTTPStatus() != 409 || e.Header.Get(HeaderMaxSeenNonce) != "7" || e.Data["max_seen_nonce"] != int64(7) {
		t.Fatalf("nonce error: %+v", e)
	}
	e = AsError(http.ErrBodyNotAllowed)
	if e.Code != CodeInternal || e.HTTPStatus() != 500 || e.Message != "internal error" {
		t.Fatalf("plain error: %+v", e)
	}
	for code, status := range map[string]int{
		identity.CodeInvalidToken: 401, identity.CodeNotFound: 404, identity.CodePayloadTooLarge: 413,
		"no_such_code": 500,
	} {
		if StatusFor(code) != status {
			t.Errorf("StatusFor(%s) = %d", code, StatusFor(code))
		}
	}
	// A rules package's *identity.Error keeps its code, pointer and data.
	ie := identity.NewError(identity.CodePayloadTooLarge, "/event/payload/name", "too long")
	ie.Data = map[string]any{"limit": 3}
	if e := AsError(fmt.Errorf("wrapped: %w", ie)); e.Code != identity.CodePayloadTooLarge || e.HTTPStatus() != 413 ||
		e.Data["limit"] != 3 || e.Data["pointer"] != "/event/payload/name" || e.Message != "too long" {
		t.Fatalf("rules error: %+v", e)
	}
}

// Services register the statuses of their codes; a conflicting
// registration changes nothing.
func TestRegisterStatuses(t *testing.T) {
	if StatusFor("hubhttp_test_code") != 500 {
		t.Fatal("an unregistered code has a status")
	}
	for _, bad := range []map[string]int{
		{"hubhttp_test_code": 409, identity.CodeNotFound: 410}, // a shared code with another status
		{"hubhttp_test_code": 200},                             // not an error status
	} {
		if err := RegisterStatuses(bad); err == nil {
			t.Fatalf("registered %v", bad)
		}
		if StatusFor("hubhttp_test_code") != 500 {
			t.Fatalf("a refused registration %v changed the table", bad)
		}
	}
	for range 2 { // again with the same status is fine
		if err := RegisterStatuses(map[string]int{"hubhttp_test_code": 409, identity.CodeNotFound: 404}); err != nil {
			t.Fatal(err)
		}
	}
	if StatusFor("hubhttp_test_code") != 409 || AsError(Errorf("hubhttp_test_code", "x")).HTTPStatus() != 409 {
		t.Fatal("registered status not used")
	}
	if err := RegisterStatuses(map[string]int{"hubhttp_test_code": 404}); err == nil {
		t.Fatal("a second status for one code was registered")
	}
}
