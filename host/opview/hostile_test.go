package opview_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"apconnect/host/opview"
)

// hostileSource returns the same pages as a real source would, with every
// string field — names, topics, message text, errors, plugin output,
// process fields, grants — set to hostile text.
type hostileSource struct{}

func fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(hostile)
	case reflect.Int, reflect.Int64, reflect.Uint64:
		if v.CanInt() {
			v.SetInt(7)
		} else {
			v.SetUint(7)
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		if depth > 4 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	}
}

func filled[T any]() *T {
	var v T
	fill(reflect.ValueOf(&v).Elem(), 0)
	return &v
}

func (hostileSource) Status(context.Context) (*opview.Status, error) {
	return filled[opview.Status](), nil
}
func (hostileSource) Rooms(context.Context) ([]opview.Room, error) {
	return *filled[[]opview.Room](), nil
}
func (hostileSource) Room(context.Context, int64) (*opview.RoomDetail, error) {
	return filled[opview.RoomDetail](), nil
}
func (hostileSource) Inbox(context.Context) (*opview.Inbox, error) {
	return filled[opview.Inbox](), nil
}
func (hostileSource) Outbox(context.Context) (*opview.Outbox, error) {
	return filled[opview.Outbox](), nil
}
func (hostileSource) Wake(context.Context) (*opview.WakeLog, error) {
	return filled[opview.WakeLog](), nil
}
func (hostileSource) Mail(context.Context) (*opview.Mail, error) {
	return filled[opview.Mail](), nil
}
func (hostileSource) Letter(context.Context, int64) (*opview.LetterDetail, error) {
	return filled[opview.LetterDetail](), nil
}
func (hostileSource) Knowledge(context.Context) (*opview.Knowledge, error) {
	return filled[opview.Knowledge](), nil
}
func (hostileSource) Delegations(context.Context) (*opview.Delegations, error) {
	return filled[opview.Delegations](), nil
}
func (hostileSource) Version(context.Context) (map[string]string, error) {
	return map[string]string{}, nil
}
func (hostileSource) Changed() <-chan struct{} { return make(chan struct{}) }

// Hostile text in every field of every page renders inert: escaped by the
// templates, its control and bidirectional characters made visible, and
// no script, element or javascript: link of it reaches the page.
func TestHostileStringsRenderInert(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	v, err := opview.New(hostileSource{}, opview.Options{Addr: ln.Addr().String(), Identity: hostile, AgentID: hostile})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(v)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	f := &fixture{t: t, view: v, addr: ln.Addr().String()}
	c := f.login(t, browser(t))
	for _, path := range []string{"/", "/rooms", "/rooms/7", "/inbox", "/outbox", "/wake", "/mail", "/mail/letters/7", "/knowledge",
		"/delegations", "/rooms?fragment=1", "/mail/letters/7?fragment=1", "/nope"} {
		a := f.get(t, c, path, nil)
		if path != "/nope" && a.status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, a.status, a.body)
		}
		inertHTML(t, path, a.body)
		if path != "/nope" && !strings.Contains(a.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s does not show the hostile text escaped", path)
		}
		if path != "/nope" && !strings.Contains(a.body, `\u{202e}evil`) {
			t.Errorf("%s does not mark the bidirectional override", path)
		}
	}
}
