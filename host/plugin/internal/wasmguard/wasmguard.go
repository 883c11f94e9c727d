// Package wasmguard rewrites a plugin module before the host compiles it, to
// bound the host memory that wazero spends on the guest outside its linear
// memory:
//
//   - The call stack. wazero (v1.12) grows a call's stack on the Go heap,
//     doubling it up to a ceiling of hundreds of MiB, and has no setting for
//     it; a guest that recurses without end costs the host that much per
//     call. Every function the module defines therefore starts by taking
//     its frame's weight (an upper bound of its size on wazero's stack)
//     from a stack budget, traps when the budget would go negative, and
//     gives the weight back when it returns: its body is wrapped in a block
//     whose end restores the budget, and its return instructions become
//     branches to that block. Indirect calls, exports and the start function
//     all run such bodies, so every frame on the stack is counted.
//   - Tables. table.grow on a table without a maximum makes wazero allocate
//     up to 2^32 entries of 8 bytes. Every table gets a maximum of at most
//     MaxTableElements, and a larger declared minimum refuses the module.
//   - Globals and locals: a module may define at most MaxGlobals globals,
//     and a function at most MaxLocals locals.
//
// The budget is one mutable i64 global appended after the module's own and
// exported as StackExport. It starts at zero, so every call traps until the
// host sets it on a new instance; a trap for an exhausted budget first sets
// it to -1, which tells the host why the instance trapped. So that no guest
// code runs before the budget is set, the start section is removed and its
// function exported as StartExport: the host calls it right after
// instantiation, before _initialize and any export, which is when the start
// function would have run.
//
// The rewrite also bounds how long the guest runs without the host. A
// guest's machine code cannot be preempted by the Go runtime, so a guest
// that never returns to Go would hold its thread, every stop-the-world
// (garbage collection) of apconnect and its own deadline forever. wazero's
// WithCloseOnContextDone answers with a call into Go at every loop header,
// which costs about 30 ns per loop iteration and still lets recursion that
// fans out without a loop run on forever (a stack budget does not stop it:
// it never goes deep). Instead, every function entry and every loop body
// start is a checkpoint that counts down a fuel global; when the fuel is
// out, the checkpoint traps if the stop global is set, else returns to Go
// once (memory.grow 0, a no-op that wazero runs in Go) and refills the fuel
// with YieldEvery. So the guest is back in Go at least every YieldEvery
// checkpoints, and a host that sets the stop flag (and empties the fuel)
// from another goroutine ends the call within as many; the hot path of a
// checkpoint is a load, a test and a store.
//
// A guest cannot reach the added globals: wazero validates the rewritten
// module, in which they exist, so the rewriter itself refuses a module
// whose code, constant expressions or exports name a global (or function)
// index beyond the module's own. To make sure it reads the same
// instructions wazero compiles, it decodes every instruction of the
// enabled WebAssembly 2.0 features exactly as wazero does and refuses any
// other opcode or any encoding wazero might read differently.
//
// Custom sections (names, DWARF) are dropped: their code offsets would no
// longer match.
package wasmguard

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// ReservedPrefix starts the names of the exports the rewriter adds; a
// module may not export a name that starts with it.
const ReservedPrefix = "apconnect:"

// Names of the exports the rewriter adds.
const (
	// StackExport is the stack budget, in bytes of frame weight: set it
	// before any call; negative after a trap for an exhausted budget.
	StackExport = "apconnect:stack_budget"
	// StartExport is the module's start function, when it has one.
	StartExport = "apconnect:start"
	// StopExport is the stop flag (i32): once the host sets it to 1 the
	// guest traps at a checkpoint within YieldEvery of them (at once when
	// the host also empties FuelExport).
	StopExport = "apconnect:stop"
	// FuelExport is the checkpoints left before the guest returns to Go
	// (i32).
	FuelExport = "apconnect:fuel"
)

// YieldEvery is how many checkpoints (function entries and loop
// iterations) a guest passes at most before it returns to Go once.
const YieldEvery = 1000

// Version names the rewrite: it changes whenever Instrument would write a
// different module or refuse a different set of modules, so that a host
// never runs a module rewritten by another version of the rules (the
// plugin cache binds what it keeps to it).
const Version = "guard3"

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
// address, saved registers and the call's argument area.
const (
	frameBase      = 128
	frameSlotBytes = 16
)

