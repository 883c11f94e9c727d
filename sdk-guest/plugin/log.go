package plugin

import "strconv"

// Level is the severity of a log line.
type Level uint32

// Log levels, as passed to the host's log import.
const (
	LevelDebug Level = 0
	LevelInfo  Level = 1
	LevelWarn  Level = 2
	LevelError Level = 3
)

// String returns the level's name.
func (l Level) String() string {
	switch l {
	case LevelDebug:
		return "debug"
	case LevelInfo:
		return "info"
	case LevelWarn:
		return "warn"
	case LevelError:
		return "error"
	}
	return "level(" + strconv.FormatUint(uint64(l), 10) + ")"
}

// Log writes one line to the plugin's log on the host: a bounded ring buffer
// that apconnect doctor shows. The host cuts long lines and limits lines per
// call; logging never reaches the MCP stream.
func Log(level Level, msg string) { writeLog(level, msg) }

// Logf formats and writes one log line.
func Logf(level Level, format string, args ...any) { writeLog(level, sprintf(format, args)) }
