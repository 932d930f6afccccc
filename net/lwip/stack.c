/* lwIP as the process's TCP/IP stack (net/stack.h's ops table, the strong
 * definition of what net/stack_settings.c refers to weakly): starts lwIP on
 * the network core (core 0) with a memory budget sized from
 * INGOT_MAX_CONNS, brings the frame device up, gives each other core its
 * share, and keeps the loop running at exit until the peers have
 * acknowledged what was written. */
#include "lwip.h"

#include "lwip/init.h"

#include <pthread.h>

/* The budget: a base for ARP, DHCP and the listeners, and per allowed
 * connection its PCB, a window's worth of segments in flight, and room. */
#define MEM_BASE (4u << 20)
#define MEM_PER_CONN (16u << 10)

/* Core 0 starts lwIP; another core waits until it has (core 0's thread
 * is the main thread, which starts the others first), asleep: spinning,
 * it would take a CPU from core 0's start (on the unikernel a host's
 * thread of qemu's). */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start_done = PTHREAD_COND_INITIALIZER;

static int stack_start(struct ig_loop *loop, uint32_t max_conns, char *err, size_t errlen)
{
	struct ig_lwip_state *s = &ig_lwip_state;
	if (ig_lwip_core_start(loop, err, errlen) != 0)
		return -1;
	if (loop->core != 0) {
		pthread_mutex_lock(&start_lock);
		while (!atomic_load(&s->started))
			pthread_cond_wait(&start_done, &start_lock);
		pthread_mutex_unlock(&start_lock);
		struct ig_lwip_core *c = ig_lwip_core_of(loop);
		ig_lwip_lock(c);
		ig_lwip_port_grow((size_t)max_conns * MEM_PER_CONN);
		ig_lwip_streams_grow(max_conns);
		ig_lwip_unlock();
		return 0;
	}
	ig_lwip_port_init(loop, MEM_BASE + (size_t)max_conns * MEM_PER_CONN);
	ig_lwip_streams_init(max_conns);
	ig_lwip_lock(s->net_core);
	lwip_init();
	int rc = ig_lwip_frames_up(&ig_lwip_net_config, err, errlen);
	ig_lwip_unlock();
	if (rc == 0) {
		pthread_mutex_lock(&start_lock);
		atomic_store(&s->started, true);
		pthread_cond_broadcast(&start_done);
		pthread_mutex_unlock(&start_lock);
	}
	return rc;
}

static const char *stack_configure(const char *net, const char *ip, const char *gw, char *err, size_t errlen)
{
	return ig_lwip_net_parse(&ig_lwip_net_config, net, ip, gw, err, errlen);
}

/* The finish: a check each tick, ending the loop's run. */
struct finish_wait {
	struct ig_timer timer;
	struct ig_loop *loop;
	uint64_t until_ms;
};

static void on_finish_check(struct ig_timer *t)
{
	struct finish_wait *w = (struct finish_wait *)t;
	if (!ig_lwip_streams_busy() || w->loop->clock.now_ms >= w->until_ms) {
		w->loop->running = false;
		return;
	}
	ig_timer_set(&w->loop->timers, t, w->loop->clock.now_ms + IG_TICK_MS);
}

static void stack_finish(struct ig_loop *loop, uint32_t max_ms)
{
	if (!ig_lwip_streams_busy())
		return;
	struct finish_wait w = { .timer.fn = on_finish_check, .loop = loop,
				 .until_ms = loop->clock.now_ms + max_ms };
	ig_timer_set(&loop->timers, &w.timer, loop->clock.now_ms + IG_TICK_MS);
	ig_loop_run(loop);
	ig_timer_cancel(&loop->timers, &w.timer);
}

const struct ig_net_stack ig_lwip_stack = {
	.name = "lwip",
	.takes_fds = false,
	.listener_size = sizeof(struct ig_net_listener),
	.seed_size = 0, /* one pool of streams, ig_lwip_streams_init's */
	.configure = stack_configure,
	.start = stack_start,
	.open = ig_lwip_open,
	.serve = ig_lwip_serve,
	.port = ig_lwip_port,
	.stop_accepting = ig_lwip_stop_accepting,
	.refused = ig_lwip_refused,
	.when_up = ig_lwip_when_up,
	.connect = ig_lwip_connect,
	.stream_error = ig_lwip_stream_error,
	.dgram_open = ig_lwip_dgram_open,
	.dgram_send = ig_lwip_dgram_send,
	.dgram_close = ig_lwip_dgram_close,
	.nameservers = ig_lwip_nameservers,
	.finish = stack_finish,
	.after_first_delivery = ig_lwip_after_first_delivery,
};