// checkpointInstrs is the length of the checkpoint guardBody inserts at a
// function's entry and at each loop (appendCheckpoint); a frame is weighed
// with them.
const checkpointInstrs = 18

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

type funcType struct{ params, results []byte }

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

// rewritten is what the rewrite replaces in the module's sections, for
// write.
type rewritten struct {
	bodies        [][]byte // guarded function bodies
	extraTypes    [][]byte // block types of multi-value functions
	globalEntries []byte   // the module's own globals, as they are
	tables        []byte   // the bounded tables
	tableCount    uint32
	exports       []byte // the module's exports, checked
	exportCount   uint32
	budget        uint32 // the stack budget's global index; the stop flag and the fuel follow
	hasMemory     bool   // checkpoints may yield with memory.grow
}

// rewrite checks every section, in order, for what the host does not
// enable or bound and for indices the module does not have, then guards
// every function body and writes the module again.
func (m *module) rewrite() (*Result, error) {
	var rw rewritten
	if err := m.readTypes(); err != nil {
		return nil, err
	}
	if err := m.readImports(); err != nil {
		return nil, err
	}
	if err := m.readFunctions(); err != nil {
		return nil, err
	}
	ic, err := m.readGlobals(&rw)
	if err != nil {
		return nil, err
	}
	if err := m.boundTables(&rw); err != nil {
		return nil, err
	}
	rw.budget = m.importGlobals + m.globals
	rw.hasMemory = len(m.section(secMemory)) > 1 // a count and at least one memory
	if err := m.readExports(ic, &rw); err != nil {
		return nil, err
	}
	if err := m.readStart(ic); err != nil {
		return nil, err
	}
	if err := vec(secElement, m.section(secElement), func(r *reader, _ uint32) error {
		return scanElement(r, ic)
	}); err != nil {
		return nil, err
	}
	if err := vec(secData, m.section(secData), func(r *reader, _ uint32) error {
		return scanData(r, ic)
	}); err != nil {
		return nil, err
	}
	maxFrame, err := m.guardCode(ic, &rw)
	if err != nil {
		return nil, err
	}
	return &Result{
		Module:    m.write(&rw),
		Functions: len(m.funcTypes),
		MaxFrame:  maxFrame,
		HasStart:  m.hasStart,
	}, nil
}

// readTypes reads the function types: parameters and results of the
// enabled value types.
func (m *module) readTypes() error {
	return vec(secType, m.section(secType), func(r *reader, _ uint32) error {
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
			} else {
				ft.results = ts
			}
		}
		m.types = append(m.types, ft)
		return nil
	})
}

// readImports counts the imported functions: the host provides nothing
// else to import.
func (m *module) readImports() error {
	return vec(secImport, m.section(secImport), func(r *reader, _ uint32) error {
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
			return nil
		case 1:
			return fmt.Errorf("the module imports a table")
		case 2:
			return fmt.Errorf("the module imports a memory")
		case 3:
			return fmt.Errorf("the module imports a global")
		}
		return fmt.Errorf("unsupported import kind %d", kind)
	})
}

// readFunctions reads the type of every function the module defines.
func (m *module) readFunctions() error {
	return vec(secFunction, m.section(secFunction), func(r *reader, _ uint32) error {
		t, err := r.u32()
		if err != nil {
			return err
		}
		if t >= uint32(len(m.types)) {
			return fmt.Errorf("type index %d is out of range", t)
		}
		m.funcTypes = append(m.funcTypes, t)
		return nil
	})
}

// readGlobals counts the globals (at most MaxGlobals) and checks their
// initialisers, which may name only globals and functions the original
// module has: it returns the checker of those indices for the later
// sections.
func (m *module) readGlobals(rw *rewritten) (indexChecker, error) {
	ic := indexChecker{funcs: m.importFuncs + uint32(len(m.funcTypes))}
	body := m.section(secGlobal)
	if body == nil {
		ic.globals = m.importGlobals
		return ic, nil
	}
	r := &reader{b: body}
	n, err := r.u32()
	if err != nil {
		return ic, invalid("global section: %v", err)
	}
	if n > MaxGlobals {
		return ic, invalid("the module defines %d globals; the host allows at most %d", n, MaxGlobals)
	}
	m.globals = n
	ic.globals = m.importGlobals + m.globals
	rw.globalEntries = body[r.off:]
	return ic, vec(secGlobal, body, func(r *reader, _ uint32) error {
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
	})
}

