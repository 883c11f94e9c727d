package mail

import (
	"bytes"
	"encoding/binary"
	"errors"
	"unicode/utf8"

	"apconnect/host/identity"
)

// FrameSize is the length of the frame of n bytes of JSON: 4 + n rounded up
// to a multiple of FrameBlock.
func FrameSize(n int) int {
	return (4 + n + FrameBlock - 1) / FrameBlock * FrameBlock
}

// Frame frames a plaintext: a 4-byte big-endian length, the bytes, then
// zeros up to the next multiple of FrameBlock. Empty input is invalid_event
// and more than MaxPacketBytes is payload_too_large.
func Frame(data []byte) ([]byte, error) {
	if len(data) == 0 {
		return nil, fail(CodeInvalidEvent, "", "an empty plaintext cannot be framed")
	}
	if len(data) > MaxPacketBytes {
		return nil, fail(CodePayloadTooLarge, "", "the message is %d bytes, more than %d", len(data), MaxPacketBytes)
	}
	frame := make([]byte, FrameSize(len(data)))
	binary.BigEndian.PutUint32(frame, uint32(len(data)))
	copy(frame[4:], data)
	return frame, nil
}

// EncodePlaintext checks a message and frames JCS(message).
func EncodePlaintext(m *Message) ([]byte, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	b, err := m.Canonical()
	if err != nil {
		return nil, fail(CodeInvalidEvent, "", "cannot canonicalize the message: %v", err)
	}
	return Frame(b)
}

// Unframe returns the JSON bytes of a frame, refusing (invalid_event) a
// length that is not a multiple of FrameBlock from FrameBlock to
// MaxPacketBytes, a zero or overlong length prefix, padding longer than
// needed (a frame must be minimal) and non-zero padding.
func Unframe(frame []byte) ([]byte, error) {
	if len(frame) < FrameBlock || len(frame) > MaxPacketBytes || len(frame)%FrameBlock != 0 {
		return nil, fail(CodeInvalidEvent, "", "invalid plaintext block length %d", len(frame))
	}
	n := int(binary.BigEndian.Uint32(frame))
	if n == 0 || n > len(frame)-4 {
		return nil, fail(CodeInvalidEvent, "", "invalid plaintext JSON length %d", n)
	}
	if FrameSize(n) != len(frame) {
		return nil, fail(CodeInvalidEvent, "", "non-minimal padding")
	}
	for _, b := range frame[4+n:] {
		if b != 0 {
			return nil, fail(CodeInvalidEvent, "", "non-zero padding")
		}
	}
	return frame[4 : 4+n], nil
}

// DecodePlaintext unframes a decrypted plaintext and reads the message, as
// the SDK's decode_mail_plaintext does: the frame rules (Unframe), UTF-8
// strict JSON, JSON already in its JCS form byte for byte, and a valid
// message (MessageFromValue). Every refusal is invalid_event.
func DecodePlaintext(frame []byte) (*Message, error) {
	data, err := Unframe(frame)
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(data) {
		return nil, fail(CodeInvalidEvent, "", "the plaintext is not UTF-8")
	}
	v, err := identity.ParseStrict(data)
	if err != nil {
		var je *identity.JSONError
		if errors.As(err, &je) {
			return nil, fail(CodeInvalidEvent, je.Pointer, "the plaintext is not strict JSON: %s", je.Reason)
		}
		return nil, fail(CodeInvalidEvent, "", "the plaintext is not strict JSON: %v", err)
	}
	canon, err := identity.Canonicalize(v)
	if err != nil || !bytes.Equal(canon, data) {
		return nil, fail(CodeInvalidEvent, "", "the plaintext JSON is not in JCS form")
	}
	return MessageFromValue(v, "")
}
