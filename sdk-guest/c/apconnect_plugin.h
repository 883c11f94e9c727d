/*
 * apconnect_plugin.h: the C guest SDK for apconnect plugins (ABI version 1,
 * docs/PLUGINS.md). A plugin is a WebAssembly reactor built with Debian's
 * clang, lld and wasi-libc:
 *
 *   clang --target=wasm32-wasi -std=c11 -O2 -mexec-model=reactor \
 *     -Wl,--stack-first -Wl,-z,stack-size=1048576 -Wl,--strip-all \
 *     -ffile-prefix-map=$PWD=. -I sdk-guest/c \
 *     -o hello.wasm hello.c sdk-guest/c/apconnect_plugin.c
 *
 * The plugin defines one ap_plugin with AP_PLUGIN(...): its name, version,
 * validators, watchers, tools and packs. The SDK exports
 * apconnect_abi_version and apconnect_call, parses each input envelope with
 * a strict JSON parser (I-JSON: valid UTF-8, no duplicate members, no lone
 * surrogates), calls the plugin's functions and writes the output envelope
 * with a closed encoder.
 *
 * Memory: everything the SDK hands a function (requests, JSON values,
 * strings) and everything allocated with ap_alloc, ap_strdup or ap_sprintf
 * lives until the end of the call, then is freed at once. Allocation
 * failure traps (the host replaces the instance). Strings of requests are
 * never NULL: an absent member is "".
 */
#ifndef APCONNECT_PLUGIN_H
#define APCONNECT_PLUGIN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The plugin ABI version this SDK implements. */
#define AP_ABI_VERSION 1

/* Parsed input nests at most this deep. */
#define AP_JSON_MAX_DEPTH 256

/* ------------------------------------------------------------------ JSON */

typedef enum {
	AP_JSON_ABSENT = 0, /* a member or element that is not there */
	AP_JSON_NULL,
	AP_JSON_BOOL,
	AP_JSON_NUMBER,
	AP_JSON_STRING,
	AP_JSON_ARRAY,
	AP_JSON_OBJECT
} ap_json_kind;

typedef struct ap_json ap_json;
typedef struct ap_json_member ap_json_member;

/* One parsed JSON value. Read it with the accessors below. */
struct ap_json {
	ap_json_kind kind;
	bool boolean;
	bool is_int;      /* a number without fraction or exponent that fits int64 */
	int64_t integer;  /* when is_int */
	double number;    /* every number */
	const char *str;  /* string, NUL-terminated (also holds len bytes) */
	size_t len;       /* string bytes; elements or members */
	ap_json *items;   /* array elements */
	ap_json_member *members; /* object members, in order */
};

struct ap_json_member {
	const char *name;
	size_t name_len;
	ap_json value;
};

/* Member name of an object; an absent value (never NULL) when there is
 * none, so lookups chain: ap_get(ap_get(v, "a"), "b"). */
const ap_json *ap_get(const ap_json *obj, const char *name);
/* Element i of an array, or an absent value. */
const ap_json *ap_at(const ap_json *arr, size_t i);
/* Elements of an array, members of an object, else 0. */
size_t ap_len(const ap_json *v);
bool ap_exists(const ap_json *v);
/* The string, or NULL when v is not a string. */
const char *ap_str(const ap_json *v);
/* Whether v is a string equal to s. */
bool ap_str_eq(const ap_json *v, const char *s);
/* Whether v is an integer; stores it in *out. */
bool ap_int(const ap_json *v, int64_t *out);
/* Whether v is a boolean; stores it in *out. */
bool ap_bool(const ap_json *v, bool *out);
/* Parses strict JSON text into a value that lives until the end of the
 * call; NULL (and a message in *err when err is not NULL) when it is not. */
const ap_json *ap_json_parse(const char *text, size_t len, const char **err);

/* ------------------------------------------------------------- requests */

/* A verified, accepted room record. A redacted record has only seq,
 * event_id, type, accepted_at and redacted. */
