/*
 * apconnect_plugin.c: the C guest SDK (see apconnect_plugin.h).
 */
#include "apconnect_plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Output limits of the envelope schemas (schemas/plugin); the SDK trims
 * values to them so that a chatty plugin is not refused by the host. */
#define MAX_FIELD_ERRORS 32
#define MAX_ERROR_MESSAGE 512
#define MAX_ERROR_PATH 256
#define MAX_SUMMARY 1024
#define MAX_REASON 256
#define MAX_CONTENT 16
#define MAX_PROPOSALS 8
#define MAX_ENVELOPE_MESSAGE 1024
#define MAX_WRITER_DEPTH 64

/* ---------------------------------------------------------------- host */

#ifdef __wasm__
__attribute__((import_module("apconnect"), import_name("input"))) void ap__host_input(void *ptr);
__attribute__((import_module("apconnect"), import_name("output"))) void ap__host_output(const void *ptr, uint32_t len);
__attribute__((import_module("apconnect"), import_name("log"))) void ap__host_log(uint32_t level, const void *ptr, uint32_t len);
#define AP__EXPORT(name) __attribute__((export_name(name)))
#else
#define AP__EXPORT(name)
static void ap__host_input(void *ptr) { (void)ptr; }
static void ap__host_output(const void *ptr, uint32_t len) { (void)ptr, (void)len; }
static void ap__host_log(uint32_t level, const void *ptr, uint32_t len) { fprintf(stderr, "log %u: %.*s\n", level, (int)len, (const char *)ptr); }
#endif

/* --------------------------------------------------------------- arena */

typedef struct block {
	struct block *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
} block;

static block *arena;

static void *must(void *p) {
	if (!p) __builtin_trap(); /* out of memory: the host replaces the instance */
	return p;
}

void *ap_alloc(size_t n) {
	n = (n + 15) & ~(size_t)15;
	if (!arena || arena->cap - arena->used < n) {
		size_t cap = n > 60000 ? n : 60000;
		block *b = must(malloc(sizeof(block) + cap));
		b->next = arena, b->used = 0, b->cap = cap;
		arena = b;
	}
	void *p = arena->data + arena->used;
	arena->used += n;
	return p;
}

static void arena_free(void) {
	while (arena) {
		block *next = arena->next;
		free(arena);
		arena = next;
	}
}

static char *dup_n(const char *s, size_t n) {
	char *p = ap_alloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *ap_strdup(const char *s) { return dup_n(s, strlen(s)); }

static char *vformat(const char *format, va_list ap) {
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(NULL, 0, format, ap);
	if (n < 0) n = 0;
	char *p = ap_alloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, format, again);
	va_end(again);
	return p;
}

char *ap_sprintf(const char *format, ...) {
	va_list ap;
	va_start(ap, format);
	char *p = vformat(format, ap);
	va_end(ap);
	return p;
}

/* ---------------------------------------------------------------- JSON */

static const ap_json absent_value;

const ap_json *ap_get(const ap_json *obj, const char *name) {
	if (obj && obj->kind == AP_JSON_OBJECT) {
		size_t n = strlen(name);
		for (size_t i = 0; i < obj->len; i++)
			if (obj->members[i].name_len == n && memcmp(obj->members[i].name, name, n) == 0) return &obj->members[i].value;
	}
	return &absent_value;
}

const ap_json *ap_at(const ap_json *arr, size_t i) {
	if (arr && arr->kind == AP_JSON_ARRAY && i < arr->len) return &arr->items[i];
	return &absent_value;
}

size_t ap_len(const ap_json *v) { return v && (v->kind == AP_JSON_ARRAY || v->kind == AP_JSON_OBJECT) ? v->len : 0; }
bool ap_exists(const ap_json *v) { return v && v->kind != AP_JSON_ABSENT; }
const char *ap_str(const ap_json *v) { return v && v->kind == AP_JSON_STRING ? v->str : NULL; }

bool ap_str_eq(const ap_json *v, const char *s) {
	return v && v->kind == AP_JSON_STRING && v->len == strlen(s) && memcmp(v->str, s, v->len) == 0;
}

bool ap_int(const ap_json *v, int64_t *out) {
	if (!v || v->kind != AP_JSON_NUMBER || !v->is_int) return false;
	if (out) *out = v->integer;
	return true;
}

bool ap_bool(const ap_json *v, bool *out) {
	if (!v || v->kind != AP_JSON_BOOL) return false;
	if (out) *out = v->boolean;
	return true;
}

typedef struct {
	const unsigned char *b;
	size_t i, n;
	int depth;
	const char *err;
} parser;

static bool fail(parser *p, const char *msg) {
	if (!p->err) p->err = msg;
	return false;
}

static void ws(parser *p) {
	while (p->i < p->n && (p->b[p->i] == ' ' || p->b[p->i] == '\t' || p->b[p->i] == '\n' || p->b[p->i] == '\r')) p->i++;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n) {
	unsigned char c = s[0];
	if (c < 0x80) return 1;
	size_t len;
	uint32_t cp;
	if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1F;
	else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0F;
	else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07;
	else return 0;
	if (n < len) return 0;
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xC0) != 0x80) return 0;
		cp = cp << 6 | (s[k] & 0x3F);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
	return len;
}

static size_t put_utf8(char *out, uint32_t cp) {
	if (cp < 0x80) return out[0] = (char)cp, 1;
	if (cp < 0x800) return out[0] = (char)(0xC0 | cp >> 6), out[1] = (char)(0x80 | (cp & 0x3F)), 2;
	if (cp < 0x10000) return out[0] = (char)(0xE0 | cp >> 12), out[1] = (char)(0x80 | (cp >> 6 & 0x3F)), out[2] = (char)(0x80 | (cp & 0x3F)), 3;
	out[0] = (char)(0xF0 | cp >> 18), out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3F)), out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

