/* The after-hooks' runs (hooks.h): an answer's fields written by the
 * security headers and the document's after-hooks, into the exchange's
 * header buffer (in its arena) or, for the connection's own answers, into
 * the caller's fixed buffer. Only a start with hooks or
 * INGOT_SECURITY_HEADERS comes here: a request's one cost otherwise is
 * ig_finish's test of ig_hooks_on. */
#include "hooks.h"
#include "internal.h"

bool ig_hooks_on;
const struct ig_op_hooks *ig_hooks_root;

/* Where ig_answer_add_header writes: an exchange's buffer (w), or buf. */
struct ig_answer_fields {
	ig_wbuf *w;
	char *buf;
	size_t len, cap;
};

void ig_answer_add_header(const struct ig_answer *a, const char *name, ig_str value)
{
	struct ig_answer_fields *f = a->fields;
	size_t n = strlen(name), need = n + value.len + 4;
	if (f->w) {
		char *d = ig_wbuf_reserve(f->w, need);
		if (!d)
			return;
		ig_http_field_line(d, name, n, value);
		f->w->len += need;
	} else if (f->cap - f->len >= need) {
		ig_http_field_line(f->buf + f->len, name, n, value);
		f->len += need;
	}
}

static void run(const struct ig_answer *a, const struct ig_op_hooks *h)
{
	if (ig_security_headers_on)
		ig_security_headers(a);
	if (h)
		for (uint32_t i = 0; i < h->nafter; i++)
			h->after[i](a);
}

void ig_http_hooks_after(ig_ctx *x)
{
	if (x->admin)
		return;
	struct ig_answer_fields f = { .w = &x->headers };
	const struct ig_answer a = { .ctx = x, .status = x->status, .tls = x->conn && x->conn->tls, .fields = &f };
	/* Held while they run: a hook that answers again (ig_finish,
	   ig_respond_problem) changes nothing, and hands nothing off twice. */
	bool held = x->held;
	x->held = true;
	run(&a, x->hooks ? x->hooks : ig_hooks_root);
	x->held = held;
}


size_t ig_http_hooks_after_lines(int status, bool tls, char *out, size_t cap)
{
	struct ig_answer_fields f = { .buf = out, .cap = cap };
	const struct ig_answer a = { .status = status, .tls = tls, .fields = &f };
	run(&a, ig_hooks_root);
	return f.len;
}
