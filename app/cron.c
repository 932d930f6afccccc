/* The heartbeat cron job (schemas/service.json's x-ingot-cron, every
 * second): its tick operation records a row per tick with this process's
 * id, and GET /cron/heartbeat counts them. The setting HEARTBEAT_CRON
 * (app/service.c's table) turns this process's timer for it on. */
#include "api.h"
#include "queries.h"

#include <unistd.h>

int heartbeatTick(ig_ctx *ctx, const struct heartbeatTick_in *in, struct heartbeatTick_out *out)
{
	(void)out;
	ig_pg_error err;
	/* 0 (no header) is stored as NULL: not a scheduler's tick. */
	if (db_InsertHeartbeat(ctx, in->has_Ingot_Cron_Tick ? in->Ingot_Cron_Tick : 0, (int32_t)getpid(), &err) < 0)
		return ig_pg_respond_error(ctx, &err);
	return 204;
}

int getHeartbeat(ig_ctx *ctx, const struct getHeartbeat_in *in, struct getHeartbeat_out *out)
{
	(void)in;
	ig_pg_error err;
	struct db_GetHeartbeat_row row;
	if (db_GetHeartbeat(ctx, &row, &err) < 0)
		return ig_pg_respond_error(ctx, &err);
	/* count(*) always has a value; array_agg over no rows is NULL. */
	out->r200.ticks = row.has_ticks ? row.ticks : 0;
	if (row.has_pids)
		out->r200.pids = (struct Heartbeat_pids){ row.pids.items, row.pids.len };
	return 200;
}
