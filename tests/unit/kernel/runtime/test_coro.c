/* Coroutines (kernel/runtime/coro.h): the switch in and out, yields and
 * resumes many times over, nested coroutines, the pool growing to its cap
 * and refusing there, shrinking, reusing a stack, trimming what a deep run
 * touched (mincore on the stack's pages), the guard page's address, and
 * two threads switching at once. */
#include "kernel/runtime/coro.h"
#include "tests/unit/check.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

#define PAGE ((size_t)4096)

/* The stack's top: its struct ig_coro lies in the top page. */
static char *stack_top(struct ig_coro *c)
{
	return (char *)(((uintptr_t)c + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
}

static bool mapped(const void *page)
{
	unsigned char v;
	return mincore((void *)((uintptr_t)page & ~(uintptr_t)(PAGE - 1)), PAGE, &v) == 0 || errno != ENOMEM;
}

static bool resident(const void *page)
{
	unsigned char v = 0;
	return mincore((void *)((uintptr_t)page & ~(uintptr_t)(PAGE - 1)), PAGE, &v) == 0 && (v & 1);
}

struct probe {
	int steps;
	struct ig_coro *self;
	char *local; /* its frame's address: where its stack is (not a local's:
			ASan may keep those on a fake stack of its own) */
};

static void run_once(void *arg)
{
	struct probe *p = arg;
	p->local = __builtin_frame_address(0);
	p->self = ig_coro_self();
	p->steps++;
}

static void test_switch(void)
{
	struct ig_coro_pool pool;
	ig_coro_pool_init(&pool, 64 * 1024, 4);
	CHECK(pool.stack_size == 64 * 1024 && pool.live == 0 && pool.idle == 0 && !pool.free_list,
	      "init maps nothing");
	CHECK(ig_coro_self() == NULL, "on the thread's stack, no coroutine runs");
	struct probe pr = { 0 };
	struct ig_coro *c = ig_coro_new(&pool, run_once, &pr);
	CHECK(c && pool.live == 1 && pr.steps == 0, "new does not start it");
	CHECK(ig_coro_resume(c), "a function that returns: resume says it finished");
	CHECK(pr.steps == 1 && pr.self == c, "it ran, and ig_coro_self named it");
	CHECK(pr.local < stack_top(c) && pr.local > stack_top(c) - pool.stack_size, "on its own stack");
	CHECK(ig_coro_self() == NULL, "back on the thread's stack");
	CHECK(pool.live == 0 && pool.idle == 1, "its stack is back in the pool");

	char *first = pr.local;
	struct ig_coro *d = ig_coro_new(&pool, run_once, &pr);
	CHECK(d == c && pool.idle == 0, "the next coroutine reuses the idle stack");
	ig_coro_resume(d);
	CHECK(pr.steps == 2 && pr.local == first, "and runs on the same addresses");
	ig_coro_pool_trim(&pool);
	CHECK(pool.idle == 0 && !pool.free_list && !mapped(first), "trim unmaps the idle stack");
}

struct counter {
	long n, seen;
};

static void count_up(void *arg)
{
	struct counter *k = arg;
	for (long i = 0; i < k->n; i++) {
		k->seen = i;
		ig_coro_yield();
	}
}

static void test_many_yields(void)
{
	struct ig_coro_pool pool;
	ig_coro_pool_init(&pool, 16 * 1024, 2);
	struct counter k = { .n = 100000 };
	struct ig_coro *c = ig_coro_new(&pool, count_up, &k);
	long resumes = 0;
	bool ok = true;
	while (!ig_coro_resume(c)) {
		ok = ok && k.seen == resumes;
		resumes++;
	}
	CHECK(ok && resumes == k.n, "100000 yields, each resumed where it stopped");
	CHECK(pool.live == 0, "finished after the last resume");
	ig_coro_pool_trim(&pool);
}

/* Nested: outer resumes inner, both yield; the order of events shows who
 * runs after each switch. */
static char trace[64];
static size_t trace_len;
static struct ig_coro_pool nest_pool;

static void mark(char ch)
{
	trace[trace_len++] = ch;
}

static void inner(void *arg)
{
	(void)arg;
	mark('i');
	ig_coro_yield();
	mark('j');
}

static void outer(void *arg)
{
	struct ig_coro **self_seen = arg;
	mark('o');
	struct ig_coro *in = ig_coro_new(&nest_pool, inner, NULL);
	bool done = ig_coro_resume(in);
	self_seen[0] = ig_coro_self();
	mark(done ? 'X' : 'y');
	ig_coro_yield();
	mark('p');
	done = ig_coro_resume(in);
	mark(done ? 'd' : 'X');
}

static void test_nested(void)
{
	ig_coro_pool_init(&nest_pool, 32 * 1024, 4);
	struct ig_coro *seen[1] = { 0 };
	struct ig_coro *out = ig_coro_new(&nest_pool, outer, seen);
	CHECK(!ig_coro_resume(out), "the outer one yields");
	CHECK(seen[0] == out, "after the inner one yields, the outer one is running again");
	CHECK(nest_pool.live == 2, "both alive");
	CHECK(ig_coro_resume(out), "the outer one finishes");
	trace[trace_len] = 0;
	CHECK(strcmp(trace, "oiypjd") == 0, "each yield went back to its own resumer");
	CHECK(nest_pool.live == 0 && nest_pool.idle == 2, "both stacks are back");
	CHECK(ig_coro_self() == NULL, "the thread's stack again");
	ig_coro_pool_trim(&nest_pool);
}

/* The process's mappings now: vm.max_map_count bounds them. */
static int mappings(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0, ch;
	while (f && (ch = fgetc(f)) != EOF)
		n += ch == '\n';
	if (f)
		fclose(f);
	return n;
}

static void wait_once(void *arg)
{
	struct probe *p = arg;
	p->local = __builtin_frame_address(0);
	ig_coro_yield();
	p->steps++;
}

static void test_grow_cap_shrink(void)
{
	enum { N = 40 };
	struct ig_coro_pool pool;
	ig_coro_pool_init(&pool, 16 * 1024, N);
	static struct probe pr[N];
	struct ig_coro *c[N];
	bool started = true;
	int maps_before = mappings();
	for (int i = 0; i < N; i++) {
		c[i] = ig_coro_new(&pool, wait_once, &pr[i]);
		started = started && c[i] && !ig_coro_resume(c[i]);
	}
	CHECK(started && pool.live == N && pool.idle == 0, "the pool grows to 40 waiting coroutines");
	int added = mappings() - maps_before;
	check_that(added <= 2 * N, "at most two mappings a stack (coro.h's arithmetic for the cap)", "%d for %d", added, N);
	printf("# %d stacks added %d mappings\n", N, added);
	CHECK(ig_coro_new(&pool, wait_once, NULL) == NULL && pool.refused == 1, "at the cap, new refuses");
	CHECK(pool.live == N, "a refusal changes nothing");
	bool distinct = true;
	for (int i = 1; i < N; i++)
		distinct = distinct && pr[i].local != pr[i - 1].local;
	CHECK(distinct, "each on a stack of its own");

	CHECK(ig_coro_resume(c[0]) && pool.live == N - 1, "one finishes");
	struct ig_coro *again = ig_coro_new(&pool, wait_once, &pr[0]);
	CHECK(again != NULL && pool.live == N, "below the cap again: new succeeds");
	ig_coro_resume(again);
	c[0] = again;

	int finished = 0;
	for (int i = 0; i < N; i++)
		finished += ig_coro_resume(c[i]);
	CHECK(finished == N && pool.live == 0, "all finish");
	/* Kept while fewer idle than alive or than IG_CORO_IDLE_MIN: 20 of 40
	   (the 21st given back finds 20 idle, 19 alive). */
	CHECK_INT(pool.idle, N / 2, "the pool shrank as they finished");
	int unmapped = 0;
	for (int i = 0; i < N; i++)
		unmapped += !mapped(pr[i].local);
	CHECK_INT(unmapped, N / 2, "the stacks beyond are unmapped");
	ig_coro_pool_trim(&pool);
	unmapped = 0;
	for (int i = 0; i < N; i++)
		unmapped += !mapped(pr[i].local);
	CHECK(unmapped == N && pool.idle == 0, "trim unmaps the idle ones");
}

/* Touches about `bytes` of stack below its caller's frame (not
 * instrumented: ASan could put buf on a fake stack of its own). */
__attribute__((noinline, no_sanitize_address)) static void go_deep(size_t bytes)
{
	volatile char buf[1024];
	buf[0] = 1;
	buf[sizeof buf - 1] = 1;
	if (bytes > sizeof buf)
		go_deep(bytes - sizeof buf);
	buf[1] = buf[0];
}

struct deep {
	size_t bytes;
	bool yield;
};

static void deep_run(void *arg)
{
	struct deep *d = arg;
	go_deep(d->bytes);
	if (d->yield)
		ig_coro_yield();
}

static void test_trim(void)
{
	struct ig_coro_pool pool;
	ig_coro_pool_init(&pool, 64 * 1024, 4);
	struct deep d = { .bytes = 40 * 1024, .yield = true };
	struct ig_coro *c = ig_coro_new(&pool, deep_run, &d);
	char *top = stack_top(c);
	ig_coro_resume(c);
	CHECK(resident(top - 24 * 1024) && resident(top - 36 * 1024), "a deep run's pages are resident while it waits");
	ig_coro_resume(c);
	CHECK(pool.idle == 1, "given back");
	int deep_resident = 0;
	for (char *a = top - pool.stack_size; a < top - IG_CORO_HOT_BYTES; a += PAGE)
		deep_resident += resident(a);
	CHECK_INT(deep_resident, 0, "given back after waiting: nothing below the hot top is resident");
	CHECK(resident(top - PAGE), "the top page stays");
	CHECK(mapped(top - 40 * 1024), "trimmed, not unmapped");

	/* Reused, the trimmed pages read as zero again and work. */
	d.bytes = 48 * 1024;
	c = ig_coro_new(&pool, deep_run, &d);
	CHECK(stack_top(c) == top, "the trimmed stack is reused");
	CHECK(!ig_coro_resume(c) && resident(top - 44 * 1024), "and runs deep again");
	ig_coro_resume(c);
	deep_resident = 0;
	for (char *a = top - pool.stack_size; a < top - IG_CORO_HOT_BYTES; a += PAGE)
		deep_resident += resident(a);
	CHECK_INT(deep_resident, 0, "trimmed again");
	ig_coro_pool_trim(&pool);
}

static char *deep_top; /* where deep_once ran */

static void deep_once(void *arg)
{
	(void)arg;
	deep_top = stack_top(ig_coro_self());
	go_deep(40 * 1024);
}

static int deep_pages(char *top, size_t stack_size)
{
	int n = 0;
	for (char *a = top - stack_size; a < top - IG_CORO_HOT_BYTES; a += PAGE)
		n += resident(a);
	return n;
}

/* A run that never waits is not checked when it ends (no syscall); the
 * stack it leaves at the free list's head is, once another goes above. */
static void test_trim_unchecked_head(void)
{
	struct ig_coro_pool pool;
	ig_coro_pool_init(&pool, 64 * 1024, 4);
	struct probe pr = { 0 };
	struct ig_coro *waiting = ig_coro_new(&pool, wait_once, &pr);
	ig_coro_resume(waiting);
	struct ig_coro *deep = ig_coro_new(&pool, deep_once, NULL);
	CHECK(ig_coro_resume(deep) && pool.idle == 1, "a deep run that never waits ends");
	CHECK(deep_pages(deep_top, pool.stack_size) > 0, "its deep pages stay: nothing was checked");
	CHECK(ig_coro_resume(waiting) && pool.idle == 2, "then a run that waited ends, given back above it");
	CHECK_INT(deep_pages(deep_top, pool.stack_size), 0, "the stack below was checked and trimmed then");
	ig_coro_pool_trim(&pool);
}

static struct ig_coro_pool guard_pool;

static void guard_probe(void *arg)
{
	bool *r = arg;
	char *guard = stack_top(ig_coro_self()) - guard_pool.stack_size - PAGE;
	size_t size = 0;
	r[0] = ig_coro_guard_hit(guard, &size) && size == guard_pool.stack_size;
	r[1] = ig_coro_guard_hit(guard + PAGE - 1, NULL);
	r[2] = !ig_coro_guard_hit(guard + PAGE, NULL) && !ig_coro_guard_hit(guard - 1, NULL);
	r[3] = !mapped(guard) || !resident(guard);
}

static void test_guard(void)
{
	ig_coro_pool_init(&guard_pool, 20 * 1024, 2);
	bool r[4] = { 0 };
	struct ig_coro *c = ig_coro_new(&guard_pool, guard_probe, r);
	char *guard = stack_top(c) - guard_pool.stack_size - PAGE;
	ig_coro_resume(c);
	CHECK(r[0], "the page below the stack is its guard, with the stack's size");
	CHECK(r[1], "its last byte too");
	CHECK(r[2], "the stack's lowest byte and the page below the guard are not");
	CHECK(r[3], "the guard is never resident");
	CHECK(!ig_coro_guard_hit(guard, NULL), "outside the coroutine, no stack of the thread's is running");
	ig_coro_pool_trim(&guard_pool);
}

/* Each thread its own pool and its own running coroutine. */
struct per_thread {
	struct counter k;
	bool ok;
};

static void *thread_loop(void *arg)
{
	struct per_thread *t = arg;
	struct ig_coro_pool pool;
	ig_coro_pool_init(&pool, 16 * 1024, 1);
	struct ig_coro *c = ig_coro_new(&pool, count_up, &t->k);
	long resumes = 0;
	t->ok = c != NULL;
	while (t->ok && !ig_coro_resume(c)) {
		t->ok = t->ok && t->k.seen == resumes && ig_coro_self() == NULL;
		resumes++;
	}
	t->ok = t->ok && resumes == t->k.n;
	ig_coro_pool_trim(&pool);
	return NULL;
}

static void test_threads(void)
{
	struct per_thread t[2] = { { .k = { .n = 50000 } }, { .k = { .n = 70000 } } };
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, thread_loop, &t[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK(t[0].ok && t[1].ok, "two threads, a pool each, switching at once: each resumes its own");
}

int main(void)
{
	test_switch();
	test_many_yields();
	test_nested();
	test_grow_cap_shrink();
	test_trim();
	test_trim_unchecked_head();
	test_guard();
	test_threads();
	return check_done();
}
