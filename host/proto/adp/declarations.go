package adp

import (
	"context"
	"fmt"
	"slices"

	"apconnect/host/text"
)

// Declaration is one type declaration (12.4, 12.5): an inline definition, a
// registered pack import ({"use": …}) or an external pack import ({"pack":
// …, "digest": …}), with an optional subset and per-type overrides.
type Declaration struct {
	// Def is the inline definition; nil for a pack import.
	Def *TypeDef
	// Use is a registered pack id.
	Use string
	// Pack is an external pack reference.
	Pack *PackRef
	// Types is the imported subset; nil imports every type of the pack.
	Types []string
	// Overrides adjust imported types by name.
	Overrides map[string]Override
}

// Override adjusts an imported type (12.5). It cannot change kind or schema.
type Override struct {
	Roles          []Role     // replaces the sender roles; nil keeps them
	Instructions   *string    // replaces the instructions; nil keeps them
	Status         TypeStatus // replaces the status; "" keeps it
	RateHint       int64      // replaces rate_hint; 0 keeps it
	MaxPayloadHint int64      // replaces max_payload_hint; 0 keeps it
}

// ParseDeclaration reads one type declaration, validating it against the
// kernel schema's typeDef (when it has a "type" member) or packImport. A
// malformed declaration is invalid_event at pointer, with the schema
// violations as data. A definition carrying the 0f87fee drafts' "version"
// is malformed.
func ParseDeclaration(v any, pointer string) (*Declaration, error) {
	return parseDeclaration(current, v, pointer)
}

// parseDeclaration is ParseDeclaration under dialect d.
func parseDeclaration(dl dialect, v any, pointer string) (*Declaration, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, newError(CodeInvalidEvent, pointer, "a type declaration must be a JSON object")
	}
	if _, inline := m["type"]; inline {
		if err := validateKernelAs(dl, "typeDef", m, CodeInvalidEvent, pointer); err != nil {
			return nil, err
		}
		if dl == current && IsBlank(str(m, "title")) {
			return nil, newError(CodeInvalidEvent, pointer+"/title", "title must not be blank")
		}
		def := typeDefFromValue(m)
		return &Declaration{Def: &def}, nil
	}
	// A subset naming a type twice is a conflict (as the reference SDK
	// reports it), not a shape error.
	if types, ok := m["types"].([]any); ok {
		seen := map[string]bool{}
		for i, t := range types {
			if s, ok := t.(string); ok && seen[s] {
				return nil, newError(CodeTypeConflict, fmt.Sprintf("%s/types/%d", pointer, i), "the subset names %q twice", text.Truncate(s, 80))
			}
			if s, ok := t.(string); ok {
				seen[s] = true
			}
		}
	}
	if err := validateKernelAs(dl, "packImport", m, CodeInvalidEvent, pointer); err != nil {
		return nil, err
	}
	d := &Declaration{Use: str(m, "use")}
	if u := str(m, "pack"); u != "" {
		d.Pack = &PackRef{URL: u, Digest: str(m, "digest")}
	}
	if _, ok := m["types"]; ok {
		d.Types = stringList(m, "types")
	}
	if ov, ok := m["overrides"].(map[string]any); ok {
		d.Overrides = map[string]Override{}
		for name, x := range ov {
			om := x.(map[string]any)
			var o Override
			if _, ok := om["roles"]; ok {
				for _, r := range stringList(om, "roles") {
					o.Roles = append(o.Roles, Role(r))
				}
			}
			if s, ok := om["instructions"].(string); ok {
				o.Instructions = &s
			}
			o.Status = TypeStatus(str(om, "status"))
			o.RateHint, _ = intMember(om, "rate_hint")
			o.MaxPayloadHint, _ = intMember(om, "max_payload_hint")
			d.Overrides[name] = o
		}
	}
	return d, nil
}

// apply returns def adjusted by the override.
func (o Override) apply(def TypeDef) TypeDef {
	if o.Roles != nil {
		def.Roles = slices.Clone(o.Roles)
	}
	if o.Instructions != nil {
		def.Instructions = *o.Instructions
	}
	if o.Status != "" {
		def.Status = o.Status
	}
	if o.RateHint > 0 {
		def.RateHint = o.RateHint
	}
	if o.MaxPayloadHint > 0 {
		def.MaxPayloadHint = o.MaxPayloadHint
	}
	return def
}

// materialized is the outcome of one declaration: the definitions it brings
// and, for a pack import, the import to remember.
type materialized struct {
	defs    []TypeDef
	pointer string
	imp     *PackImport
}

