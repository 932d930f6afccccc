/* lwIP's platform, hosted on the network core's loop: sys_now is its
 * millisecond clock, lwIP's timeouts run from one timer on its wheel,
 * memory is pools under a byte budget (lwipopts.h says why), and
 * randomness comes from getrandom. After a batch that touched lwIP, the
 * loopback's queue is delivered (NO_SYS has no thread to do it) and the
 * timer is set to lwIP's next timeout; another core's touch asks the
 * network core for that only when lwIP now has something sooner. All of
 * it runs under cores.c's lock. */
#include "lwip.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "lwip/sys.h"
#include "lwip/timeouts.h"

struct ig_lwip_state ig_lwip_state = { .fd = -1 };

u32_t sys_now(void)
{
	return (u32_t)ig_lwip_state.loop->clock.now_ms;
}

unsigned int ig_lwip_rand(void)
{
	unsigned int v;
	if (getrandom(&v, sizeof v, GRND_NONBLOCK) != sizeof v)
		v = (unsigned int)(ig_lwip_state.loop->clock.now_ms * 2654435761u);
	return v;
}

/* Each block carries its size and class in front, for the free. */
struct mem_head {
	size_t size, cls;
};
#define MEM_HEAD sizeof(struct mem_head)
#define MEM_MALLOC ((size_t)-1)

/* What lwIP allocates per segment and connection (a frame's pbuf is about
 * 1.5 KiB, a PCB about 200 bytes, a segment's header 40) comes from pools
 * by size class: the C heap would hand pages back and fault them in again
 * on every burst. Under the sanitizers it is the heap, which they watch. */
static const size_t mem_class_size[] = { 128, 512, 2048 };
#define MEM_CLASSES (sizeof mem_class_size / sizeof *mem_class_size)
static struct ig_pool mem_pools[MEM_CLASSES];

static size_t mem_class(size_t total)
{
#if !defined(__SANITIZE_ADDRESS__)
	for (size_t c = 0; c < MEM_CLASSES; c++)
		if (total <= mem_class_size[c])
			return c;
#else
	(void)total;
#endif
	return MEM_MALLOC;
}

void *ig_lwip_malloc(size_t size)
{
	struct ig_lwip_state *s = &ig_lwip_state;
	if (size > s->mem_budget - s->mem_used) {
		s->mem_refused++;
		return NULL;
	}
	size_t cls = mem_class(MEM_HEAD + size);
	char *p = cls == MEM_MALLOC ? malloc(MEM_HEAD + size) : ig_pool_take(&mem_pools[cls]);
	if (!p)
		return NULL;
	memcpy(p, &(struct mem_head){ size, cls }, MEM_HEAD);
	s->mem_used += size;
	return p + MEM_HEAD;
}

void *ig_lwip_calloc(size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		return NULL;
	void *p = ig_lwip_malloc(count * size);
	if (p)
		memset(p, 0, count * size);
	return p;
}

void ig_lwip_free(void *mem)
{
	if (!mem)
		return;
	char *p = (char *)mem - MEM_HEAD;
	struct mem_head h;
	memcpy(&h, p, MEM_HEAD);
	ig_lwip_state.mem_used -= h.size;
	if (h.cls == MEM_MALLOC)
		free(p);
	else
		ig_pool_give(&mem_pools[h.cls], p);
}

static bool loopback_queued(void);

/* When lwIP wants its next turn (UINT64_MAX: never). */
static uint64_t due_ms(const struct ig_lwip_state *s)
{
	u32_t wait = loopback_queued() ? 0 : sys_timeouts_sleeptime();
	return wait == SYS_TIMEOUTS_SLEEPTIME_INFINITE ? UINT64_MAX : s->loop->clock.now_ms + wait;
}

static void arm_timer(struct ig_lwip_state *s)
{
	uint64_t at = due_ms(s);
	s->armed_ms = at;
	if (at == UINT64_MAX) {
		ig_timer_cancel(&s->loop->timers, &s->timer);
		return;
	}
	if (!ig_timer_armed(&s->timer) || s->timer.deadline_ms != at)
		ig_timer_set(&s->loop->timers, &s->timer, at);
}

/* Bounded: a loopback exchange that keeps answering itself must not hold
 * the loop; what is left is delivered on the next tick. */
#define LOOPBACK_ROUNDS 64

static bool loopback_queued(void)
{
	struct netif *n;
	NETIF_FOREACH(n)
	if (n->loop_first)
		return true;
	return false;
}

void ig_lwip_port_settle(void)
{
	struct ig_lwip_state *s = &ig_lwip_state;
	for (int i = 0; i < LOOPBACK_ROUNDS && loopback_queued(); i++)
		netif_poll_all();
	arm_timer(s);
}

static void on_settle(struct ig_deferred *d)
{
	(void)d;
	ig_lwip_lock(ig_lwip_state.net_core);
	ig_lwip_port_settle();
	ig_lwip_unlock();
}

void ig_lwip_port_touch(void)
{
	struct ig_lwip_state *s = &ig_lwip_state;
	struct ig_lwip_core *net = s->net_core;
	if (s->holder == net) {
		ig_loop_defer(s->loop, &s->settle);
	} else if (!net->settle_posted && due_ms(s) < s->armed_ms) {
		net->settle_posted = true;
		ig_lwip_signal(net);
	}
}

static void on_timer(struct ig_timer *t)
{
	(void)t;
	ig_lwip_lock(ig_lwip_state.net_core);
	sys_check_timeouts();
	ig_lwip_port_touch();
	ig_lwip_unlock();
}

void ig_lwip_port_grow(size_t bytes)
{
	ig_lwip_state.mem_budget += bytes;
	for (size_t c = 0; c < MEM_CLASSES; c++)
		mem_pools[c].max_objs += bytes / mem_class_size[c];
}

void ig_lwip_port_init(struct ig_loop *loop, size_t mem_budget)
{
	struct ig_lwip_state *s = &ig_lwip_state;
	s->loop = loop;
	s->net_core = ig_lwip_core_of(loop);
	s->armed_ms = UINT64_MAX;
	s->mem_budget = mem_budget;
	for (size_t c = 0; c < MEM_CLASSES; c++)
		ig_pool_init(&mem_pools[c], mem_class_size[c], 64, mem_budget / mem_class_size[c] + 1);
	s->timer.fn = on_timer;
	s->settle.fn = on_settle;
}
