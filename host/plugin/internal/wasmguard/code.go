package wasmguard

import "fmt"

// Opcodes the decoder treats specially.
const (
	opBlock      = 0x02
	opLoop       = 0x03
	opIf         = 0x04
	opElse       = 0x05
	opEnd        = 0x0b
	opBr         = 0x0c
	opBrIf       = 0x0d
	opBrTable    = 0x0e
	opReturn     = 0x0f
	opCall       = 0x10
	opCallInd    = 0x11
	opSelectT    = 0x1c
	opLocalGet   = 0x20
	opLocalTee   = 0x22
	opGlobalGet  = 0x23
	opGlobalSet  = 0x24
	opTableGet   = 0x25
	opTableSet   = 0x26
	opI32Const   = 0x41
	opI64Const   = 0x42
	opF32Const   = 0x43
	opF64Const   = 0x44
	opI64Sub     = 0x7d
	opI64LtS     = 0x53
	opRefNull    = 0xd0
	opRefIsNull  = 0xd1
	opRefFunc    = 0xd2
	opMiscPrefix = 0xfc
	opVecPrefix  = 0xfd
	opUnreachabl = 0x00
	opNop        = 0x01
	opDrop       = 0x1a
	opI32LeS     = 0x4c
	opI32Sub     = 0x6b
	opMemoryGrow = 0x40
)

// isValType reports whether b is a value type of WebAssembly 2.0: i32,
// i64, f32, f64, v128 (SIMD) or one of the two reference types.
func isValType(b byte) bool {
	switch b {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		return true
	}
	return false
}

// isRefType reports whether b is a reference type: funcref or externref.
func isRefType(b byte) bool { return b == 0x70 || b == 0x6f }

// indexChecker receives every function and global index an instruction
// names, so that the caller can refuse indices the original module does
// not have.
type indexChecker struct {
	funcs, globals uint32
}

func (c indexChecker) fn(i uint32) error {
	if i >= c.funcs {
		return fmt.Errorf("function index %d is out of range (the module has %d functions)", i, c.funcs)
	}
	return nil
}

func (c indexChecker) global(i uint32) error {
	if i >= c.globals {
		return fmt.Errorf("global index %d is out of range (the module has %d globals)", i, c.globals)
	}
	return nil
}

// site is where guardBody changes a body: a return instruction at off
// (replaced by a branch out of depth blocks), or the start of a loop's
// body at off (where the stop check is inserted).
type site struct {
	off, depth int
	loop       bool
}

// scanBody walks one function body's instructions (after its locals) to
// their final end, which must be the body's last byte, checking the
// indices they name. It returns the number of instructions and, in order,
// where the return instructions are and where loop bodies start.
//
// It reads every immediate exactly as wazero v1.12 does for the features
// the host enables (WebAssembly 2.0: multi-value, bulk memory, reference
// types, SIMD, sign extension, saturating conversions) and refuses every
// other opcode and every encoding wazero might read differently, so that
// the instructions seen here are the ones wazero compiles.
func scanBody(r *reader, ic indexChecker) (int, []site, error) {
	depth := 1
	n := 0
	var sites []site
	for depth > 0 {
		if r.done() {
			return 0, nil, fmt.Errorf("the function body ends inside a block")
		}
		at := r.off
		op := r.b[r.off]
		r.off++
		n++
		var err error
		switch opClass[op] {
		case kNone:
		case kU32:
			err = r.skipLEB(5)
		case kMemArg:
			err = skipMemArg(r)
		case kI32:
			err = r.skipLEB(5)
		case kEnd:
			depth--
		case kBlock:
			err = scanBlockType(r)
			depth++
			if op == opLoop {
				sites = append(sites, site{off: r.off, loop: true})
			}
		case kCall, kRefFunc:
			var i uint32
			if i, err = r.u32(); err == nil {
				err = ic.fn(i)
			}
		case kGlobal:
			var i uint32
			if i, err = r.u32(); err == nil {
				err = ic.global(i)
			}
		case kReturn:
			sites = append(sites, site{off: at, depth: depth - 1})
		case kI64:
			err = r.skipLEB(10)
		case kF32:
			_, err = r.bytes(4)
		case kF64:
			_, err = r.bytes(8)
		case kBrTable:
			var n uint32
			if n, err = r.u32(); err == nil {
				for i := uint64(0); i <= uint64(n) && err == nil; i++ { // n labels and the default
					err = r.skipLEB(5)
				}
			}
		case kCallInd:
			if err = r.skipLEB(5); err == nil { // type index
				err = r.skipLEB(5) // table index
			}
		case kSelectT:
			err = scanSelectT(r)
		case kMemIdx:
			var b byte
			if b, err = r.byte(); err == nil && b != 0 {
				err = fmt.Errorf("memory index %#x", b)
			}
		case kRefNull:
			var t byte
			if t, err = r.byte(); err == nil && !isRefType(t) {
				err = fmt.Errorf("ref.null of unsupported type %#x", t)
			}
		case kMisc:
			err = scanMisc(r)
		case kVec:
			err = scanVec(r)
		default:
			// Exceptions, tail calls, typed function references, threads
			// and unassigned opcodes: none is enabled in the host's
			// runtime.
			err = fmt.Errorf("unsupported opcode")
		}
		if err != nil {
			return 0, nil, fmt.Errorf("instruction %#x at offset %d: %w", op, at, err)
		}
	}
	if !r.done() {
		return 0, nil, fmt.Errorf("bytes follow the function's final end")
	}
	return n, sites, nil
}

