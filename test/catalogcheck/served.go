package catalogcheck

import "apconnect/host/toolcatalog"

// Served describes the catalog apconnect serves (schemas/tools, compiled by
// host/toolcatalog into the server and the binary alike) to the scenarios.
func Served() Catalog {
	return Catalog{
		Names: toolcatalog.Names(),
		Inputs: func(n string) []string {
			i, _ := toolcatalog.Info(n)
			return i.Inputs
		},
		Required: func(n string) []string {
			i, _ := toolcatalog.Info(n)
			return i.Required
		},
		Validate: func(n string, data []byte) error {
			s, ok := toolcatalog.OutputSchema(n)
			if !ok {
				return nil
			}
			return s.ValidateJSON(data)
		},
	}
}
