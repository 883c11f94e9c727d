package discourse

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"apconnect/host/engine"
	"apconnect/host/plugin"
	"apconnect/host/proto/adp"
	"apconnect/host/text"
)

// Plugin type packs. A room_create type declaration or a type.define
// payload may import a pack a plugin provides, {"use": "<name>/<version>"}
// with the optional "types" subset and "overrides" of ADP 12.5. Hosts know
// only the registered adp: packs, so the connector expands a plugin pack
// import into inline type definitions before anything is signed: the
// signed event carries the definitions, and every member's verifier sees
// them. Registered packs ("adp:…") and external packs ({"pack", "digest"})
// go to the host unchanged.

// overrideMembers are the members an override may set (ADP 12.5).
var overrideMembers = []string{"roles", "instructions", "status", "rate_hint", "max_payload_hint"}

// isPluginPackImport reports whether a declaration imports a pack by
// "use" that is not a registered ADP pack.
func isPluginPackImport(decl map[string]any) (string, bool) {
	if _, inline := decl["type"]; inline {
		return "", false
	}
	use, ok := decl["use"].(string)
	return use, ok && !strings.HasPrefix(use, "adp:")
}

// expandTypes returns room_create's type declarations with every plugin
// pack import replaced by its inline definitions.
func (c *Module) expandTypes(ctx context.Context, h *hostState, decls []map[string]any) ([]map[string]any, error) {
	var out []map[string]any
	for i, d := range decls {
		if _, ok := isPluginPackImport(d); !ok {
			out = append(out, d)
			continue
		}
		defs, err := c.expandPack(ctx, h, d, fmt.Sprintf("/types/%d", i))
		if err != nil {
			return nil, err
		}
		out = append(out, defs...)
	}
	return out, nil
}

// expandTypeDefine returns a type.define payload with a plugin pack import
// replaced by the one inline definition it brings (a type.define declares
// one type: a pack of several needs "types" naming one of them).
func (c *Module) expandTypeDefine(ctx context.Context, h *hostState, payload map[string]any) (map[string]any, error) {
	use, ok := isPluginPackImport(payload)
	if !ok {
		return payload, nil
	}
	defs, err := c.expandPack(ctx, h, payload, "/payload")
	if err != nil {
		return nil, err
	}
	if len(defs) != 1 {
		return nil, &engine.Error{Code: engine.CodeInvalidInput, Message: fmt.Sprintf("a type.define declares one type, and pack %s brings %d; "+
			"send one type.define per type with \"types\": [\"<type>\"], or import the pack in room_create", use, len(defs)),
			Data: map[string]any{"pointer": "/payload/types"}}
	}
	return engine.ObjectValue(defs[0])
}

// expandPack resolves one plugin pack import into inline definitions: the
// pack's types (the subset named by "types"), each adjusted by its
// override, each schema checked against the ADP type schema profile.
func (c *Module) expandPack(ctx context.Context, h *hostState, decl map[string]any, pointer string) ([]map[string]any, error) {
	use := decl["use"].(string)
	bad := func(at, format string, args ...any) error {
		return &engine.Error{Code: engine.CodeInvalidInput, Message: fmt.Sprintf(format, args...), Data: map[string]any{"pointer": pointer + at, "use": use}}
	}
	for k := range decl {
		if k != "use" && k != "types" && k != "overrides" {
			return nil, bad("/"+k, "a pack import by \"use\" has only use, types and overrides; %q is not allowed", k)
		}
	}
	if _, _, ok := strings.Cut(use, "/"); !ok {
		return nil, bad("/use", "a pack import names \"<name>/<version>\", e.g. example:standup/1.0; registered packs start with adp:")
	}
	if c.packs == nil {
		return nil, &engine.Error{Code: adp.CodePackUnavailable, Message: fmt.Sprintf("no plugin provides pack %q (registered packs start with adp:; plugin packs need a plugin granted \"packs\")", use),
			Data: map[string]any{"pointer": pointer + "/use", "use": use}}
	}
	pack, err := c.packs.Pack(ctx, use)
	if err != nil {
		data := map[string]any{"pointer": pointer + "/use", "use": use}
		if code := plugin.CodeOf(err); code != "" && code != plugin.CodeUnknown {
			data["plugin_code"] = string(code)
		}
		if plugin.CodeOf(err) == plugin.CodeUnknown {
			return nil, &engine.Error{Code: adp.CodePackUnavailable, Message: fmt.Sprintf("no plugin provides pack %q (registered packs start with adp:)", use), Data: data, Err: err}
		}
		return nil, &engine.Error{Code: adp.CodePackUnavailable, Message: fmt.Sprintf("pack %q could not be read from its plugin: %v", use, err), Data: data, Err: err}
	}
	byType := map[string]plugin.TypeDef{}
	for _, t := range pack.Types {
		byType[t.Type] = t
	}
	var subset []string
	if raw, ok := decl["types"]; ok {
		list, ok := raw.([]any)
		if !ok || len(list) == 0 {
			return nil, bad("/types", "types must be a non-empty array of type names")
		}
		for i, v := range list {
			s, _ := v.(string)
			if _, ok := byType[s]; !ok {
				return nil, &engine.Error{Code: adp.CodeTypeConflict, Message: fmt.Sprintf("pack %s does not define %q", use, s),
					Data: map[string]any{"pointer": fmt.Sprintf("%s/types/%d", pointer, i), "use": use}}
			}
			if slices.Contains(subset, s) {
				return nil, bad(fmt.Sprintf("/types/%d", i), "%q is listed twice", s)
			}
			subset = append(subset, s)
		}
	}
	overrides := map[string]map[string]any{}
	if raw, ok := decl["overrides"]; ok {
		m, ok := raw.(map[string]any)
		if !ok {
			return nil, bad("/overrides", "overrides must be an object of type name to override")
		}
		for name, v := range m {
			at := "/overrides/" + text.EscapePointer(name)
			if _, ok := byType[name]; !ok {
				return nil, &engine.Error{Code: adp.CodeTypeConflict, Message: fmt.Sprintf("pack %s does not define %q", use, name),
					Data: map[string]any{"pointer": pointer + at, "use": use}}
			}
			o, ok := v.(map[string]any)
			if !ok {
				return nil, bad(at, "an override must be an object")
			}
			for k := range o {
				if !slices.Contains(overrideMembers, k) {
					return nil, bad(at+"/"+k, "an override may set %s; not %q (kind and schema never change)", strings.Join(overrideMembers, ", "), k)
				}
			}
			overrides[name] = o
		}
	}
	var out []map[string]any
	for _, t := range pack.Types {
		if subset != nil && !slices.Contains(subset, t.Type) {
			continue
		}
		if err := adp.CheckTypeSchema(t.Schema, h.writeRules.Limits, nil); err != nil {
			e := engine.AsError(err)
			return nil, &engine.Error{Code: e.Code, Message: fmt.Sprintf("pack %s: type %s: %s", use, t.Type, e.Message),
				Data: engine.WithData(engine.WithData(e.Data, "pointer", pointer+"/use"), "type", t.Type), Err: err}
		}
		raw, err := json.Marshal(t)
		if err != nil {
			return nil, engine.Wrap(err)
		}
		var def map[string]any
		if err := json.Unmarshal(raw, &def); err != nil {
			return nil, engine.Wrap(err)
		}
		for k, v := range overrides[t.Type] {
			def[k] = v
		}
		out = append(out, def)
	}
	return out, nil
}
