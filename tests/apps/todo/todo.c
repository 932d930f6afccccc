/* The todo app's handlers (openapi.json): ingot's out-of-tree test app.
 * The todos live in this process's memory, shared by every core behind one
 * lock; an id is never reused. notifyTodo sends a todo to the upstream
 * (TODO_UPSTREAM, an http:// origin) through the core's outbound client,
 * the handler waiting meanwhile (ig_fetch_wait), and answers what the
 * upstream said. */
#include "api.h"
#include "ingot/client.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TODO_MAX 64

struct stored {
	int64_t id; /* 0: a free slot */
	bool done;
	size_t title_len;
	char title[100]; /* the schema's maxLength */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct stored todos[TODO_MAX];
static int64_t last_id;

/* The stored todo with id, as the handler's output (its title copied into
 * the request's arena, since the slot may change once the lock is
 * released); false when there is none or the arena is full. */
static bool find(ig_ctx *ctx, int64_t id, struct Todo *out)
{
	bool found = false;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < TODO_MAX && !found; i++) {
		if (todos[i].id != id)
			continue;
		char *t = ig_alloc(ctx, todos[i].title_len + 1);
		if (t) {
			memcpy(t, todos[i].title, todos[i].title_len);
			*out = (struct Todo){ .id = id, .title = { t, todos[i].title_len }, .done = todos[i].done };
		}
		found = t != NULL;
	}
	pthread_mutex_unlock(&lock);
	return found;
}

int listTodos(ig_ctx *ctx, const struct listTodos_in *in, struct listTodos_out *out)
{
	struct Todo *items = ig_alloc(ctx, TODO_MAX * sizeof *items);
	if (!items)
		return 500;
	size_t n = 0, limit = in->has_limit ? (size_t)in->limit : TODO_MAX;
	int64_t ids[TODO_MAX];
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < TODO_MAX; i++)
		if (todos[i].id && (!in->has_done || todos[i].done == in->done))
			ids[n++] = todos[i].id;
	pthread_mutex_unlock(&lock);
	/* Oldest first: ids grow, slots are reused. */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
			int64_t t = ids[j];
			ids[j] = ids[j - 1];
			ids[j - 1] = t;
		}
	size_t kept = 0;
	for (size_t i = 0; i < n && kept < limit; i++)
		if (find(ctx, ids[i], &items[kept])) /* not removed meanwhile */
			kept++;
	out->r200.items = (struct TodoList_items){ items, kept };
	return 200;
}

int createTodo(ig_ctx *ctx, const struct createTodo_in *in, struct createTodo_out *out)
{
	int64_t id = 0;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < TODO_MAX && !id; i++) {
		if (todos[i].id)
			continue;
		id = todos[i].id = ++last_id;
		todos[i].done = in->body.has_done && in->body.done;
		todos[i].title_len = in->body.title.len; /* at most maxLength: validated */
		memcpy(todos[i].title, in->body.title.ptr, in->body.title.len);
	}
	pthread_mutex_unlock(&lock);
	if (!id) {
		ig_respond_problem(ctx, 507, "the store holds 64 todos");
		return 507;
	}
	char *loc = ig_alloc(ctx, 32);
	if (!loc)
		return 500;
	memcpy(loc, "/todos/", 7);
	size_t n = 7 + ig_fmt_i64(loc + 7, id);
	ig_add_header(ctx, "Location", (ig_str){ loc, n });
	out->r201 = (struct Todo){ .id = id, .title = in->body.title, .done = in->body.has_done && in->body.done };
	return 201;
}

static int not_found(ig_ctx *ctx)
{
	ig_respond_problem(ctx, 404, "no todo has this id");
	return 404;
}

int getTodo(ig_ctx *ctx, const struct getTodo_in *in, struct getTodo_out *out)
{
	return find(ctx, in->id, &out->r200) ? 200 : not_found(ctx);
}

int deleteTodo(ig_ctx *ctx, const struct deleteTodo_in *in, struct deleteTodo_out *out)
{
	(void)out;
	bool found = false;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < TODO_MAX && !found; i++)
		if (todos[i].id == in->id) {
			todos[i].id = 0;
			found = true;
		}
	pthread_mutex_unlock(&lock);
	return found ? 204 : not_found(ctx);
}

/* ---- notifyTodo: the outbound call, written top to bottom ---- */

/* ig_fetch_wait suspends the handler on its coroutine until the upstream
 * answers; the core serves others meanwhile. Everything here may live on
 * the handler's stack: the call has ended before the handler returns. */
int notifyTodo(ig_ctx *ctx, const struct notifyTodo_in *in, struct notifyTodo_out *out)
{
	struct Todo todo;
	if (!find(ctx, in->id, &todo))
		return not_found(ctx);
	const char *base = getenv("TODO_UPSTREAM");
	ig_dispatcher *agent = ig_core_agent(ctx);
	char url[256];
	if (!base || !agent || (size_t)snprintf(url, sizeof url, "%s/notify", base) >= sizeof url) {
		ig_respond_problem(ctx, 502, "TODO_UPSTREAM is not set to an origin");
		return 502;
	}
	/* The todo as JSON, as the generated encoder would write it. */
	ig_wbuf body = { .arena = ig_ctx_arena(ctx) };
	ig_wbuf_lit(&body, "{\"id\":");
	ig_json_int(&body, todo.id);
	ig_wbuf_lit(&body, ",\"title\":");
	ig_json_string(&body, todo.title.ptr, todo.title.len);
	ig_wbuf_lit(&body, ",\"done\":");
	ig_json_bool(&body, todo.done);
	ig_wbuf_lit(&body, "}");
	if (body.failed)
		return 500;
	const ig_header json = { IG_STR("Content-Type"), IG_STR("application/json") };
	const ig_fetch_opts opts = { .method = "POST", .url = url, .headers = &json, .header_count = 1,
				     .body = { body.ptr, body.len }, .parent = ctx };
	const ig_response *res = ig_fetch_wait(ctx, agent, &opts);
	if (res->error != IG_CLIENT_OK) /* the kind for the client, the whole error for the log */
		return ig_fetch_respond_error(ctx, res);
	out->r200 = (struct Receipt){ .id = in->id, .upstream_status = res->status, .upstream_body = res->body };
	return 200;
}
