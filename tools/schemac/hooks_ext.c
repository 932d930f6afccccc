/* The extension x-ingot-hooks: {"before": [names], "after": [names]} of C
 * functions (include/ingot/hooks.h) at the document's root (every
 * operation's, first) and on an operation (its own, after the root's).
 * Read and judged here, so that a bad name fails the build; emitted as the
 * prototypes api.h declares and the tables (struct ig_op_hooks) that the
 * descriptors and the app point to. */
#include "emit.h"

#include <stdlib.h>
#include <string.h>

static const struct sc_keyword hooks_keys[] = { { "before", NULL }, { "after", NULL }, { NULL, NULL } };

static void parse_list(struct sc_model *m, const cJSON *v, const char *ptr, char ***out, size_t *n)
{
	if (!v)
		return;
	if (!cJSON_IsArray(v)) {
		sc_error(m, ptr, "must be an array of C function names");
		return;
	}
	int i = 0;
	for (const cJSON *it = v->child; it; it = it->next, i++) {
		char *p = sc_ptr_index(ptr, i);
		if (!cJSON_IsString(it) || !sc_is_global_ident(it->valuestring))
			sc_error(m, p, "a hook is named by a C identifier (not a keyword, not starting with \"ig_\" or \"_\")");
		else if (sc_libc_header(it->valuestring))
			sc_error(m, p, "hook \"%s\" is a name of the C library (<%s>), which the generated api.h includes; "
				       "choose another", it->valuestring, sc_libc_header(it->valuestring));
		else
			SC_APPEND(*out, *n, sc_strdup(it->valuestring));
		free(p);
	}
}

void sc_parse_hooks(struct sc_model *m, const cJSON *v, const char *ptr, struct sc_hooks *h)
{
	if (!cJSON_IsObject(v)) {
		sc_error(m, ptr, "x-ingot-hooks must be an object {before, after} of arrays of C function names");
		return;
	}
	sc_check_keys(m, v, ptr, hooks_keys);
	char *p = sc_ptr_key(ptr, "before");
	parse_list(m, sc_get(v, "before"), p, &h->before, &h->nbefore);
	free(p);
	p = sc_ptr_key(ptr, "after");
	parse_list(m, sc_get(v, "after"), p, &h->after, &h->nafter);
	free(p);
}