typedef struct {
	int64_t seq;
	const char *event_id;
	const char *type;
	const char *actor;
	int64_t created_at;
	int64_t accepted_at;
	const ap_json *mentions; /* array of agent IDs (maybe absent) */
	const ap_json *payload;  /* the payload object (absent when redacted) */
	bool redacted;
} ap_record;

typedef struct {
	const char *agent_id;
	const char *role; /* moderator, speaker or observer */
	const char *perspective;
} ap_member;

typedef struct {
	const char *type;
	const char *kind;   /* message, signal or control */
	const char *status; /* active, deprecated, disabled, or "" */
} ap_type_info;

/* A read-only view of one room built by the host from verified state. */
typedef struct {
	const char *room_id;
	const char *host;
	const char *status; /* scheduled, active, ended or cancelled */
	const char *creator;
	int64_t head_seq;
	const char *head_hash;
	const char *self_id; /* the active agent, "" when not given */
	const char *self_role;
	size_t member_count;
	const ap_member *members;
	size_t type_count;
	const ap_type_info *types;
	size_t record_count;
	const ap_record *records; /* the plugin's record scope, oldest first */
	bool records_truncated;   /* absence of a record proves nothing */
} ap_room;

/* The record of the room context with event_id, or NULL. */
const ap_record *ap_room_record(const ap_room *room, const char *event_id);
/* The member with agent_id, or NULL. */
const ap_member *ap_room_member(const ap_room *room, const char *agent_id);
/* Whether agent_id is among the record's mentions. */
bool ap_record_mentions(const ap_record *rec, const char *agent_id);

/* One proposed event of a type the plugin validates, before signing. */
typedef struct {
	int64_t now_ms; /* host time in Unix milliseconds: the only clock */
	const char *type;
	const char *actor;
	const ap_json *payload;
	const ap_json *mentions;
	const ap_json *references;
	const ap_room *room;
} ap_validate_request;

/* The batch a watched record arrived in. */
typedef struct {
	int64_t now_ms;
	const ap_room *room;
	size_t record_count;
	const ap_record *records;
} ap_watch_request;

/* One call of a tool. */
typedef struct {
	int64_t now_ms;
	const char *name;
	const ap_json *arguments; /* checked by the host against the input schema */
	const char *self_id;      /* "" when not given */
	const ap_room *room;      /* NULL unless the call names a room the host holds */
} ap_tool_request;

/* -------------------------------------------------------------- answers */

/* A validator's refusals. */
typedef struct ap_errors ap_errors;
/* Refuses the event: an RFC 6901 pointer into the proposal
 * ("/payload/option_ids/1") and a message. At most 32 are kept. */
void ap_refuse(ap_errors *errs, const char *path, const char *message);
void ap_refusef(ap_errors *errs, const char *path, const char *format, ...) __attribute__((format(printf, 3, 4)));

typedef enum { AP_PRIORITY_NORMAL = 0, AP_PRIORITY_LOW, AP_PRIORITY_HIGH } ap_priority;

#define AP_MAX_SUGGESTED_TOOLS 8

/* An inbox item a watcher fills for one record. The host adds room, seq,
 * event ID, actor and time, cuts the summary to 160 characters and keeps
 * only suggested tools that exist (the plugin's own by short name). */
typedef struct {
	const char *summary;
	ap_priority priority;
	bool requires_response;
	const char *reason;
	const char *suggested_tools[AP_MAX_SUGGESTED_TOOLS];
} ap_inbox_item;

/* A closed JSON writer: it refuses (and the SDK reports encode_failed)
 * misplaced keys, unbalanced containers and strings that are not UTF-8. */
typedef struct ap_writer ap_writer;
void ap_w_begin_object(ap_writer *w);
void ap_w_end_object(ap_writer *w);
void ap_w_begin_array(ap_writer *w);
void ap_w_end_array(ap_writer *w);
void ap_w_key(ap_writer *w, const char *name);
void ap_w_string(ap_writer *w, const char *s);
void ap_w_string_n(ap_writer *w, const char *s, size_t n);
void ap_w_int(ap_writer *w, int64_t n);
void ap_w_bool(ap_writer *w, bool b);
void ap_w_null(ap_writer *w);
/* Writes a copy of a parsed value. */
void ap_w_json(ap_writer *w, const ap_json *v);