// Instruction classes: how each opcode's immediates are read.
const (
	kInvalid = iota
	kNone
	kBlock
	kEnd
	kReturn
	kU32
	kBrTable
	kCall
	kCallInd
	kSelectT
	kGlobal
	kMemArg
	kMemIdx
	kI32
	kI64
	kF32
	kF64
	kRefNull
	kRefFunc
	kMisc
	kVec
)

// opClass classifies every opcode of the enabled features; the others are
// kInvalid.
var opClass = func() (c [256]uint8) {
	set := func(lo, hi int, k uint8) {
		for op := lo; op <= hi; op++ {
			c[op] = k
		}
	}
	set(0x00, 0x01, kNone) // unreachable, nop
	set(opBlock, opIf, kBlock)
	c[opElse] = kNone
	c[opEnd] = kEnd
	set(opBr, opBrIf, kU32)
	c[opBrTable] = kBrTable
	c[opReturn] = kReturn
	c[opCall] = kCall
	c[opCallInd] = kCallInd
	set(0x1a, 0x1b, kNone) // drop, select
	c[opSelectT] = kSelectT
	set(opLocalGet, opLocalTee, kU32)
	set(opGlobalGet, opGlobalSet, kGlobal)
	set(opTableGet, opTableSet, kU32)
	set(0x28, 0x3e, kMemArg) // loads and stores
	set(0x3f, 0x40, kMemIdx) // memory.size, memory.grow
	c[opI32Const] = kI32
	c[opI64Const] = kI64
	c[opF32Const] = kF32
	c[opF64Const] = kF64
	set(0x45, 0xc4, kNone) // numeric instructions and sign extension
	c[opRefNull] = kRefNull
	c[opRefIsNull] = kNone
	c[opRefFunc] = kRefFunc
	c[opMiscPrefix] = kMisc
	c[opVecPrefix] = kVec
	return c
}()

// scanBlockType reads a block type. -64 (0x40) is empty; -1 … -5, -16 and
// -17 are the value types; a non-negative value is a type index. Typed
// references (0x63, 0x64) and exnref are outside the enabled features.
func scanBlockType(r *reader) error {
	bt, err := r.s33()
	if err != nil {
		return err
	}
	switch {
	case bt == -64, bt >= -5 && bt <= -1, bt == -16, bt == -17, bt >= 0:
		return nil
	}
	return fmt.Errorf("unsupported block type %d", bt)
}

