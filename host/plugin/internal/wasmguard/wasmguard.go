// Package wasmguard rewrites a plugin module before the host compiles it, to
// bound the host memory that wazero spends on the guest outside its linear
// memory:
//
//   - The call stack. wazero (v1.12) grows a call's stack on the Go heap,
//     doubling it up to a ceiling of hundreds of MiB, and has no setting for
//     it; a guest that recurses without end costs the host that much per
//     call. Every function defined by the module is therefore reached
//     through a thunk, at the function's own index, that adds the frame's
//     weight (an upper bound of its size on the stack) to a stack counter,
//     traps with unreachable when the counter passes the limit, calls the
//     original body (moved to a new index) and subtracts the weight again.
//     Calls, call_indirect through tables, exports, the start function and
//     ref.func all name the original index, so they all pass through the
//     thunk; the original bodies are never named by anything else, which
//     the rewriter checks (see below).
//   - Tables. table.grow on a table without a maximum makes wazero allocate
//     up to 2^32 entries of 8 bytes. Every table gets a maximum of at most
//     MaxTableElements, and a larger declared minimum refuses the module.
//   - Globals: a module may define at most MaxGlobals of them.
//
// The counter and the limit are two mutable i64 globals appended after the
// module's own and exported as UsedExport and LimitExport; the limit starts
// at zero (every call traps), the host sets it on each new instance and
// reads the counter after a trap to tell an exhausted stack from other
// traps. So that no guest code runs before the limit is set, the start
// section is removed and its function exported as StartExport: the host
// calls it right after instantiation, before _initialize and any export,
// which is when the start function would have run.
//
// A guest cannot reach the counter, the limit or an original body: wazero
// validates the rewritten module, in which those indices exist, so the
// rewriter itself refuses a module whose code, constant expressions, exports
// or start name a function or global index beyond the module's own. To make
// sure it reads the same instructions wazero compiles, it decodes every
// instruction of the enabled WebAssembly 2.0 features exactly as wazero
// does and refuses any other opcode or any encoding wazero might read
// differently.
//
// Custom sections (names, DWARF) are dropped: their function indices and
// code offsets would no longer match.
package wasmguard

import (
	"bytes"
	"errors"
	"fmt"
)

// Names of the exported stack globals. A module may not export these names
// itself.
const (
	UsedExport  = "apconnect:stack_used"
	LimitExport = "apconnect:stack_limit"
	StartExport = "apconnect:start"
)

// Bounds the rewriter enforces.
const (
	// MaxTableElements caps every table (8 bytes of host memory an entry).
	MaxTableElements = 1 << 16
	// MaxGlobals caps the globals a module defines (each costs the host
	// memory in every instance).
	MaxGlobals = 1 << 16
	// MaxLocals caps the locals of one function.
	MaxLocals = 1 << 16
)

// Frame weights, in bytes: an upper bound of what a call occupies on
// wazero's stack. wazero's compiler gives every spilled value its own slot
// of up to 16 bytes (no slot is reused within a function), so a frame is
// bounded by 16 bytes for each parameter, local and instruction (no
// instruction defines more than a few values, and those it defines beyond
// one are temporaries that never live across a call) plus the return
// address, saved registers and the thunk's own frame.
const (
	frameBase      = 128
	frameSlotBytes = 16
)

// Result is an instrumented module.
type Result struct {
	// Module is the rewritten binary.
	Module []byte
	// Functions is the number of functions the module defines.
	Functions int
	// MaxFrame is the largest frame weight of one function, in bytes.
	MaxFrame uint64
	// HasStart reports a start function, exported as StartExport.
	HasStart bool
}

// ErrInvalid wraps every refusal: the module is malformed, uses something
// outside the enabled features, names an index it does not have, or
// exceeds a bound.
var ErrInvalid = errors.New("invalid module")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Section IDs.
const (
	secCustom   = 0
	secType     = 1
	secImport   = 2
	secFunction = 3
	secTable    = 4
	secMemory   = 5
	secGlobal   = 6
	secExport   = 7
	secStart    = 8
	secElement  = 9
	secCode     = 10
	secData     = 11
	secDataCnt  = 12
	secTag      = 13
)

// order is the position of each known section in a module.
var order = map[byte]int{secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5,
	secGlobal: 6, secExport: 7, secStart: 8, secElement: 9, secDataCnt: 10, secCode: 11, secData: 12}

type section struct {
	id   byte
	body []byte
}

type funcType struct{ params []byte }

