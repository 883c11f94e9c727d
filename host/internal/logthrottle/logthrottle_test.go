package logthrottle

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestBurstThenOnePerInterval(t *testing.T) {
	th := New(time.Second, 3)
	start := time.Unix(1_800_000_000, 0)
	allowed := 0
	var reported uint64
	// 1000 lines within one second: the burst, nothing else.
	for i := range 1000 {
		ok, n := th.allowAt(start.Add(time.Duration(i) * time.Millisecond))
		if ok {
			allowed++
			reported += n
		}
	}
	if allowed != 3 || reported != 0 || th.Suppressed() != 997 {
		t.Fatalf("allowed %d, reported %d, held %d", allowed, reported, th.Suppressed())
	}
	// Half a second later (1.5 tokens refilled since the burst) one line
	// goes through and carries the count; the next has to wait.
	ok, n := th.allowAt(start.Add(1500 * time.Millisecond))
	if !ok || n != 997 || th.Suppressed() != 0 {
		t.Fatalf("after the interval: %v %d %d", ok, n, th.Suppressed())
	}
	if ok, _ := th.allowAt(start.Add(1501 * time.Millisecond)); ok {
		t.Fatal("a second line within the interval")
	}
	if ok, n := th.allowAt(start.Add(2600 * time.Millisecond)); !ok || n != 1 {
		t.Fatalf("%v %d", ok, n)
	}
}

func TestLogAddsTheCount(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	th := New(time.Hour, 2)
	for range 50 {
		th.Log(context.Background(), log, slog.LevelWarn, "bad item", slog.String("kind", "x"))
	}
	if lines := strings.Count(buf.String(), "\n"); lines != 2 {
		t.Fatalf("%d lines:\n%s", lines, buf.String())
	}
	if th.Suppressed() != 48 {
		t.Fatalf("held %d", th.Suppressed())
	}
	// A disabled level neither logs nor counts.
	th.Log(context.Background(), log, slog.LevelDebug, "quiet")
	if th.Suppressed() != 48 {
		t.Fatal("a disabled line was counted")
	}
	th.lim.SetLimit(1e9) // let the next line through
	th.Log(context.Background(), log, slog.LevelWarn, "bad item")
	if !strings.Contains(buf.String(), "suppressed=48") {
		t.Fatalf("no count:\n%s", buf.String())
	}
}
