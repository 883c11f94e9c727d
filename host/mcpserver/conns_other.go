//go:build !unix

package mcpserver

// fitDescriptors keeps max where there is no descriptor limit to read.
func fitDescriptors(max int) int { return max }
