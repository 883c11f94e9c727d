package delegation

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// fakeWeb serves principal documents: url → (body, final URL).
type fakeWeb map[string]struct {
	body  string
	final string
}

func (w fakeWeb) read(reads *[]string) PrincipalReader {
	return func(url string) ([]byte, string, error) {
		*reads = append(*reads, url)
		r, ok := w[url]
		if !ok {
			return nil, "", errors.New("404")
		}
		return []byte(r.body), r.final, nil
	}
}

func TestResolvePrincipal(t *testing.T) {
	good, _ := json.Marshal(testDocument())
	copyDoc := strings.Replace(string(good), `"controllers":[`, `"controllers":[{"id":"`+other.AgentID()+`","source":"local","valid_from":1,"delegation":"*"},`, 1)
	invalid := strings.NewReplacer(`"protocol":"agent-delegation/1.0"`, `"protocol":"x"`,
		`"id":"`+testPrincipal+`"`, `"id":"https://example.com/invalid"`).Replace(string(good))
	web := fakeWeb{
		"https://alias.example/copy-of-invalid": {`{"id":"https://example.com/invalid"}`, "https://alias.example/copy-of-invalid"},
		testPrincipal:                           {string(good), testPrincipal},
		"https://example.com/redirects":         {string(good), testPrincipal},
		"https://alias.example/yan":             {copyDoc, "https://alias.example/yan"},
		"https://alias.example/loop":            {`{"id":"https://alias.example/loop2"}`, "https://alias.example/loop"},
		"https://alias.example/loop2":           {`{"id":"https://alias.example/loop"}`, "https://alias.example/loop2"},
		"https://alias.example/noid":            {`{"protocol":"agent-delegation/1.0"}`, "https://alias.example/noid"},
		"https://alias.example/httpid":          {`{"id":"http://example.com/p"}`, "https://alias.example/httpid"},
		"https://alias.example/downgrade":       {string(good), "http://example.com/p"},
		"https://alias.example/notjson":         {`{"id":`, "https://alias.example/notjson"},
		"https://alias.example/to-missing":      {`{"id":"https://missing.example/p"}`, "https://alias.example/to-missing"},
		"https://example.com/invalid":           {invalid, "https://example.com/invalid"},
	}
	cases := []struct {
		url   string
		want  string
		reads int
	}{
		{testPrincipal, "ok", 1},
		{"https://example.com/redirects", "ok", 1},
		// A copy's injected controller is discarded: the id is read again.
		{"https://alias.example/yan", "ok", 2},
		{"https://alias.example/loop", CodePrincipalUnresolvable, 2},
		{"https://alias.example/noid", CodePrincipalUnresolvable, 1},
		{"https://alias.example/httpid", CodePrincipalUnresolvable, 1},
		{"https://alias.example/downgrade", CodePrincipalUnresolvable, 1},
		{"https://alias.example/notjson", CodePrincipalUnresolvable, 1},
		{"https://alias.example/to-missing", CodePrincipalUnresolvable, 2},
		// A copy served elsewhere is not judged, only its id read.
		{"https://example.com/invalid", CodePrincipalUnresolvable, 1},
		{"https://alias.example/copy-of-invalid", CodePrincipalUnresolvable, 2},
		{"http://example.com/p", CodePrincipalUnresolvable, 0},
	}
	for _, c := range cases {
		var reads []string
		doc, final, err := ResolvePrincipal(c.url, web.read(&reads))
		if got := code(err); got != c.want || len(reads) != c.reads {
			t.Errorf("%s: %s after %d reads (%v), want %s after %d", c.url, got, len(reads), reads, c.want, c.reads)
			continue
		}
		if err == nil && (doc.ID != testPrincipal || final != testPrincipal || doc.FindController(other.AgentID(), true) != nil) {
			t.Errorf("%s: resolved %s at %s", c.url, doc.ID, final)
		}
	}
}
