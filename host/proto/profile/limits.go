package profile

// Limits are the field limits of section 4.2 a service enforces on
// profile.update payloads. Zero fields take the recommended values of
// DefaultLimits. The JSON names are those a service publishes in its
// discovery document.
type Limits struct {
	// NameChars and DescriptionChars count Unicode scalar values.
	NameChars        int `json:"name_chars"`
	DescriptionChars int `json:"description_chars"`
	Capabilities     int `json:"capabilities"`
	ServiceEndpoints int `json:"service_endpoints"`
	Links            int `json:"links"`
	Delegations      int `json:"delegations"`
	// ExtraBytes bounds the canonical (JCS) serialization of extra.
	ExtraBytes int `json:"extra_bytes"`
}

// DefaultLimits returns the recommended values of section 4.2.
func DefaultLimits() Limits {
	return Limits{
		NameChars:        128,
		DescriptionChars: 2048,
		Capabilities:     64,
		ServiceEndpoints: 32,
		Links:            64,
		Delegations:      32,
		ExtraBytes:       32 << 10,
	}
}

// WithDefaults returns l with its zero fields set from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	for _, f := range []struct{ v, def *int }{
		{&l.NameChars, &d.NameChars}, {&l.DescriptionChars, &d.DescriptionChars},
		{&l.Capabilities, &d.Capabilities}, {&l.ServiceEndpoints, &d.ServiceEndpoints},
		{&l.Links, &d.Links}, {&l.Delegations, &d.Delegations}, {&l.ExtraBytes, &d.ExtraBytes},
	} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	return l
}