// boundTables gives every table a maximum of at most MaxTableElements and
// refuses a larger minimum.
func (m *module) boundTables(rw *rewritten) error {
	return vec(secTable, m.section(secTable), func(r *reader, i uint32) error {
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
		rw.tables = append(rw.tables, t, 1)
		rw.tables = appendU32(rw.tables, min)
		rw.tables = appendU32(rw.tables, max)
		rw.tableCount++
		return nil
	})
}

// readExports checks the exports: the reserved names are the host's, and
// the indices must exist.
func (m *module) readExports(ic indexChecker, rw *rewritten) error {
	body := m.section(secExport)
	return vec(secExport, body, func(r *reader, _ uint32) error {
		start := r.off
		name, err := r.name()
		if err != nil {
			return err
		}
		if strings.HasPrefix(name, ReservedPrefix) {
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
		rw.exports = append(rw.exports, body[start:r.off]...)
		rw.exportCount++
		return nil
	})
}

// readStart reads the start function, which write exports as StartExport
// instead.
func (m *module) readStart(ic indexChecker) error {
	body := m.section(secStart)
	if body == nil {
		return nil
	}
	r := &reader{b: body}
	idx, err := r.u32()
	if err == nil && !r.done() {
		err = fmt.Errorf("trailing bytes")
	}
	if err == nil {
		err = ic.fn(idx)
	}
	if err != nil {
		return invalid("start section: %v", err)
	}
	m.hasStart, m.start = true, idx
	return nil
}

// scanData reads one data segment, whose offset may name globals.
func scanData(r *reader, ic indexChecker) error {
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
}

// guardCode checks every function body, weighs its frame and guards it
// (guardBody). It returns the largest frame weight.
func (m *module) guardCode(ic indexChecker, rw *rewritten) (uint64, error) {
	defined := uint32(len(m.funcTypes))
	var maxFrame uint64
	wrapperTypes := map[string]uint32{} // result types of multi-value functions → type index
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
		fn, err := m.readBody(body, m.importFuncs+i, ic)
		if err != nil {
			return err
		}
		ft := m.types[m.funcTypes[i]]
		checks := 1 // the entry's
		for _, st := range fn.sites {
			if st.loop {
				checks++
			}
		}
		instrs := uint64(fn.instrs) + uint64(checks*checkpointInstrs)
		w := frameBase + frameSlotBytes*(uint64(len(ft.params))+fn.locals+1+instrs)
		maxFrame = max(maxFrame, w)
		bt := m.blockType(ft, wrapperTypes, rw)
		saved := uint32(uint64(len(ft.params)) + fn.locals) // the appended local
		rw.bodies = append(rw.bodies, guardBody(fn, bt, rw, saved, w))
		return nil
	}); err != nil {
		return 0, err
	}
	if uint32(len(rw.bodies)) != defined {
		return 0, invalid("%d functions but %d bodies", defined, len(rw.bodies))
	}
	return maxFrame, nil
}

// funcBody is one function body as read: its local declarations and its
// code, scanned.
type funcBody struct {
	groups     uint32 // local declaration groups
	groupBytes []byte // their encoding
	locals     uint64 // locals declared
	code       []byte // the instructions, to the final end
	instrs     int
	sites      []site // returns and loop starts, in order
}

// readBody reads the body of function index: its locals (of the enabled
// types, at most MaxLocals) and its instructions (scanBody).
func (m *module) readBody(body []byte, index uint32, ic indexChecker) (*funcBody, error) {
	br := &reader{b: body}
	groups, err := br.u32()
	if err != nil {
		return nil, err
	}
	fn := &funcBody{groups: groups}
	groupsStart := br.off
	for range groups {
		n, err := br.u32()
		if err != nil {
			return nil, err
		}
		t, err := br.byte()
		if err != nil {
			return nil, err
		}
		if !isValType(t) {
			return nil, fmt.Errorf("unsupported local type %#x", t)
		}
		fn.locals += uint64(n)
		if fn.locals > MaxLocals {
			return nil, fmt.Errorf("function %d declares more than %d locals", index, MaxLocals)
		}
	}
	fn.groupBytes = body[groupsStart:br.off]
	fn.code = body[br.off:]
	if fn.instrs, fn.sites, err = scanBody(&reader{b: fn.code}, ic); err != nil {
		return nil, fmt.Errorf("function %d: %v", index, err)
	}
	return fn, nil
}

