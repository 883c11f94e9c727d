package plugin

// ABIVersion is the plugin ABI version this host speaks. A module whose
// apconnect_abi_version export returns anything else is refused.
const ABIVersion = 1

// Names of the ABI's imports and exports.
const (
	// ImportModule is the module name of the host functions.
	ImportModule = "apconnect"
	// ExportABIVersion is the guest export returning the ABI version: () -> i32.
	ExportABIVersion = "apconnect_abi_version"
	// ExportCall is the guest export running one operation:
	// (op i32, in_len i32) -> status i32.
	ExportCall = "apconnect_call"
)

// Op is an operation code, the first argument of apconnect_call.
type Op int32

// The operations of ABI version 1.
const (
	OpDescribe Op = 1
	OpValidate Op = 2
	OpWatch    Op = 3
	OpTool     Op = 4
	OpPack     Op = 5
)

// String returns the operation's name as used in envelopes ("op" member)
// and schema file names.
func (o Op) String() string {
	switch o {
	case OpDescribe:
		return "describe"
	case OpValidate:
		return "validate"
	case OpWatch:
		return "watch"
	case OpTool:
		return "tool"
	case OpPack:
		return "pack"
	}
	return "unknown"
}

// Status codes returned by apconnect_call.
const (
	statusOK    = 0 // the output is the operation's result envelope
	statusError = 1 // the output is an error envelope
)

// Log levels of the log import.
const (
	LogDebug = 0
	LogInfo  = 1
	LogWarn  = 2
	LogError = 3
)
