package capability_test

import (
	"fmt"

	"apconnect/host/capability"
)

// An operator grants posting in rooms and reading profiles; the write
// brings its read.
func ExampleParse() {
	s, err := capability.Parse([]string{"discourse.write", "agent.profile.read"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Names())
	fmt.Println(s.Has(capability.DiscourseRead), s.Has(capability.ProfileWrite))
	// Output:
	// [discourse.read discourse.write agent.profile.read]
	// true false
}

// A refused name is named in the error.
func ExampleParse_unknown() {
	_, err := capability.Parse([]string{"mail.read", "profile.write"})
	fmt.Println(err.(*capability.NameError).Name)
	// Output:
	// profile.write
}

// Each capability knows its protocol and whether it writes.
func ExampleCapability_Protocol() {
	c := capability.MailWrite
	fmt.Println(c, c.Protocol(), c.Access(), c.Protocol().ID(), c.Protocol().WellKnown())
	// Output:
	// mail.write mail write agent-mail/1.0 agent-mail
}