// module is what the rewriter learns before it writes.
type module struct {
	sections      []section
	types         []funcType
	importFuncs   uint32
	importGlobals uint32
	funcTypes     []uint32 // type index of each defined function
	globals       uint32   // defined globals
	hasStart      bool
	start         uint32
}

// Instrument checks wasm and returns the rewritten module.
func Instrument(wasm []byte) (*Result, error) {
	m, err := readSections(wasm)
	if err != nil {
		return nil, err
	}
	return m.rewrite()
}

func readSections(wasm []byte) (*module, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:4], []byte("\x00asm")) {
		return nil, invalid("not a WebAssembly binary (no \\0asm header)")
	}
	if !bytes.Equal(wasm[4:8], []byte{1, 0, 0, 0}) {
		return nil, invalid("unsupported binary version %x", wasm[4:8])
	}
	m := &module{}
	r := &reader{b: wasm, off: 8}
	last := 0
	seen := map[byte]bool{}
	for !r.done() {
		id, _ := r.byte()
		size, err := r.u32()
		if err != nil {
			return nil, invalid("section header: %v", err)
		}
		body, err := r.bytes(size)
		if err != nil {
			return nil, invalid("section %d: %v", id, err)
		}
		if id == secCustom {
			continue // dropped
		}
		pos, known := order[id]
		if !known {
			return nil, invalid("unsupported section %d", id)
		}
		if seen[id] || pos < last {
			return nil, invalid("section %d is repeated or out of order", id)
		}
		seen[id], last = true, pos
		m.sections = append(m.sections, section{id: id, body: body})
	}
	return m, nil
}

func (m *module) section(id byte) []byte {
	for _, s := range m.sections {
		if s.id == id {
			return s.body
		}
	}
	return nil
}

// vec reads a section's vector, calling item for each element, and
// requires the items to fill the section exactly.
func vec(id byte, body []byte, item func(r *reader, i uint32) error) error {
	if body == nil {
		return nil // the section is absent
	}
	r := &reader{b: body}
	n, err := r.u32()
	if err != nil {
		return invalid("section %d: %v", id, err)
	}
	for i := uint32(0); i < n; i++ {
		if err := item(r, i); err != nil {
			return invalid("section %d, item %d: %v", id, i, err)
		}
	}
	if !r.done() {
		return invalid("section %d: %d bytes after its last item", id, len(body)-r.off)
	}
	return nil
}

func readLimits(r *reader) (min uint32, max uint32, hasMax bool, err error) {
	flag, err := r.byte()
	if err != nil {
		return 0, 0, false, err
	}
	switch flag {
	case 0:
		min, err = r.u32()
	case 1:
		if min, err = r.u32(); err == nil {
			max, err = r.u32()
			hasMax = true
		}
	default:
		err = fmt.Errorf("unsupported limits flag %#x (shared memory and 64-bit memory are not enabled)", flag)
	}
	return
}

