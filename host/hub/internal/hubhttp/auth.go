package hubhttp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"apconnect/host/identity"
)

// Authenticator verifies Agent Identity request JWTs (section 7) sent as
// "Authorization: Bearer <jwt>" for a service whose origin is Audience.
type Authenticator struct {
	// Audience is the service origin every token's aud must equal.
	Audience string
	// Clock is the time tokens are checked against.
	Clock func() time.Time
	// MaxLifetime bounds exp - iat (identity.MaxTokenLifetime by default).
	MaxLifetime time.Duration
	// Skew is the tolerated clock difference for iat and exp
	// (identity.DefaultClockSkew by default). It is the hub's policy: SDK
	// 0.12.6 hosts tolerate none, so the hub accepts every token they do,
	// and a few that a client minted on a clock running ahead.
	Skew time.Duration
	// Logger receives rejections (never the token itself).
	Logger *slog.Logger
}

type claimsKey struct{}

// Claims returns the verified token claims of an authenticated request.
func Claims(ctx context.Context) (*identity.TokenClaims, bool) {
	c, ok := ctx.Value(claimsKey{}).(*identity.TokenClaims)
	return c, ok
}

// AgentID returns the authenticated Agent ID (the JWT sub), or "".
func AgentID(ctx context.Context) string {
	if c, ok := Claims(ctx); ok {
		return c.AgentID
	}
	return ""
}

// Authenticate checks the request's bearer token. It returns (nil, nil) when
// the request carries no Authorization header, and an invalid_token *Error
// when the header is present but not a valid token for this service.
func (a *Authenticator) Authenticate(r *http.Request) (*identity.TokenClaims, error) {
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		return nil, nil
	}
	if len(values) > 1 {
		return nil, invalidToken("more than one Authorization header")
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return nil, invalidToken("Authorization must be \"Bearer <request JWT>\"")
	}
	maxLife, skew := a.MaxLifetime, a.Skew
	if maxLife == 0 {
		maxLife = identity.MaxTokenLifetime
	}
	if skew == 0 {
		skew = identity.DefaultClockSkew
	}
	claims, err := identity.VerifyToken(token, a.Audience, a.Clock(), maxLife, skew)
	if err != nil {
		msg := err.Error()
		var ie *identity.Error
		if errors.As(err, &ie) {
			msg = ie.Message
		}
		if a.Logger != nil {
			a.Logger.LogAttrs(r.Context(), slog.LevelDebug, "request token rejected",
				slog.String("path", r.URL.Path), slog.String("reason", msg))
		}
		return nil, invalidToken(msg)
	}
	// identity.VerifyToken computes exp-iat as a time.Duration, which
	// overflows for lifetimes beyond ~292 years and then passes its bound;
	// time.Time.Sub saturates, so this re-check closes that hole.
	if life := claims.ExpiresAt.Sub(claims.IssuedAt); life > maxLife {
		return nil, invalidToken(fmt.Sprintf("token lifetime %s exceeds %s", life, maxLife))
	}
	return claims, nil
}

func invalidToken(msg string) *Error {
	return Errorf(identity.CodeInvalidToken, "%s", msg).WithHeader("WWW-Authenticate", `Bearer error="invalid_token"`)
}

// Require wraps next so that it runs only for requests with a valid token;
// Claims and AgentID then return the caller. A missing or invalid token is
// answered with 401 invalid_token.
func (a *Authenticator) Require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims, err := a.Authenticate(r)
		if err == nil && claims == nil {
			err = invalidToken("this endpoint requires an Agent Identity request JWT (Authorization: Bearer)")
		}
		if err != nil {
			WriteError(w, r, a.Logger, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), claimsKey{}, claims)))
	})
}

// Optional wraps next so that anonymous requests pass through, while a
// request that does send a token must send a valid one (a bad token is a
// client bug worth reporting, not something to ignore).
func (a *Authenticator) Optional(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims, err := a.Authenticate(r)
		if err != nil {
			WriteError(w, r, a.Logger, err)
			return
		}
		if claims != nil {
			r = r.WithContext(context.WithValue(r.Context(), claimsKey{}, claims))
		}
		next.ServeHTTP(w, r)
	})
}
