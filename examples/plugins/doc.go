// Package plugins is the home of the example plugins: hello, the smallest
// useful plugin, and standup, a third-party plugin with its own type pack,
// validator, watch rule and tool. Each subdirectory is its own Go module
// built for wasip1 (`make build` puts them in bin/plugins/); this package
// holds no code, only the tests that build standup and run it under the
// real runtime (hello's are in host/plugin).
package plugins
