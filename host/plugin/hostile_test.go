package plugin_test

import (
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

// These tests load real WebAssembly modules that attack the host: the SDK
// test plugin (testdata/full) for what Go code can do, and testdata/raw for
// ABI misuse the SDK would never commit.

func TestInfiniteLoopIsStoppedAtTheDeadline(t *testing.T) {
	p := loadFull(t, hostileLimits)
	start := time.Now()
	_, err := p.CallTool(ctx(), "loop", nil, nil)
	elapsed := time.Since(start)
	wantCode(t, err, plugin.CodeTimeout, "300ms", "instance was closed")
	if elapsed < 300*time.Millisecond || elapsed > 2*time.Second {
		t.Errorf("stopped after %v", elapsed)
	}
	healthy(t, p)
	// Instances ready for the two loops below (a call that finds none
	// creates one within its own deadline: corpus case slow_initialize).
	if err := p.Warm(ctx(), 2); err != nil {
		t.Fatal(err)
	}

	// Validators and watchers get 50 ms.
	start = time.Now()
	_, err = p.ValidateEvent(ctx(), plugin.Proposal{Type: "demo.loop", Payload: map[string]any{}}, room())
	wantCode(t, err, plugin.CodeTimeout, "50ms")
	_, err = p.Watch(ctx(), []plugin.Record{{Seq: 1, EventID: eventA, Type: "demo.loop", AcceptedAt: 1}}, room())
	wantCode(t, err, plugin.CodeTimeout, "50ms")
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("two 50 ms deadlines took %v", elapsed)
	}
	healthy(t, p)
	h := p.Health(0)
	if h.FailuresByCode["plugin_timeout"] != 3 || h.DiscardedInstances != 3 || h.LastErrorCode != plugin.CodeTimeout {
		t.Errorf("health %+v", h)
	}
}

func TestHostKeepsServingDuringALoop(t *testing.T) {
	p := loadFull(t, plugin.Limits{ToolTimeout: time.Second, MaxInstances: 2})
	var wg sync.WaitGroup
	wg.Add(1)
	loopErr := make(chan error, 1)
	go func() {
		defer wg.Done()
		_, err := p.CallTool(ctx(), "loop", nil, nil)
		loopErr <- err
	}()
	time.Sleep(100 * time.Millisecond) // the loop holds one instance
	start := time.Now()
	for range 5 {
		healthy(t, p)
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("calls beside the loop took %v", d)
	}
	select {
	case err := <-loopErr:
		t.Fatalf("the loop ended early: %v", err)
	default:
	}
	wg.Wait()
	wantCode(t, <-loopErr, plugin.CodeTimeout)
}

