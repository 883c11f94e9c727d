package config

import (
	"regexp"
	"strings"
	"time"

	"apconnect/host/text"
)

// DurationPattern is the syntax of a duration setting: a Go duration
// string (time.ParseDuration) without a sign, such as "1m", "90s", "1h30m"
// or "1.5h". Units: ns, us (or µs), ms, s, m, h. Shared with
// schemas/config.schema.json.
const DurationPattern = `^(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`

var durationRE = regexp.MustCompile(DurationPattern)

// parseDuration decodes a duration setting as written. A value that is
// not a duration is a problem for field, and the result is then def, so
// Validate does not report the same value a second time.
func parseDuration(ps *problems, field, raw string, def time.Duration) time.Duration {
	d, err := time.ParseDuration(raw)
	if !durationRE.MatchString(raw) || err != nil {
		ps.add(field, "%q is not a duration: write a Go duration such as \"90s\", \"1m\" or \"1h30m\" (units ns, us, ms, s, m, h)", text.Truncate(raw, 40))
		return def
	}
	return d
}

// checkDuration checks that a duration setting is within lo..hi.
func checkDuration(ps *problems, field string, d, lo, hi time.Duration) {
	if d < lo || d > hi {
		ps.add(field, "%s is outside %s..%s", formatDuration(d), formatDuration(lo), formatDuration(hi))
	}
}

// formatDuration writes d as a duration setting, in its shortest form:
// "1m" rather than time.Duration's "1m0s", "1h" rather than "1h0m0s".
// time.ParseDuration reads it back to d.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
		if strings.HasSuffix(s, "h0m") {
			s = strings.TrimSuffix(s, "0m")
		}
	}
	return s
}
