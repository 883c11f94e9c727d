// Command gendocs keeps the tool table in README.md in step with the tool
// catalog (schemas/tools, as served by package mcpserver).
//
// The table lives between the markers
//
//	<!-- BEGIN TOOLS -->
//	<!-- END TOOLS -->
//
// and is rewritten entirely; text outside the markers is never touched.
//
// Usage, from the repository root:
//
//	go run ./host/mcpserver/internal/gendocs -check README.md   # exit 1 on drift
//	go run ./host/mcpserver/internal/gendocs -write README.md   # update in place
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"apconnect/host/toolcatalog"
)

const (
	beginMarker = "<!-- BEGIN TOOLS -->"
	endMarker   = "<!-- END TOOLS -->"
	command     = "go run ./host/mcpserver/internal/gendocs -write README.md"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gendocs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	check := fs.String("check", "", "fail if the tool table in `FILE` is out of date")
	write := fs.String("write", "", "rewrite the tool table in `FILE`")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if (*check == "") == (*write == "") || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: gendocs -check FILE | -write FILE")
		return 2
	}
	file := *check + *write
	doc, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(stderr, "gendocs:", err)
		return 1
	}
	updated, err := splice(doc, []byte(table(toolcatalog.Infos())))
	if err != nil {
		fmt.Fprintf(stderr, "gendocs: %s: %v\n", file, err)
		return 1
	}
	if bytes.Equal(doc, updated) {
		return 0
	}
	if *check != "" {
		fmt.Fprintf(stderr, "gendocs: the tool table in %s is out of date; run: %s\n", file, command)
		return 1
	}
	info, err := os.Stat(file)
	if err != nil {
		fmt.Fprintln(stderr, "gendocs:", err)
		return 1
	}
	if err := os.WriteFile(file, updated, info.Mode().Perm()); err != nil {
		fmt.Fprintln(stderr, "gendocs:", err)
		return 1
	}
	fmt.Fprintf(stdout, "gendocs: updated the tool table in %s\n", file)
	return 0
}

// splice replaces whatever is between the markers of doc with block.
func splice(doc, block []byte) ([]byte, error) {
	b, e := bytes.Count(doc, []byte(beginMarker)), bytes.Count(doc, []byte(endMarker))
	if b != 1 || e != 1 {
		return nil, fmt.Errorf("want exactly one %s and one %s, found %d and %d", beginMarker, endMarker, b, e)
	}
	start := bytes.Index(doc, []byte(beginMarker)) + len(beginMarker)
	end := bytes.Index(doc, []byte(endMarker))
	if end < start {
		return nil, errors.New(endMarker + " comes before " + beginMarker)
	}
	var out bytes.Buffer
	out.Write(doc[:start])
	out.WriteString("\n")
	out.Write(block)
	out.Write(doc[end:])
	return out.Bytes(), nil
}

// table renders the Markdown tool table: one row per tool, sorted by name.
func table(tools []toolcatalog.ToolInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- Generated from schemas/tools by `%s`. Do not edit. -->\n\n", command)
	b.WriteString("| Tool | What it does | Kind | Required inputs |\n")
	b.WriteString("| --- | --- | --- | --- |\n")
	for _, t := range tools {
		req := "none"
		if len(t.Required) > 0 {
			req = "`" + strings.Join(t.Required, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", t.Name, cell(firstSentence(t.Description)), t.Access.Label(), req)
	}
	return b.String()
}

// firstSentence returns text up to the first period that ends a sentence: one
// followed by white space and an upper-case letter, or the end of the text.
// A period inside a token ("e.g. a", "did:agent:x.") does not end it.
func firstSentence(text string) string {
	text = strings.TrimSpace(text)
	runes := []rune(text)
	for i, r := range runes {
		if r != '.' {
			continue
		}
		j := i + 1
		for j < len(runes) && unicode.IsSpace(runes[j]) {
			j++
		}
		if j > i+1 && j < len(runes) && unicode.IsUpper(runes[j]) {
			return string(runes[:i+1])
		}
	}
	return text
}

// cell makes text safe inside one Markdown table cell.
func cell(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	return strings.ReplaceAll(text, "|", `\|`)
}
