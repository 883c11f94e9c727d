package hubhttp

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
)

// WriteJSON sends v as a JSON body with status. A json.RawMessage or []byte
// body is sent as is (it must already be JSON).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var body []byte
	switch b := v.(type) {
	case json.RawMessage:
		body = b
	case []byte:
		body = b
	default:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			writeRaw(w, http.StatusInternalServerError, []byte(`{"error":{"code":"internal_error","message":"cannot encode response"}}`))
			return
		}
		body = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	writeRaw(w, status, body)
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-store")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_, _ = w.Write([]byte("\n"))
}

// errorBody is the Agent Identity 8.1 error shape.
type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

// WriteError sends err in the Agent Identity 8.1 shape, with the headers and
// status of its *Error form (see AsError). Internal errors are logged with
// their cause; the client sees only "internal error".
func WriteError(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	e := AsError(err)
	for k, vs := range e.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	status := e.HTTPStatus()
	if status >= 500 && logger != nil {
		logger.LogAttrs(r.Context(), slog.LevelError, "request failed",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.String("code", e.Code), slog.Any("err", e.Err))
	}
	WriteJSON(w, status, errorBody{Error: errorObject{Code: e.Code, Message: e.Message, Data: e.Data}})
}

// List is the Agent Identity 8.2 list shape. Result is never null on the
// wire; NextCursor is present exactly when more items follow.
type List[T any] struct {
	Result     []T    `json:"result"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// WriteList sends a list response.
func WriteList[T any](w http.ResponseWriter, items []T, next string) {
	if raw, ok := any(items).([]json.RawMessage); ok {
		writeRawList(w, raw, next)
		return
	}
	if items == nil {
		items = []T{}
	}
	WriteJSON(w, http.StatusOK, List[T]{Result: items, NextCursor: next})
}

// writeRawList sends a list of JSON texts the hub wrote itself (stored
// records) as they are: encoding/json would re-validate and copy every
// item, which was most of the cost of serving a history page.
func writeRawList(w http.ResponseWriter, items []json.RawMessage, next string) {
	n := len(`{"result":[]}`) + len(items)
	for _, it := range items {
		n += len(it)
	}
	if next != "" {
		n += len(`,"next_cursor":""`) + len(next)
	}
	body := make([]byte, 0, n)
	body = append(body, `{"result":[`...)
	for i, it := range items {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, it...)
	}
	body = append(body, ']')
	if next != "" {
		cursor, _ := json.Marshal(next)
		body = append(body, `,"next_cursor":`...)
		body = append(body, cursor...)
	}
	body = append(body, '}')
	writeRaw(w, http.StatusOK, body)
}
