package discourse

import (
	"errors"
	"time"

	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/text"
)

// quotaRetryAfter is the Retry-After of rate_limited answers for quotas
// that are room state rather than a time window (observers per room, types
// per room): a slot may free up, so the client is told when to look again.
const quotaRetryAfter = 60 * time.Second

// apiError converts an adp rejection into the hub's error form: the same
// code, message and data, the pointer as data.pointer, and Retry-After on
// rate_limited. Other errors pass through (hubhttp.AsError handles identity
// errors and hides internal ones).
func apiError(err error) error {
	if err == nil {
		return nil
	}
	var he *hubhttp.Error
	if errors.As(err, &he) {
		return he
	}
	var ae *adp.Error
	if !errors.As(err, &ae) {
		return err
	}
	if ae.Code == adp.CodeInvalidRecord || ae.Code == adp.CodeChainBroken {
		// Verification codes describe records a reader received; a host
		// producing one has a bug.
		return &hubhttp.Error{Code: hubhttp.CodeInternal, Message: "internal error", Err: err}
	}
	if ae.Code == identity.CodeRateLimited {
		out := hubhttp.RateLimited(quotaRetryAfter, "%s", ae.Message)
		out.Err = err
		return withAdpData(out, ae)
	}
	return withAdpData(&hubhttp.Error{Code: ae.Code, Message: ae.Message, Err: err}, ae)
}

func withAdpData(out *hubhttp.Error, ae *adp.Error) *hubhttp.Error {
	for k, v := range ae.Data {
		out.WithData(k, v)
	}
	// room_head_mismatch keeps exactly the data shape of ADP 5.1.
	if ae.Pointer != "" && ae.Code != adp.CodeRoomHeadMismatch {
		out.WithData("pointer", ae.Pointer)
	}
	return out
}

func roomNotFound(id string) *hubhttp.Error {
	return hubhttp.Errorf(adp.CodeRoomNotFound, "room %s does not exist or is not visible", text.Truncate(id, 64))
}

func membershipRequired(what string) *hubhttp.Error {
	return hubhttp.Errorf(adp.CodeMembershipRequired, "%s requires active membership of the room (or being its creator)", what)
}

func authRequired(what string) *hubhttp.Error {
	return hubhttp.Errorf(identity.CodeInvalidToken, "%s of this room requires an Agent Identity request JWT (Authorization: Bearer)", what).
		WithHeader("WWW-Authenticate", `Bearer error="invalid_token"`)
}

func invalidParam(name, format string, args ...any) *hubhttp.Error {
	return hubhttp.Errorf(identity.CodeInvalidRequest, format, args...).WithData("parameter", name)
}
