/*
 * hello_c is examples/plugins/hello in C: a type pack with one greeting
 * type, a validator for it, a watch rule and a tool. It behaves exactly
 * like the Go example (the same tests run against both); only its name, and
 * so its tool's MCP name and its pack's owner, differ.
 */
#include "apconnect_plugin.h"

#include <string.h>

/* Nobody may greet themselves. */
static void validate_greeting(const ap_validate_request *req, ap_errors *errs) {
	if (ap_str_eq(ap_get(req->payload, "to"), req->actor)) ap_refuse(errs, "/payload/to", "do not greet yourself");
}

/* A greeting addressed to the active agent becomes an inbox item. */
static bool watch_greeting(const ap_record *rec, const ap_watch_request *req, ap_inbox_item *item) {
	if (!ap_str_eq(ap_get(rec->payload, "to"), req->room->self_id)) return false;
	item->summary = "Someone greeted you";
	item->suggested_tools[0] = "wave";
	return true;
}

static void wave(const ap_tool_request *req, ap_tool_result *res) {
	(void)req;
	ap_result_text(res, "👋");
}

static const ap_validator validators[] = {{"hello.greeting", validate_greeting}};
static const ap_watcher watchers[] = {{"hello.greeting", watch_greeting}};
static const ap_tool tools[] = {{.name = "wave", .description = "Waves back.", .handler = wave}};
static const ap_type_def greeting_types[] = {{
	.type = "hello.greeting",
	.kind = "signal",
	.title = "Greeting",
	.schema = "{\"type\": \"object\", \"required\": [\"to\"], \"properties\": {\"to\": {\"type\": \"string\"}}}",
}};
static const ap_pack packs[] = {{.name = "hello_c:greetings", .version = "1.0", .types = greeting_types, .type_count = AP_COUNT(greeting_types)}};

AP_PLUGIN(.name = "hello_c", .version = "0.1.0",
	.validators = validators, .validator_count = AP_COUNT(validators),
	.watchers = watchers, .watcher_count = AP_COUNT(watchers),
	.tools = tools, .tool_count = AP_COUNT(tools),
	.packs = packs, .pack_count = AP_COUNT(packs));
