/*
 * @attack a tool spins forever without a single call into the host.
 * @host   stops it at its deadline (plugin_timeout), closes the instance
 *         and answers the next call from a fresh one.
 * @limits tool_ms=1000
 * @load   ok
 * @call   tool spin -> plugin_timeout "did not finish within 1s"
 * @call   tool fine -> ok "still here"
 */
#include "apconnect_plugin.h"

static volatile unsigned long spins;

static void spin(const ap_tool_request *req, ap_tool_result *res) {
	(void)req, (void)res;
	for (;;) spins++;
}

static void fine(const ap_tool_request *req, ap_tool_result *res) {
	(void)req;
	ap_result_text(res, "still here");
}

static const ap_tool tools[] = {
	{.name = "spin", .description = "spins", .handler = spin},
	{.name = "fine", .description = "answers", .handler = fine},
};
AP_PLUGIN(.name = "runaway", .version = "1", .tools = tools, .tool_count = AP_COUNT(tools));
