package tlsca

import (
	"crypto/x509"
	"time"
)

func x509Opts(pool *x509.CertPool, now time.Time) x509.VerifyOptions {
	return x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
}