// blockType is the type of the block that wraps a body of type ft: its
// result, or for several results a function type appended to the type
// section (one per distinct result list).
func (m *module) blockType(ft funcType, wrapperTypes map[string]uint32, rw *rewritten) []byte {
	switch len(ft.results) {
	case 0:
		return []byte{0x40}
	case 1:
		return []byte{ft.results[0]}
	}
	idx, ok := wrapperTypes[string(ft.results)]
	if !ok {
		idx = uint32(len(m.types) + len(rw.extraTypes))
		wrapperTypes[string(ft.results)] = idx
		t := []byte{0x60, 0}
		t = appendU32(t, uint32(len(ft.results)))
		rw.extraTypes = append(rw.extraTypes, append(t, ft.results...))
	}
	return appendS64(nil, int64(idx))
}

// guardBody rewrites one function body: an i64 local appended to hold the
// budget on entry, a prologue with a checkpoint that takes the frame's
// weight from the budget (setting it to -1 and trapping when it does not
// suffice), the original code in a block of the function's result type
// with each return turned into a branch to that block's end and a
// checkpoint at the start of each loop body, and an epilogue that puts the
// budget back.
func guardBody(fn *funcBody, bt []byte, rw *rewritten, saved uint32, weight uint64) []byte {
	budget := rw.budget
	b := make([]byte, 0, len(fn.groupBytes)+len(fn.code)+32*len(fn.sites)+128)
	b = appendU32(b, fn.groups+1)
	b = append(b, fn.groupBytes...)
	b = append(b, 1, 0x7e) // the saved budget
	// Prologue.
	b = appendCheckpoint(b, rw)
	b = append(b, opGlobalGet)
	b = appendU32(b, budget)
	b = append(b, opLocalTee)
	b = appendU32(b, saved)
	b = append(b, opI64Const)
	b = appendS64(b, int64(weight))
	b = append(b, opI64LtS, opIf, 0x40, opI64Const, 0x7f, opGlobalSet)
	b = appendU32(b, budget)
	b = append(b, opUnreachabl, opEnd)
	b = append(b, opLocalGet)
	b = appendU32(b, saved)
	b = append(b, opI64Const)
	b = appendS64(b, int64(weight))
	b = append(b, opI64Sub, opGlobalSet)
	b = appendU32(b, budget)
	// The original code, whose final end now closes the block.
	b = append(b, opBlock)
	b = append(b, bt...)
	last := 0
	for _, st := range fn.sites {
		b = append(b, fn.code[last:st.off]...)
		if st.loop {
			b = appendCheckpoint(b, rw)
			last = st.off
			continue
		}
		b = append(b, opBr)
		b = appendU32(b, uint32(st.depth))
		last = st.off + 1
	}
	b = append(b, fn.code[last:]...)
	// Epilogue.
	b = append(b, opLocalGet)
	b = appendU32(b, saved)
	b = append(b, opGlobalSet)
	b = appendU32(b, budget)
	return append(b, opEnd)
}

