package plugin

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// appendString appends s as a JSON string. Plain printable ASCII is copied as
// is; anything else goes through encoding/json.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// appendWatchOutput encodes the watch result envelope.
func appendWatchOutput(dst []byte, items []watchItem) []byte {
	dst = append(dst, `{"items":[`...)
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"kind":"room.event.custom","seq":`...)
		dst = strconv.AppendInt(dst, it.seq, 10)
		dst = append(dst, `,"summary":`...)
		dst = appendString(dst, it.Summary)
		if it.Priority != "" {
			dst = append(dst, `,"priority":`...)
			dst = appendString(dst, it.Priority)
		}
		if it.RequiresResponse {
			dst = append(dst, `,"requires_response":true`...)
		}
		if it.Reason != "" {
			dst = append(dst, `,"reason":`...)
			dst = appendString(dst, it.Reason)
		}
		if len(it.SuggestedTools) > 0 {
			dst = append(dst, `,"suggested_tools":[`...)
			for j, t := range it.SuggestedTools {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = appendString(dst, t)
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	}
	return append(dst, `]}`...)
}

// appendValidateOutput encodes the validate result envelope.
func appendValidateOutput(dst []byte, errs []FieldError) []byte {
	if len(errs) == 0 {
		return append(dst, `{"ok":true}`...)
	}
	dst = append(dst, `{"ok":false,"errors":[`...)
	for i, e := range errs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"path":`...)
		dst = appendString(dst, e.Path)
		dst = append(dst, `,"message":`...)
		dst = appendString(dst, e.Message)
		dst = append(dst, '}')
	}
	return append(dst, `]}`...)
}

// errorOutput encodes the error envelope returned with status 1.
func errorOutput(code, message string) []byte {
	dst := append([]byte(nil), `{"error":{"code":`...)
	dst = appendString(dst, code)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, truncate(message, 1024))
	return append(dst, `}}`...)
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
