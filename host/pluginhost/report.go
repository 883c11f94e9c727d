package pluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"apconnect/host/config"
	"apconnect/host/plugin"
)

// Health reports. A plugin that fails at run time (a validator failing
// closed, a watcher skipped, a tool trapping) is reported to the agent by
// identity_current; for the operator, a running apconnect also writes its
// plugins' health to a small file in the state directory, which `apconnect
// doctor` reads.

// ReportDirName is the directory of health reports inside the state
// directory.
const ReportDirName = "plugin-health"

// ReportDir returns the health report directory of a config's home.
func ReportDir(cfg *config.Config) string { return filepath.Join(cfg.StateDir(), ReportDirName) }

// maxReportBytes bounds what ReadReports reads of one report.
const maxReportBytes = 1 << 20

// Report is one running apconnect's plugin health.
type Report struct {
	// Process names the process: its command and identity ("mcp alice").
	Process   string          `json:"process"`
	PID       int             `json:"pid"`
	WrittenAt time.Time       `json:"written_at"`
	Plugins   []plugin.Health `json:"plugins"`
}

var reportName = regexp.MustCompile(`[^a-z0-9_-]+`)

// ReportPath is the report file of one command and identity.
func ReportPath(cfg *config.Config, command, identity string) string {
	name := reportName.ReplaceAllString(strings.ToLower(command+"-"+identity), "_")
	return filepath.Join(ReportDir(cfg), name+".json")
}

// WriteReport writes the set's health (with the last 20 log lines of each
// plugin) to path atomically, mode 0600.
func (s *Set) WriteReport(path, process string, now time.Time) error {
	rep := Report{Process: process, PID: os.Getpid(), WrittenAt: now.UTC(), Plugins: s.Health(20)}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// failureCount is the total of the set's call failures.
func (s *Set) failureCount() uint64 {
	var n uint64
	for _, e := range s.Entries {
		if e.Plugin != nil {
			n += e.Plugin.Health(0).Failures
		}
	}
	return n
}

// KeepReport writes the set's report to path now, again every interval
// when a plugin failed since, and a last time when ctx ends; it returns
// when the last report is written. report, when set, gets each write
// error. Without plugins configured it writes nothing.
func (s *Set) KeepReport(ctx context.Context, path, process string, every time.Duration, report func(error)) {
	if s == nil || len(s.Registry.Plugins()) == 0 && len(s.Failures()) == 0 {
		return
	}
	write := func() {
		if err := s.WriteReport(path, process, time.Now()); err != nil && report != nil {
			report(err)
		}
	}
	write()
	last := s.failureCount()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			write()
			return
		case <-t.C:
			if n := s.failureCount(); n != last {
				last = n
				write()
			}
		}
	}
}

// ReadReports reads every report of a home, newest first. A report that
// cannot be read is skipped.
func ReadReports(cfg *config.Config) ([]Report, error) {
	dir := ReportDir(cfg)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Report
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".json" {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		var rep Report
		err = json.NewDecoder(io.LimitReader(f, maxReportBytes)).Decode(&rep)
		f.Close()
		if err == nil {
			out = append(out, rep)
		}
	}
	slices.SortFunc(out, func(a, b Report) int { return b.WrittenAt.Compare(a.WrittenAt) })
	return out, nil
}