func TestCallerCancellationStopsTheGuest(t *testing.T) {
	p := loadFull(t, plugin.Limits{ToolTimeout: 10 * time.Second})
	c, cancel := contextWithTimeout(100 * time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.CallTool(c, "loop", nil, nil)
	wantCode(t, err, plugin.CodeCanceled)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	healthy(t, p)
	if h := p.Health(0); h.Failures != 0 {
		t.Errorf("a cancellation by the caller counted as a plugin failure: %+v", h)
	}
}

func TestMemoryBombIsCapped(t *testing.T) {
	// The deadline is generous: filling 32 MiB takes well under the default
	// 2 s on an idle machine but not always under a loaded -race run, and
	// this test is about the memory cap, not the clock.
	p := loadFull(t, plugin.Limits{MemoryBytes: 32 << 20, ToolTimeout: 60 * time.Second})
	_, err := p.CallTool(ctx(), "membomb", nil, nil)
	wantCode(t, err, plugin.CodeTrap, "out of memory")
	healthy(t, p)
	h := p.Health(-1)
	if h.DiscardedInstances != 1 {
		t.Errorf("discarded %d", h.DiscardedInstances)
	}
	found := false
	for _, l := range h.Log {
		found = found || (l.Source == "stderr" && strings.Contains(l.Text, "out of memory"))
	}
	if !found {
		t.Errorf("the crash is not in the log: %+v", h.Log)
	}
}

func TestPanicDiscardsTheInstance(t *testing.T) {
	p := loadFull(t, plugin.Limits{})
	_, err := p.CallTool(ctx(), "panic", nil, nil)
	wantCode(t, err, plugin.CodePanic, "assignment to entry in nil map")
	healthy(t, p)
	_, err = p.ValidateEvent(ctx(), plugin.Proposal{Type: "demo.panic", Payload: map[string]any{}}, room())
	wantCode(t, err, plugin.CodePanic, "validator exploded")
	healthy(t, p)
	if h := p.Health(0); h.DiscardedInstances != 2 || h.FailuresByCode["plugin_panic"] != 2 {
		t.Errorf("health %+v", h)
	}
}

func TestExitIsATrap(t *testing.T) {
	p := loadFull(t, plugin.Limits{})
	_, err := p.CallTool(ctx(), "exit", nil, nil)
	wantCode(t, err, plugin.CodeTrap, "exited with code 3")
	healthy(t, p)
}

func TestOversizedOutputIsRefusedBeforeCopying(t *testing.T) {
	p := loadFull(t, plugin.Limits{MaxOutputBytes: 64 << 10})
	if got := callText(t, p, "bigout", `{"n":1000}`); len(got) != 1000 {
		t.Fatalf("small output: %d bytes", len(got))
	}
	_, err := p.CallTool(ctx(), "bigout", json.RawMessage(`{"n":100000}`), nil)
	wantCode(t, err, plugin.CodeOutputTooLarge, "exceeds the cap of 65536 bytes")
	healthy(t, p)

	raw := loadRaw(t)
	_, err = raw.CallTool(ctx(), "huge", nil, nil)
	wantCode(t, err, plugin.CodeOutputTooLarge, "536870912 bytes")
}

func TestOversizedInputIsRefused(t *testing.T) {
	p := loadFull(t, plugin.Limits{MaxInputBytes: 64 << 10})
	before := p.Health(0).Calls
	_, err := p.CallTool(ctx(), "tally", json.RawMessage(`{"blob":"`+strings.Repeat("x", 70000)+`"}`), nil)
	wantCode(t, err, plugin.CodeInputTooLarge)
	if h := p.Health(0); h.DiscardedInstances != 0 || h.Calls != before+1 {
		t.Errorf("health %+v", h)
	}
}

func loadRaw(t *testing.T) *plugin.Plugin {
	return plugintest.Load(t, plugintest.Build(t, rawDir), plugin.AllGrants())
}

func TestMalformedOutputIsRefused(t *testing.T) {
	p := loadRaw(t)
	cases := []struct {
		tool  string
		code  plugin.Code
		frags []string
	}{
		{"malformed", plugin.CodeInvalidOutput, []string{"not strict I-JSON"}},
		{"dupkey", plugin.CodeInvalidOutput, []string{"duplicate"}},
		{"badutf8", plugin.CodeInvalidOutput, []string{"UTF-8"}},
		{"deep", plugin.CodeInvalidOutput, []string{"deeper than 32"}},
		{"resource", plugin.CodeInvalidOutput, []string{"/content/0"}},
		{"double", plugin.CodeInvalidOutput, []string{"output called twice"}},
		{"oob", plugin.CodeInvalidOutput, []string{"outside guest memory"}},
		{"nooutput", plugin.CodeInvalidOutput, []string{"without output"}},
		{"badstatus", plugin.CodeInvalidOutput, []string{"status 7"}},
		{"trap", plugin.CodeTrap, []string{"nil pointer dereference"}},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			_, err := p.CallTool(ctx(), c.tool, nil, nil)
			wantCode(t, err, c.code, c.frags...)
		})
	}
	h := p.Health(0)
	if h.DiscardedInstances != uint64(len(cases)) {
		t.Errorf("discarded %d instances for %d failures", h.DiscardedInstances, len(cases))
	}
	// A plugin's own error envelope keeps the instance.
	_, err := p.CallTool(ctx(), "errorenv", nil, nil)
	wantCode(t, err, plugin.CodeGuestError, "busy: try later")
	if p.Health(0).DiscardedInstances != h.DiscardedInstances {
		t.Error("an error envelope discarded the instance")
	}
	// A watch result naming a record outside the batch is refused whole.
	_, err = p.Watch(ctx(), []plugin.Record{{Seq: 1, EventID: eventA, Type: "demo.raw", AcceptedAt: 1}}, room())
	wantCode(t, err, plugin.CodeInvalidOutput, "seq 999999")
}

func TestLogIsBounded(t *testing.T) {
	raw := loadRaw(t)
	callText(t, raw, "loglong", `{}`)
	h := raw.Health(-1)
	last := h.Log[len(h.Log)-1]
	if last.Source != "log" || last.Level != "warn" || len(last.Text) != 512 {
		t.Errorf("long line: %+v", last)
	}

	p := loadFull(t, plugin.Limits{LogLines: 10})
	callText(t, p, "log", `{}`)
	h = p.Health(-1)
	if len(h.Log) != 10 || h.LogDropped == 0 {
		t.Errorf("%d lines kept, %d dropped", len(h.Log), h.LogDropped)
	}
	var sources []string
	p2 := loadFull(t, plugin.Limits{})
	callText(t, p2, "log", `{}`)
	for _, l := range p2.Health(-1).Log[:3] {
		sources = append(sources, l.Source+":"+l.Text)
	}
	if strings.Join(sources, "|") != "stdout:to stdout|stderr:to stderr|log:to the log" {
		t.Errorf("log %v", sources)
	}
}

