package plugin

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The ABI core links neither encoding/json nor fmt nor reflect into a
// module (together about 40% of a minimal Go plugin); they are opt-in
// through plugin/stdlib and plugin/structjson.
func TestCoreLinksNoReflection(t *testing.T) {
	// go test puts its own toolchain first on the PATH of the test.
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "apconnect/sdk-guest/plugin") {
		t.Fatalf("go list -deps does not list the package itself: %v", deps)
	}
	for _, heavy := range []string{"encoding/json", "fmt", "reflect"} {
		if slices.Contains(deps, heavy) {
			t.Errorf("apconnect/sdk-guest/plugin imports %s (go list -deps)", heavy)
		}
	}
}
