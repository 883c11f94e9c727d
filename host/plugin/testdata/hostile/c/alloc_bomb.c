/*
 * @attack tools that exhaust memory: one allocates from the SDK's call
 *         arena until the memory cap, one mallocs until malloc fails and
 *         then writes through the NULL it got (address 0 is ordinary memory
 *         in WebAssembly, where --stack-first puts the bottom of the stack).
 * @host   caps the instance's memory at memory_mib: the SDK traps when its
 *         allocation fails (plugin_trap) and the instance is discarded; the
 *         write through NULL does not trap (it lands in the unused bottom
 *         of the instance's own stack), so that plugin's answer stands:
 *         whatever a plugin does to its memory stays in its instance. (The
 *         deadline is long: only the cap may end the calls.)
 * @limits memory_mib=16 tool_ms=30000
 * @load   ok
 * @call   tool hog -> plugin_trap "unreachable"
 * @call   tool null -> ok "malloc failed after"
 * @call   tool fine -> ok "still here"
 */
#include "apconnect_plugin.h"

#include <stdlib.h>

static void hog(const ap_tool_request *req, ap_tool_result *res) {
	(void)req;
	for (int i = 0; i < 1 << 20; i++) {
		volatile char *p = ap_alloc(1 << 20);
		p[0] = 1;
	}
	ap_result_text(res, "unreachable: the cap is 16 MiB");
}

static void null_write(const ap_tool_request *req, ap_tool_result *res) {
	(void)req;
	void *blocks[64];
	int n = 0;
	while (n < 64 && (blocks[n] = malloc(1 << 20)) != NULL) n++;
	volatile char *p = blocks[n < 64 ? n : 63];
	if (n < 64) p[0] = 'x'; /* malloc returned NULL: writes to address 0 */
	for (int i = 0; i < n; i++) free(blocks[i]);
	ap_result_textf(res, "malloc failed after %d MiB", n);
}

static void fine(const ap_tool_request *req, ap_tool_result *res) {
	(void)req;
	ap_result_text(res, "still here");
}

static const ap_tool tools[] = {
	{.name = "hog", .description = "allocates without end", .handler = hog},
	{.name = "null", .description = "writes through NULL", .handler = null_write},
	{.name = "fine", .description = "answers", .handler = fine},
};
AP_PLUGIN(.name = "alloc_bomb", .version = "1", .tools = tools, .tool_count = AP_COUNT(tools));