func TestRefusedContent(t *testing.T) {
	p := loadFull(t, plugin.Limits{})
	cases := map[string]string{
		"ui":   "ui:// resource URI",
		"jwt":  "JWT",
		"pem":  "PEM private key",
		"seed": `under "seed" looks like a credential`,
		"html": "<script>",
		"meta": "_meta",
	}
	for tool, frag := range cases {
		t.Run(tool, func(t *testing.T) {
			_, err := p.CallTool(ctx(), tool, nil, nil)
			wantCode(t, err, plugin.CodeRefusedContent, frag)
		})
	}
	healthy(t, p)
}

func TestNoFilesEnvironmentOrNetwork(t *testing.T) {
	p := loadFull(t, plugin.Limits{})
	if got := callText(t, p, "readfile", `{}`); got != "/etc/passwd:true /:true .:true /proc/self/environ:true readdir:0:true write:true" {
		t.Errorf("files: %s", got)
	}
	res, err := p.CallTool(ctx(), "env", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !equalJSON(res.Structured, map[string]any{"args": 0, "environ": 0, "home": "", "path": ""}) {
		t.Errorf("env: %v", res.Structured)
	}
	// A real listener on the host: the guest must not reach it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	got := strings.Fields(callText(t, p, "net", `{"addr":"`+l.Addr().String()+`"}`))
	if len(got) != 3 || got[0] != "dial:true" || got[1] != "lookup:true" || !strings.HasPrefix(got[2], "listen:") {
		t.Errorf("network: %v", got)
	}
	// Listen may succeed inside the guest: Go's wasip1 port has an
	// in-process fake network. It is not a host socket.
	t.Logf("guest %s (in-process fake network)", got[2])
	select {
	case <-accepted:
		t.Error("the guest connected to a host socket")
	case <-time.After(100 * time.Millisecond):
	}
}

func TestNoRealClock(t *testing.T) {
	hostNow := time.UnixMilli(1779753700000)
	rt := plugintest.NewRuntime(t, plugin.Options{Now: func() time.Time { return hostNow }})
	wasm := plugintest.Build(t, fullDir)
	var rands []string
	for range 2 {
		p := plugintest.LoadWith(t, rt, wasm, allGrants, plugin.Limits{})
		start := time.Now()
		res, err := p.CallTool(ctx(), "clock", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := res.Structured
		unix, _ := s["unix_ms"].(json.Number).Int64()
		slept, _ := s["slept_ms"].(json.Number).Int64()
		// wazero's fake wall clock starts at 2022-01-01 and ticks 1 ms per read.
		if unix < 1640995200000 || unix > 1640995200000+60000 {
			t.Errorf("guest wall clock %v", time.UnixMilli(unix).UTC())
		}
		if s["now_ms"] != json.Number("1779753700000") {
			t.Errorf("now_ms %v", s["now_ms"])
		}
		// A 10 s sleep returns at once (inside the 2 s deadline) on the fake
		// clock, which the guest sees advance by at least 10 s.
		if slept < 10000 || time.Since(start) > 2*time.Second {
			t.Errorf("sleep: guest saw %d ms in %v", slept, time.Since(start))
		}
		rands = append(rands, s["rand"].(string))
	}
	if rands[0] != rands[1] {
		t.Errorf("randomness differs between fresh instances: %v", rands)
	}
}

func TestConcurrentCallsShareTheBoundedPool(t *testing.T) {
	p := loadFull(t, plugin.Limits{MaxInstances: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := p.CallTool(ctx(), "echo", json.RawMessage(`{"text":"`+strings.Repeat("x", i)+`"}`), nil)
			if err == nil && res.Content[0].Text != "echo: "+strings.Repeat("x", i) {
				err = errorString("wrong answer " + res.Content[0].Text)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := p.Health(0).Instances; n < 1 || n > 2 {
		t.Errorf("%d instances", n)
	}
}

func TestClosedPlugin(t *testing.T) {
	p := loadFull(t, plugin.Limits{})
	if err := p.Close(ctx()); err != nil {
		t.Fatal(err)
	}
	_, err := p.CallTool(ctx(), "echo", json.RawMessage(`{"text":"x"}`), nil)
	wantCode(t, err, plugin.CodeClosed)
	if p.Health(0).Loaded {
		t.Error("a closed plugin reports loaded")
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
