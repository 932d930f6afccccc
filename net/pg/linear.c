/* The linear calls of include/ingot/pg.h: ig_pg_run waits for one query,
 * ig_pg_send and ig_pg_send_read start queries that ig_wait_all waits for,
 * and ig_pg_transaction_* hold a connection for the exchange. Underneath
 * are the callback forms (query.c), whose completions write a record in the
 * request's arena (net/http/wait.h): rows and errors land there too, so a
 * handler that was cancelled leaves nothing they could write into. */
#include "ingot/pg.h"
#include "net/http/wait.h"

/* A query's record: its outcome, and where ig_wait_all puts it. Kept
 * small (a query of a batch makes one): a failure's error is copied into
 * the arena only when there is one. */
struct pg_wait {
	struct ig_wait_call call;
	const ig_pg_result *res; /* success */
	const ig_pg_error *err;  /* failure, in the arena */
	ig_pg_call *user;        /* ig_pg_send's, on the handler's stack or in the arena */
};

/* The exchange's transaction: a hook, so that it is rolled back when the
 * handler returns with it open. */
struct pg_linear_tx {
	struct ig_wait_hook hook;
	ig_pg_tx *tx;   /* open: the exchange's queries run on it, in order */
	bool beginning; /* BEGIN sent, not answered yet */
};

/* BEGIN's record. */
struct pg_begin {
	struct ig_wait_call call;
	struct pg_linear_tx *t;
	ig_pg_error err;
	bool failed;
};

static void fail(ig_pg_error *err, enum ig_pg_error_kind kind, const char *message)
{
	*err = (ig_pg_error){ .kind = kind, .message = { message, strlen(message) } };
}

static void cancelled(ig_pg_error *err)
{
	fail(err, IG_PG_CANCELLED, "the request was cancelled");
}

/* Whether a linear call of ctx may go on; else why not, in *err. */
static bool may_start(ig_ctx *ctx, ig_pg_error *err)
{
	if (!ig_wait_in_handler(ctx)) {
		fail(err, IG_PG_BAD_PARAMS, "a linear database call outside its handler's coroutine");
		return false;
	}
	if (ig_wait_cancelled(ctx)) {
		cancelled(err);
		return false;
	}
	return true;
}

static const ig_pg_error no_room_for_error = {
	.kind = IG_PG_TOO_LARGE, .message = IG_STR_INIT("out of request memory for the database's error"),
};

/* A query's record, its outcome unset. */
static struct pg_wait *new_wait(ig_ctx *ctx, const struct ig_wait_call_ops *ops, bool grouped)
{
	struct pg_wait *p = ig_wait_call_new(ctx, sizeof *p, ops, grouped);
	if (p) {
		p->res = NULL;
		p->err = NULL;
	}
	return p;
}

static void on_done(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct pg_wait *p = arg;
	if (err) {
		ig_pg_error *copy = ig_alloc(p->call.ctx, sizeof *copy);
		if (copy)
			*copy = *err;
		p->err = copy ? copy : &no_room_for_error;
	} else {
		p->res = res;
	}
	ig_wait_call_done(&p->call);
}

static void collect(struct ig_wait_call *c)
{
	struct pg_wait *p = (struct pg_wait *)c;
	ig_pg_call *u = p->user;
	/* Only what ig_pg_call's contract says holds: res, or err (whose kind
	   alone is set on success). */
	if (!c->done) {
		u->res = NULL;
		cancelled(&u->err);
	} else if ((u->res = p->res)) {
		u->err.kind = IG_PG_OK;
	} else {
		u->err = *p->err;
	}
}

static const struct ig_wait_call_ops waited_ops = { .collect = NULL };
static const struct ig_wait_call_ops grouped_ops = { .collect = collect };

static void tx_on_return(struct ig_wait_hook *hook, ig_ctx *ctx);

static struct pg_linear_tx *tx_of(ig_ctx *ctx)
{
	return (struct pg_linear_tx *)ig_wait_hook_find(ctx, tx_on_return);
}

bool ig_pg_transaction_open(ig_ctx *ctx)
{
	const struct pg_linear_tx *t = tx_of(ctx);
	return t && (t->tx || t->beginning);
}

/* On the exchange's transaction when one is open, else on the pool. */
static void start(ig_ctx *ctx, bool read, const char *sql, const ig_pg_value *params, size_t nparams,
		  struct pg_wait *p)
{
	struct pg_linear_tx *t = tx_of(ctx);
	if (t && t->tx)
		ig_pg_tx_query(t->tx, sql, params, nparams, on_done, p);
	else if (read)
		ig_pg_read(ctx, sql, params, nparams, on_done, p);
	else
		ig_pg_query(ctx, sql, params, nparams, on_done, p);
}

/* Waits for p; the outcome, as ig_pg_run returns it. */
static const ig_pg_result *wait_result(struct pg_wait *p, ig_pg_error *err)
{
	if (ig_wait_for(&p->call) != IG_WAIT_OK) {
		cancelled(err);
		return NULL;
	}
	if (!p->res)
		*err = *p->err;
	return p->res;
}