static bool listed(char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* Calls fn on every name the document gives, once per place. */
static void each_hook(const struct sc_model *m, void (*fn)(const struct sc_model *m, const char *name, bool before,
							     const char *ptr, void *arg), void *arg)
{
	for (size_t i = 0; i <= m->nops; i++) {
		const struct sc_hooks *h = i < m->nops ? &m->ops[i]->hooks : &m->hooks;
		const char *ptr = i < m->nops ? m->ops[i]->ptr : "";
		for (size_t k = 0; k < h->nbefore; k++)
			fn(m, h->before[k], true, ptr, arg);
		for (size_t k = 0; k < h->nafter; k++)
			fn(m, h->after[k], false, ptr, arg);
	}
}

static void check_one(const struct sc_model *m, const char *name, bool before, const char *ptr, void *arg)
{
	struct sc_model *mm = arg;
	char *p = sc_ptr_key(ptr, "x-ingot-hooks");
	for (size_t i = 0; i < m->nops; i++)
		if (!strcmp(m->ops[i]->id, name))
			sc_error(mm, p, "hook \"%s\" is an operationId: a handler's name", name);
	for (size_t i = 0; i <= m->nops; i++) {
		const struct sc_hooks *h = i < m->nops ? &m->ops[i]->hooks : &m->hooks;
		if (before ? listed(h->after, h->nafter, name) : false) {
			sc_error(mm, p, "hook \"%s\" is named as a before-hook and as an after-hook: their C types differ",
				 name);
			break;
		}
	}
	free(p);
}

void sc_check_hooks(struct sc_model *m)
{
	each_hook(m, check_one, m);
}

bool sc_has_hooks(const struct sc_model *m)
{
	for (size_t i = 0; i <= m->nops; i++) {
		const struct sc_hooks *h = i < m->nops ? &m->ops[i]->hooks : &m->hooks;
		if (h->nbefore || h->nafter)
			return true;
	}
	return false;
}

/* api.h: each name's prototype, once. The asm label gives it a symbol of
   its own (ig_hook_<name>), as a handler's, so that it takes over no
   libc, runtime or library symbol at link time. */
struct seen {
	char **names;
	size_t n;
	struct sc_out *h;
};

static void declare_one(const struct sc_model *m, const char *name, bool before, const char *ptr, void *arg)
{
	(void)m;
	(void)ptr;
	struct seen *s = arg;
	if (listed(s->names, s->n, name))
		return;
	SC_APPEND(s->names, s->n, (char *)name);
	if (before)
		out_line(s->h, "int %s(ig_ctx *ctx, const char *operation_id, const void *in) __asm__(\"ig_hook_%s\");",
			 name, name);
	else
		out_line(s->h, "void %s(const struct ig_answer *a) __asm__(\"ig_hook_%s\");", name, name);
}

void emit_hook_prototypes(struct sc_model *m, struct sc_out *h)
{
	if (!sc_has_hooks(m))
		return;
	out_line(h, "/* x-ingot-hooks: the app defines each (include/ingot/hooks.h). */");
	struct seen s = { .h = h };
	each_hook(m, declare_one, &s);
	free(s.names);
	out_blank(h);
}

static void emit_list(struct sc_out *c, const char *type, const char *name, char *const *a, size_t na,
		      char *const *b, size_t nb)
{
	if (!na && !nb)
		return;
	out_open(c, "static %s *const %s[] = {", type, name);
	for (size_t i = 0; i < na + nb; i++)
		out_line(c, "%s,", i < na ? a[i] : b[i - na]);
	out_close(c, "};");
}

void emit_op_hooks(struct sc_model *m, struct sc_out *c, const struct sc_op *op)
{
	const struct sc_hooks *r = &m->hooks, *o = &op->hooks;
	/* Without before-hooks or its own after-hooks, the root's after-hooks
	   (the app's) are the operation's: no table. */
	if (!r->nbefore && !o->nbefore && !o->nafter)
		return;
	char *before = sc_printf("ig_before_%s", op->id), *after = sc_printf("ig_after_%s", op->id);
	emit_list(c, "ig_before_hook_fn", before, r->before, r->nbefore, o->before, o->nbefore);
	emit_list(c, "ig_after_hook_fn", after, r->after, r->nafter, o->after, o->nafter);
	out_open(c, "static const struct ig_op_hooks ig_hooks_%s = {", op->id);
	if (r->nbefore + o->nbefore)
		out_line(c, ".before = %s, .nbefore = %zu,", before, r->nbefore + o->nbefore);
	if (r->nafter + o->nafter)
		out_line(c, ".after = %s, .nafter = %zu,", after, r->nafter + o->nafter);
	out_close(c, "};");
	out_blank(c);
	free(before);
	free(after);
}

bool sc_op_has_hooks(const struct sc_model *m, const struct sc_op *op)
{
	return m->hooks.nbefore || op->hooks.nbefore || op->hooks.nafter;
}

void emit_app_hooks(struct sc_model *m, struct sc_out *c)
{
	if (!sc_has_hooks(m))
		return;
	out_line(c, "/* x-ingot-hooks: the root's after-hooks, for answers no operation gives. */");
	emit_list(c, "ig_after_hook_fn", "ig_after_root", m->hooks.after, m->hooks.nafter, NULL, 0);
	if (m->hooks.nafter)
		out_line(c, "static const struct ig_op_hooks ig_api_hooks = { .after = ig_after_root, .nafter = %zu };",
			 m->hooks.nafter);
	else
		out_line(c, "static const struct ig_op_hooks ig_api_hooks = { .nafter = 0 };");
	out_blank(c);
}
