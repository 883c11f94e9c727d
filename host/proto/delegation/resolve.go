package delegation

import (
	"apconnect/host/identity"
)

// PrincipalReader reads a principal document for ResolvePrincipal: a GET of
// url with Accept: application/json, following at most
// MaxPrincipalRedirects redirects, each over HTTPS, within
// PrincipalFetchTimeout and MaxPrincipalDocumentBytes. It returns the body
// and the URL of the final response. The I/O is the caller's.
type PrincipalReader func(url string) (body []byte, finalURL string, err error)

// ResolvePrincipal resolves a principal (Agent Delegation 3, as the SDK's
// client does): read url; a document whose id equals the final URL is
// authoritative; any other is a copy, of which only its id is used, read
// once more, and that read must be authoritative. It returns the validated
// document and the URL it was read at (pass it as resolvedURL to the
// checks). The caller compares the returned id with the URL it asked for:
// an event or query naming another URL names an alias (principal_not_canonical),
// and an alias may be shown as the principal's name only when IsAlias.
// Errors carry principal_unresolvable.
func ResolvePrincipal(url string, read PrincipalReader) (*PrincipalDocument, string, error) {
	v, final, err := readPrincipal(url, read)
	if err != nil {
		return nil, "", err
	}
	id, ok := PrincipalID(v)
	if !ok || !validHTTPSURL(id) {
		return nil, "", newError(CodePrincipalUnresolvable, "/id", "principal document read at %s names no HTTPS id", trunc(final))
	}
	if id != final {
		if v, final, err = readPrincipal(id, read); err != nil {
			return nil, "", err
		}
	}
	doc, err := PrincipalDocumentFromValue(v)
	if err != nil {
		return nil, "", err
	}
	if err := CheckPrincipalResolution(doc, final); err != nil {
		return nil, "", err
	}
	return doc, final, nil
}

func readPrincipal(url string, read PrincipalReader) (any, string, error) {
	if !validHTTPSURL(url) {
		return nil, "", newError(CodePrincipalUnresolvable, "", "principal resolution requires HTTPS: %s", trunc(url))
	}
	body, final, err := read(url)
	if err != nil {
		return nil, "", &identity.Error{Code: CodePrincipalUnresolvable, Message: "cannot read " + trunc(url) + ": " + err.Error(), Err: err}
	}
	if !validHTTPSURL(final) {
		return nil, "", newError(CodePrincipalUnresolvable, "", "principal resolution requires HTTPS: %s", trunc(final))
	}
	if len(body) > MaxPrincipalDocumentBytes {
		return nil, "", newError(CodePrincipalUnresolvable, "", "principal document exceeds %d bytes", MaxPrincipalDocumentBytes)
	}
	v, err := identity.ParseStrict(body)
	if err != nil {
		return nil, "", &identity.Error{Code: CodePrincipalUnresolvable, Message: "principal document is not strict JSON: " + err.Error(), Err: err}
	}
	return v, final, nil
}