const ig_pg_result *ig_pg_run(ig_ctx *ctx, const char *sql, const ig_pg_value *params, size_t nparams,
			      ig_pg_error *err)
{
	if (!may_start(ctx, err))
		return NULL;
	struct pg_wait *p = new_wait(ctx, &waited_ops, false);
	if (!p) {
		fail(err, IG_PG_TOO_LARGE, "out of request memory");
		return NULL;
	}
	start(ctx, false, sql, params, nparams, p);
	return wait_result(p, err);
}

static void send(ig_ctx *ctx, bool read, const char *sql, const ig_pg_value *params, size_t nparams,
		 ig_pg_call *call)
{
	if (!may_start(ctx, &call->err)) {
		call->res = NULL;
		return;
	}
	struct pg_wait *p = new_wait(ctx, &grouped_ops, true);
	if (!p) {
		call->res = NULL;
		fail(&call->err, IG_PG_TOO_LARGE, "out of request memory");
		return;
	}
	p->user = call;
	start(ctx, read, sql, params, nparams, p);
}

void ig_pg_send(ig_ctx *ctx, const char *sql, const ig_pg_value *params, size_t nparams, ig_pg_call *call)
{
	send(ctx, false, sql, params, nparams, call);
}

void ig_pg_send_read(ig_ctx *ctx, const char *sql, const ig_pg_value *params, size_t nparams, ig_pg_call *call)
{
	send(ctx, true, sql, params, nparams, call);
}

/* ---- transactions ---- */

/* ROLLBACK on tx, counted, so that the exchange ends after it: its
 * answer lands in the arena. Without room for the record, the connection
 * goes back with net/pg's own ROLLBACK, which writes nothing there. */
static void roll_back(ig_ctx *ctx, ig_pg_tx *tx)
{
	struct pg_wait *p = new_wait(ctx, &waited_ops, false);
	if (p)
		ig_pg_rollback(tx, on_done, p);
	else
		ig_pg_release(tx);
}

static void tx_on_return(struct ig_wait_hook *hook, ig_ctx *ctx)
{
	struct pg_linear_tx *t = (struct pg_linear_tx *)hook;
	if (t->tx) {
		ig_pg_tx *tx = t->tx;
		t->tx = NULL;
		roll_back(ctx, tx);
	}
	/* A BEGIN still unanswered (the handler was cancelled) is rolled
	   back when it is answered: on_ready. */
}

static void on_ready(ig_pg_tx *tx, const ig_pg_error *err, void *arg)
{
	struct pg_begin *b = arg;
	ig_ctx *ctx = b->call.ctx;
	b->t->beginning = false;
	if (!tx) {
		b->failed = true;
		b->err = *err;
	} else if (ig_wait_cancelled(ctx)) {
		roll_back(ctx, tx); /* before the call is done: the exchange waits for it */
	} else {
		b->t->tx = tx;
	}
	ig_wait_call_done(&b->call);
}

bool ig_pg_transaction_begin(ig_ctx *ctx, ig_pg_error *err)
{
	if (!may_start(ctx, err))
		return false;
	struct pg_linear_tx *t = tx_of(ctx);
	if (t && (t->tx || t->beginning)) {
		fail(err, IG_PG_BAD_PARAMS, "a transaction is open already on this request");
		return false;
	}
	if (!t) {
		t = ig_alloc(ctx, sizeof *t);
		if (t)
			*t = (struct pg_linear_tx){ .hook.on_return = tx_on_return };
		if (!t || !ig_wait_hook_add(ctx, &t->hook)) {
			fail(err, IG_PG_TOO_LARGE, "out of request memory");
			return false;
		}
	}
	struct pg_begin *b = ig_wait_call_new(ctx, sizeof *b, &waited_ops, false);
	if (!b) {
		fail(err, IG_PG_TOO_LARGE, "out of request memory");
		return false;
	}
	b->t = t;
	b->failed = false;
	t->beginning = true;
	ig_pg_begin(ctx, on_ready, b);
	if (ig_wait_for(&b->call) != IG_WAIT_OK) {
		cancelled(err);
		return false;
	}
	if (b->failed) {
		*err = b->err;
		return false;
	}
	return true;
}

/* COMMIT or ROLLBACK of the open transaction, waiting; false with *err
 * when there is none or it failed. */
static bool end_tx(ig_ctx *ctx, bool commit, ig_pg_error *err)
{
	if (!may_start(ctx, err))
		return false; /* cancelled: the hook rolls back */
	struct pg_linear_tx *t = tx_of(ctx);
	if (!t || !t->tx) {
		fail(err, IG_PG_BAD_PARAMS, "no transaction is open on this request");
		return false;
	}
	struct pg_wait *p = new_wait(ctx, &waited_ops, false);
	if (!p) {
		fail(err, IG_PG_TOO_LARGE, "out of request memory");
		return false; /* still open: the hook rolls back */
	}
	ig_pg_tx *tx = t->tx;
	t->tx = NULL;
	if (commit)
		ig_pg_commit(tx, on_done, p);
	else
		ig_pg_rollback(tx, on_done, p);
	return wait_result(p, err) != NULL;
}

bool ig_pg_transaction_commit(ig_ctx *ctx, ig_pg_error *err)
{
	return end_tx(ctx, true, err);
}

void ig_pg_transaction_rollback(ig_ctx *ctx)
{
	ig_pg_error err;
	(void)end_tx(ctx, false, &err);
}
