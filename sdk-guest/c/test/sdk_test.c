/*
 * Native unit tests of the C SDK: `sdk-guest/c/build.sh --test` compiles
 * this file with the SDK for the build machine (undefined behaviour traps)
 * and runs it; apconnect's go test runs that too.
 */
#include "apconnect_plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                      \
	do {                                                      \
		if (!(cond)) {                                        \
			failures++;                                       \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);   \
			fprintf(stderr, __VA_ARGS__);                     \
			fprintf(stderr, "\n");                            \
		}                                                     \
	} while (0)

static void validate_to(const ap_validate_request *req, ap_errors *errs) {
	if (ap_str_eq(ap_get(req->payload, "to"), req->actor)) ap_refuse(errs, "payload/to", "");
	if (ap_exists(ap_get(req->payload, "many")))
		for (int i = 0; i < 40; i++) ap_refusef(errs, "/payload/many", "error %d", i);
}

static bool watch_to(const ap_record *rec, const ap_watch_request *req, ap_inbox_item *item) {
	if (!ap_str_eq(ap_get(rec->payload, "to"), req->room->self_id)) return false;
	item->summary = "hi";
	item->priority = AP_PRIORITY_HIGH;
	item->suggested_tools[0] = "wave";
	item->suggested_tools[1] = "Bad Name";
	item->suggested_tools[2] = "wave";
	return true;
}

static void echo(const ap_tool_request *req, ap_tool_result *res) {
	if (ap_exists(ap_get(req->arguments, "fail"))) {
		ap_result_error(res, "no");
		return;
	}
	ap_writer *w = ap_result_structured(res);
	ap_w_begin_object(w);
	ap_w_key(w, "args");
	ap_w_json(w, req->arguments);
	ap_w_key(w, "room");
	ap_w_string(w, req->room ? req->room->room_id : "none");
	ap_w_end_object(w);
	if (ap_exists(ap_get(req->arguments, "broken"))) ap_w_key(w, "dangling");
}

static const ap_validator validators[] = {{"t.x", validate_to}};
static const ap_watcher watchers[] = {{"t.x", watch_to}};
static const ap_tool tools[] = {{.name = "echo", .description = "Echoes.", .handler = echo}};
AP_PLUGIN(.name = "t", .version = "1", .validators = validators, .validator_count = 1, .watchers = watchers, .watcher_count = 1,
	.tools = tools, .tool_count = 1);

static void expect(int32_t op, const char *in, bool want_ok, const char *want) {
	size_t n;
	bool ok;
	const char *out = ap_handle(op, in, strlen(in), &n, &ok);
	CHECK(ok == want_ok && strlen(out) == n, "op %d %s: ok %d", op, in, ok);
	CHECK(strstr(out, want) != NULL, "op %d %s:\n  got  %s\n  want %s", op, in, out, want);
}