static bool hex4(parser *p, uint32_t *out) {
	if (p->n - p->i < 4) return fail(p, "short \\u escape");
	uint32_t v = 0;
	for (int k = 0; k < 4; k++) {
		unsigned char c = p->b[p->i + k];
		uint32_t d;
		if (c >= '0' && c <= '9') d = c - '0';
		else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
		else return fail(p, "invalid \\u escape");
		v = v * 16 + d;
	}
	p->i += 4;
	*out = v;
	return true;
}

/* Parses the string whose quote is at p->i; the decoded text is never
 * longer than the encoded one. */
static bool parse_string(parser *p, const char **out, size_t *out_len) {
	size_t start = ++p->i, end = start;
	while (end < p->n && p->b[end] != '"') end += p->b[end] == '\\' ? 2 : 1;
	if (end >= p->n) return fail(p, "unterminated string");
	char *s = ap_alloc(end - start + 1);
	size_t o = 0;
	while (p->b[p->i] != '"') {
		unsigned char c = p->b[p->i];
		if (c < 0x20) return fail(p, "control character in string");
		if (c != '\\') {
			size_t k = utf8_len(p->b + p->i, p->n - p->i);
			if (!k) return fail(p, "invalid UTF-8");
			memcpy(s + o, p->b + p->i, k);
			o += k, p->i += k;
			continue;
		}
		p->i++;
		switch (p->b[p->i++]) {
		case '"': s[o++] = '"'; break;
		case '\\': s[o++] = '\\'; break;
		case '/': s[o++] = '/'; break;
		case 'b': s[o++] = '\b'; break;
		case 'f': s[o++] = '\f'; break;
		case 'n': s[o++] = '\n'; break;
		case 'r': s[o++] = '\r'; break;
		case 't': s[o++] = '\t'; break;
		case 'u': {
			uint32_t cp, lo;
			if (!hex4(p, &cp)) return false;
			if (cp >= 0xDC00 && cp <= 0xDFFF) return fail(p, "lone surrogate");
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				if (p->n - p->i < 2 || p->b[p->i] != '\\' || p->b[p->i + 1] != 'u') return fail(p, "lone surrogate");
				p->i += 2;
				if (!hex4(p, &lo)) return false;
				if (lo < 0xDC00 || lo > 0xDFFF) return fail(p, "lone surrogate");
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			}
			o += put_utf8(s + o, cp);
			break;
		}
		default: return fail(p, "invalid escape");
		}
	}
	p->i++;
	s[o] = 0;
	*out = s, *out_len = o;
	return true;
}

static bool digits(parser *p) {
	size_t s = p->i;
	while (p->i < p->n && p->b[p->i] >= '0' && p->b[p->i] <= '9') p->i++;
	return p->i > s;
}

static bool parse_number(parser *p, ap_json *v) {
	size_t start = p->i;
	bool integral = true;
	if (p->b[p->i] == '-') p->i++;
	if (p->i < p->n && p->b[p->i] == '0') p->i++;
	else if (!digits(p)) return fail(p, "invalid number");
	if (p->i < p->n && p->b[p->i] == '.') {
		p->i++, integral = false;
		if (!digits(p)) return fail(p, "invalid number");
	}
	if (p->i < p->n && (p->b[p->i] == 'e' || p->b[p->i] == 'E')) {
		p->i++, integral = false;
		if (p->i < p->n && (p->b[p->i] == '+' || p->b[p->i] == '-')) p->i++;
		if (!digits(p)) return fail(p, "invalid number");
	}
	char *text = dup_n((const char *)p->b + start, p->i - start);
	v->kind = AP_JSON_NUMBER;
	v->number = strtod(text, NULL);
	if (v->number > 1.7976931348623157e308 || v->number < -1.7976931348623157e308) return fail(p, "number out of range");
	if (integral) {
		/* Accumulate with overflow checks: strtoll would clamp silently. */
		bool neg = text[0] == '-';
		uint64_t m = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
		bool fits = true;
		for (const char *c = text + neg; *c && fits; c++) {
			uint64_t d = (uint64_t)(*c - '0');
			if (m > (limit - d) / 10) fits = false;
			else m = m * 10 + d;
		}
		if (fits) v->is_int = true, v->integer = neg ? (int64_t)(0 - m) : (int64_t)m;
	}
	return true;
}

static bool literal(parser *p, const char *word) {
	size_t n = strlen(word);
	if (p->n - p->i < n || memcmp(p->b + p->i, word, n) != 0) return fail(p, "invalid literal");
	p->i += n;
	return true;
}

static bool parse_value(parser *p, ap_json *v);

/* Growable scratch lists for elements and members, copied into the arena
 * when the container closes. */
static bool parse_array(parser *p, ap_json *v) {
	size_t cap = 8, n = 0;
	ap_json *items = must(malloc(cap * sizeof *items));
	p->i++;
	ws(p);
	bool ok = true;
	if (p->i < p->n && p->b[p->i] == ']') p->i++;
	else
		for (;;) {
			if (n == cap) items = must(realloc(items, (cap *= 2) * sizeof *items));
			memset(&items[n], 0, sizeof *items);
			if (!(ok = parse_value(p, &items[n++]))) break;
			ws(p);
			if (p->i < p->n && p->b[p->i] == ',') {
				p->i++, ws(p);
				continue;
			}
			if (p->i < p->n && p->b[p->i] == ']') {
				p->i++;
				break;
			}
			ok = fail(p, "expected , or ]");
			break;
		}
	v->kind = AP_JSON_ARRAY, v->len = n;
	v->items = ap_alloc(n * sizeof *items + 1);
	memcpy(v->items, items, n * sizeof *items);
	free(items);
	return ok;
}