// appendCheckpoint appends a checkpoint (checkpointInstrs instructions, in
// blocks of their own, so the depths of branches around it do not
// change):
//
//	fuel = fuel - 1
//	if fuel <= 0 {
//		if stop { unreachable }
//		drop(memory.grow(0)) // back in Go once; only with a memory
//		fuel = YieldEvery
//	}
//
// "<= 0", not "== 0": the host empties the fuel from another goroutine,
// and a guest that read it just before writes back one less than it read,
// or a negative number when the host's 0 came between its read and its
// write; either way the next slow path is at most YieldEvery checkpoints
// away.
func appendCheckpoint(b []byte, rw *rewritten) []byte {
	stop, fuel := rw.budget+1, rw.budget+2
	b = append(b, opGlobalGet)
	b = appendU32(b, fuel)
	b = append(b, opI32Const, 1, opI32Sub, opGlobalSet)
	b = appendU32(b, fuel)
	b = append(b, opGlobalGet)
	b = appendU32(b, fuel)
	b = append(b, opI32Const, 0, opI32LeS, opIf, 0x40, opGlobalGet)
	b = appendU32(b, stop)
	b = append(b, opIf, 0x40, opUnreachabl, opEnd)
	if rw.hasMemory {
		b = append(b, opI32Const, 0, opMemoryGrow, 0, opDrop)
	} else {
		b = append(b, opNop, opNop, opNop) // the same length of code to weigh
	}
	b = append(b, opI32Const)
	b = appendS64(b, YieldEvery)
	b = append(b, opGlobalSet)
	b = appendU32(b, fuel)
	return append(b, opEnd)
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

// exportSection is the module's exports and the host's: the stack budget,
// the stop flag, the fuel and the start function.
func (m *module) exportSection(rw *rewritten) []byte {
	type export struct {
		name string
		kind byte
		idx  uint32
	}
	added := []export{{StackExport, 3, rw.budget}, {StopExport, 3, rw.budget + 1}, {FuelExport, 3, rw.budget + 2}}
	if m.hasStart {
		added = append(added, export{StartExport, 0, m.start})
	}
	sec := appendU32(nil, rw.exportCount+uint32(len(added)))
	sec = append(sec, rw.exports...)
	for _, e := range added {
		sec = appendU32(sec, uint32(len(e.name)))
		sec = append(sec, e.name...)
		sec = append(sec, e.kind)
		sec = appendU32(sec, e.idx)
	}
	return sec
}

// write assembles the rewritten module: the original sections in order,
// with the type, table, global, export and code sections replaced and the
// start section dropped.
func (m *module) write(rw *rewritten) []byte {
	bodies, extraTypes := rw.bodies, rw.extraTypes
	// The rewritten module is the original's sections plus, per function,
	// a prologue, an epilogue and a local (well under 96 bytes).
	total := 8 + 4096 + 96*len(bodies)
	for _, s := range m.sections {
		total += len(s.body) + 6
	}
	out := append(make([]byte, 0, total), "\x00asm\x01\x00\x00\x00"...)

	typeSec := appendU32(nil, uint32(len(m.types)+len(extraTypes)))
	if body := m.section(secType); body != nil {
		r := &reader{b: body}
		_, _ = r.u32()
		typeSec = append(typeSec, body[r.off:]...)
	}
	for _, t := range extraTypes {
		typeSec = append(typeSec, t...)
	}

	globalSec := appendU32(nil, m.globals+3)
	globalSec = append(globalSec, rw.globalEntries...)
	globalSec = append(globalSec, 0x7e, 1, opI64Const, 0, opEnd) // the budget
	globalSec = append(globalSec, 0x7f, 1, opI32Const, 0, opEnd) // the stop flag
	globalSec = append(globalSec, 0x7f, 1, opI32Const, 0, opEnd) // the fuel

	exportSec := m.exportSection(rw)

	size := 0
	for _, b := range bodies {
		size += len(b) + 5
	}
	codeSec := appendU32(make([]byte, 0, size+5), uint32(len(bodies)))
	for _, b := range bodies {
		codeSec = appendU32(codeSec, uint32(len(b)))
		codeSec = append(codeSec, b...)
	}

	tableSec := appendU32(nil, rw.tableCount)
	tableSec = append(tableSec, rw.tables...)

	wrote := map[byte]bool{}
	emit := func(id byte, body []byte) {
		out = appendSection(out, id, body)
		wrote[id] = true
	}
	// Sections that may be missing from the original but are always
	// written, placed where their order puts them.
	ensure := func(beforePos int) {
		for _, id := range []byte{secType, secGlobal, secExport} {
			if !wrote[id] && order[id] < beforePos {
				switch id {
				case secType:
					if len(extraTypes) > 0 {
						emit(id, typeSec)
					}
				case secGlobal:
					emit(id, globalSec)
				case secExport:
					emit(id, exportSec)
				}
			}
		}
	}
	for _, s := range m.sections {
		ensure(order[s.id])
		switch s.id {
		case secType:
			emit(s.id, typeSec)
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
