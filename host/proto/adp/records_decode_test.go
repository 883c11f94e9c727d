package adp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"apconnect/host/identity"
)

// slowRecordList reads a list the general way: strict parsing, the list's
// members (as the client reads them), RecordsFromValues. ok is false when
// any of it fails.
func slowRecordList(data []byte) (recs []*Record, next string, ok bool) {
	v, err := identity.ParseStrict(data)
	if err != nil {
		return nil, "", false
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return nil, "", false
	}
	items, isArr := obj["result"].([]any)
	if !isArr {
		return nil, "", false
	}
	if c, present := obj["next_cursor"]; present {
		if next, ok = c.(string); !ok || next == "" {
			return nil, "", false
		}
	}
	recs, errs := RecordsFromValues(items, func(i int) string { return fmt.Sprint("/result/", i) })
	for _, err := range errs {
		if err != nil {
			return nil, "", false
		}
	}
	return recs, next, true
}

// recordPageFixture returns a room's records of several types (messages
// with references and mentions, joins, a room update, a custom type), and
// the JSON list of them as a host writes it.
func recordPageFixture(t *testing.T) ([]*Record, []byte) {
	f := newFixture(t, nil)
	f.at(tStart).must("alice", TypeRoomJoin, obj{"role": "speaker"})
	m := f.must("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "hello <world> & \"friends\" \u2028 é 😀"})
	f.must("creator", TypeMessageCreate, obj{"content_type": "application/json", "content": obj{"n": 1.5, "list": []any{1, "x", nil, true}},
		"references": []any{m.EnvelopeHash()}})
	f.must("creator", TypeRoomUpdate, obj{"guidance": "short"})
	f.must("alice", TypeMessageCreate, obj{"content_type": "text/plain", "content": "again"})
	var items []string
	for _, r := range f.records {
		b, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, string(b))
	}
	return f.records, []byte(`{"next_cursor":"c1","result":[` + strings.Join(items, ",") + `]}`)
}