func (m *module) rewrite() (*Result, error) {
	// Types.
	if err := vec(secType, m.section(secType), func(r *reader, _ uint32) error {
		form, err := r.byte()
		if err != nil {
			return err
		}
		if form != 0x60 {
			return fmt.Errorf("unsupported type form %#x", form)
		}
		var ft funcType
		for k := range 2 {
			n, err := r.u32()
			if err != nil {
				return err
			}
			ts, err := r.bytes(n)
			if err != nil {
				return err
			}
			for _, t := range ts {
				if !isValType(t) {
					return fmt.Errorf("unsupported value type %#x", t)
				}
			}
			if k == 0 {
				ft.params = ts
			}
		}
		m.types = append(m.types, ft)
		return nil
	}); err != nil {
		return nil, err
	}

	// Imports: only functions; the host provides nothing else.
	if err := vec(secImport, m.section(secImport), func(r *reader, _ uint32) error {
		if _, err := r.name(); err != nil {
			return err
		}
		if _, err := r.name(); err != nil {
			return err
		}
		kind, err := r.byte()
		if err != nil {
			return err
		}
		switch kind {
		case 0:
			t, err := r.u32()
			if err != nil {
				return err
			}
			if t >= uint32(len(m.types)) {
				return fmt.Errorf("type index %d is out of range", t)
			}
			m.importFuncs++
		case 1:
			return fmt.Errorf("the module imports a table")
		case 2:
			return fmt.Errorf("the module imports a memory")
		case 3:
			return fmt.Errorf("the module imports a global")
		default:
			return fmt.Errorf("unsupported import kind %d", kind)
		}
		return nil
	}); err != nil {
		return nil, err
	}

	// Functions.
	if err := vec(secFunction, m.section(secFunction), func(r *reader, _ uint32) error {
		t, err := r.u32()
		if err != nil {
			return err
		}
		if t >= uint32(len(m.types)) {
			return fmt.Errorf("type index %d is out of range", t)
		}
		m.funcTypes = append(m.funcTypes, t)
		return nil
	}); err != nil {
		return nil, err
	}
	defined := uint32(len(m.funcTypes))
	totalFuncs := m.importFuncs + defined

	// Globals: count them first; their initialisers may name only globals
	// that exist in the original module.
	if body := m.section(secGlobal); body != nil {
		r := &reader{b: body}
		n, err := r.u32()
		if err != nil {
			return nil, invalid("global section: %v", err)
		}
		if n > MaxGlobals {
			return nil, invalid("the module defines %d globals; the host allows at most %d", n, MaxGlobals)
		}
		m.globals = n
	}
	ic := indexChecker{funcs: totalFuncs, globals: m.importGlobals + m.globals}
	var globalEntries []byte
	if body := m.section(secGlobal); body != nil {
		r := &reader{b: body}
		_, _ = r.u32() // read above
		globalEntries = body[r.off:]
		if err := vec(secGlobal, body, func(r *reader, _ uint32) error {
			t, err := r.byte()
			if err != nil {
				return err
			}
			if !isValType(t) {
				return fmt.Errorf("unsupported global type %#x", t)
			}
			mut, err := r.byte()
			if err != nil {
				return err
			}
			if mut > 1 {
				return fmt.Errorf("unsupported mutability %#x", mut)
			}
			return scanConstExpr(r, ic)
		}); err != nil {
			return nil, err
		}
	}

	// Tables: bounded.
	var tables []byte
	var tableCount uint32
	if err := vec(secTable, m.section(secTable), func(r *reader, i uint32) error {
		t, err := r.byte()
		if err != nil {
			return err
		}
		if !isRefType(t) {
			return fmt.Errorf("unsupported table type %#x", t)
		}
		min, max, hasMax, err := readLimits(r)
		if err != nil {
			return err
		}
		if min > MaxTableElements {
			return fmt.Errorf("table %d declares %d elements; the host allows at most %d", i, min, MaxTableElements)
		}
		if !hasMax || max > MaxTableElements {
			max = MaxTableElements
		}
		if max < min {
			return fmt.Errorf("table %d: maximum %d below minimum %d", i, max, min)
		}
		tables = append(tables, t, 1)
		tables = appendU32(tables, min)
		tables = appendU32(tables, max)
		tableCount++
		return nil
	}); err != nil {
		return nil, err
	}

	// Exports: the reserved names are the host's; indices must exist.
	usedIdx := m.importGlobals + m.globals
	limitIdx := usedIdx + 1
	var exports []byte
	var exportCount uint32
	if body := m.section(secExport); body != nil {
		if err := vec(secExport, body, func(r *reader, _ uint32) error {
			start := r.off
			name, err := r.name()
			if err != nil {
				return err
			}
			if name == UsedExport || name == LimitExport || name == StartExport {
				return fmt.Errorf("the export name %q is reserved for the host", name)
			}
			kind, err := r.byte()
			if err != nil {
				return err
			}
			idx, err := r.u32()
			if err != nil {
				return err
			}
			switch kind {
			case 0:
				err = ic.fn(idx)
			case 3:
				err = ic.global(idx)
			case 1, 2:
			default:
				err = fmt.Errorf("unsupported export kind %d", kind)
			}
			if err != nil {
				return err
			}
			exports = append(exports, body[start:r.off]...)
			exportCount++
			return nil
		}); err != nil {
			return nil, err
		}
	}

	// Start.
	if body := m.section(secStart); body != nil {
		r := &reader{b: body}
		idx, err := r.u32()
		if err == nil && !r.done() {
			err = fmt.Errorf("trailing bytes")
		}
		if err == nil {
			err = ic.fn(idx)
		}
		if err != nil {
			return nil, invalid("start section: %v", err)
		}
		m.hasStart, m.start = true, idx
	}

	// Elements: scanned for the function and global indices they name.
	if err := vec(secElement, m.section(secElement), func(r *reader, _ uint32) error {
		return scanElement(r, ic)
	}); err != nil {
		return nil, err
	}

	// Data: offsets may name globals.
	if err := vec(secData, m.section(secData), func(r *reader, _ uint32) error {
		flag, err := r.u32()
		if err != nil {
			return err
		}
		switch flag {
		case 0:
			err = scanConstExpr(r, ic)
		case 1:
		case 2:
			var mem uint32
			if mem, err = r.u32(); err == nil && mem != 0 {
				err = fmt.Errorf("memory index %d", mem)
			}
			if err == nil {
				err = scanConstExpr(r, ic)
			}
		default:
			err = fmt.Errorf("unsupported data segment flag %d", flag)
		}
		if err != nil {
			return err
		}
		n, err := r.u32()
		if err == nil {
			_, err = r.bytes(n)
		}
		return err
	}); err != nil {
		return nil, err
	}

	// Code: check every body, weigh every frame, write the thunks.
	var bodies [][]byte
	var weights []uint64
	var maxFrame uint64
	if err := vec(secCode, m.section(secCode), func(r *reader, i uint32) error {
		if i >= defined {
			return fmt.Errorf("more bodies than functions")
		}
		size, err := r.u32()
		if err != nil {
			return err
		}
		body, err := r.bytes(size)
		if err != nil {
			return err
		}
		br := &reader{b: body}
		groups, err := br.u32()
		if err != nil {
			return err
		}
		var locals uint64
		for range groups {
			n, err := br.u32()
			if err != nil {
				return err
			}
			t, err := br.byte()
			if err != nil {
				return err
			}
			if !isValType(t) {
				return fmt.Errorf("unsupported local type %#x", t)
			}
			locals += uint64(n)
			if locals > MaxLocals {
				return fmt.Errorf("function %d declares more than %d locals", m.importFuncs+i, MaxLocals)
			}
		}
		instrs, err := scanBody(br, ic)
		if err != nil {
			return fmt.Errorf("function %d: %v", m.importFuncs+i, err)
		}
		params := uint64(len(m.types[m.funcTypes[i]].params))
		w := frameBase + frameSlotBytes*(2*params+locals+uint64(instrs))
		maxFrame = max(maxFrame, w)
		weights = append(weights, w)
		bodies = append(bodies, body)
		return nil
	}); err != nil {
		return nil, err
	}
	if uint32(len(bodies)) != defined {
		return nil, invalid("%d functions but %d bodies", defined, len(bodies))
	}

	return &Result{
		Module:    m.write(bodies, weights, globalEntries, tables, tableCount, exports, exportCount, usedIdx, limitIdx),
		Functions: int(defined),
		MaxFrame:  maxFrame,
		HasStart:  m.hasStart,
	}, nil
}

