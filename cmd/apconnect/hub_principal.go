package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"apconnect/host/hub"
	"apconnect/host/identity"
)

// principalUsage is the usage of `apconnect hub principal`.
const principalUsage = `hub principal put --data DIR --name NAME --controller AGENT_ID [--controller AGENT_ID …]
       apconnect hub principal put --data DIR --name NAME --file DOC.json
       apconnect hub principal list --data DIR
       apconnect hub principal retire --data DIR --name NAME --controller AGENT_ID`

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// runPrincipal is `apconnect hub principal`: the principals the hub hosts
// at {origin}/principals/NAME (Agent Delegation), kept in its data
// directory beside a running hub.
func runPrincipal(ctx context.Context, e *env, dataFlag string, args []string) error {
	if len(args) == 0 {
		return usageError{"principal needs a subcommand: put, list or retire"}
	}
	switch args[0] {
	case "put":
		return runPrincipalPut(ctx, e, dataFlag, args[1:])
	case "list":
		return runPrincipalList(ctx, e, dataFlag, args[1:])
	case "retire":
		return runPrincipalRetire(ctx, e, dataFlag, args[1:])
	}
	return usageError{fmt.Sprintf("principal: unknown subcommand %q (use put, list or retire)", args[0])}
}

// principalFlags parses the flags of one principal subcommand.
func principalFlags(name, dataFlag string, args []string, extra func(fs *flag.FlagSet)) (data, pname string, err error) {
	fs := flag.NewFlagSet("apconnect hub principal "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	d := fs.String("data", dataFlag, "the hub's data directory (default $XDG_DATA_HOME/apconnect/hub)")
	n := fs.String("name", "", "the principal's name: its URL is {hub origin}/principals/NAME")
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return "", "", usageError{"principal " + name + ": " + err.Error()}
	}
	if fs.NArg() > 0 {
		return "", "", usageError{"principal " + name + " takes no arguments besides its flags"}
	}
	return *d, *n, nil
}

func runPrincipalPut(ctx context.Context, e *env, dataFlag string, args []string) error {
	var controllers stringList
	var file string
	data, name, err := principalFlags("put", dataFlag, args, func(fs *flag.FlagSet) {
		fs.Var(&controllers, "controller", "Agent ID to add as an unrestricted delegating controller, valid from now (repeatable)")
		fs.StringVar(&file, "file", "", "a principal document (JSON) whose controllers, retired controllers and aliases are taken as written (- for stdin)")
	})
	if err != nil {
		return err
	}
	if name == "" || (len(controllers) == 0) == (file == "") {
		return usageError{"principal put needs --name NAME and either --controller AGENT_ID (repeatable) or --file DOC.json"}
	}
	for _, c := range controllers {
		if !identity.ValidAgentID(c) {
			return usageError{fmt.Sprintf("--controller %q is not a canonical Agent ID (did:agent:…)", c)}
		}
	}
	dir, err := hubDataDir(e, data)
	if err != nil {
		return err
	}
	var p *hub.Principal
	var added []string
	if file != "" {
		doc, err := readPrincipalFile(e, file)
		if err != nil {
			return err
		}
		p, err = hub.PutPrincipal(ctx, dir, name, doc)
		if err != nil {
			return fmt.Errorf("put %s: %w", name, err)
		}
	} else {
		p, added, err = hub.AddPrincipalControllers(ctx, dir, name, controllers)
		if err != nil {
			return fmt.Errorf("put %s: %w", name, err)
		}
		for _, c := range controllers {
			if !slices.Contains(added, c) {
				fmt.Fprintf(e.stdout, "%s is a controller of %s already; left as it is\n", c, name)
			}
		}
	}
	fmt.Fprintf(e.stdout, "principal %s: controllers %d, retired %d, updated_at %d\n", name,
		len(p.Document.Controllers), len(p.Document.RetiredControllers), p.Document.UpdatedAt)
	printPrincipalURL(e, p)
	return nil
}

func runPrincipalList(ctx context.Context, e *env, dataFlag string, args []string) error {
	fs := flag.NewFlagSet("apconnect hub principal list", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	data := fs.String("data", dataFlag, "the hub's data directory (default $XDG_DATA_HOME/apconnect/hub)")
	if err := fs.Parse(args); err != nil {
		return usageError{"principal list: " + err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{"principal list takes no arguments besides --data"}
	}
	dir, err := hubDataDir(e, *data)
	if err != nil {
		return err
	}
	list, err := hub.ListPrincipals(ctx, dir)
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "no principals are hosted")
		return nil
	}
	for _, p := range list {
		url := p.URL
		if url == "" {
			url = "{hub origin}/principals/" + p.Name
		}
		fmt.Fprintf(e.stdout, "%s\t%s\tcontrollers=%d\tretired=%d\tupdated_at=%d\n", p.Name, url,
			len(p.Document.Controllers), len(p.Document.RetiredControllers), p.Document.UpdatedAt)
	}
	return nil
}

func runPrincipalRetire(ctx context.Context, e *env, dataFlag string, args []string) error {
	var controller string
	data, name, err := principalFlags("retire", dataFlag, args, func(fs *flag.FlagSet) {
		fs.StringVar(&controller, "controller", "", "Agent ID of the current controller to retire, now")
	})
	if err != nil {
		return err
	}
	if name == "" || controller == "" {
		return usageError{"principal retire needs --name NAME and --controller AGENT_ID"}
	}
	dir, err := hubDataDir(e, data)
	if err != nil {
		return err
	}
	p, err := hub.RetirePrincipalController(ctx, dir, name, controller)
	if err != nil {
		return fmt.Errorf("retire %s: %w", name, err)
	}
	fmt.Fprintf(e.stdout, "retired controller %s of principal %s at %d (events it signed before stay valid)\n", controller, name, p.Document.UpdatedAt)
	printPrincipalURL(e, p)
	return nil
}

// printPrincipalURL says where the hub serves the principal.
func printPrincipalURL(e *env, p *hub.Principal) {
	if p.URL != "" {
		fmt.Fprintf(e.stdout, "served at %s\n", p.URL)
		return
	}
	fmt.Fprintf(e.stdout, "served at {hub origin}/principals/%s once a hub runs on this data directory\n", p.Name)
}

// readPrincipalFile reads a principal document: strict JSON, an object.
func readPrincipalFile(e *env, path string) (map[string]any, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(io.LimitReader(e.stdin, 1<<20+1))
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("--file: %w", err)
	}
	v, err := identity.ParseStrict(data)
	if err != nil {
		return nil, fmt.Errorf("--file %s: %w", path, err)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("--file %s: a principal document is a JSON object", path)
	}
	return doc, nil
}