static bool parse_object(parser *p, ap_json *v) {
	size_t cap = 8, n = 0;
	ap_json_member *ms = must(malloc(cap * sizeof *ms));
	p->i++;
	ws(p);
	bool ok = true;
	if (p->i < p->n && p->b[p->i] == '}') p->i++;
	else
		for (;;) {
			if (p->i >= p->n || p->b[p->i] != '"') {
				ok = fail(p, "expected a member name");
				break;
			}
			if (n == cap) ms = must(realloc(ms, (cap *= 2) * sizeof *ms));
			memset(&ms[n], 0, sizeof *ms);
			if (!(ok = parse_string(p, &ms[n].name, &ms[n].name_len))) break;
			for (size_t k = 0; k < n; k++)
				if (ms[k].name_len == ms[n].name_len && memcmp(ms[k].name, ms[n].name, ms[n].name_len) == 0) {
					ok = fail(p, "duplicate member name");
					break;
				}
			if (!ok) break;
			ws(p);
			if (p->i >= p->n || p->b[p->i] != ':') {
				ok = fail(p, "expected :");
				break;
			}
			p->i++, ws(p);
			if (!(ok = parse_value(p, &ms[n++].value))) break;
			ws(p);
			if (p->i < p->n && p->b[p->i] == ',') {
				p->i++, ws(p);
				continue;
			}
			if (p->i < p->n && p->b[p->i] == '}') {
				p->i++;
				break;
			}
			ok = fail(p, "expected , or }");
			break;
		}
	v->kind = AP_JSON_OBJECT, v->len = n;
	v->members = ap_alloc(n * sizeof *ms + 1);
	memcpy(v->members, ms, n * sizeof *ms);
	free(ms);
	return ok;
}

static bool parse_value(parser *p, ap_json *v) {
	if (p->i >= p->n) return fail(p, "unexpected end of input");
	switch (p->b[p->i]) {
	case 'n': v->kind = AP_JSON_NULL; return literal(p, "null");
	case 't': v->kind = AP_JSON_BOOL, v->boolean = true; return literal(p, "true");
	case 'f': v->kind = AP_JSON_BOOL; return literal(p, "false");
	case '"': v->kind = AP_JSON_STRING; return parse_string(p, &v->str, &v->len);
	case '[':
	case '{': {
		if (++p->depth > AP_JSON_MAX_DEPTH) return fail(p, "nesting deeper than 256 levels");
		bool ok = p->b[p->i] == '[' ? parse_array(p, v) : parse_object(p, v);
		p->depth--;
		return ok;
	}
	default:
		if (p->b[p->i] == '-' || (p->b[p->i] >= '0' && p->b[p->i] <= '9')) return parse_number(p, v);
		return fail(p, "unexpected character");
	}
}

const ap_json *ap_json_parse(const char *text, size_t len, const char **err) {
	parser p = {(const unsigned char *)text, 0, len, 0, NULL};
	ap_json *v = ap_alloc(sizeof *v);
	memset(v, 0, sizeof *v);
	ws(&p);
	if (parse_value(&p, v)) {
		ws(&p);
		if (p.i != p.n) fail(&p, "unexpected data after the value");
	}
	if (p.err) {
		if (err) *err = ap_sprintf("%s at byte %zu", p.err, p.i);
		return NULL;
	}
	return v;
}

/* -------------------------------------------------------------- writer */

struct ap_writer {
	char *buf;
	size_t len, cap;
	int depth;
	char stack[MAX_WRITER_DEPTH]; /* '{' or '[' */
	bool first[MAX_WRITER_DEPTH + 1];
	bool after_key; /* a key was written; a value must follow */
	int values;     /* values at depth 0 */
	const char *err;
};

static void w_init(ap_writer *w) {
	memset(w, 0, sizeof *w);
	w->first[0] = true;
}

