package mcpserver

import (
	"bytes"
	"encoding/json"
)

// Recovering the id of a message that cannot be decoded whole.
//
// A line over the size limit is never buffered whole, and a line that is
// not JSON cannot be decoded; either would be answered with id null, and
// the client, which matches answers to calls by id, would wait for its call
// until it timed out. So the transport keeps the first and last
// idScanBytes of such a message and looks for the request's id there: at
// the beginning (the Go and Python SDKs write "jsonrpc", "id" and "method"
// before "params") or, for an over-long line, failing that, as the
// object's last member (the TypeScript SDK writes "id" last; in JSON that
// is valid the member before the final "}" is a member of the top-level
// object, so the end is only read for a message that may be valid). Only a
// message whose id is in neither is answered with id null.

// idScanBytes is how much of each end of an undecodable message is kept to
// find its id.
const idScanBytes = 4096

// edges returns the first and last idScanBytes of data.
func edges(data []byte) (head, tail []byte) {
	return data[:min(len(data), idScanBytes)], data[max(0, len(data)-idScanBytes):]
}

// recoverID returns the id member of a JSON-RPC message from its
// beginning, or else from its end; nil when neither holds a valid id (a
// string or an integer).
func recoverID(head, tail []byte) json.RawMessage {
	if id := headID(head); id != nil {
		return id
	}
	return tailID(tail)
}

// headID reads the members of the object head begins, in order, up to the
// first "id", and returns its value when it is complete and valid. It stops
// at the first value that head cuts off or that is not JSON.
func headID(head []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if key != "id" {
			continue
		}
		// A number cut off by the end of head would decode shorter:
		// the id must be followed by the next member or the object's end.
		rest := bytes.TrimLeft(head[dec.InputOffset():], " \t\r\n")
		if len(rest) == 0 || (rest[0] != ',' && rest[0] != '}') || !validID(v) {
			return nil
		}
		return v
	}
	return nil
}

// tailID reads the last member of the object tail ends (backwards: "}",
// a string or number value, ":", the key, and the "," or "{" before it) and
// returns its value when the key is "id" and the value a valid id.
func tailID(tail []byte) json.RawMessage {
	b := bytes.TrimRight(tail, " \t\r\n")
	if len(b) == 0 || b[len(b)-1] != '}' {
		return nil
	}
	b = bytes.TrimRight(b[:len(b)-1], " \t\r\n")
	var val []byte
	switch {
	case len(b) > 0 && b[len(b)-1] == '"':
		start := openingQuote(b)
		if start < 0 {
			return nil
		}
		val, b = b[start:], b[:start]
	default:
		i := len(b)
		for i > 0 && bytes.IndexByte([]byte("0123456789-+.eE"), b[i-1]) >= 0 {
			i--
		}
		val, b = b[i:], b[:i]
	}
	b = bytes.TrimRight(b, " \t\r\n")
	if len(b) == 0 || b[len(b)-1] != ':' {
		return nil
	}
	b = bytes.TrimRight(b[:len(b)-1], " \t\r\n")
	if len(b) == 0 || b[len(b)-1] != '"' {
		return nil
	}
	start := openingQuote(b)
	var key string
	if start < 0 || json.Unmarshal(b[start:], &key) != nil || key != "id" {
		return nil
	}
	b = bytes.TrimRight(b[:start], " \t\r\n")
	if len(b) == 0 || (b[len(b)-1] != ',' && b[len(b)-1] != '{') || !validID(val) {
		return nil
	}
	return json.RawMessage(bytes.Clone(val))
}

// openingQuote returns the index of the quote that opens the JSON string b
// ends with (b's last byte is its closing quote): the nearest quote before
// it not escaped by an odd run of backslashes; -1 when there is none.
func openingQuote(b []byte) int {
	for i := len(b) - 2; i >= 0; i-- {
		if b[i] != '"' {
			continue
		}
		n := 0
		for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return i
		}
	}
	return -1
}
