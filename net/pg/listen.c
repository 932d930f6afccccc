/* LISTEN/NOTIFY: one dedicated connection per core that asked, which
 * LISTENs on every channel asked on that core each time it comes up (a
 * reconnect included) and hands each NOTIFY to the channel's callback on
 * this loop. Notifications sent while it was down are lost (PostgreSQL
 * keeps none for a listener that is gone). It owns the listener (its
 * owner ops are here) and tells the pool of its comings and goings, which
 * keeps the reconnect backoff for all of the core's connections. */
#include "internal.h"

#include <string.h>

/* LISTEN "name", the name quoted as an identifier ("" for a "). */
static size_t listen_sql(char *out, size_t cap, const char *name)
{
	size_t n = 0;
	const char *pre = "LISTEN \"";
	for (const char *p = pre; *p && n + 1 < cap; p++)
		out[n++] = *p;
	for (const char *p = name; *p && n + 3 < cap; p++) {
		if (*p == '"')
			out[n++] = '"';
		out[n++] = *p;
	}
	out[n++] = '"';
	out[n] = 0;
	return n;
}

/* LISTEN each channel of p on k. */
static void listen_all(struct ig_pg_pool *p, struct pg_conn *k)
{
	/* Internal simple queries: their answer is only ReadyForQuery's. */
	for (uint32_t i = 0; i < p->nchannels; i++) {
		struct pg_query *q = ig_pg_query_new(p->core);
		if (!q)
			return;
		q->kind = PGQ_SIMPLE;
		q->internal = true;
		/* Written into the connection's buffer at once: a simple
		   query's text is not needed after that. */
		char sql[160];
		q->sql_len = listen_sql(sql, sizeof sql, p->channels[i].name);
		q->sql = sql;
		bool sent = ig_pg_conn_send(k, q);
		q->sql = "";
		if (!sent)
			ig_pg_query_free(p->core, q);
	}
}

static void dispatch(struct ig_pg_pool *p, ig_str channel, ig_str payload)
{
	for (uint32_t i = 0; i < p->nchannels; i++)
		if (ig_str_eq(channel, p->channels[i].name, strlen(p->channels[i].name)))
			p->channels[i].fn(channel, payload, p->channels[i].arg);
}

static void listener_up(void *owner, struct pg_conn *k)
{
	struct ig_pg_pool *p = owner;
	ig_pg_pool_conn_up(p);
	listen_all(p, k);
}

static void listener_lost(void *owner, struct pg_conn *k, bool was_ready, enum ig_pg_error_kind kind,
			  const char *message)
{
	ig_pg_pool_conn_lost(owner, k, was_ready, kind, message);
}

static void listener_notify(void *owner, struct pg_conn *k, ig_str channel, ig_str payload)
{
	(void)k;
	dispatch(owner, channel, payload);
}

static const struct pg_conn_owner_ops listener_ops = {
	.up = listener_up,
	.lost = listener_lost,
	.notify = listener_notify,
};

int ig_pg_listen(struct ig_loop *loop, const char *channel, ig_pg_notify_fn *on_notify, void *arg)
{
	size_t len = strlen(channel);
	if (!ig_pg_configured_flag || len == 0 || len > 63)
		return -1;
	struct pg_core *c = ig_pg_core_of(loop);
	if (!c)
		return -1;
	struct ig_pg_pool *p = &c->pool;
	if (p->nchannels == PG_MAX_CHANNELS)
		return -1;
	struct pg_channel *ch = &p->channels[p->nchannels++];
	memcpy(ch->name, channel, len + 1);
	ch->fn = on_notify;
	ch->arg = arg;
	if (!p->listener) {
		p->listener = ig_pg_conn_new(c, PGR_LISTEN, &listener_ops, p);
		if (!p->listener) {
			p->nchannels--;
			return -1;
		}
		p->listen_notify = dispatch;
		atomic_fetch_add(&ig_pg_global->listeners, 1);
		ig_pg_conn_start(p->listener);
	} else if (p->listener->state == PGC_READY) {
		/* Already up: LISTEN the new channel alone. */
		uint32_t n = p->nchannels;
		p->nchannels = 1;
		struct pg_channel saved = p->channels[0];
		p->channels[0] = *ch;
		listen_all(p, p->listener);
		p->channels[0] = saved;
		p->nchannels = n;
	}
	return 0;
}