// scanSelectT reads a typed select's single value type.
func scanSelectT(r *reader) error {
	count, err := r.byte()
	if err != nil {
		return err
	}
	if count != 1 {
		return fmt.Errorf("typed select with %d types", count)
	}
	t, err := r.byte()
	if err != nil {
		return err
	}
	if !isValType(t) {
		return fmt.Errorf("typed select of unsupported type %#x", t)
	}
	return nil
}

func skipMemArg(r *reader) error {
	if _, err := r.u32(); err != nil { // alignment
		return err
	}
	_, err := r.u32() // offset
	return err
}

// scanMisc reads a 0xFC instruction: saturating conversions, bulk memory
// and table instructions.
func scanMisc(r *reader) error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	zero := func() error { // a reserved memory index: one zero byte
		b, err := r.byte()
		if err == nil && b != 0 {
			err = fmt.Errorf("reserved byte %#x", b)
		}
		return err
	}
	u32s := func(n int) error {
		for range n {
			if _, err := r.u32(); err != nil {
				return err
			}
		}
		return nil
	}
	switch {
	case sub <= 7: // trunc_sat
		return nil
	case sub == 8: // memory.init data, 0
		if err := u32s(1); err != nil {
			return err
		}
		return zero()
	case sub == 9: // data.drop
		return u32s(1)
	case sub == 10: // memory.copy 0 0
		if err := zero(); err != nil {
			return err
		}
		return zero()
	case sub == 11: // memory.fill 0
		return zero()
	case sub == 12 || sub == 14: // table.init elem table, table.copy dst src
		return u32s(2)
	case sub == 13 || sub == 15 || sub == 16 || sub == 17: // elem.drop, table.grow/size/fill
		return u32s(1)
	}
	return fmt.Errorf("unsupported 0xfc instruction %d", sub)
}

// scanVec reads a SIMD instruction. wazero reads its opcode as one byte (a
// two-byte LEB128 opcode of 128 … 255 reads as that byte followed by a nop,
// 0x01), and so does this.
func scanVec(r *reader) error {
	sub, err := r.byte()
	if err != nil {
		return err
	}
	switch {
	case sub <= 11 || sub == 92 || sub == 93: // loads, store, load_zero
		return skipMemArg(r)
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		_, err := r.bytes(16)
		return err
	case sub >= 21 && sub <= 34: // extract_lane, replace_lane
		_, err := r.byte()
		return err
	case sub >= 84 && sub <= 91: // load_lane, store_lane
		if err := skipMemArg(r); err != nil {
			return err
		}
		_, err := r.byte()
		return err
	}
	// Every other SIMD opcode has no immediate; wazero refuses the
	// unassigned ones.
	return nil
}

// scanConstExpr reads a constant expression to its end (global
// initialisers, segment offsets, element expressions), checking the
// indices it names, as wazero's decoder reads it.
func scanConstExpr(r *reader, ic indexChecker) error {
	for {
		op, err := r.byte()
		if err != nil {
			return err
		}
		switch op {
		case opEnd:
			return nil
		case opI32Const:
			err = r.skipLEB(5)
		case opI64Const:
			err = r.skipLEB(10)
		case opF32Const:
			_, err = r.bytes(4)
		case opF64Const:
			_, err = r.bytes(8)
		case opGlobalGet:
			var i uint32
			if i, err = r.u32(); err == nil {
				err = ic.global(i)
			}
		case opRefNull:
			var t byte
			if t, err = r.byte(); err == nil && !isRefType(t) {
				err = fmt.Errorf("ref.null of unsupported type %#x", t)
			}
		case opRefFunc:
			var i uint32
			if i, err = r.u32(); err == nil {
				err = ic.fn(i)
			}
		case opVecPrefix:
			var sub byte
			if sub, err = r.byte(); err == nil {
				if sub != 12 {
					err = fmt.Errorf("SIMD instruction %d in a constant expression", sub)
				} else {
					_, err = r.bytes(16)
				}
			}
		default:
			err = fmt.Errorf("instruction %#x in a constant expression", op)
		}
		if err != nil {
			return fmt.Errorf("constant expression: %w", err)
		}
	}
}
