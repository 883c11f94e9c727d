package hubsvc

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"apconnect/host/hub/internal/hubdb"
)

func TestCheck(t *testing.T) {
	newFn := func(Env) (Service, error) { return nil, nil }
	a := Spec{Name: "a", Protocol: "agent-a/1.0", New: newFn, Migrations: []hubdb.Migration{{Version: 1, Name: "a", SQL: "SELECT 1"}}}
	b := Spec{Name: "b", Protocol: "agent-b/1.0", New: newFn}
	for _, c := range []struct {
		name  string
		specs []Spec
		want  string // "" for accepted
	}{
		{"two services", []Spec{a, b}, ""},
		{"none", nil, ""},
		{"no name", []Spec{{Protocol: "x/1.0", New: newFn}}, "required"},
		{"no protocol", []Spec{{Name: "x", New: newFn}}, "required"},
		{"no constructor", []Spec{{Name: "x", Protocol: "x/1.0"}}, "required"},
		{"the shared group's name", []Spec{{Name: hubdb.SharedGroup, Protocol: "x/1.0", New: newFn}}, "shared"},
		{"a name twice", []Spec{a, {Name: "a", Protocol: "agent-c/1.0", New: newFn}}, "listed twice"},
		{"a protocol twice", []Spec{a, {Name: "c", Protocol: a.Protocol, New: newFn}}, "both host"},
	} {
		err := Check(c.specs)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	gs := Groups([]Spec{a, b})
	if len(gs) != 2 || gs[0].Name != "a" || len(gs[0].Migrations) != 1 || gs[1].Name != "b" {
		t.Fatalf("groups %+v", gs)
	}
	if e := (Env{Protocols: []string{a.Protocol}}); !e.Hosts(a.Protocol) || e.Hosts(b.Protocol) {
		t.Fatal("Hosts")
	}
}

type closer struct {
	name  string
	order *[]string
	err   error
}

func (c closer) Register(*http.ServeMux) {}
func (c closer) Close() error            { *c.order = append(*c.order, c.name); return c.err }

// CloseAll closes every service, the last built first, and reports every
// failure.
func TestCloseAll(t *testing.T) {
	var order []string
	err := CloseAll([]Service{closer{"a", &order, errors.New("a failed")}, closer{"b", &order, nil}, closer{"c", &order, errors.New("c failed")}})
	if strings.Join(order, ",") != "c,b,a" || err == nil || !strings.Contains(err.Error(), "a failed") || !strings.Contains(err.Error(), "c failed") {
		t.Fatalf("order %v, err %v", order, err)
	}
	if err := CloseAll(nil); err != nil {
		t.Fatal(err)
	}
}

func TestEnvWithDefaults(t *testing.T) {
	t.Parallel()
	e := Env{}.WithDefaults()
	if e.Clock == nil || e.Logger == nil {
		t.Fatalf("defaults not set: clock %v, logger %v", e.Clock != nil, e.Logger != nil)
	}
	fixed := time.UnixMilli(42)
	logger := slog.New(slog.DiscardHandler)
	e = Env{Clock: func() time.Time { return fixed }, Logger: logger}.WithDefaults()
	if !e.Clock().Equal(fixed) || e.Logger != logger {
		t.Error("WithDefaults replaced a clock or logger that was set")
	}
}