// TestDecodeRecordListMatchesParse holds DecodeRecordList to the general
// reading: on a page as hosts write it, the same records (reflect.DeepEqual,
// the remembered validation included) and cursor; on every variation of
// it, either the same result or a refusal (never another result), and a
// refusal whenever the general reading fails.
func TestDecodeRecordListMatchesParse(t *testing.T) {
	recs, page := recordPageFixture(t)
	got, next, ok := DecodeRecordList(page)
	if !ok || next != "c1" || len(got) != len(recs) {
		t.Fatalf("the host's page was not read: %v %q %d", ok, next, len(got))
	}
	want, _, _ := slowRecordList(page)
	if !reflect.DeepEqual(got, want) {
		t.Fatal("records differ from the general reading")
	}
	first := bytes.Index(page, []byte(`{"accepted_at"`))
	variants := map[string]string{
		"no cursor":        `{"result":[` + string(page[first:len(page)-2]) + `]}`,
		"empty":            `{"result":[]}`,
		"spaces":           strings.ReplaceAll(string(page), `,"`, " ,\n\t\"") + " \n",
		"member order":     strings.Replace(string(page), `"next_cursor":"c1","result":`, `"result":`, 1)[:len(page)-len(`"next_cursor":"c1",`)-1] + `,"next_cursor":"c1"}`,
		"extra list field": strings.Replace(string(page), `{"next_cursor"`, `{"other":1,"next_cursor"`, 1),
		"empty cursor":     strings.Replace(string(page), `"c1"`, `""`, 1),
		"trailing":         string(page) + "x",
		"bom":              "\uFEFF" + string(page),
		"not a list":       `[]`,
		"result not array": `{"result":{}}`,
		"dup cursor":       strings.Replace(string(page), `{"next_cursor":"c1"`, `{"next_cursor":"c1","next_cursor":"c2"`, 1),
	}
	// Variations of one record's members.
	rec := func(old, new string) string { return strings.Replace(string(page), old, new, 1) }
	seq2 := fmt.Sprintf(`"seq":%d`, recs[1].Seq)
	for name, v := range map[string]string{
		"seq exponent":      rec(seq2, `"seq":2e0`),
		"seq fraction":      rec(seq2, `"seq":2.0`),
		"seq negative":      rec(seq2, `"seq":-2`),
		"seq leading zero":  rec(seq2, `"seq":02`),
		"seq string":        rec(seq2, `"seq":"2"`),
		"seq huge":          rec(seq2, `"seq":90071992547409910`),
		"dup seq":           rec(seq2, seq2+","+seq2),
		"extra member":      rec(seq2, seq2+`,"zz":1`),
		"unknown envelope":  rec(`"signature":`, `"zz":1,"signature":`),
		"dup event member":  rec(`"nonce":`, `"type":"x","nonce":`),
		"no payload":        rec(`"payload":{"role":"speaker"},`, ``),
		"null payload":      rec(`"payload":{"role":"speaker"}`, `"payload":null`),
		"extra event field": rec(`"nonce":`, `"zz":1,"nonce":`),
		"null pre_hash":     rec(`"pre_hash":"`+recs[1].PreHash+`"`, `"pre_hash":null`),
		"empty pre_hash":    rec(`"pre_hash":"`+recs[1].PreHash+`"`, `"pre_hash":""`),
		"bad hash":          rec(`"hash":"`+recs[1].Hash+`"`, `"hash":"`+recs[2].Hash+`"`),
		"bad actor":         rec(`"actor":"`+recs[1].Actor()+`"`, `"actor":"did:agent:x"`),
		"escaped":           rec(`"content":"again"`, `"content":"ag\u0061in"`),
		"bad utf8":          rec(`"content":"again"`, "\"content\":\"ag\xffin\""),
		"nonce zero":        rec(fmt.Sprintf(`"nonce":%d`, recs[1].Envelope.Event.Nonce), `"nonce":0`),
		"redacted":          rec(`"envelope":{`, `"envelope":{"redacted":true,`),
		"protocol":          rec(`"protocol":"`+Protocol+`"`, `"protocol":"other/1.0"`),
		"deep payload":      rec(`"payload":{"role":"speaker"}`, `"payload":`+strings.Repeat("[", 130)+strings.Repeat("]", 130)),
	} {
		variants[name] = v
	}
	for name, v := range variants {
		fast, fastNext, fastOK := DecodeRecordList([]byte(v))
		slow, slowNext, slowOK := slowRecordList([]byte(v))
		switch {
		case fastOK && !slowOK:
			t.Errorf("%s: read, though the general reading fails", name)
		case fastOK && (fastNext != slowNext || !reflect.DeepEqual(fast, slow)):
			t.Errorf("%s: read differently from the general reading", name)
		}
		t.Logf("%-18s fast %-5v general %v", name, fastOK, slowOK)
	}
	for _, name := range []string{"no cursor", "empty", "spaces", "member order", "escaped", "null pre_hash"} {
		if _, _, ok := DecodeRecordList([]byte(variants[name])); !ok && name != "null pre_hash" {
			t.Errorf("%s: not read", name)
		}
	}
	if _, err := json.Marshal(got); err != nil {
		t.Fatal(err)
	}
}

// TestDecodeRecordListMutations: over pages with bytes changed, inserted or
// removed at random, DecodeRecordList never reads a page the general
// reading refuses, nor reads one differently.
func TestDecodeRecordListMutations(t *testing.T) {
	_, page := recordPageFixture(t)
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(`{}[],:"\0123456789-+.eEtrufalsn xyzA_` + "\xff\u00e9")
	read := 0
	for range 4000 {
		b := bytes.Clone(page)
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(b))
			switch rng.IntN(3) {
			case 0:
				b[i] = alphabet[rng.IntN(len(alphabet))]
			case 1:
				b = append(b[:i], b[i+1:]...)
			default:
				b = append(b[:i], append([]byte{alphabet[rng.IntN(len(alphabet))]}, b[i:]...)...)
			}
		}
		fast, fastNext, fastOK := DecodeRecordList(b)
		if !fastOK {
			continue
		}
		read++
		slow, slowNext, slowOK := slowRecordList(b)
		if !slowOK || fastNext != slowNext || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("mutated page read as the general reading does not (general ok %v):\n%s", slowOK, b)
		}
	}
	t.Logf("%d of 4000 mutated pages read", read)
}
