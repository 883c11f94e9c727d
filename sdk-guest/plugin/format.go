package plugin

import "strconv"

// Errorf and Logf format with the verbs plugins use — %s, %v, %q, %d and
// %% — for strings, errors, Stringers, booleans and integers, writing
// exactly what fmt.Sprintf writes for them, without importing fmt (which
// adds about 400 KB to every module). Anything else (another verb, a
// flag or width, an argument of another type, a count that does not match)
// goes to fmt.Sprintf when package stdlib is imported, and is otherwise
// written as fmt writes a bad verb, %!v(unsupported) — so that the message
// still arrives.

// formatOther is fmt.Sprintf once package stdlib installed it.
var formatOther func(format string, args ...any) string

// FormatOthersWith installs sprintf (fmt.Sprintf, in practice) for what
// Errorf and Logf do not format themselves. Import
// apconnect/sdk-guest/plugin/stdlib for its side effect instead of calling
// this directly.
func FormatOthersWith(sprintf func(format string, args ...any) string) { formatOther = sprintf }

// sprintf formats like fmt.Sprintf for the supported subset.
func sprintf(format string, args []any) string {
	out, ok := sprintfSubset(format, args)
	if ok {
		return out
	}
	if formatOther != nil {
		return formatOther(format, args...)
	}
	return out
}

// sprintfSubset formats format; ok is false when it met something outside
// the subset (the output then marks it as fmt marks a bad verb).
func sprintfSubset(format string, args []any) (string, bool) {
	var b []byte
	ok := true
	next := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		i++
		if i == len(format) {
			b = append(b, "%!(NOVERB)"...)
			ok = false
			break
		}
		verb := format[i]
		if verb == '%' {
			b = append(b, '%')
			continue
		}
		if next >= len(args) {
			b = append(b, '%', '!', verb)
			b = append(b, "(MISSING)"...)
			ok = false
			continue
		}
		arg := args[next]
		next++
		s, good := formatArg(verb, arg)
		if !good {
			b = append(b, '%', '!', verb)
			b = append(b, "(unsupported)"...)
			ok = false
			continue
		}
		b = append(b, s...)
	}
	if next < len(args) {
		b = append(b, "%!(EXTRA)"...)
		ok = false
	}
	return string(b), ok
}

// formatArg formats one argument for one verb, as fmt does.
func formatArg(verb byte, arg any) (string, bool) {
	var s string
	isString := true
	switch v := arg.(type) {
	case string:
		s = v
	case error:
		s = v.Error()
	case interface{ String() string }:
		s = v.String()
	default:
		isString = false
	}
	if isString {
		switch verb {
		case 's', 'v':
			return s, true
		case 'q':
			return strconv.Quote(s), true
		}
		return "", false
	}
	switch v := arg.(type) {
	case bool:
		if verb == 'v' || verb == 't' {
			return strconv.FormatBool(v), true
		}
	case int:
		return formatInt(verb, int64(v))
	case int64:
		return formatInt(verb, v)
	case int32:
		return formatInt(verb, int64(v))
	case uint64:
		if verb == 'd' || verb == 'v' {
			return strconv.FormatUint(v, 10), true
		}
	case uint32:
		if verb == 'd' || verb == 'v' {
			return strconv.FormatUint(uint64(v), 10), true
		}
	}
	return "", false
}

func formatInt(verb byte, v int64) (string, bool) {
	if verb == 'd' || verb == 'v' {
		return strconv.FormatInt(v, 10), true
	}
	return "", false
}
