package hubhttp

import (
	"errors"
	"fmt"
	"mime"
	"net/http"

	"apconnect/host/identity"
	"apconnect/host/internal/readall"
	"apconnect/host/text"
)

// ReadBody reads a JSON request body of at most limit bytes. It requires
// Content-Type application/json, answers an oversized body with
// payload_too_large (data.limit) and an unreadable one with invalid_request.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if err := requireJSON(r); err != nil {
		return nil, err
	}
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	body, err := readall.Sized(http.MaxBytesReader(w, r.Body, limit), r.ContentLength)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(limit)
		}
		return nil, Errorf(identity.CodeInvalidRequest, "cannot read request body: %v", err)
	}
	return body, nil
}

// ReadStrictJSON reads a body with ReadBody and parses it with
// identity.ParseStrict (duplicate names, invalid Unicode and unsafe integers
// rejected); parse failures are invalid_request with data.pointer.
func ReadStrictJSON(w http.ResponseWriter, r *http.Request, limit int64) (any, error) {
	body, err := ReadBody(w, r, limit)
	if err != nil {
		return nil, err
	}
	v, err := identity.ParseStrict(body)
	if err != nil {
		var je *identity.JSONError
		if errors.As(err, &je) {
			return nil, Errorf(identity.CodeInvalidRequest, "%s", je.Error()).WithData("pointer", je.Pointer)
		}
		return nil, Errorf(identity.CodeInvalidRequest, "invalid JSON body: %v", err)
	}
	return v, nil
}

func tooLarge(limit int64) *Error {
	return Errorf(identity.CodePayloadTooLarge, "request body exceeds %d bytes", limit).WithData("limit", limit)
}

func requireJSON(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || mt != "application/json" {
		return &Error{Status: http.StatusUnsupportedMediaType, Code: identity.CodeInvalidRequest,
			Message: fmt.Sprintf("Content-Type must be application/json, got %q", text.Truncate(ct, 80))}
	}
	return nil
}
