package hubhttp

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"apconnect/host/identity"
	"apconnect/host/text"
)

// Methods dispatches on the request method so that every route answers an
// unsupported method with 405 in the Agent Identity error shape (and an
// Allow header). GET handlers also serve HEAD.
func Methods(logger *slog.Logger, handlers map[string]http.Handler) http.Handler {
	allowed := make([]string, 0, len(handlers)+1)
	for m := range handlers {
		allowed = append(allowed, m)
	}
	if _, ok := handlers[http.MethodGet]; ok {
		if _, ok := handlers[http.MethodHead]; !ok {
			allowed = append(allowed, http.MethodHead)
		}
	}
	slices.Sort(allowed)
	allow := strings.Join(allowed, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, ok := handlers[r.Method]
		if !ok && r.Method == http.MethodHead {
			h, ok = handlers[http.MethodGet]
		}
		if !ok {
			WriteError(w, r, logger, (&Error{Status: http.StatusMethodNotAllowed, Code: identity.CodeInvalidRequest,
				Message: fmt.Sprintf("method %s is not allowed here; use %s", r.Method, allow)}).WithHeader("Allow", allow))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// NotFound answers every request with not_found; mount it at "/".
func NotFound(logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, logger, Errorf(identity.CodeNotFound, "no such endpoint: %s", text.Truncate(r.URL.Path, 200)))
	})
}

// statusWriter records the status a handler sent.
type statusWriter struct {
	http.ResponseWriter
	status int
}

// WriteHeader records the first status sent.
func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

// Write records an implicit 200.
func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Flush lets streaming handlers (SSE) flush through the wrapper.
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap exposes the underlying writer to http.ResponseController.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Recover turns a handler panic into a 500 internal_error (logged with its
// stack) and logs every request at debug level: method, path, status and
// duration — never headers or bodies.
func Recover(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		start := time.Now()
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				logger.LogAttrs(r.Context(), slog.LevelError, "handler panic",
					slog.String("method", r.Method), slog.String("path", r.URL.Path),
					slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
				if sw.status == 0 {
					WriteError(sw, r, nil, Errorf(CodeInternal, "internal error"))
				}
			}
			logger.LogAttrs(r.Context(), slog.LevelDebug, "request",
				slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", sw.status), slog.Duration("duration", time.Since(start)))
		}()
		next.ServeHTTP(sw, r)
	})
}
