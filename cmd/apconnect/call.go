package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/connector"
	"apconnect/host/mcpserver"
	"apconnect/host/toolcatalog"
)

// maxCallInput bounds the JSON arguments read from stdin.
const maxCallInput = 4 << 20

func init() {
	register(&command{
		name:    "call",
		summary: "call one tool from the shell as the operator; JSON in, JSON out",
		usage:   "call [--home DIR] [--agent NAME] TOOL [JSON|-]\n       apconnect call [--home DIR] [--agent NAME] --list [--json]",
		detail: `Calls one MCP tool of the connector, exactly as an agent would (the same
schemas, checks and results), and prints its structured result as JSON on
stdout. TOOL is a tool name, with or without the agent_protocols_ prefix;
JSON is its arguments as one JSON object (default {}), or - to read them from
stdin. A failed call prints {"error":{"code","message","data"}} and exits 1;
a usage error exits 2. Progress of long syncs is reported on stderr.

Calls of one identity from the shell share one connector session
("cli:<identity>"), so a write defaults its base to the head the previous
call showed, as it does for an agent. The passphrase, when the key has one,
comes from APCONNECT_PASSPHRASE, the passphrase_file or a terminal prompt.

--list lists the tools (with --json: their full definitions).`,
		example: `apconnect call --list
apconnect call identity_current
apconnect call room_open '{"host":"https://127.0.0.1:8443","room_id":"d8ftedhpqhsusbg001tg"}'
echo '{"room_id":"d8ftedhpqhsusbg001tg","unread_only":true}' | apconnect call room_timeline -`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env, []string) error {
			home := homeFlag(fs)
			agent := agentFlag(fs)
			list := fs.Bool("list", false, "list the tools instead of calling one")
			asJSON := fs.Bool("json", false, "with --list: print the tool definitions as JSON")
			level := fs.String("log-level", "warn", "log level on stderr: debug, info, warn or error")
			return func(ctx context.Context, e *env, args []string) error {
				if *list && len(args) > 0 {
					return usageError{"--list takes no tool"}
				}
				if !*list && (len(args) < 1 || len(args) > 2) {
					return usageError{"name one TOOL and at most one JSON argument object"}
				}
				if *asJSON && !*list {
					return usageError{"--json goes with --list"}
				}
				logger, err := newLogger(e.stderr, *level)
				if err != nil {
					return err
				}
				var raw json.RawMessage
				if !*list {
					if raw, err = callArguments(e, args[1:]); err != nil {
						return err
					}
				}
				go mcpserver.Preload()
				a, err := openAgent(ctx, *home, *agent, logger, true)
				if err != nil {
					return err
				}
				defer a.close()
				hb, stopBeat := a.beat(ctx, nil, connector.ProcessInfo{Command: "call", Transport: "cli"})
				defer stopBeat()
				cs, err := cliSession(ctx, a, e, hb)
				if err != nil {
					return err
				}
				defer cs.Close()
				if *list {
					return listTools(ctx, e, cs, *asJSON)
				}
				return callTool(ctx, e, cs, args[0], raw)
			}
		},
	})
}

// callArguments reads the JSON argument object: the argument, stdin for
// "-", {} when absent.
func callArguments(e *env, rest []string) (json.RawMessage, error) {
	if len(rest) == 0 {
		return json.RawMessage("{}"), nil
	}
	text := rest[0]
	if text == "-" {
		b, err := io.ReadAll(io.LimitReader(e.stdin, maxCallInput+1))
		if err != nil {
			return nil, fmt.Errorf("read arguments from stdin: %w", err)
		}
		if len(b) > maxCallInput {
			return nil, usageError{"the arguments on stdin are larger than 4 MiB"}
		}
		text = string(b)
	}
	text = strings.TrimSpace(text)
	if text == "" {
		text = "{}"
	}
	if !json.Valid([]byte(text)) || !strings.HasPrefix(text, "{") {
		return nil, usageError{"the arguments must be one JSON object, e.g. '{\"room_id\":\"…\"}'"}
	}
	return json.RawMessage(text), nil
}

// cliSession serves the connector in-process and connects a client to it.
func cliSession(ctx context.Context, a *agentProcess, e *env, hb *connector.Heartbeat) (*mcp.ClientSession, error) {
	sess := connector.SessionID("cli:" + a.ident.Name)
	srv := mcpserver.New(a.conn, mcpserver.Options{Version: versionString(), Logger: a.log,
		SessionID: func(*mcp.ServerSession) connector.SessionID { return sess }})
	watchCalls(srv, hb)
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "apconnect-call", Version: versionString()}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			fmt.Fprintf(e.stderr, "progress: %s\n", r.Params.Message)
		},
	})
	return client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

// listTools prints the tools as a table or as JSON.
func listTools(ctx context.Context, e *env, cs *mcp.ClientSession, asJSON bool) error {
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(e.stdout, res.Tools)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tKIND\tWHAT IT DOES")
	for _, t := range res.Tools {
		kind := "plugin"
		if info, ok := toolcatalog.Info(t.Name); ok {
			kind = info.Access.Label()
		}
		what := t.Title
		if info, ok := toolcatalog.Info(t.Name); ok {
			what, _, _ = strings.Cut(info.Description, ". ")
			what = strings.TrimSuffix(what, ".")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, kind, what)
	}
	return tw.Flush()
}

// callTool calls one tool and prints its result.
func callTool(ctx context.Context, e *env, cs *mcp.ClientSession, name string, args json.RawMessage) error {
	if _, ok := toolcatalog.Info(name); !ok && !strings.HasPrefix(name, "agent_protocols_") {
		if _, ok := toolcatalog.Info("agent_protocols_" + name); ok {
			name = "agent_protocols_" + name
		}
	}
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken("call")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		if strings.Contains(err.Error(), "unknown tool") {
			return usageError{fmt.Sprintf("no tool %q (apconnect call --list lists them)", name)}
		}
		return err
	}
	if res.IsError {
		var body bytes.Buffer
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				body.WriteString(t.Text)
			}
		}
		var v any
		if json.Unmarshal(body.Bytes(), &v) != nil {
			v = map[string]any{"error": map[string]any{"code": "plugin_error", "message": body.String()}}
		}
		if err := printJSON(e.stdout, v); err != nil {
			return err
		}
		return exitError{1}
	}
	if res.StructuredContent != nil {
		return printJSON(e.stdout, res.StructuredContent)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text.WriteString(t.Text)
		}
	}
	return printJSON(e.stdout, map[string]any{"text": text.String()})
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
