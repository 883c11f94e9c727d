package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"apconnect/host/identity"
)

// errorEnvelope is the output of a call that returned status 1.
type errorEnvelope struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// roundTrip marshals env, runs op and, on success, checks the output
// (depth, strict JSON, schema, content policy), decodes it into out and
// runs verify (semantic checks, may be nil). A check failure discards the
// instance like a trap does.
func (p *Plugin) roundTrip(ctx context.Context, op Op, env any, out any, verify func() error) error {
	input, err := json.Marshal(env)
	if err != nil {
		return p.err(CodeInvalidConfig, op, "cannot encode the input envelope: %v", err)
	}
	return p.roundTripBytes(ctx, op, input, out, verify)
}

// roundTripBytes is roundTrip for an envelope already encoded.
func (p *Plugin) roundTripBytes(ctx context.Context, op Op, input []byte, out any, verify func() error) error {
	if op != OpWatch || p.rt.opts.CheckWatchInputs {
		if err := p.checkInput(op, input); err != nil {
			return err
		}
	}
	return p.invoke(ctx, op, input, func(output []byte) error {
		if err := p.parseOutput(op, output, false); err != nil {
			return err
		}
		if err := decodeInto(output, out); err != nil {
			return p.err(CodeInvalidOutput, op, "cannot decode the output: %v", err)
		}
		if verify != nil {
			return verify()
		}
		return nil
	})
}

// checkInput validates an input envelope against its schema.
func (p *Plugin) checkInput(op Op, input []byte) error {
	v, err := identity.ParseStrict(input)
	if err == nil {
		err = p.rt.schemas.input[op].Validate(v)
	}
	if err != nil {
		return p.err(CodeInvalidConfig, op, "the host built an input envelope its schema refuses: %s", schemaMessage(err))
	}
	return nil
}

// invoke runs one operation on a pooled instance under the op's deadline
// and hands a successful output to check before the instance goes back to
// the pool. Every failure is recorded in the plugin's health; failures that
// leave the instance in an unknown state discard it.
func (p *Plugin) invoke(ctx context.Context, op Op, input []byte, check func(output []byte) error) error {
	start := time.Now()
	err := p.awaitReady(ctx, op)
	if err == nil {
		err = p.invokeOnce(ctx, op, input, check)
	}
	p.record(op, err, time.Since(start))
	return err
}

func (p *Plugin) invokeOnce(ctx context.Context, op Op, input []byte, check func(output []byte) error) error {
	if p.isClosed() {
		return p.err(CodeClosed, op, "the plugin is closed")
	}
	if len(input) > p.limits.MaxInputBytes {
		return p.err(CodeInputTooLarge, op, "input of %d bytes exceeds the cap of %d bytes", len(input), p.limits.MaxInputBytes)
	}
	// Waiting for a free instance is bounded by the caller only; creating
	// one, when none is idle, counts against the call's deadline.
	timeout := p.limits.timeout(op)
	var spawnedAt time.Time
	inst, err := p.pool.acquire(ctx, func() (*instance, error) {
		spawnedAt = time.Now()
		return p.spawn(ctx, timeout)
	})
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Op = op.String()
			return e
		}
		return p.err(CodeCanceled, op, "waiting for an instance: %v", err)
	}
	deadline := time.Now().Add(timeout)
	if !spawnedAt.IsZero() {
		deadline = spawnedAt.Add(timeout)
	}
	cs := &callState{input: input, maxOutput: p.limits.maxOutput(op), log: p.log}
	logMark := p.log.count()
	cctx, cancel := context.WithDeadline(withCallState(ctx, cs), deadline)
	endWithPlugin := context.AfterFunc(p.life, cancel) // Close stops the call
	release := inst.stopWhenDone(cctx)
	res, callErr := inst.call.Call(cctx, uint64(op), uint64(len(input)))
	expired := cctx.Err() != nil && ctx.Err() == nil
	release()
	endWithPlugin()
	cancel()

	fail := func(e *Error) error {
		if e.Code.discards() {
			p.pool.discard(context.WithoutCancel(ctx), inst)
			p.noteDiscard()
		} else {
			p.pool.release(inst)
		}
		return e
	}
	if callErr != nil {
		return fail(p.classify(ctx, op, inst, cs, callErr, expired, logMark))
	}
	if cs.violation != nil {
		return fail(p.err(CodeInvalidOutput, op, "ABI violation: %v", cs.violation))
	}
	if !cs.outputSet {
		return fail(p.err(CodeInvalidOutput, op, "the call returned without output"))
	}
	switch status := api.DecodeI32(res[0]); status {
	case statusOK:
		if err := check(cs.output); err != nil {
			var e *Error
			if !errors.As(err, &e) {
				e = p.err(CodeInvalidOutput, op, "%v", err)
			}
			return fail(e)
		}
		p.pool.release(inst)
		return nil
	case statusError:
		return fail(p.guestError(op, cs.output))
	default:
		return fail(p.err(CodeInvalidOutput, op, "status %d is not part of the ABI", status))
	}
}

// guestError turns an error envelope into an *Error. A reported panic gets
// CodePanic, which discards the instance.
func (p *Plugin) guestError(op Op, output []byte) *Error {
	if err := p.parseOutput(op, output, true); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return e
		}
		return p.err(CodeInvalidOutput, op, "%v", err)
	}
	var env errorEnvelope
	if err := json.Unmarshal(output, &env); err != nil {
		return p.err(CodeInvalidOutput, op, "cannot decode the error output: %v", err)
	}
	if env.Error.Code == "panic" {
		return p.err(CodePanic, op, "the plugin panicked: %s", env.Error.Message)
	}
	return p.err(CodeGuestError, op, "%s: %s", env.Error.Code, env.Error.Message)
}

// classify turns an error from wazero into an *Error.
func (p *Plugin) classify(ctx context.Context, op Op, inst *instance, cs *callState, err error, deadline bool, logMark uint64) *Error {
	var e *Error
	if errors.As(cs.violation, &e) {
		e.Plugin, e.Op = p.label(), op.String()
		return e
	}
	if cs.violation != nil {
		return p.err(CodeInvalidOutput, op, "ABI violation: %v", cs.violation)
	}
	if p.isClosed() {
		return p.err(CodeClosed, op, "the plugin was closed during the call")
	}
	if deadline {
		return p.err(CodeTimeout, op, "the call did not finish within %v; the instance was closed", p.limits.timeout(op))
	}
	if ctx.Err() != nil {
		return p.err(CodeCanceled, op, "the caller gave up: %v", ctx.Err())
	}
	if inst.stackExhausted() {
		return p.err(CodeTrap, op, "%s", p.stackMessage())
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return p.err(CodeTrap, op, "the module exited with code %d%s", exit.ExitCode(), p.stderrHint(logMark))
	}
	return p.err(CodeTrap, op, "%s%s", firstLine(err.Error()), p.stderrHint(logMark))
}
