/*
 * @attack a tool recurses with 8 KiB frames past its 1 MiB stack. Linked
 *         without -Wl,--stack-first the stack sits above the data and the
 *         overflow would silently overwrite the plugin's globals; the SDK's
 *         build links with --stack-first, so it leaves the bottom of
 *         memory instead.
 * @host   turns the overflow into plugin_trap, discards the instance and
 *         answers the next call from a fresh one, whose globals are intact.
 * @load   ok
 * @call   tool deep {"depth":1000} -> plugin_trap "out of bounds memory access"
 * @call   tool deep {"depth":10} -> ok "depth 10, canary 12345"
 */
#include "apconnect_plugin.h"

static volatile int canary = 12345;

static int deep(int n) {
	volatile char frame[8192];
	frame[n % 8192] = (char)n;
	if (n <= 0) return frame[0];
	return deep(n - 1) + frame[(n * 7) % 8192];
}

static void deep_tool(const ap_tool_request *req, ap_tool_result *res) {
	int64_t depth = 0;
	ap_int(ap_get(req->arguments, "depth"), &depth);
	deep((int)depth);
	ap_result_textf(res, "depth %lld, canary %d", (long long)depth, canary);
}

static const ap_tool tools[] = {{.name = "deep", .description = "recurses", .handler = deep_tool}};
AP_PLUGIN(.name = "stack_overflow", .version = "1", .tools = tools, .tool_count = AP_COUNT(tools));
