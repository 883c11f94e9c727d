package plugin

import (
	"strings"
	"testing"
	"time"

	"apconnect/host/identity"
)

func TestContentPolicy(t *testing.T) {
	refused := map[string]string{
		`{"t":"see ui://app/main.html"}`:                               "ui://",
		`{"t":"UI://APP"}`:                                             "ui://",
		`{"t":"<SCRIPT src=x>"}`:                                       "<script>",
		`{"t":"a </iframe> b"}`:                                        "<iframe>",
		`{"t":"<img src=x onerror=alert(1)>"}`:                         "<img>",
		`{"t":"<!DOCTYPE html><p>"}`:                                   "<!doctype>",
		`{"t":"click javascript:alert(1)"}`:                            "javascript URL",
		`{"t":"data:text/html;base64,PHNjcmlwdD4="}`:                   "data:text/html URL",
		`{"t":"eyJhbGciOiJFZERTQSJ9.eyJpc3MiOiJ4In0.c2ln"}`:            "JWT",
		`{"t":"-----BEGIN OPENSSH PRIVATE KEY-----"}`:                  "PEM",
		`{"t":"-----BEGIN ENCRYPTED PRIVATE KEY-----"}`:                "PEM",
		`{"t":"Authorization: Bearer abcdef0123456789abcdef"}`:         "bearer token",
		`{"t":"kind apconnect-ed25519-key-unencrypted"}`:               "key file",
		`{"t":"` + strings.Repeat("A", 86) + `"}`:                      "64-byte Ed25519",
		`{"t":"` + strings.Repeat("ab", 64) + `"}`:                     "64-byte Ed25519",
		`{"a":{"b":[{"client_secret":"x"}]}}`:                          `"client_secret"`,
		`{"Private-Key":"abc"}`:                                        `"Private-Key"`,
		`{"passphrase":"hunter2"}`:                                     `"passphrase"`,
		`{"jwk":{"kty":"OKP","crv":"Ed25519","x":"abc","d":"secret"}}`: "JWK private key",
		`{"x":{"_meta":{}}}`:                                           "_meta",
		`{"<script>":1}`:                                               "member name",
	}
	for doc, frag := range refused {
		v, err := identity.ParseStrict([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		err = checkContent(v)
		if err == nil || !strings.Contains(err.Error(), frag) {
			t.Errorf("%s: got %v, want a refusal mentioning %q", doc, err, frag)
		}
	}
	allowed := []string{
		`{"t":"a < b and c > d"}`,
		`{"t":"use <b>bold</b> and <em>"}`,
		`{"t":"the bearer of bad news"}`,
		`{"t":"Bearer tokenwithoutdigitsatall"}`,
		`{"id":"` + strings.Repeat("A", 43) + `","agent":"did:agent:6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw"}`,
		`{"seed":"","token_count":3,"password_policy":{"min":8}}`,
		`{"schema":{"type":"object","properties":{"password":{"type":"string"}}}}`,
		`{"t":"https://example.com/ui/page"}`,
		`{"t":"eyJ is how JSON starts in base64"}`,
	}
	for _, doc := range allowed {
		v, _ := identity.ParseStrict([]byte(doc))
		if err := checkContent(v); err != nil {
			t.Errorf("%s refused: %v", doc, err)
		}
	}
}

func TestCheckDepth(t *testing.T) {
	if err := checkDepth([]byte(`{"a":[[["x"]]]}`), 4); err != nil {
		t.Error(err)
	}
	if err := checkDepth([]byte(`{"a":[[[["x"]]]]}`), 4); err == nil {
		t.Error("too deep accepted")
	}
	// Brackets inside strings do not count.
	if err := checkDepth([]byte(`{"a":"[[[[[[[[\"[[[["}`), 2); err != nil {
		t.Error(err)
	}
}

func TestRingLog(t *testing.T) {
	r := newRingLog(3, func() time.Time { return time.Unix(0, 0) })
	w := &lineWriter{log: r, source: "stderr", level: "error"}
	w.Write([]byte("one\ntw"))
	w.Write([]byte("o\nthree\x07\n" + strings.Repeat("x", 2000) + "\n"))
	lines, dropped := r.tail(0)
	if len(lines) != 3 || lines[0].Text != "two" || lines[1].Text != "three" || len(lines[2].Text) != maxLogLine || dropped != 0 {
		t.Errorf("%+v", lines)
	}
	if since := r.since(2); len(since) != 2 || since[0].Text != "three" {
		t.Errorf("since: %+v", since)
	}
	r.add("log", "info", "\xff\xfebad utf8")
	lines, _ = r.tail(1)
	if lines[0].Text != "\uFFFDbad utf8" {
		t.Errorf("sanitised %q", lines[0].Text)
	}
}
