/*
 * @attack tools that go around the SDK to break the ABI: one hands the host
 *         an output of its own and then the SDK hands over another (two
 *         outputs in one call), one points the output at the end of the
 *         address space, one logs 100 lines full of terminal escapes, and
 *         one asks the SDK to encode bytes that are not UTF-8.
 * @host   refuses the double and the out-of-bounds output as ABI
 *         violations (plugin_invalid_output), keeps at most 64 log lines of
 *         one call, without control characters; the SDK's closed encoder
 *         refuses the invalid UTF-8 itself (an encode_failed error envelope,
 *         plugin_error) instead of sending malformed JSON.
 * @load   ok
 * @call   tool twice -> plugin_invalid_output "output called twice"
 * @call   tool oob -> plugin_invalid_output "outside guest memory"
 * @call   tool flood -> ok "flooded"
 * @call   tool latin1 -> plugin_error "encode_failed" "not valid UTF-8"
 * @log    "line 63 [31mred"
 */
#include "apconnect_plugin.h"

#include <string.h>

__attribute__((import_module("apconnect"), import_name("output"))) void raw_output(const void *ptr, uint32_t len);

static void twice(const ap_tool_request *req, ap_tool_result *res) {
	(void)req;
	static const char out[] = "{\"content\":[{\"type\":\"text\",\"text\":\"first\"}]}";
	raw_output(out, sizeof out - 1);
	ap_result_text(res, "second");
}

static void oob(const ap_tool_request *req, ap_tool_result *res) {
	(void)req, (void)res;
	raw_output((const void *)0xFFFFFF00u, 1000);
}

static void flood(const ap_tool_request *req, ap_tool_result *res) {
	(void)req;
	for (int i = 0; i < 100; i++) ap_logf(AP_LOG_WARN, "line %d \x1b[31mred\x1b[0m\r\n", i);
	ap_result_text(res, "flooded");
}

static void latin1(const ap_tool_request *req, ap_tool_result *res) {
	(void)req;
	ap_result_text(res, "caf\xe9");
}

static const ap_tool tools[] = {
	{.name = "twice", .description = "two outputs", .handler = twice},
	{.name = "oob", .description = "output out of bounds", .handler = oob},
	{.name = "flood", .description = "floods the log", .handler = flood},
	{.name = "latin1", .description = "not UTF-8", .handler = latin1},
};
AP_PLUGIN(.name = "raw_abi", .version = "1", .tools = tools, .tool_count = AP_COUNT(tools));
