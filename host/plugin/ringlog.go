package plugin

import (
	"bytes"
	"strings"
	"sync"
	"time"
	"unicode"
)

// maxLogLine caps one log line (bytes); longer lines are cut.
const maxLogLine = 512

// maxLogLinesPerCall caps the log import lines one call may write; more are
// counted as dropped.
const maxLogLinesPerCall = 64

// LogLine is one line of a plugin's log: its stdout, its stderr or the log
// import. Text is sanitised (valid UTF-8, no control characters).
type LogLine struct {
	Time   time.Time `json:"time"`
	Source string    `json:"source"` // "stdout", "stderr" or "log"
	Level  string    `json:"level"`  // debug, info, warn or error
	Text   string    `json:"text"`
}

// ringLog keeps the last lines a plugin wrote. It never grows beyond its
// size, whatever the plugin writes.
type ringLog struct {
	mu      sync.Mutex
	now     func() time.Time
	lines   []LogLine
	next    int
	full    bool
	total   uint64 // lines ever added
	dropped uint64
}

func newRingLog(size int, now func() time.Time) *ringLog {
	return &ringLog{lines: make([]LogLine, size), now: now}
}

func (r *ringLog) add(source, level, text string) {
	line := LogLine{Time: r.now(), Source: source, Level: level, Text: sanitizeLogText(text)}
	r.mu.Lock()
	r.lines[r.next] = line
	r.next = (r.next + 1) % len(r.lines)
	if r.next == 0 {
		r.full = true
	}
	r.total++
	r.mu.Unlock()
}

// count returns how many lines were ever added.
func (r *ringLog) count() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// since returns the lines added after the first n that are still kept.
func (r *ringLog) since(n uint64) []LogLine {
	r.mu.Lock()
	total := r.total
	r.mu.Unlock()
	if total <= n {
		return nil
	}
	lines, _ := r.tail(int(min(total-n, uint64(len(r.lines)))))
	return lines
}

func (r *ringLog) drop() {
	r.mu.Lock()
	r.dropped++
	r.mu.Unlock()
}

// tail returns up to n of the latest lines, oldest first, and the count of
// dropped lines.
func (r *ringLog) tail(n int) ([]LogLine, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var all []LogLine
	if r.full {
		all = append(all, r.lines[r.next:]...)
	}
	all = append(all, r.lines[:r.next]...)
	if n > 0 && len(all) > n {
		all = all[len(all)-n:]
	}
	return all, r.dropped
}

func sanitizeLogText(s string) string {
	if len(s) > maxLogLine {
		s = s[:maxLogLine]
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r == '\t' {
			return ' '
		}
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

// lineWriter turns a guest's stdout or stderr into log lines. Partial lines
// are buffered up to maxLogLine bytes.
type lineWriter struct {
	mu     sync.Mutex
	log    *ringLog
	source string
	level  string
	buf    []byte
}

// Write splits p into log lines; it never fails.
func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := maxLogLine - len(w.buf)
			if len(p) > room {
				w.buf = append(w.buf, p[:room]...)
				w.flush()
				p = p[room:]
				continue
			}
			w.buf = append(w.buf, p...)
			break
		}
		chunk := p[:i]
		if room := maxLogLine - len(w.buf); len(chunk) > room {
			chunk = chunk[:room]
		}
		w.buf = append(w.buf, chunk...)
		w.flush()
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWriter) flush() {
	w.log.add(w.source, w.level, string(w.buf))
	w.buf = w.buf[:0]
}

func levelName(level uint32) string {
	switch level {
	case LogDebug:
		return "debug"
	case LogInfo:
		return "info"
	case LogWarn:
		return "warn"
	case LogError:
		return "error"
	}
	return "info"
}