int main(void) {
	expect(1, "", true,
		"{\"name\":\"t\",\"version\":\"1\",\"abi_version\":1,\"validates\":[\"t.x\"],\"watches\":[\"t.x\"],"
		"\"tools\":[{\"name\":\"echo\",\"description\":\"Echoes.\",\"input_schema\":{\"type\":\"object\"}}]}");
	expect(2, "{\"op\":\"validate\",\"proposal\":{\"type\":\"t.x\",\"actor\":\"a\",\"payload\":{\"to\":\"a\"}},\"room\":{\"room_id\":\"r\"}}", true,
		"{\"ok\":false,\"errors\":[{\"path\":\"/payload/to\",\"message\":\"invalid\"}]}");
	expect(2, "{\"proposal\":{\"type\":\"t.x\",\"actor\":\"a\",\"payload\":{\"to\":\"b\"}},\"room\":{}}", true, "{\"ok\":true}");
	expect(2, "{\"proposal\":{\"type\":\"t.x\",\"payload\":{\"many\":1}}}", true, "\"message\":\"error 31\"}]}");
	expect(2, "{\"proposal\":{\"type\":\"t.y\"}}", false, "\"code\":\"unknown_type\"");
	expect(3,
		"{\"room\":{\"room_id\":\"r\",\"self\":{\"agent_id\":\"me\"}},\"records\":[{\"seq\":4,\"type\":\"t.x\",\"payload\":{\"to\":\"me\"}},"
		"{\"seq\":5,\"type\":\"t.x\",\"payload\":{\"to\":\"you\"}},{\"seq\":6,\"type\":\"t.z\"}]}",
		true, "{\"items\":[{\"kind\":\"room.event.custom\",\"seq\":4,\"summary\":\"hi\",\"priority\":\"high\",\"suggested_tools\":[\"wave\"]}]}");
	expect(4, "{\"name\":\"echo\",\"arguments\":{\"s\":\"\\u003c\\u2028\\ud83d\\ude00\\n\",\"n\":-12,\"f\":1.5,\"l\":[true,null]},\"context\":{\"room\":{\"room_id\":\"r1\"}}}",
		true, "\"structured\":{\"args\":{\"s\":\"<\xe2\x80\xa8\xf0\x9f\x98\x80\\n\",\"n\":-12,\"f\":1.5,\"l\":[true,null]},\"room\":\"r1\"}");
	expect(4, "{\"name\":\"echo\",\"arguments\":{\"fail\":1}}", true, "{\"content\":[{\"type\":\"text\",\"text\":\"no\"}],\"is_error\":true}");
	expect(4, "{\"name\":\"echo\",\"arguments\":{\"broken\":1}}", false, "\"code\":\"encode_failed\"");
	expect(4, "{\"name\":\"nope\"}", false, "\"code\":\"unknown_tool\"");
	expect(9, "{}", false, "\"code\":\"unknown_op\"");
	expect(5, "{\"name\":\"x:y\"}", false, "\"code\":\"unknown_pack\"");

	/* The parser is strict. */
	static const char *bad[] = {
		"{\"a\":1,\"a\":2}", "{\"a\":1,}", "[1 2]", "\"\\ud800\"", "\"\\udc00x\"", "\"tab\there\"", "01", "1.", "-", "{} x",
		"nul", "'a'", "1e999", "", "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "[\"\\x\"]",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *err = NULL;
		CHECK(ap_json_parse(bad[i], strlen(bad[i]), &err) == NULL && err != NULL, "accepted %s", bad[i]);
		expect(2, bad[i], false, "\"code\":\"bad_input\"");
	}
	char deep[2 * (AP_JSON_MAX_DEPTH + 1) + 1];
	for (int i = 0; i <= AP_JSON_MAX_DEPTH; i++) deep[i] = '[', deep[2 * (AP_JSON_MAX_DEPTH + 1) - 1 - i] = ']';
	deep[2 * (AP_JSON_MAX_DEPTH + 1)] = 0;
	CHECK(ap_json_parse(deep, strlen(deep), NULL) == NULL, "accepted %d levels", AP_JSON_MAX_DEPTH + 1);
	CHECK(ap_json_parse(deep + 1, strlen(deep) - 2, NULL) != NULL, "refused %d levels", AP_JSON_MAX_DEPTH);
	static const char nums[] = "{\"n\":9007199254740993,\"m\":-9223372036854775808,\"o\":9223372036854775808}";
	const ap_json *v = ap_json_parse(nums, sizeof nums - 1, NULL);
	int64_t n = 0;
	CHECK(v && ap_int(ap_get(v, "n"), &n) && n == 9007199254740993LL, "n");
	CHECK(v && ap_int(ap_get(v, "m"), &n) && n == INT64_MIN, "m");
	CHECK(v && !ap_int(ap_get(v, "o"), &n) && ap_get(v, "o")->kind == AP_JSON_NUMBER, "o is not an int64");
	if (failures) {
		fprintf(stderr, "%d failed\n", failures);
		return 1;
	}
	printf("C SDK: all checks passed\n");
	return 0;
}
