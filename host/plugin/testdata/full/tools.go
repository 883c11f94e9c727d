package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"apconnect/sdk-guest/plugin"
	"apconnect/sdk-guest/plugin/stdlib"
)

var objectSchema = map[string]any{"type": "object"}

func tool(name, desc string, h plugin.ToolFunc) plugin.Tool {
	return plugin.Tool{Name: name, Description: desc, InputSchema: objectSchema, Handler: h}
}

var tools = []plugin.Tool{
	{
		Name:        "echo",
		Description: "Echoes its arguments and context.",
		InputSchema: map[string]any{
			"type":                 "object",
			"required":             []string{"text"},
			"properties":           map[string]any{"text": map[string]any{"type": "string", "maxLength": 100}},
			"additionalProperties": false,
		},
		OutputSchema: map[string]any{
			"type":     "object",
			"required": []string{"text", "now_ms"},
		},
		Handler: func(req *plugin.ToolRequest) (*plugin.ToolResult, error) {
			var args struct{ Text string }
			if err := stdlib.Bind(req, &args); err != nil {
				return nil, err
			}
			room := ""
			if req.Room != nil {
				room = req.Room.RoomID
			}
			self := ""
			if req.Self != nil {
				self = req.Self.AgentID
			}
			return &plugin.ToolResult{
				Content:    []plugin.Content{{Type: "text", Text: "echo: " + args.Text}},
				Structured: map[string]any{"text": args.Text, "now_ms": req.NowMS, "room": room, "self": self},
			}, nil
		},
	},
	tool("tally", "Counts votes.", func(req *plugin.ToolRequest) (*plugin.ToolResult, error) {
		return plugin.Text("no votes"), nil
	}),
	tool("fail", "Returns a tool error.", func(req *plugin.ToolRequest) (*plugin.ToolResult, error) {
		return nil, errors.New("the tally is unavailable")
	}),
	tool("propose", "Proposes a vote.", func(req *plugin.ToolRequest) (*plugin.ToolResult, error) {
		typ, _ := req.Arguments.Get("type").AsString()
		if typ == "" {
			typ = "demo.vote"
		}
		return &plugin.ToolResult{
			Content: []plugin.Content{{Type: "text", Text: "proposing a vote"}},
			Proposals: []plugin.Proposal{{
				Type:    typ,
				Payload: map[string]any{"poll_event_id": strings.Repeat("A", 43), "option": "yes"},
			}},
		}, nil
	}),
	tool("ui", "Returns an MCP Apps UI resource link.", func(*plugin.ToolRequest) (*plugin.ToolResult, error) {
		return plugin.Text("open ui://full/dashboard.html"), nil
	}),
	tool("jwt", "Leaks a token.", func(*plugin.ToolRequest) (*plugin.ToolResult, error) {
		return plugin.Text("token: eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"), nil
	}),
	tool("pem", "Leaks a key.", func(*plugin.ToolRequest) (*plugin.ToolResult, error) {
		return plugin.Text("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEI\n-----END PRIVATE KEY-----"), nil
	}),
	tool("seed", "Leaks a seed in structured output.", func(*plugin.ToolRequest) (*plugin.ToolResult, error) {
		return &plugin.ToolResult{Structured: map[string]any{"agent": map[string]any{"seed": strings.Repeat("q", 43)}}}, nil
	}),
	tool("html", "Returns active HTML.", func(*plugin.ToolRequest) (*plugin.ToolResult, error) {
		return plugin.Text(`<p>hi</p><script>alert(1)</script>`), nil
	}),
	tool("meta", "Returns MCP _meta.", func(*plugin.ToolRequest) (*plugin.ToolResult, error) {
		return &plugin.ToolResult{Structured: map[string]any{"_meta": map[string]any{"ui": map[string]any{"resourceUri": "x"}}}}, nil
	}),
	tool("readfile", "Tries to read files.", func(*plugin.ToolRequest) (*plugin.ToolResult, error) {
		var out []string
		for _, path := range []string{"/etc/passwd", "/", ".", "/proc/self/environ"} {
			_, err := os.ReadFile(path)
			out = append(out, fmt.Sprintf("%s:%v", path, err != nil))
		}
		entries, err := os.ReadDir("/")
		out = append(out, fmt.Sprintf("readdir:%d:%v", len(entries), err != nil))
		err = os.WriteFile("/tmp/apconnect-plugin-escape", []byte("x"), 0o600)
		out = append(out, fmt.Sprintf("write:%v", err != nil))
		return plugin.Text(strings.Join(out, " ")), nil
	}),
	tool("env", "Reads the environment and arguments.", func(*plugin.ToolRequest) (*plugin.ToolResult, error) {
		return &plugin.ToolResult{Structured: map[string]any{
			"environ": len(os.Environ()), "home": os.Getenv("HOME"), "path": os.Getenv("PATH"), "args": len(os.Args),
		}}, nil
	}),
	tool("net", "Tries the network: dials addr, resolves a name, listens.", func(req *plugin.ToolRequest) (*plugin.ToolResult, error) {
		addr, _ := req.Arguments.Get("addr").AsString()
		var out []string
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if c != nil {
			c.Write([]byte("escaped"))
			c.Close()
		}
		out = append(out, fmt.Sprintf("dial:%v", err != nil))
		_, err = net.LookupHost("example.com")
		out = append(out, fmt.Sprintf("lookup:%v", err != nil))
		// Go's wasip1 port answers Listen with an in-process fake network:
		// nothing outside the instance can reach it.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		listen := "error"
		if err == nil {
			listen = l.Addr().String()
			l.Close()
		}
		out = append(out, "listen:"+listen)
		return plugin.Text(strings.Join(out, " ")), nil
	}),
	tool("clock", "Reads the clock and randomness.", func(req *plugin.ToolRequest) (*plugin.ToolResult, error) {
		start := time.Now()
		time.Sleep(10 * time.Second)
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		return &plugin.ToolResult{Structured: map[string]any{
			"unix_ms":  time.Now().UnixMilli(),
			"slept_ms": time.Since(start).Milliseconds(),
			"now_ms":   req.NowMS,
			"rand":     hex.EncodeToString(b),
		}}, nil
	}),
	tool("loop", "Never returns.", func(*plugin.ToolRequest) (*plugin.ToolResult, error) {
		spin()
		return nil, nil
	}),
	tool("membomb", "Allocates without bound.", func(*plugin.ToolRequest) (*plugin.ToolResult, error) {
		var keep [][]byte
		for {
			b := make([]byte, 1<<20)
			b[0] = 1
			keep = append(keep, b)
		}
	}),
	tool("panic", "Panics.", func(*plugin.ToolRequest) (*plugin.ToolResult, error) {
		var m map[string]int
		m["boom"] = 1
		return nil, nil
	}),
	tool("bigout", "Returns n bytes of text.", func(req *plugin.ToolRequest) (*plugin.ToolResult, error) {
		n, _ := req.Arguments.Get("n").AsInt()
		return plugin.Text(strings.Repeat("x", int(n))), nil
	}),
	tool("exit", "Calls os.Exit.", func(*plugin.ToolRequest) (*plugin.ToolResult, error) {
		os.Exit(3)
		return nil, nil
	}),
	tool("log", "Writes to stdout, stderr and the log.", func(*plugin.ToolRequest) (*plugin.ToolResult, error) {
		fmt.Println("to stdout")
		fmt.Fprintln(os.Stderr, "to stderr")
		plugin.Log(plugin.LevelWarn, "to the log")
		for i := 0; i < 100; i++ {
			plugin.Logf(plugin.LevelDebug, "flood %d", i)
		}
		return plugin.Text("logged"), nil
	}),
}