// materialize resolves a declaration into type definitions under dialect
// dl: inline definitions pass the type schema profile; pack imports are
// resolved (registered from the bundled copy, external through the rules'
// resolver with digest check, taking the pack whose id is the import URL),
// their types checked for duplicates, subset and overrides applied. limits
// bounds schema size (zero limits when applying an accepted record).
func (r *Rules) materialize(ctx context.Context, dl dialect, d *Declaration, pointer string, limits Limits) (*materialized, error) {
	if d.Def != nil {
		if err := CheckTypeSchema(d.Def.Schema, limits, r.schemas()); err != nil {
			return nil, withPointerPrefix(err, pointer+"/schema")
		}
		return &materialized{defs: []TypeDef{d.Def.clone()}, pointer: pointer}, nil
	}
	var pool []TypeDef
	imp := &PackImport{Use: d.Use}
	switch {
	case d.Use != "":
		p, ok := RegisteredPack(d.Use)
		if !ok {
			return nil, newError(CodePackUnavailable, pointer+"/use", "%q is not a registered pack of this host", text.Truncate(d.Use, 80))
		}
		pool = p.Types
		for i := range pool {
			pool[i].Registered = d.Use
		}
	case d.Pack != nil:
		_, doc, err := r.resolveExternalPack(ctx, dl, *d.Pack)
		if err != nil {
			e := *AsError(err)
			if e.Pointer != "" {
				e.Message = "pack document at " + e.Pointer + ": " + e.Message
			}
			e.Pointer = pointer + "/pack"
			return nil, &e
		}
		pack := doc.lookup(d.Pack.URL)
		switch {
		case pack != nil:
			for _, t := range pack.Types {
				pool = append(pool, t.clone())
			}
		case dl == historical:
			// The 0f87fee drafts took every type of the document.
			for _, p := range doc.Packs {
				for _, t := range p.Types {
					pool = append(pool, t.clone())
				}
			}
		default:
			return nil, newError(CodePackUnavailable, pointer+"/pack", "the pack document has no pack whose id is the import URL %s", text.Truncate(d.Pack.URL, 200))
		}
		imp.Pack, imp.Digest = d.Pack.URL, d.Pack.Digest
	default:
		return nil, newError(CodeInvalidEvent, pointer, "a pack import needs \"use\" or \"pack\" and \"digest\"")
	}
	seen := map[string]bool{}
	for _, t := range pool {
		if seen[t.Type] {
			return nil, newError(CodeTypeConflict, pointer, "the imported pack defines %q twice", t.Type)
		}
		seen[t.Type] = true
	}
	for i, name := range d.Types {
		if !seen[name] {
			return nil, newError(CodeTypeConflict, fmt.Sprintf("%s/types/%d", pointer, i), "the pack does not define %q", text.Truncate(name, 80))
		}
	}
	for _, name := range sortedKeys(d.Overrides) {
		if !seen[name] || (d.Types != nil && !slices.Contains(d.Types, name)) {
			return nil, newError(CodeTypeConflict, pointer+"/overrides/"+text.EscapePointer(name), "the override names %q, which this import does not bring", text.Truncate(name, 80))
		}
	}
	var defs []TypeDef
	for _, t := range pool {
		if d.Types != nil && !slices.Contains(d.Types, t.Type) {
			continue
		}
		if o, ok := d.Overrides[t.Type]; ok {
			t = o.apply(t)
		}
		defs = append(defs, t)
		imp.Types = append(imp.Types, t.Type)
	}
	return &materialized{defs: defs, pointer: pointer, imp: imp}, nil
}

// declare adds materialized declarations to a registry under the 12.4
// conflict rules: at genesis a type name may appear only once across all
// declarations; later, a redefinition must keep the type's kind. maxTypes
// (0: none) bounds the resulting registry. It returns a new registry.
func declare(reg Registry, decls []*materialized, genesis bool, maxTypes int) (Registry, error) {
	out := reg.clone()
	seen := map[string]bool{}
	for _, m := range decls {
		for _, def := range m.defs {
			if seen[def.Type] {
				return nil, newError(CodeTypeConflict, m.pointer, "type %q is declared twice", def.Type)
			}
			seen[def.Type] = true
			if old, ok := out.Lookup(def.Type); ok {
				if genesis {
					return nil, newError(CodeTypeConflict, m.pointer, "type %q is declared twice", def.Type)
				}
				if old.Kind != def.Kind {
					return nil, newError(CodeTypeConflict, m.pointer, "redefinition of %q changes its kind from %s to %s", def.Type, old.Kind, def.Kind)
				}
				*old = def.clone()
				continue
			}
			out = append(out, def.clone())
		}
	}
	if maxTypes > 0 && len(out) > maxTypes {
		return nil, newError(CodeRateLimited, "", "a room may define at most %d types; this declaration makes %d", maxTypes, len(out))
	}
	return out, nil
}
