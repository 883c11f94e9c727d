package client

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// sseEvent is one dispatched SSE event (WHATWG HTML, "event stream
// interpretation").
type sseEvent struct {
	name string // event type, "message" when none was given
	data string // data lines joined with LF
	id   string // last event ID in force
}

// sseParser reads text/event-stream: lines ended by CRLF, LF or CR; a
// leading BOM dropped; "event", "data" (multi-line), "id" and "retry"
// fields; comments (":…", heartbeats) and unknown fields ignored; an
// event dispatched at each blank line when it has data. Lines and events
// are bounded; an unterminated event at EOF is discarded.
type sseParser struct {
	r        *bufio.Reader
	maxLine  int
	maxEvent int

	line    []byte
	skipLF  bool // the previous line ended with CR: a following LF belongs to it
	started bool // the BOM check is done

	name    string
	data    strings.Builder
	hasData bool
	lastID  string
	retry   time.Duration
}

// errSSETooLarge reports an oversized line or event.
var errSSETooLarge = errors.New("event stream line or event exceeds the configured bound")

func newSSEParser(r io.Reader, maxEvent int) *sseParser {
	size := 64 << 10
	if maxEvent < size {
		size = max(maxEvent, 16)
	}
	return &sseParser{r: bufio.NewReaderSize(r, size), maxLine: maxEvent + 64, maxEvent: maxEvent}
}

// readLine returns the next line without its terminator. The slice is
// valid until the next call.
func (p *sseParser) readLine() ([]byte, error) {
	if p.skipLF {
		p.skipLF = false
		b, err := p.r.Peek(1)
		if err != nil {
			return nil, err
		}
		if b[0] == '\n' {
			_, _ = p.r.Discard(1)
		}
	}
	if !p.started {
		p.started = true
		if b, err := p.r.Peek(3); err == nil && bytes.Equal(b, []byte{0xEF, 0xBB, 0xBF}) {
			_, _ = p.r.Discard(3)
		}
	}
	p.line = p.line[:0]
	for {
		if _, err := p.r.Peek(1); err != nil {
			return nil, err // an unterminated line at EOF is dropped with its event
		}
		buf, _ := p.r.Peek(p.r.Buffered())
		i := bytes.IndexAny(buf, "\r\n")
		n := i
		if i < 0 {
			n = len(buf)
		}
		if len(p.line)+n > p.maxLine {
			return nil, errSSETooLarge
		}
		p.line = append(p.line, buf[:n]...)
		if i < 0 {
			_, _ = p.r.Discard(n)
			continue
		}
		p.skipLF = buf[i] == '\r'
		_, _ = p.r.Discard(i + 1)
		return p.line, nil
	}
}

// next returns the next dispatched event. comment is called for every
// comment line (a heartbeat).
func (p *sseParser) next(comment func()) (sseEvent, error) {
	for {
		line, err := p.readLine()
		if err != nil {
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if !p.hasData {
				p.name = ""
				continue
			}
			ev := sseEvent{name: p.name, data: strings.TrimSuffix(p.data.String(), "\n"), id: p.lastID}
			if ev.name == "" {
				ev.name = "message"
			}
			p.name, p.hasData = "", false
			p.data.Reset()
			return ev, nil
		}
		if line[0] == ':' {
			if comment != nil {
				comment()
			}
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "event":
			p.name = string(value)
		case "data":
			if p.data.Len()+len(value)+1 > p.maxEvent {
				return sseEvent{}, errSSETooLarge
			}
			p.data.Write(value)
			p.data.WriteByte('\n')
			p.hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				p.lastID = string(value)
			}
		case "retry":
			if ms, ok := digits(value); ok {
				p.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// digits parses a non-empty run of ASCII digits (bounded to a day).
func digits(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 12 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, false
	}
	return min(n, 86_400_000), true
}

// sizeError wraps errSSETooLarge with the bound.
func sizeError(limit int) error {
	return fmt.Errorf("%w (%d bytes): %w", errSSETooLarge, limit, ErrResponseTooLarge)
}
