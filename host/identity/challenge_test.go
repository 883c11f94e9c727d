package identity

import (
	"bytes"
	"strings"
	"testing"
)

func TestIsControllerChallenge(t *testing.T) {
	body := strings.Repeat("A", 43)
	cases := []struct {
		name string
		in   string
		want bool
	}{
		{"fixed shape", ControllerChallengePrefix + body, true},
		{"all alphabet", ControllerChallengePrefix + "az09AZ-_" + strings.Repeat("x", 35), true},
		{"42 characters", ControllerChallengePrefix + body[:42], false},
		{"44 characters", ControllerChallengePrefix + body + "A", false},
		{"padding", ControllerChallengePrefix + body[:42] + "=", false},
		{"standard alphabet", ControllerChallengePrefix + body[:42] + "+", false},
		{"other protocol", "agent-delegation/1.1:controller-registration:" + body, false},
		{"prefix case", strings.ToUpper(ControllerChallengePrefix[:1]) + ControllerChallengePrefix[1:] + body, false},
		{"bare body", body, false},
		{"empty", "", false},
		{"event hash length", strings.Repeat("A", 88), false},
		{"non-ASCII", ControllerChallengePrefix + body[:41] + "é", false},
	}
	for _, c := range cases {
		if got := IsControllerChallenge(c.in); got != c.want {
			t.Errorf("%s: IsControllerChallenge = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestControllerChallengeSignVerify(t *testing.T) {
	s := testSigner(t, "controller")
	other := testSigner(t, "other")
	ch, err := NewControllerChallenge(bytes.NewReader(bytes.Repeat([]byte{7}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	if len(ch) != 88 || !IsControllerChallenge(ch) {
		t.Fatalf("NewControllerChallenge gave %q", ch)
	}
	sig, err := SignControllerChallenge(s, ch)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyControllerChallenge(s.AgentID(), ch, sig); err != nil {
		t.Fatalf("verify own proof: %v", err)
	}
	flipped := []byte(sig)
	flipped[10] ^= 1
	otherCh, _ := NewControllerChallenge(bytes.NewReader(bytes.Repeat([]byte{8}, 32)))
	cases := []struct {
		name, id, challenge, sig, code string
	}{
		{"another key", other.AgentID(), ch, sig, CodeInvalidSignature},
		{"another challenge", s.AgentID(), otherCh, sig, CodeInvalidSignature},
		{"tampered signature", s.AgentID(), ch, string(flipped), CodeInvalidSignature},
		{"short signature", s.AgentID(), ch, sig[:80], CodeInvalidSignature},
		{"not a challenge", s.AgentID(), ch[:87], sig, CodeInvalidRequest},
		{"bad agent id", "did:agent:xyz", ch, sig, CodeInvalidActor},
	}
	for _, c := range cases {
		if got := ErrorCode(VerifyControllerChallenge(c.id, c.challenge, c.sig)); got != c.code {
			t.Errorf("%s: code %q, want %q", c.name, got, c.code)
		}
	}
	// The signer refuses anything but a challenge: it is no signing oracle.
	for _, msg := range []string{"", "hello", strings.Repeat("A", 32), ch + "x"} {
		if _, err := SignControllerChallenge(s, msg); ErrorCode(err) != CodeInvalidRequest {
			t.Errorf("SignControllerChallenge(%q) = %v, want invalid_request", msg, err)
		}
	}
	a, _ := NewControllerChallenge(nil)
	b, _ := NewControllerChallenge(nil)
	if a == b || !IsControllerChallenge(a) {
		t.Errorf("random challenges %q and %q", a, b)
	}
}
