package opview_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"apconnect/host/client"
	"apconnect/host/connector"
	"apconnect/host/connector/delegation"
	"apconnect/host/connector/discourse"
	"apconnect/host/connector/knowledge"
	"apconnect/host/connector/mail"
	"apconnect/host/engine"
	"apconnect/host/identity"
	"apconnect/host/keystore"
	"apconnect/host/opview"
	"apconnect/host/store"
)

// reach walks every type reachable from t: fields (exported or not),
// elements, keys, and the parameters and results of funcs and of interface
// methods. It is the static bound of what code holding a t can get to
// without unsafe: a method value or a closure in a field is opaque, so what
// it captured is not reachable from it.
func reach(t reflect.Type, seen map[reflect.Type]string, path string) {
	if _, ok := seen[t]; ok {
		return
	}
	seen[t] = path
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
		reach(t.Elem(), seen, path+"/"+t.Kind().String())
	case reflect.Map:
		reach(t.Key(), seen, path+"/key")
		reach(t.Elem(), seen, path+"/value")
	case reflect.Struct:
		for i := range t.NumField() {
			reach(t.Field(i).Type, seen, path+"."+t.Field(i).Name)
		}
	case reflect.Func:
		for i := range t.NumIn() {
			reach(t.In(i), seen, path+"(in)")
		}
		for i := range t.NumOut() {
			reach(t.Out(i), seen, path+"(out)")
		}
	case reflect.Interface:
		for i := range t.NumMethod() {
			reach(t.Method(i).Type, seen, path+"."+t.Method(i).Name)
		}
	}
}

// The view cannot reach the signer: neither its handler nor the source it
// is built from (a real connector's) holds, or can obtain through any
// field or method of what it holds, a signer, the key, the engine (which
// signs and allocates nonces), the connector, its modules, a store write
// handle or an HTTP client.
func TestHandlersCannotReachTheSigner(t *testing.T) {
	t.Parallel()
	c := newConnector(t, startHub(t), 0xD1)
	src := opview.FromConnector(c, "")
	h, err := opview.New(src, opview.Options{Addr: "127.0.0.1:8765"})
	if err != nil {
		t.Fatal(err)
	}
	signer := reflect.TypeFor[identity.Signer]()
	forbidden := []reflect.Type{
		reflect.TypeFor[engine.Engine](), reflect.TypeFor[engine.Gate](), reflect.TypeFor[connector.Connector](),
		reflect.TypeFor[discourse.Module](), reflect.TypeFor[store.Store](), reflect.TypeFor[store.Tx](),
		reflect.TypeFor[keystore.Key](), reflect.TypeFor[client.Host](), reflect.TypeFor[http.Client](),
		reflect.TypeFor[identity.KeySigner](), reflect.TypeFor[mail.Module](), reflect.TypeFor[knowledge.Module](),
		reflect.TypeFor[delegation.Module](),
	}
	for _, root := range []reflect.Type{reflect.TypeOf(h), reflect.TypeOf(src), reflect.TypeFor[opview.Source]()} {
		seen := map[reflect.Type]string{}
		reach(root, seen, root.String())
		if len(seen) < 20 {
			t.Fatalf("%s: the walk found only %d types", root, len(seen))
		}
		for typ, path := range seen {
			if typ.Kind() != reflect.Interface && (typ.Implements(signer) || reflect.PointerTo(typ).Implements(signer)) {
				t.Errorf("%s reaches a signer, %s, at %s", root, typ, path)
			}
			if typ == signer {
				t.Errorf("%s reaches identity.Signer at %s", root, path)
			}
			for _, f := range forbidden {
				if typ == f {
					t.Errorf("%s reaches %s at %s", root, f, path)
				}
			}
		}
	}
	// What the source reads with is the store's read handle, whose methods
	// only read: no nonce, no write, no transaction.
	q := reflect.TypeFor[store.Q]()
	for i := range q.NumMethod() {
		name := q.Method(i).Name
		for _, w := range []string{"Allocate", "Write", "Put", "Insert", "Add", "Set", "Delete", "Claim", "Ack", "Apply", "Mark", "Prune"} {
			if strings.HasPrefix(name, w) {
				t.Errorf("store.Q has a method %s", name)
			}
		}
	}
	// And the walk does see through the fields: the source holds store.Q.
	seen := map[reflect.Type]string{}
	reach(reflect.TypeOf(src), seen, "src")
	if _, ok := seen[q]; !ok {
		t.Fatal("the walk did not reach store.Q: it proves nothing")
	}
}
