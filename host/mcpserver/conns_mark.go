package mcpserver

import "net/http"

// MarkAuthenticated records that the connection of r presented a
// credential of the token holder (the operator's view calls it for a
// request with a valid session), so the connection cap treats it as the
// token holder's: never closed to make room while it serves a request.
func MarkAuthenticated(r *http.Request) { markAuthenticated(r.Context()) }