/* What a tool returns. */
typedef struct ap_tool_result ap_tool_result;
/* Adds a text item (1 to 16). */
void ap_result_text(ap_tool_result *res, const char *text);
void ap_result_textf(ap_tool_result *res, const char *format, ...) __attribute__((format(printf, 2, 3)));
/* Adds a text item and marks the result an error. */
void ap_result_error(ap_tool_result *res, const char *text);
/* A writer for the structured result: write exactly one object. */
ap_writer *ap_result_structured(ap_tool_result *res);
/* Proposes an event of type (needs it in .proposes and a propose grant):
 * write its payload, exactly one object, with the returned writer. */
ap_writer *ap_result_proposal(ap_tool_result *res, const char *type);

/* ----------------------------------------------------------- the plugin */

typedef void (*ap_validate_fn)(const ap_validate_request *req, ap_errors *errs);
/* Returns true to raise item for rec. */
typedef bool (*ap_watch_fn)(const ap_record *rec, const ap_watch_request *req, ap_inbox_item *item);
typedef void (*ap_tool_fn)(const ap_tool_request *req, ap_tool_result *res);

typedef struct {
	const char *type;
	ap_validate_fn fn;
} ap_validator;

typedef struct {
	const char *type;
	ap_watch_fn fn;
} ap_watcher;

typedef struct {
	const char *name; /* [a-z0-9_]+; MCP name <plugin>_<name> */
	const char *title;
	const char *description;
	const char *input_schema;  /* JSON text; NULL means {"type":"object"} */
	const char *output_schema; /* JSON text or NULL */
	ap_tool_fn handler;
} ap_tool;

/* An ADP type definition (Agent Discourse 1.0 section 12.3). */
typedef struct {
	const char *type;
	const char *kind; /* message, signal or control */
	const char *title;
	const char *description;
	const char *schema; /* JSON text of the payload schema */
	const char *const *roles; /* NULL-terminated, or NULL */
	const char *instructions;
	const char *version;
	const char *status;
	int64_t rate_hint;
	int64_t max_payload_hint;
	const char *extra; /* JSON text of an object, or NULL */
} ap_type_def;

typedef struct {
	const char *name; /* <owner>:<pack> */
	const char *version;
	const char *title;
	const char *description;
	const ap_type_def *types;
	size_t type_count;
} ap_pack;

typedef struct {
	const char *name; /* [a-z][a-z0-9_]{0,31} */
	const char *version;
	const char *description;
	const ap_validator *validators;
	size_t validator_count;
	const ap_watcher *watchers;
	size_t watcher_count;
	const ap_tool *tools;
	size_t tool_count;
	const ap_pack *packs;
	size_t pack_count;
	const char *const *proposes;
	size_t propose_count;
} ap_plugin;

/* The number of elements of an array. */
#define AP_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Defines the plugin: AP_PLUGIN(.name = "hello_c", .version = "0.1.0",
 * .tools = tools, .tool_count = AP_COUNT(tools)). Use it once. */
#define AP_PLUGIN(...) const ap_plugin ap_plugin_definition = {__VA_ARGS__}
extern const ap_plugin ap_plugin_definition;

/* -------------------------------------------------------------- helpers */

typedef enum { AP_LOG_DEBUG = 0, AP_LOG_INFO = 1, AP_LOG_WARN = 2, AP_LOG_ERROR = 3 } ap_level;

/* One line of the plugin's log on the host (cut to 512 bytes, at most 64
 * lines per call; apconnect doctor shows the tail). */
void ap_log(ap_level level, const char *msg);
void ap_logf(ap_level level, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* Memory that lives until the end of the call (traps when exhausted). */
void *ap_alloc(size_t n);
char *ap_strdup(const char *s);
char *ap_sprintf(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Runs one operation natively (tests): the output envelope, valid until
 * the next call, its length and whether it is a result (not an error). */
const char *ap_handle(int32_t op, const char *input, size_t len, size_t *out_len, bool *ok);

#ifdef __cplusplus
}
#endif

#endif