static void w_raw(ap_writer *w, const char *s, size_t n) {
	if (w->cap - w->len < n) {
		size_t cap = w->cap ? w->cap : 256;
		while (cap - w->len < n) cap *= 2;
		char *b = ap_alloc(cap);
		if (w->len) memcpy(b, w->buf, w->len);
		w->buf = b, w->cap = cap;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static void w_fail(ap_writer *w, const char *msg) {
	if (!w->err) w->err = msg;
}

/* Places a value: after a key in an object, or as an array element, or as
 * the one top-level value. */
static bool w_value(ap_writer *w) {
	if (w->err) return false;
	if (w->depth == 0) {
		if (w->values++) return w_fail(w, "more than one top-level value"), false;
		return true;
	}
	if (w->stack[w->depth - 1] == '{') {
		if (!w->after_key) return w_fail(w, "a value in an object without a key"), false;
		w->after_key = false;
		return true;
	}
	if (!w->first[w->depth]) w_raw(w, ",", 1);
	w->first[w->depth] = false;
	return true;
}

static void w_quoted(ap_writer *w, const char *s, size_t n) {
	const unsigned char *u = (const unsigned char *)s;
	w_raw(w, "\"", 1);
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		if (c == '"') w_raw(w, "\\\"", 2), i++;
		else if (c == '\\') w_raw(w, "\\\\", 2), i++;
		else if (c == '\n') w_raw(w, "\\n", 2), i++;
		else if (c == '\r') w_raw(w, "\\r", 2), i++;
		else if (c == '\t') w_raw(w, "\\t", 2), i++;
		else if (c < 0x20 || c == 0x7f) {
			char e[7];
			snprintf(e, sizeof e, "\\u%04x", c);
			w_raw(w, e, 6), i++;
		} else {
			size_t k = utf8_len(u + i, n - i);
			if (!k) {
				w_fail(w, "a string is not valid UTF-8");
				return;
			}
			w_raw(w, s + i, k), i += k;
		}
	}
	w_raw(w, "\"", 1);
}

static void w_open(ap_writer *w, char c) {
	if (!w_value(w)) return;
	if (w->depth == MAX_WRITER_DEPTH) return w_fail(w, "nesting too deep");
	w->stack[w->depth++] = c;
	w->first[w->depth] = true;
	w_raw(w, &c, 1);
}

static void w_close(ap_writer *w, char open, char close) {
	if (w->err) return;
	if (w->depth == 0 || w->stack[w->depth - 1] != open || w->after_key) return w_fail(w, "unbalanced end of a container");
	w->depth--;
	w_raw(w, &close, 1);
}

void ap_w_begin_object(ap_writer *w) { w_open(w, '{'); }
void ap_w_end_object(ap_writer *w) { w_close(w, '{', '}'); }
void ap_w_begin_array(ap_writer *w) { w_open(w, '['); }
void ap_w_end_array(ap_writer *w) { w_close(w, '[', ']'); }

void ap_w_key(ap_writer *w, const char *name) {
	if (w->err) return;
	if (w->depth == 0 || w->stack[w->depth - 1] != '{' || w->after_key) return w_fail(w, "a key outside an object");
	if (!w->first[w->depth]) w_raw(w, ",", 1);
	w->first[w->depth] = false;
	w_quoted(w, name, strlen(name));
	w_raw(w, ":", 1);
	w->after_key = true;
}

void ap_w_string_n(ap_writer *w, const char *s, size_t n) {
	if (w_value(w)) w_quoted(w, s ? s : "", s ? n : 0);
}
void ap_w_string(ap_writer *w, const char *s) { ap_w_string_n(w, s, s ? strlen(s) : 0); }

void ap_w_int(ap_writer *w, int64_t n) {
	if (!w_value(w)) return;
	char b[24];
	int k = snprintf(b, sizeof b, "%lld", (long long)n);
	w_raw(w, b, (size_t)k);
}

void ap_w_bool(ap_writer *w, bool b) {
	if (w_value(w)) b ? w_raw(w, "true", 4) : w_raw(w, "false", 5);
}

void ap_w_null(ap_writer *w) {
	if (w_value(w)) w_raw(w, "null", 4);
}

void ap_w_json(ap_writer *w, const ap_json *v) {
	switch (v ? v->kind : AP_JSON_ABSENT) {
	case AP_JSON_ABSENT:
	case AP_JSON_NULL: ap_w_null(w); break;
	case AP_JSON_BOOL: ap_w_bool(w, v->boolean); break;
	case AP_JSON_NUMBER:
		if (v->is_int) ap_w_int(w, v->integer);
		else if (w_value(w)) {
			char b[32];
			int k = snprintf(b, sizeof b, "%.17g", v->number);
			w_raw(w, b, (size_t)k);
		}
		break;
	case AP_JSON_STRING: ap_w_string_n(w, v->str, v->len); break;
	case AP_JSON_ARRAY:
		ap_w_begin_array(w);
		for (size_t i = 0; i < v->len; i++) ap_w_json(w, &v->items[i]);
		ap_w_end_array(w);
		break;
	case AP_JSON_OBJECT:
		ap_w_begin_object(w);
		for (size_t i = 0; i < v->len; i++) {
			if (w->err) return;
			if (!w->first[w->depth]) w_raw(w, ",", 1);
			w->first[w->depth] = false;
			w_quoted(w, v->members[i].name, v->members[i].name_len);
			w_raw(w, ":", 1);
			w->after_key = true;
			ap_w_json(w, &v->members[i].value);
		}
		ap_w_end_object(w);
		break;
	}
}

/* Whether w holds exactly one complete value, an object when object. */
static const char *w_complete(ap_writer *w, bool object) {
	if (w->err) return w->err;
	if (w->depth != 0 || w->values != 1) return "the value is incomplete";
	if (object && (w->len == 0 || w->buf[0] != '{')) return "the value is not an object";
	return NULL;
}

/* Writes text parsed from a static JSON description (a schema). */
static void w_json_text(ap_writer *w, const char *what, const char *text) {
	const char *err = NULL;
	const ap_json *v = ap_json_parse(text, strlen(text), &err);
	if (!v) {
		w_fail(w, ap_sprintf("%s is not JSON: %s", what, err));
		return;
	}
	if (v->kind != AP_JSON_OBJECT) {
		w_fail(w, ap_sprintf("%s is not a JSON object", what));
		return;
	}
	ap_w_json(w, v);
}

/* ------------------------------------------------------------ requests */

static const char *s_of(const ap_json *v) { return v->kind == AP_JSON_STRING ? v->str : ""; }

static int64_t i_of(const ap_json *v) {
	int64_t n = 0;
	ap_int(v, &n);
	return n;
}

static bool b_of(const ap_json *v) {
	bool b = false;
	ap_bool(v, &b);
	return b;
}

static void record_of(const ap_json *v, ap_record *r) {
	r->seq = i_of(ap_get(v, "seq"));
	r->event_id = s_of(ap_get(v, "event_id"));
	r->type = s_of(ap_get(v, "type"));
	r->actor = s_of(ap_get(v, "actor"));
	r->created_at = i_of(ap_get(v, "created_at"));
	r->accepted_at = i_of(ap_get(v, "accepted_at"));
	r->mentions = ap_get(v, "mentions");
	r->payload = ap_get(v, "payload");
	r->redacted = b_of(ap_get(v, "redacted"));
}

static ap_record *records_of(const ap_json *arr, size_t *count) {
	*count = ap_len(arr);
	ap_record *out = ap_alloc(*count * sizeof *out + 1);
	for (size_t i = 0; i < *count; i++) record_of(ap_at(arr, i), &out[i]);
	return out;
}

static const ap_room *room_of(const ap_json *v) {
	ap_room *r = ap_alloc(sizeof *r);
	memset(r, 0, sizeof *r);
	r->room_id = s_of(ap_get(v, "room_id"));
	r->host = s_of(ap_get(v, "host"));
	r->status = s_of(ap_get(v, "status"));
	r->creator = s_of(ap_get(v, "creator"));
	r->head_seq = i_of(ap_get(ap_get(v, "head"), "seq"));
	r->head_hash = s_of(ap_get(ap_get(v, "head"), "hash"));
	r->self_id = s_of(ap_get(ap_get(v, "self"), "agent_id"));
	r->self_role = s_of(ap_get(ap_get(v, "self"), "role"));
	const ap_json *ms = ap_get(v, "members"), *ts = ap_get(v, "types");
	r->member_count = ap_len(ms);
	ap_member *members = ap_alloc(r->member_count * sizeof *members + 1);
	for (size_t i = 0; i < r->member_count; i++) {
		const ap_json *m = ap_at(ms, i);
		members[i] = (ap_member){s_of(ap_get(m, "agent_id")), s_of(ap_get(m, "role")), s_of(ap_get(m, "perspective"))};
	}
	r->members = members;
	r->type_count = ap_len(ts);
	ap_type_info *types = ap_alloc(r->type_count * sizeof *types + 1);
	for (size_t i = 0; i < r->type_count; i++) {
		const ap_json *t = ap_at(ts, i);
		types[i] = (ap_type_info){s_of(ap_get(t, "type")), s_of(ap_get(t, "kind")), s_of(ap_get(t, "status"))};
	}
	r->types = types;
	r->records = records_of(ap_get(v, "records"), &r->record_count);
	r->records_truncated = b_of(ap_get(v, "records_truncated"));
	return r;
}

const ap_record *ap_room_record(const ap_room *room, const char *event_id) {
	for (size_t i = 0; room && i < room->record_count; i++)
		if (strcmp(room->records[i].event_id, event_id) == 0) return &room->records[i];
	return NULL;
}

const ap_member *ap_room_member(const ap_room *room, const char *agent_id) {
	for (size_t i = 0; room && i < room->member_count; i++)
		if (strcmp(room->members[i].agent_id, agent_id) == 0) return &room->members[i];
	return NULL;
}

bool ap_record_mentions(const ap_record *rec, const char *agent_id) {
	for (size_t i = 0; i < ap_len(rec->mentions); i++)
		if (ap_str_eq(ap_at(rec->mentions, i), agent_id)) return true;
	return false;
}

/* -------------------------------------------------------------- answers */

struct ap_errors {
	size_t count;
	const char *path[MAX_FIELD_ERRORS];
	const char *message[MAX_FIELD_ERRORS];
};

/* Cuts s to at most n bytes without splitting a UTF-8 sequence. */
static const char *cut(const char *s, size_t n) {
	size_t len = strlen(s);
	if (len <= n) return s;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
	return dup_n(s, n);
}

void ap_refuse(ap_errors *errs, const char *path, const char *message) {
	if (errs->count == MAX_FIELD_ERRORS) return;
	if (!path) path = "";
	if (path[0] && path[0] != '/') path = ap_sprintf("/%s", path);
	if (!message || !message[0]) message = "invalid";
	errs->path[errs->count] = cut(path, MAX_ERROR_PATH);
	errs->message[errs->count] = cut(message, MAX_ERROR_MESSAGE);
	errs->count++;
}

void ap_refusef(ap_errors *errs, const char *path, const char *format, ...) {
	va_list ap;
	va_start(ap, format);
	char *msg = vformat(format, ap);
	va_end(ap);
	ap_refuse(errs, path, msg);
}

struct ap_tool_result {
	size_t texts;
	const char *text[MAX_CONTENT];
	bool is_error;
	ap_writer *structured;
	size_t proposals;
	const char *proposal_type[MAX_PROPOSALS];
	ap_writer *proposal[MAX_PROPOSALS];
	const char *err;
};

void ap_result_text(ap_tool_result *res, const char *text) {
	if (res->texts == MAX_CONTENT) {
		res->err = "more than 16 text items";
		return;
	}
	res->text[res->texts++] = ap_strdup(text ? text : "");
}

void ap_result_textf(ap_tool_result *res, const char *format, ...) {
	va_list ap;
	va_start(ap, format);
	char *t = vformat(format, ap);
	va_end(ap);
	ap_result_text(res, t);
}

void ap_result_error(ap_tool_result *res, const char *text) {
	ap_result_text(res, text);
	res->is_error = true;
}

ap_writer *ap_result_structured(ap_tool_result *res) {
	if (!res->structured) {
		res->structured = ap_alloc(sizeof(ap_writer));
		w_init(res->structured);
	}
	return res->structured;
}

ap_writer *ap_result_proposal(ap_tool_result *res, const char *type) {
	static ap_writer discard; /* more proposals than the ABI allows */
	if (res->proposals == MAX_PROPOSALS) {
		res->err = "more than 8 proposals";
		w_init(&discard);
		return &discard;
	}
	ap_writer *w = ap_alloc(sizeof *w);
	w_init(w);
	res->proposal_type[res->proposals] = ap_strdup(type);
	res->proposal[res->proposals++] = w;
	return w;
}

/* --------------------------------------------------------------- logging */

void ap_log(ap_level level, const char *msg) {
	if (msg && msg[0]) ap__host_log((uint32_t)level, msg, (uint32_t)strlen(msg));
}

void ap_logf(ap_level level, const char *format, ...) {
	va_list ap;
	va_start(ap, format);
	char *msg = vformat(format, ap);
	va_end(ap);
	ap_log(level, msg);
}

/* ------------------------------------------------------------ dispatch */

static bool out_ok;

static ap_writer *error_output(ap_writer *w, const char *code, const char *message) {
	w_init(w);
	ap_w_begin_object(w);
	ap_w_key(w, "error");
	ap_w_begin_object(w);
	ap_w_key(w, "code");
	ap_w_string(w, code);
	ap_w_key(w, "message");
	ap_w_string(w, cut(message, MAX_ENVELOPE_MESSAGE));
	ap_w_end_object(w);
	ap_w_end_object(w);
	if (w->err) { /* the message was not UTF-8 */
		static const char fallback[] = "{\"error\":{\"code\":\"encode_failed\",\"message\":\"the error message is not UTF-8\"}}";
		w_init(w);
		w_raw(w, fallback, sizeof fallback - 1);
		w->values = 1;
	}
	out_ok = false;
	return w;
}

static void w_list(ap_writer *w, const char *key, const char *const *items, size_t n) {
	if (!n) return;
	ap_w_key(w, key);
	ap_w_begin_array(w);
	for (size_t i = 0; i < n; i++) ap_w_string(w, items[i]);
	ap_w_end_array(w);
}

static void w_opt(ap_writer *w, const char *key, const char *s) {
	if (s && s[0]) {
		ap_w_key(w, key);
		ap_w_string(w, s);
	}
}

static void w_pack(ap_writer *w, const ap_pack *pk) {
	ap_w_begin_object(w);
	w_opt(w, "name", pk->name);
	w_opt(w, "version", pk->version);
	w_opt(w, "title", pk->title);
	w_opt(w, "description", pk->description);
	ap_w_key(w, "types");
	ap_w_begin_array(w);
	for (size_t i = 0; i < pk->type_count; i++) {
		const ap_type_def *t = &pk->types[i];
		ap_w_begin_object(w);
		w_opt(w, "type", t->type);
		w_opt(w, "kind", t->kind);
		w_opt(w, "title", t->title);
		w_opt(w, "description", t->description);
		ap_w_key(w, "schema");
		w_json_text(w, ap_sprintf("pack %s type %s schema", pk->name, t->type), t->schema ? t->schema : "");
		if (t->roles && t->roles[0]) {
			size_t n = 0;
			while (t->roles[n]) n++;
			w_list(w, "roles", t->roles, n);
		}
		w_opt(w, "instructions", t->instructions);
		w_opt(w, "version", t->version);
		w_opt(w, "status", t->status);
		if (t->rate_hint > 0) ap_w_key(w, "rate_hint"), ap_w_int(w, t->rate_hint);
		if (t->max_payload_hint > 0) ap_w_key(w, "max_payload_hint"), ap_w_int(w, t->max_payload_hint);
		if (t->extra) {
			ap_w_key(w, "extra");
			w_json_text(w, ap_sprintf("pack %s type %s extra", pk->name, t->type), t->extra);
		}
		ap_w_end_object(w);
	}
	ap_w_end_array(w);
	ap_w_end_object(w);
}

static ap_writer *describe(ap_writer *w, const ap_plugin *pl) {
	ap_w_begin_object(w);
	w_opt(w, "name", pl->name);
	w_opt(w, "version", pl->version);
	ap_w_key(w, "abi_version");
	ap_w_int(w, AP_ABI_VERSION);
	w_opt(w, "description", pl->description);
	if (pl->validator_count) {
		ap_w_key(w, "validates");
		ap_w_begin_array(w);
		for (size_t i = 0; i < pl->validator_count; i++) ap_w_string(w, pl->validators[i].type);
		ap_w_end_array(w);
	}
	if (pl->watcher_count) {
		ap_w_key(w, "watches");
		ap_w_begin_array(w);
		for (size_t i = 0; i < pl->watcher_count; i++) ap_w_string(w, pl->watchers[i].type);
		ap_w_end_array(w);
	}
	w_list(w, "proposes", pl->proposes, pl->propose_count);
	if (pl->tool_count) {
		ap_w_key(w, "tools");
		ap_w_begin_array(w);
		for (size_t i = 0; i < pl->tool_count; i++) {
			const ap_tool *t = &pl->tools[i];
			ap_w_begin_object(w);
			w_opt(w, "name", t->name);
			w_opt(w, "title", t->title);
			w_opt(w, "description", t->description);
			ap_w_key(w, "input_schema");
			w_json_text(w, ap_sprintf("tool %s input_schema", t->name), t->input_schema ? t->input_schema : "{\"type\":\"object\"}");
			if (t->output_schema) {
				ap_w_key(w, "output_schema");
				w_json_text(w, ap_sprintf("tool %s output_schema", t->name), t->output_schema);
			}
			ap_w_end_object(w);
		}
		ap_w_end_array(w);
	}
	if (pl->pack_count) {
		ap_w_key(w, "packs");
		ap_w_begin_array(w);
		for (size_t i = 0; i < pl->pack_count; i++) w_pack(w, &pl->packs[i]);
		ap_w_end_array(w);
	}
	ap_w_end_object(w);
	return w;
}

static ap_writer *validate(ap_writer *w, const ap_plugin *pl, const ap_json *env) {
	const ap_json *pr = ap_get(env, "proposal");
	ap_validate_request req = {
		.now_ms = i_of(ap_get(env, "now_ms")),
		.type = s_of(ap_get(pr, "type")),
		.actor = s_of(ap_get(pr, "actor")),
		.payload = ap_get(pr, "payload"),
		.mentions = ap_get(pr, "mentions"),
		.references = ap_get(pr, "references"),
		.room = room_of(ap_get(env, "room")),
	};
	const ap_validator *v = NULL;
	for (size_t i = 0; i < pl->validator_count; i++)
		if (strcmp(pl->validators[i].type, req.type) == 0) v = &pl->validators[i];
	if (!v) return error_output(w, "unknown_type", ap_sprintf("the plugin validates no type \"%s\"", req.type));
	ap_errors *errs = ap_alloc(sizeof *errs);
	memset(errs, 0, sizeof *errs);
	v->fn(&req, errs);
	ap_w_begin_object(w);
	ap_w_key(w, "ok");
	ap_w_bool(w, errs->count == 0);
	if (errs->count) {
		ap_w_key(w, "errors");
		ap_w_begin_array(w);
		for (size_t i = 0; i < errs->count; i++) {
			ap_w_begin_object(w);
			ap_w_key(w, "path");
			ap_w_string(w, errs->path[i]);
			ap_w_key(w, "message");
			ap_w_string(w, errs->message[i]);
			ap_w_end_object(w);
		}
		ap_w_end_array(w);
	}
	ap_w_end_object(w);
	return w;
}

static bool valid_tool_name(const char *n) {
	size_t len = strlen(n);
	if (len == 0 || len > 64) return false;
	for (; *n; n++)
		if (!((*n >= 'a' && *n <= 'z') || (*n >= '0' && *n <= '9') || *n == '_')) return false;
	return true;
}

static ap_writer *watch(ap_writer *w, const ap_plugin *pl, const ap_json *env) {
	ap_watch_request req = {.now_ms = i_of(ap_get(env, "now_ms")), .room = room_of(ap_get(env, "room"))};
	req.records = records_of(ap_get(env, "records"), &req.record_count);
	ap_w_begin_object(w);
	ap_w_key(w, "items");
	ap_w_begin_array(w);
	for (size_t i = 0; i < req.record_count; i++) {
		const ap_record *rec = &req.records[i];
		const ap_watcher *wt = NULL;
		for (size_t k = 0; k < pl->watcher_count; k++)
			if (strcmp(pl->watchers[k].type, rec->type) == 0) wt = &pl->watchers[k];
		ap_inbox_item it;
		memset(&it, 0, sizeof it);
		if (!wt || !wt->fn(rec, &req, &it)) continue;
		ap_w_begin_object(w);
		ap_w_key(w, "kind");
		ap_w_string(w, "room.event.custom");
		ap_w_key(w, "seq");
		ap_w_int(w, rec->seq);
		ap_w_key(w, "summary");
		ap_w_string(w, it.summary && it.summary[0] ? cut(it.summary, MAX_SUMMARY) : ap_sprintf("%s record %lld", rec->type, (long long)rec->seq));
		if (it.priority == AP_PRIORITY_LOW || it.priority == AP_PRIORITY_HIGH) {
			ap_w_key(w, "priority");
			ap_w_string(w, it.priority == AP_PRIORITY_LOW ? "low" : "high");
		}
		if (it.requires_response) ap_w_key(w, "requires_response"), ap_w_bool(w, true);
		if (it.reason && it.reason[0]) ap_w_key(w, "reason"), ap_w_string(w, cut(it.reason, MAX_REASON));
		const char *tools[AP_MAX_SUGGESTED_TOOLS];
		size_t n = 0;
		for (size_t k = 0; k < AP_MAX_SUGGESTED_TOOLS && it.suggested_tools[k]; k++) {
			const char *t = it.suggested_tools[k];
			bool dup = false;
			for (size_t j = 0; j < n; j++) dup |= strcmp(tools[j], t) == 0;
			if (!valid_tool_name(t)) ap_logf(AP_LOG_WARN, "suggested tool \"%s\" is not a valid tool name; dropped", t);
			else if (!dup) tools[n++] = t;
		}
		w_list(w, "suggested_tools", tools, n);
		ap_w_end_object(w);
	}
	ap_w_end_array(w);
	ap_w_end_object(w);
	return w;
}

static ap_writer *call_tool(ap_writer *w, const ap_plugin *pl, const ap_json *env) {
	const ap_json *ctx = ap_get(env, "context");
	ap_tool_request req = {
		.now_ms = i_of(ap_get(env, "now_ms")),
		.name = s_of(ap_get(env, "name")),
		.arguments = ap_get(env, "arguments"),
		.self_id = s_of(ap_get(ap_get(ctx, "self"), "agent_id")),
		.room = ap_exists(ap_get(ctx, "room")) ? room_of(ap_get(ctx, "room")) : NULL,
	};
	const ap_tool *tool = NULL;
	for (size_t i = 0; i < pl->tool_count; i++)
		if (strcmp(pl->tools[i].name, req.name) == 0) tool = &pl->tools[i];
	if (!tool || !tool->handler) return error_output(w, "unknown_tool", ap_sprintf("the plugin has no tool \"%s\"", req.name));
	ap_tool_result *res = ap_alloc(sizeof *res);
	memset(res, 0, sizeof *res);
	tool->handler(&req, res);
	if (res->err) return error_output(w, "encode_failed", ap_sprintf("tool %s: %s", req.name, res->err));
	if (res->structured) {
		const char *e = w_complete(res->structured, true);
		if (e) return error_output(w, "encode_failed", ap_sprintf("tool %s: structured result: %s", req.name, e));
	}
	for (size_t i = 0; i < res->proposals; i++) {
		const char *e = w_complete(res->proposal[i], true);
		if (e) return error_output(w, "encode_failed", ap_sprintf("tool %s: proposal %zu payload: %s", req.name, i, e));
	}
	ap_w_begin_object(w);
	ap_w_key(w, "content");
	ap_w_begin_array(w);
	if (res->texts == 0) { /* the structured result, or an empty text */
		ap_w_begin_object(w);
		ap_w_key(w, "type");
		ap_w_string(w, "text");
		ap_w_key(w, "text");
		ap_w_string_n(w, res->structured ? res->structured->buf : "", res->structured ? res->structured->len : 0);
		ap_w_end_object(w);
	}
	for (size_t i = 0; i < res->texts; i++) {
		ap_w_begin_object(w);
		ap_w_key(w, "type");
		ap_w_string(w, "text");
		ap_w_key(w, "text");
		ap_w_string(w, res->text[i]);
		ap_w_end_object(w);
	}
	ap_w_end_array(w);
	if (res->structured) {
		ap_w_key(w, "structured");
		if (w_value(w)) w_raw(w, res->structured->buf, res->structured->len);
	}
	if (res->is_error) ap_w_key(w, "is_error"), ap_w_bool(w, true);
	if (res->proposals) {
		ap_w_key(w, "proposals");
		ap_w_begin_array(w);
		for (size_t i = 0; i < res->proposals; i++) {
			ap_w_begin_object(w);
			ap_w_key(w, "type");
			ap_w_string(w, res->proposal_type[i]);
			ap_w_key(w, "payload");
			if (w_value(w)) w_raw(w, res->proposal[i]->buf, res->proposal[i]->len);
			ap_w_end_object(w);
		}
		ap_w_end_array(w);
	}
	ap_w_end_object(w);
	return w;
}

static ap_writer *pack(ap_writer *w, const ap_plugin *pl, const ap_json *env) {
	const char *name = s_of(ap_get(env, "name"));
	for (size_t i = 0; i < pl->pack_count; i++)
		if (strcmp(pl->packs[i].name, name) == 0) {
			w_pack(w, &pl->packs[i]);
			return w;
		}
	return error_output(w, "unknown_pack", ap_sprintf("the plugin provides no pack \"%s\"", name));
}

static ap_writer *dispatch(ap_writer *w, int32_t op, const char *input, size_t len) {
	const ap_plugin *pl = &ap_plugin_definition;
	out_ok = true;
	if (op == 1) return describe(w, pl);
	const char *err = NULL;
	const ap_json *env = ap_json_parse(input, len, &err);
	if (!env) return error_output(w, "bad_input", ap_sprintf("the input envelope is not strict JSON: %s", err));
	if (env->kind != AP_JSON_OBJECT) return error_output(w, "bad_input", "the input envelope is not a JSON object");
	switch (op) {
	case 2: return validate(w, pl, env);
	case 3: return watch(w, pl, env);
	case 4: return call_tool(w, pl, env);
	case 5: return pack(w, pl, env);
	}
	return error_output(w, "unknown_op", ap_sprintf("operation %d is not part of ABI version %d", (int)op, AP_ABI_VERSION));
}

/* Runs op into w and turns a writer failure into an encode_failed error. */
static ap_writer *run(ap_writer *w, int32_t op, const char *input, size_t len) {
	w_init(w);
	dispatch(w, op, input, len);
	const char *e = w_complete(w, true);
	if (e) {
		/* The failure message comes from the SDK: static text, or text
		 * built from the plugin's static names. */
		const char *msg = ap_sprintf("the plugin's answer could not be encoded: %s", e);
		error_output(w, "encode_failed", msg);
	}
	return w;
}

static char *native_out;

const char *ap_handle(int32_t op, const char *input, size_t len, size_t *out_len, bool *ok) {
	ap_writer w;
	run(&w, op, input, len);
	free(native_out);
	native_out = must(malloc(w.len + 1));
	memcpy(native_out, w.buf, w.len);
	native_out[w.len] = 0;
	*out_len = w.len;
	*ok = out_ok;
	arena_free();
	return native_out;
}

AP__EXPORT("apconnect_abi_version") int32_t apconnect_abi_version(void) { return AP_ABI_VERSION; }

AP__EXPORT("apconnect_call") int32_t apconnect_call(int32_t op, int32_t in_len) {
	size_t len = in_len > 0 ? (size_t)in_len : 0;
	char *input = ap_alloc(len + 1);
	if (len) ap__host_input(input);
	input[len] = 0;
	ap_writer w;
	run(&w, op, input, len);
	ap__host_output(w.buf, (uint32_t)w.len);
	bool ok = out_ok;
	arena_free();
	return ok ? 0 : 1;
}
