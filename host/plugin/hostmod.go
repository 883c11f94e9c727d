package plugin

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// callState is the per-call state the host functions reach through the
// call's context: the pending input, the output slot and the log quota.
type callState struct {
	input     []byte
	maxOutput int
	output    []byte
	outputSet bool
	violation error // an ABI violation; the instance is discarded
	logLines  int
	log       *ringLog
}

type callStateKey struct{}

func withCallState(ctx context.Context, cs *callState) context.Context {
	return context.WithValue(ctx, callStateKey{}, cs)
}

// abiViolation aborts the guest from inside a host function; wazero turns
// the panic into an error returned from the call.
type abiViolation struct{ msg string }

// Error returns the violation.
func (v *abiViolation) Error() string { return v.msg }

func violate(cs *callState, format string, args ...any) {
	v := &abiViolation{msg: fmt.Sprintf(format, args...)}
	if cs != nil && cs.violation == nil {
		cs.violation = v
	}
	panic(v)
}

func stateOf(ctx context.Context) *callState {
	cs, _ := ctx.Value(callStateKey{}).(*callState)
	if cs == nil {
		violate(nil, "host function called outside an operation (during initialisation?)")
	}
	return cs
}

// instantiateHostModule defines the "apconnect" module in rt.
func instantiateHostModule(ctx context.Context, rt wazero.Runtime) error {
	i32 := api.ValueTypeI32
	_, err := rt.NewHostModuleBuilder(ImportModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostInput), []api.ValueType{i32}, nil).
		WithParameterNames("ptr").
		Export("input").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostOutput), []api.ValueType{i32, i32}, nil).
		WithParameterNames("ptr", "len").
		Export("output").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostLog), []api.ValueType{i32, i32, i32}, nil).
		WithParameterNames("level", "ptr", "len").
		Export("log").
		Instantiate(ctx)
	return err
}

// hostInput copies the pending input envelope (in_len bytes) to guest
// memory at ptr. It may be called more than once per call.
func hostInput(ctx context.Context, mod api.Module, stack []uint64) {
	cs := stateOf(ctx)
	ptr := api.DecodeU32(stack[0])
	if !mod.Memory().Write(ptr, cs.input) {
		violate(cs, "input: %d bytes at %#x are outside guest memory", len(cs.input), ptr)
	}
}

// hostOutput takes the output envelope. The length is checked against the
// cap before anything is copied; a second output in one call is a
// violation.
func hostOutput(ctx context.Context, mod api.Module, stack []uint64) {
	cs := stateOf(ctx)
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	if cs.outputSet {
		violate(cs, "output called twice in one call")
	}
	if uint64(n) > uint64(cs.maxOutput) {
		cs.violation = errorf(CodeOutputTooLarge, "", "", "output of %d bytes exceeds the cap of %d bytes", n, cs.maxOutput)
		panic(cs.violation)
	}
	b, ok := mod.Memory().Read(ptr, n)
	if !ok {
		violate(cs, "output: %d bytes at %#x are outside guest memory", n, ptr)
	}
	cs.output = append([]byte(nil), b...)
	cs.outputSet = true
}

// hostLog appends one line to the plugin's ring log. Lines are cut to
// maxLogLine bytes before reading; beyond maxLogLinesPerCall lines per call
// they are dropped.
func hostLog(ctx context.Context, mod api.Module, stack []uint64) {
	cs := stateOf(ctx)
	level, ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1]), api.DecodeU32(stack[2])
	if cs.logLines >= maxLogLinesPerCall {
		cs.log.drop()
		return
	}
	cs.logLines++
	if n > maxLogLine {
		n = maxLogLine
	}
	b, ok := mod.Memory().Read(ptr, n)
	if !ok {
		violate(cs, "log: %d bytes at %#x are outside guest memory", n, ptr)
	}
	cs.log.add("log", levelName(level), string(b))
}