// scanElement reads one element segment as wazero does, checking the
// indices it names.
func scanElement(r *reader, ic indexChecker) error {
	flag, err := r.u32()
	if err != nil {
		return err
	}
	funcIndices := func() error {
		n, err := r.u32()
		if err != nil {
			return err
		}
		for range n {
			i, err := r.u32()
			if err != nil {
				return err
			}
			if err := ic.fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	exprs := func() error {
		n, err := r.u32()
		if err != nil {
			return err
		}
		for range n {
			if err := scanConstExpr(r, ic); err != nil {
				return err
			}
		}
		return nil
	}
	elemKind := func() error {
		b, err := r.byte()
		if err == nil && b != 0 {
			err = fmt.Errorf("element kind %#x", b)
		}
		return err
	}
	refType := func() error {
		b, err := r.byte()
		if err == nil && !isRefType(b) {
			err = fmt.Errorf("unsupported element type %#x", b)
		}
		return err
	}
	switch flag {
	case 0: // active, table 0: offset, function indices
		if err := scanConstExpr(r, ic); err != nil {
			return err
		}
		return funcIndices()
	case 1, 3: // passive or declarative: kind, function indices
		if err := elemKind(); err != nil {
			return err
		}
		return funcIndices()
	case 2: // active with table: table, offset, kind, function indices
		if _, err := r.u32(); err != nil {
			return err
		}
		if err := scanConstExpr(r, ic); err != nil {
			return err
		}
		if err := elemKind(); err != nil {
			return err
		}
		return funcIndices()
	case 4: // active, table 0: offset, expressions
		if err := scanConstExpr(r, ic); err != nil {
			return err
		}
		return exprs()
	case 5, 7: // passive or declarative: type, expressions
		if err := refType(); err != nil {
			return err
		}
		return exprs()
	case 6: // active with table: table, offset, type, expressions
		if _, err := r.u32(); err != nil {
			return err
		}
		if err := scanConstExpr(r, ic); err != nil {
			return err
		}
		if err := refType(); err != nil {
			return err
		}
		return exprs()
	}
	return fmt.Errorf("unsupported element segment flag %d", flag)
}

// write assembles the rewritten module: the original sections in order,
// with the function, table, global, export and code sections replaced.
func (m *module) write(bodies [][]byte, weights []uint64, globalEntries, tables []byte, tableCount uint32,
	exports []byte, exportCount uint32, usedIdx, limitIdx uint32) []byte {
	defined := uint32(len(bodies))
	out := append([]byte(nil), "\x00asm\x01\x00\x00\x00"...)

	funcSec := appendU32(nil, 2*defined)
	for range 2 {
		for _, t := range m.funcTypes {
			funcSec = appendU32(funcSec, t)
		}
	}

	globalSec := appendU32(nil, m.globals+2)
	globalSec = append(globalSec, globalEntries...)
	globalSec = append(globalSec, 0x7e, 1, opI64Const, 0, opEnd) // used
	globalSec = append(globalSec, 0x7e, 1, opI64Const, 0, opEnd) // limit

	type export struct {
		name string
		kind byte
		idx  uint32
	}
	added := []export{{UsedExport, 3, usedIdx}, {LimitExport, 3, limitIdx}}
	if m.hasStart {
		added = append(added, export{StartExport, 0, m.start})
	}
	exportSec := appendU32(nil, exportCount+uint32(len(added)))
	exportSec = append(exportSec, exports...)
	for _, e := range added {
		exportSec = appendU32(exportSec, uint32(len(e.name)))
		exportSec = append(exportSec, e.name...)
		exportSec = append(exportSec, e.kind)
		exportSec = appendU32(exportSec, e.idx)
	}

	codeSec := appendU32(nil, 2*defined)
	for i := range bodies {
		params := m.types[m.funcTypes[i]].params
		th := thunk(usedIdx, limitIdx, weights[i], len(params), m.importFuncs+defined+uint32(i))
		codeSec = appendU32(codeSec, uint32(len(th)))
		codeSec = append(codeSec, th...)
	}
	for _, b := range bodies {
		codeSec = appendU32(codeSec, uint32(len(b)))
		codeSec = append(codeSec, b...)
	}

	tableSec := appendU32(nil, tableCount)
	tableSec = append(tableSec, tables...)

	wrote := map[byte]bool{}
	emit := func(id byte, body []byte) {
		out = appendSection(out, id, body)
		wrote[id] = true
	}
	// Sections that may be missing from the original but are always
	// written, placed where their order puts them.
	ensure := func(beforePos int) {
		for _, id := range []byte{secFunction, secGlobal, secExport, secCode} {
			if !wrote[id] && order[id] < beforePos {
				switch id {
				case secFunction:
					emit(id, funcSec)
				case secGlobal:
					emit(id, globalSec)
				case secExport:
					emit(id, exportSec)
				case secCode:
					emit(id, codeSec)
				}
			}
		}
	}
	for _, s := range m.sections {
		ensure(order[s.id])
		switch s.id {
		case secFunction:
			emit(s.id, funcSec)
		case secTable:
			emit(s.id, tableSec)
		case secGlobal:
			emit(s.id, globalSec)
		case secExport:
			emit(s.id, exportSec)
		case secCode:
			emit(s.id, codeSec)
		case secStart:
			// Exported as StartExport instead; the host calls it.
		default:
			emit(s.id, s.body)
		}
	}
	ensure(len(order) + 1)
	return out
}

// thunk is the body of the function at a defined function's original
// index: count the frame, trap past the limit, call the original body,
// uncount.
func thunk(used, limit uint32, weight uint64, params int, target uint32) []byte {
	b := []byte{0} // no locals
	b = append(b, opGlobalGet)
	b = appendU32(b, used)
	b = append(b, opI64Const)
	b = appendS64(b, int64(weight))
	b = append(b, opI64Add, opGlobalSet)
	b = appendU32(b, used)
	b = append(b, opGlobalGet)
	b = appendU32(b, used)
	b = append(b, opGlobalGet)
	b = appendU32(b, limit)
	b = append(b, opI64GtU, opIf, 0x40, opUnreachabl, opEnd)
	for i := range params {
		b = append(b, opLocalGet)
		b = appendU32(b, uint32(i))
	}
	b = append(b, opCall)
	b = appendU32(b, target)
	b = append(b, opGlobalGet)
	b = appendU32(b, used)
	b = append(b, opI64Const)
	b = appendS64(b, int64(weight))
	b = append(b, opI64Sub, opGlobalSet)
	b = appendU32(b, used)
	return append(b, opEnd)
}
